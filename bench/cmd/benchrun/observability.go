package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"time"
)

// --- S13 ---

// s13 measures what observability costs (docs/adr/0014): the bridge as it runs by default (metrics on,
// tracing off) against the same binary exporting a span for every call over OTLP to a local sink, and, when
// BENCH_BASELINE_BIN names a bridge built without observability (e.g. the commit before it), against that
// baseline — all interleaved in the same rounds, on the stdio upstream, over gRPC, like S1.
func (b *bench) s13(ctx context.Context, br *bridge) error {
	var sb strings.Builder
	rounds, n, warm := b.q(3, 10), b.q(100, 1000), b.q(50, 300)
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer sink.Close()
	traced, err := b.startBridgeWith(ctx, false, b.bridgeBin, []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + sink.URL, "OTEL_TRACES_SAMPLER=always_on"})
	if err != nil {
		return fmt.Errorf("bridge with tracing: %w", err)
	}
	defer traced.stop()
	var base *bridge
	baseBin := os.Getenv("BENCH_BASELINE_BIN")
	if baseBin != "" {
		if base, err = b.startBridgeWith(ctx, false, baseBin, nil); err != nil {
			return fmt.Errorf("baseline bridge %s: %w", baseBin, err)
		}
		defer base.stop()
	}

	s, err := b.pair(ctx, br, "stdio", "", nil)
	if err != nil {
		return err
	}
	defer s.close()
	server, _, _, _ := b.upstream("stdio", "")
	paths := []*path{
		{name: "direct go-sdk", proto: directProto(ctx, s.direct), fn: directCall(s.direct, "echo", smallArgs)},
		{name: "bridge gRPC: metrics on, tracing off (default)", proto: br.c.proto(ctx, s.sid), fn: br.c.grpcCall(s.sid, "echo", smallArgs)},
	}
	for _, x := range []struct {
		br   *bridge
		name string
	}{{traced, "bridge gRPC: metrics on, tracing on (OTLP, every call sampled)"}, {base, "bridge gRPC: baseline " + baseBin}} {
		if x.br == nil {
			continue
		}
		sess, err := x.br.c.open(ctx, server, "", nil)
		if err != nil {
			return fmt.Errorf("%s: CreateSession: %w", x.name, err)
		}
		defer func() { _ = x.br.c.closeSession(context.Background(), sess.GetSessionId()) }()
		paths = append(paths, &path{name: x.name, proto: x.br.c.proto(ctx, sess.GetSessionId()), fn: x.br.c.grpcCall(sess.GetSessionId(), "echo", smallArgs)})
	}
	scale := make([]int, len(paths))
	for i := range scale {
		scale[i] = 1
	}
	// CPU per call of each bridge process (utime+stime over the rounds): unlike latency, it does not depend
	// on what else the machine runs.
	procs := []*bridge{br, traced, base}
	cpu0 := make([]time.Duration, len(procs))
	for i, p := range procs {
		if p != nil {
			cpu0[i] = cpuTime(p.pid())
		}
	}
	rr, err := latencyRounds(ctx, paths, scale, rounds, n, warm)
	if err != nil {
		return err
	}
	calls := time.Duration(rounds * (n + warm))
	cpu := make([]time.Duration, len(procs))
	for i, p := range procs {
		if p != nil {
			cpu[i] = (cpuTime(p.pid()) - cpu0[i]) / calls
		}
	}
	fmt.Fprintf(&sb, "One caller, `echo` with a 100-byte argument on the stdio upstream, over gRPC, as in S1 (%d interleaved rounds, "+
		"%d calls per path per round after %d warm-up calls). Each bridge is its own process with its own session to its own "+
		"upstream process. Tracing on exports every span over OTLP/HTTP to a sink in the benchmark process.\n\n", rounds, n, warm)
	sb.WriteString(roundsHeader)
	sb.WriteString(rr.table(s.label))
	off := median(rr.added(1, pP50))
	on := median(rr.added(2, pP50))
	row := map[string]any{"tracing_off_added_p50_us": us(off), "tracing_on_added_p50_us": us(on),
		"tracing_off_cpu_us_per_call": us(cpu[0]), "tracing_on_cpu_us_per_call": us(cpu[1])}
	fmt.Fprintf(&sb, "\nBridge CPU per call (utime+stime of its process over the rounds, warm-up included): tracing off %s µs, "+
		"tracing on %s µs", fus(cpu[0]), fus(cpu[1]))
	if base != nil {
		fmt.Fprintf(&sb, ", baseline %s µs", fus(cpu[2]))
		row["baseline_cpu_us_per_call"] = us(cpu[2])
	}
	fmt.Fprintf(&sb, ".\n\nTracing on costs %s µs p50 per call over tracing off.", fus(on-off))
	if base != nil {
		bl := median(rr.added(3, pP50))
		row["baseline_added_p50_us"] = us(bl)
		pct := 0.0
		if bl > 0 {
			pct = 100 * float64(off-bl) / float64(bl)
		}
		row["metrics_vs_baseline_pct"] = pct
		fmt.Fprintf(&sb, " Metrics on and tracing off add %s µs p50 over the baseline's added latency (%.1f%%; the target is within 5%%).", fus(off-bl), pct)
	} else {
		sb.WriteString(" Set BENCH_BASELINE_BIN to a bridge built without observability to compare the default with it.")
	}
	sb.WriteString("\n")
	b.res["s13"] = row
	b.logf("S13: tracing off +%s µs, tracing on +%s µs", fus(off), fus(on))
	b.rep.add("S13 — observability cost", sb.String())
	return nil
}
