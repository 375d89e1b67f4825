package main

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

func splitHostPort(addr string) (string, string, error) { return net.SplitHostPort(addr) }

func jsonReader(s string) *strings.Reader { return strings.NewReader(s) }

// sample makes n sequential calls and returns their latencies.
func sample(ctx context.Context, fn callFn, n int) ([]time.Duration, error) {
	out := make([]time.Duration, 0, n)
	for range n {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		t0 := time.Now()
		err := fn(cctx)
		d := time.Since(t0)
		cancel()
		if err != nil {
			return out, err
		}
		out = append(out, d)
	}
	return out, nil
}

// roundsResult holds, per path, one summary per round (rounds are interleaved: every path runs once per
// round, the order rotating).
type roundsResult struct {
	paths  []*path
	rounds [][]dist // [path][round]
	pooled []dist   // all rounds' samples together
}

// latencyRounds runs rounds interleaved rounds of n calls per path (after warm calls per path). The first
// path is the baseline. A path with scale s makes n/s calls (slow peers).
func latencyRounds(ctx context.Context, paths []*path, scale []int, rounds, n, warm int) (*roundsResult, error) {
	r := &roundsResult{paths: paths, rounds: make([][]dist, len(paths)), pooled: make([]dist, len(paths))}
	all := make([][]time.Duration, len(paths))
	count := func(i, n int) int { return max(1, n/max(1, scale[i])) }
	for i, p := range paths {
		if _, err := sample(ctx, p.fn, count(i, warm)); err != nil {
			return nil, fmt.Errorf("%s warm-up: %w", p.name, err)
		}
	}
	for round := range rounds {
		for k := range paths {
			i := (k + round) % len(paths)
			s, err := sample(ctx, paths[i].fn, count(i, n))
			if err != nil {
				return nil, fmt.Errorf("%s: %w", paths[i].name, err)
			}
			r.rounds[i] = append(r.rounds[i], summarize(s))
			all[i] = append(all[i], s...)
		}
	}
	for i := range paths {
		r.pooled[i] = summarize(all[i])
	}
	return r, nil
}

// added returns, for path i, the per-round differences to the baseline (path 0) of a percentile.
func (r *roundsResult) added(i int, pick func(dist) time.Duration) []time.Duration {
	var out []time.Duration
	for k := range r.rounds[i] {
		out = append(out, pick(r.rounds[i][k])-pick(r.rounds[0][k]))
	}
	return out
}

func (r *roundsResult) medianOf(i int, pick func(dist) time.Duration) time.Duration {
	var v []time.Duration
	for _, d := range r.rounds[i] {
		v = append(v, pick(d))
	}
	return median(v)
}

var (
	pP50 = func(d dist) time.Duration { return d.P50 }
	pP90 = func(d dist) time.Duration { return d.P90 }
	pP99 = func(d dist) time.Duration { return d.P99 }
	pMax = func(d dist) time.Duration { return d.Max }
)

// table renders the rounds as markdown rows: per path the medians over rounds of p50/p90/p99, the max of
// all calls, and the added p50/p99 (median of per-round differences, with the p50 IQR).
func (r *roundsResult) table(label string) string {
	var sb strings.Builder
	for i, p := range r.paths {
		add50, add99, iq := "—", "—", ""
		if i > 0 {
			a := r.added(i, pP50)
			lo, hi := iqr(a)
			add50 = fus(median(a))
			iq = fmt.Sprintf("%s…%s", fus(lo), fus(hi))
			add99 = fus(median(r.added(i, pP99)))
		}
		fmt.Fprintf(&sb, "| %s | %s | %s | %d×%d | %s | %s | %s | %s | %s | %s | %s |\n", label, p.name, p.proto,
			len(r.rounds[i]), r.rounds[i][0].N, fus(r.medianOf(i, pP50)), fus(r.medianOf(i, pP90)), fus(r.medianOf(i, pP99)),
			fus(r.pooled[i].Max), add50, iq, add99)
	}
	return sb.String()
}

const roundsHeader = "| upstream | path | protocol | rounds×calls | p50 µs | p90 µs | p99 µs | max µs | added p50 µs | added p50 IQR | added p99 µs |\n|---|---|---|---|---|---|---|---|---|---|---|\n"

// load is a closed-loop run: c callers for dur.
type loadResult struct {
	calls, errs int64
	rate        float64
	lat         dist
	cpu         map[string]time.Duration // CPU used per process during the run
	firstErr    error
}

func closedLoop(ctx context.Context, fn callFn, c int, dur time.Duration, pids map[string]int) loadResult {
	var calls, errs atomic.Int64
	var mu sync.Mutex
	var firstErr error
	lats := make([][]time.Duration, c)
	before := map[string]time.Duration{}
	for k, pid := range pids {
		before[k] = cpuTime(pid)
	}
	start := time.Now()
	deadline := start.Add(dur)
	var wg sync.WaitGroup
	for w := range c {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				t0 := time.Now()
				err := fn(cctx)
				d := time.Since(t0)
				cancel()
				if err != nil {
					errs.Add(1)
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					time.Sleep(time.Millisecond)
					continue
				}
				calls.Add(1)
				if len(lats[w]) < 200000 {
					lats[w] = append(lats[w], d)
				}
			}
		})
	}
	wg.Wait()
	el := time.Since(start)
	res := loadResult{calls: calls.Load(), errs: errs.Load(), cpu: map[string]time.Duration{}, firstErr: firstErr}
	for k, pid := range pids {
		res.cpu[k] = cpuTime(pid) - before[k]
	}
	res.rate = float64(res.calls) / el.Seconds()
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	res.lat = summarize(all)
	return res
}

// perCall is CPU time per call in µs.
func perCall(cpu time.Duration, calls int64) string {
	if calls == 0 {
		return "—"
	}
	return fmt.Sprintf("%.0f", float64(cpu)/float64(time.Microsecond)/float64(calls))
}
