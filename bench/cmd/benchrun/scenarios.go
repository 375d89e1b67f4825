package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

const era2025 = "2025-11-25"

var smallArgs = map[string]any{"text": strings.Repeat("a", 100)}

// setup is one upstream reached two ways: a direct session and a bridge session.
type setup struct {
	label       string
	direct      *mcp.ClientSession
	directPid   int // upstream process of the direct session
	sid         string
	bridgeChild int // upstream process of the bridge session
	close       func()
}

func (b *bench) pair(ctx context.Context, br *bridge, transport, era string, caps *pb.HostCapabilities) (*setup, error) {
	server, url, label, upPid := b.upstream(transport, era)
	cs, pid, err := dialDirect(ctx, b.echoBin, url, era)
	if err != nil {
		return nil, fmt.Errorf("direct %s: %w", label, err)
	}
	before := children(br.pid())
	sess, err := br.c.open(ctx, server, era, caps)
	if err != nil {
		cs.Close()
		return nil, fmt.Errorf("bridge CreateSession %s: %w", server, err)
	}
	s := &setup{label: label, direct: cs, directPid: pid, sid: sess.GetSessionId()}
	if transport == "http" {
		s.directPid, s.bridgeChild = upPid, upPid
	} else {
		for _, c := range children(br.pid()) {
			if !slices.Contains(before, c) {
				s.bridgeChild = c
			}
		}
	}
	s.close = func() {
		cs.Close()
		_ = br.c.closeSession(context.Background(), s.sid)
	}
	return s, nil
}

func (s *setup) paths(ctx context.Context, br *bridge, tool string, args map[string]any) []*path {
	return []*path{
		{name: "direct go-sdk", proto: directProto(ctx, s.direct), fn: directCall(s.direct, tool, args)},
		{name: "bridge gRPC", proto: br.c.proto(ctx, s.sid), fn: br.c.grpcCall(s.sid, tool, args)},
		{name: "bridge REST", proto: br.c.proto(ctx, s.sid), fn: br.c.restToolCall(s.sid, tool, args)},
	}
}

// --- S1 ---

func (b *bench) s1(ctx context.Context, br *bridge, ps *peers) error {
	var sb strings.Builder
	rounds, n, warm := b.q(3, 10), b.q(100, 1000), b.q(50, 300)
	fmt.Fprintf(&sb, "One caller, `echo` with a 100-byte argument. %d interleaved rounds per upstream (the order of the paths "+
		"rotates each round), %d calls per path per round after %d warm-up calls. p50/p90/p99 are medians over the rounds; "+
		"max is over all calls. **Added** = path − direct go-sdk client in the same round; the median over rounds (and its "+
		"IQR) is reported. The peers run with the stdio upstream on 2025-11-25 (both speak the handshake era), making "+
		"fewer calls per round (supergateway ½, mcpo ¼). The targets use the first block (stdio, newest protocol). Its two "+
		"*floor* rows time GetSession over gRPC and REST, interleaved with the calls: a round trip through the bridge that "+
		"never reaches the upstream, which is most of what a call through the bridge adds on this machine; *floor: bare "+
		"grpc-go echo* is benchecho's bare grpc-go server (`benchecho grpc`, its own process, no interceptors, no MCP) "+
		"answering the echo call's own request and response messages: one cross-process gRPC round trip and nothing "+
		"else, the physical floor; *cached ListTools* is answered by the bridge's list cache (benchecho's lists carry "+
		"ttlMs on 2026-07-28); *floor: bare grpc-go ListTools* is the bare server answering with the bridge's own ListTools "+
		"response (about ten times GetSession's size), the physical floor of a list-sized answer. Their *added* columns compare them with the direct call and mean nothing. Issue 25's "+
		"ratios: grpc_added_over_bare = gRPC added ÷ bare, bridge_floor_over_bare = GetSession ÷ bare, "+
		"list_cache_hit_over_floor = cached ListTools ÷ GetSession; bare_list_over_bare = bare ListTools ÷ bare echo (what the "+
		"list's size alone costs); list_cache_hit_over_bare_list = cached ListTools ÷ bare ListTools.\n\n", rounds, n, warm)
	sb.WriteString(roundsHeader)
	var rows []map[string]any
	combos := []struct{ tr, era string }{{"stdio", ""}, {"http", ""}, {"stdio", era2025}, {"http", era2025}}
	for ci, co := range combos {
		s, err := b.pair(ctx, br, co.tr, co.era, nil)
		if err != nil {
			return err
		}
		paths := s.paths(ctx, br, "echo", smallArgs)
		scale := []int{1, 1, 1}
		if ci == 0 { // the floor: a round trip through the bridge that does not reach the upstream
			listBytes, floorBytes, err := b.writeBareList(ctx, br, s.sid)
			if err != nil {
				s.close()
				return fmt.Errorf("the bare server's list: %w", err)
			}
			b.res["list_response_bytes"], b.res["floor_response_bytes"] = listBytes, floorBytes
			paths = append(paths, &path{name: "floor: gRPC GetSession", proto: paths[1].proto, fn: br.c.grpcFloor(s.sid)},
				&path{name: "floor: REST GET session", proto: paths[2].proto, fn: br.c.restFloor(s.sid)},
				&path{name: "floor: bare grpc-go echo", proto: "—", fn: b.bare.call(s.sid, smallArgs)},
				&path{name: "cached ListTools (gRPC)", proto: paths[1].proto, fn: br.c.grpcListTools(s.sid)},
				&path{name: "floor: bare grpc-go ListTools", proto: "—", fn: b.bare.listTools(s.sid)})
			scale = append(scale, 1, 1, 1, 1, 1)
		}
		var closers []func()
		if co.tr == "stdio" && co.era == era2025 { // the peers speak the handshake era: compare like with like
			if p, c, err := b.sgPath(ctx, ps, "echo", smallArgs); err != nil {
				b.note("supergateway S1: %v", err)
			} else if p != nil {
				paths, scale, closers = append(paths, p), append(scale, 2), append(closers, c)
			}
			if p := mcpoPath(ctx, ps, "echo", smallArgs); p != nil {
				paths, scale = append(paths, p), append(scale, 4)
			}
		}
		rr, err := latencyRounds(ctx, paths, scale, rounds, n, warm)
		for _, c := range closers {
			c()
		}
		s.close()
		if err != nil {
			return err
		}
		sb.WriteString(rr.table(s.label))
		for i, p := range paths {
			row := map[string]any{"upstream": s.label, "path": p.name, "protocol": p.proto,
				"p50_us": us(rr.medianOf(i, pP50)), "p90_us": us(rr.medianOf(i, pP90)), "p99_us": us(rr.medianOf(i, pP99)),
				"max_us": us(rr.pooled[i].Max)}
			if i > 0 {
				row["added_p50_us"] = us(median(rr.added(i, pP50)))
				row["added_p99_us"] = us(median(rr.added(i, pP99)))
			}
			rows = append(rows, row)
		}
		if ci == 0 {
			b.res["grpc_added_p50_us"] = us(median(rr.added(1, pP50)))
			b.res["grpc_added_p99_us"] = us(median(rr.added(1, pP99)))
			b.res["rest_added_p50_us"] = us(median(rr.added(2, pP50)))
			b.res["rest_added_p99_us"] = us(median(rr.added(2, pP99)))
			b.res["direct_p50_us"] = us(rr.medianOf(0, pP50))
			b.res["grpc_p50_us"] = us(rr.medianOf(1, pP50))
			b.res["reference_protocol"] = paths[0].proto
			b.res["grpc_floor_p50_us"] = us(rr.medianOf(3, pP50))
			b.res["rest_floor_p50_us"] = us(rr.medianOf(4, pP50))
			// Issue 25: the floors as ratios in the same run. The bare floor is a grpc-go unary call between two
			// processes with nothing behind it; the cached ListTools is served by the bridge's list cache.
			bare := rr.medianOf(5, pP50)
			b.res["grpc_bare_rtt_p50_us"] = us(bare)
			b.res["list_cache_hit_p50_us"] = us(rr.medianOf(6, pP50))
			if bare > 0 {
				b.res["grpc_added_over_bare"] = round2(float64(median(rr.added(1, pP50))) / float64(bare))
				b.res["bridge_floor_over_bare"] = round2(float64(rr.medianOf(3, pP50)) / float64(bare))
			}
			if f := rr.medianOf(3, pP50); f > 0 {
				b.res["list_cache_hit_over_floor"] = round2(float64(rr.medianOf(6, pP50)) / float64(f))
			}
			// The list's own floor: the same ListTools response from the bare server. bare_list_over_bare is what
			// the list-sized payload costs a bare grpc-go round trip (marshal, transport, the client's decoding),
			// which no cache in the bridge can remove; list_cache_hit_over_bare_list compares the cached hit with it.
			bareList := rr.medianOf(7, pP50)
			b.res["grpc_bare_list_p50_us"] = us(bareList)
			if bare > 0 {
				b.res["bare_list_over_bare"] = round2(float64(bareList) / float64(bare))
			}
			if bareList > 0 {
				b.res["list_cache_hit_over_bare_list"] = round2(float64(rr.medianOf(6, pP50)) / float64(bareList))
			}
		}
		if co.tr == "stdio" && co.era == era2025 {
			b.res["grpc_added_p50_us_2025"] = us(median(rr.added(1, pP50)))
			b.res["rest_added_p50_us_2025"] = us(median(rr.added(2, pP50)))
			for i := 3; i < len(paths); i++ {
				key := "supergateway_added_p50_us"
				if strings.HasPrefix(paths[i].name, "mcpo") {
					key = "mcpo_added_p50_us"
				}
				b.res[key] = us(median(rr.added(i, pP50)))
			}
		}
		b.logf("S1 %s %s: direct p50 %s µs, gRPC +%s µs, REST +%s µs", s.label, paths[0].proto, fus(rr.medianOf(0, pP50)),
			fus(median(rr.added(1, pP50))), fus(median(rr.added(2, pP50))))
	}
	b.res["s1"] = rows
	b.rep.add("S1 — tool-call latency, small payload", sb.String())
	return nil
}

// --- S2 ---

func (b *bench) s2(ctx context.Context, br *bridge) error {
	var sb strings.Builder
	rounds := b.q(2, 5)
	sizes := []struct {
		n     int
		label string
		calls int
	}{{4 << 10, "4 KiB", b.q(30, 300)}, {64 << 10, "64 KiB", b.q(20, 100)}, {1 << 20, "1 MiB", b.q(5, 20)}}
	fmt.Fprintf(&sb, "One caller, `blob {n}` returns a text block of n bytes (the argument is small). %d interleaved rounds; "+
		"columns as in S1.\n\n", rounds)
	sb.WriteString(roundsHeader)
	var rows []map[string]any
	for _, tr := range []string{"stdio", "http"} {
		s, err := b.pair(ctx, br, tr, "", nil)
		if err != nil {
			return err
		}
		for _, sz := range sizes {
			args := map[string]any{"n": sz.n}
			paths := s.paths(ctx, br, "blob", args)
			rr, err := latencyRounds(ctx, paths, []int{1, 1, 1}, rounds, sz.calls, max(2, sz.calls/5))
			if err != nil {
				s.close()
				return err
			}
			sb.WriteString(rr.table(s.label + " " + sz.label))
			for i, p := range paths {
				row := map[string]any{"upstream": s.label, "bytes": sz.n, "path": p.name, "protocol": p.proto,
					"p50_us": us(rr.medianOf(i, pP50)), "p99_us": us(rr.medianOf(i, pP99))}
				if i > 0 {
					row["added_p50_us"] = us(median(rr.added(i, pP50)))
				}
				rows = append(rows, row)
			}
		}
		s.close()
	}
	b.res["s2"] = rows
	b.rep.add("S2 — payload sweep", sb.String())
	return nil
}

// --- S3 ---

func (b *bench) s3(ctx context.Context, br *bridge, ps *peers) error {
	var sb strings.Builder
	dur := b.qd(500*time.Millisecond, 3*time.Second)
	conc := []int{1, 8, 32, 128}
	fmt.Fprintf(&sb, "Closed loop, `echo`, c callers sharing one session (one client connection) for %s per cell; the paths "+
		"of one c run back to back, order rotating. CPU per call is utime+stime from /proc/PID/stat over the cell divided "+
		"by the calls (10 ms tick resolution): *front* is the bridge (or the peer) process, *upstream* the echo server, "+
		"*driver* this harness (the client side of every path). The driver's CPU on the direct row is the direct go-sdk "+
		"client's own cost per call (direct_cpu_us_per_call_c32), the same MCP client work the bridge does, which issue "+
		"25 compares with the bridge's *front* CPU (bridge_cpu_over_direct_cpu_c32).\n\n", dur)
	sb.WriteString("| upstream | c | path | protocol | calls/s | × direct | p50 µs | p99 µs | errors | front CPU µs/call | upstream CPU µs/call | driver CPU µs/call |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	var rows []map[string]any
	var model string // the CPU model of the c=32 stdio cell, after the table
	self := os.Getpid()
	for _, tr := range []string{"stdio", "http"} {
		s, err := b.pair(ctx, br, tr, "", nil)
		if err != nil {
			return err
		}
		type lp struct {
			p    *path
			pids map[string]int
		}
		ps3 := s.paths(ctx, br, "echo", smallArgs)
		list := []lp{
			{ps3[0], map[string]int{"upstream": s.directPid, "driver": self}},
			{ps3[1], map[string]int{"front": br.pid(), "upstream": s.bridgeChild, "driver": self}},
			{ps3[2], map[string]int{"front": br.pid(), "upstream": s.bridgeChild, "driver": self}},
		}
		var closers []func()
		if tr == "stdio" {
			if p, c, err := b.sgPath(ctx, ps, "echo", smallArgs); err != nil {
				b.note("supergateway S3: %v", err)
			} else if p != nil {
				pids := map[string]int{"front": ps.sg.pid(), "driver": self}
				if ch := descendantsNamed(ps.sg.pid(), "benchecho"); len(ch) > 0 {
					pids["upstream"] = ch[0]
				}
				list, closers = append(list, lp{p, pids}), append(closers, c)
			}
			if p := mcpoPath(ctx, ps, "echo", smallArgs); p != nil {
				pids := map[string]int{"front": ps.mcpo.pid(), "driver": self}
				if ch := descendantsNamed(ps.mcpo.pid(), "benchecho"); len(ch) > 0 {
					pids["upstream"] = ch[0]
				}
				list = append(list, lp{p, pids})
			}
		}
		for ci, c := range conc {
			var directRate float64
			res := make([]loadResult, len(list))
			for k := range list {
				i := (k + ci) % len(list)
				res[i] = closedLoop(ctx, list[i].p.fn, c, dur, list[i].pids)
			}
			directRate = res[0].rate
			for i, l := range list {
				r := res[i]
				ratio := r.rate / directRate
				fmt.Fprintf(&sb, "| %s | %d | %s | %s | %.0f | %.2f | %s | %s | %d | %s | %s | %s |\n", s.label, c, l.p.name, l.p.proto,
					r.rate, ratio, fus(r.lat.P50), fus(r.lat.P99), r.errs, perCall(r.cpu["front"], r.calls),
					perCall(r.cpu["upstream"], r.calls), perCall(r.cpu["driver"], r.calls))
				if r.firstErr != nil {
					b.note("S3 %s c=%d %s: %d errors, first: %v", s.label, c, l.p.name, r.errs, r.firstErr)
				}
				row := map[string]any{"upstream": s.label, "c": c, "path": l.p.name, "protocol": l.p.proto,
					"calls_per_s": int(r.rate), "ratio": round2(ratio), "p50_us": us(r.lat.P50), "p99_us": us(r.lat.P99),
					"errors": r.errs}
				if r.calls > 0 {
					row["front_cpu_us_per_call"] = round2(float64(r.cpu["front"]) / 1e3 / float64(r.calls))
				}
				rows = append(rows, row)
				if tr == "stdio" && c == 32 {
					switch l.p.name {
					case "bridge gRPC":
						b.res["throughput_ratio_c32"] = round2(ratio)
						b.res["grpc_calls_per_s_c32"] = int(r.rate)
						b.res["bridge_cpu_us_per_call_c32"] = round2(float64(r.cpu["front"]) / 1e3 / float64(max(1, r.calls)))
					case "bridge REST":
						b.res["rest_throughput_ratio_c32"] = round2(ratio)
						b.res["rest_calls_per_s_c32"] = int(r.rate)
					case "direct go-sdk":
						b.res["direct_calls_per_s_c32"] = int(r.rate)
						// The direct client's own CPU per call: the driver process while it runs only the direct
						// go-sdk client (the same work the bridge does as an MCP client, without the gRPC side).
						b.res["direct_cpu_us_per_call_c32"] = round2(float64(r.cpu["driver"]) / 1e3 / float64(max(1, r.calls)))
					}
				}
			}
			if tr == "stdio" && c == 32 && res[0].calls > 0 {
				// On these 2 shared cores the paths are CPU-bound at c=32: each path's rate is close to the
				// cores it can use over all the CPU one call costs in every process (driver, front, upstream).
				// The ratio that model predicts, next to the measured one, says what bounds the throughput
				// target: the bridge path adds a process (its CPU) and a gRPC client (the driver's), and
				// gets back only the direct client's MCP work.
				total := func(r loadResult) float64 {
					var sum time.Duration
					for _, d := range r.cpu {
						sum += d
					}
					return float64(sum) / 1e3 / float64(max(1, r.calls))
				}
				busy := func(r loadResult) float64 { return total(r) * r.rate / 1e6 / float64(runtime.GOMAXPROCS(0)) }
				b.res["direct_total_cpu_us_per_call_c32"] = round2(total(res[0]))
				b.res["grpc_total_cpu_us_per_call_c32"] = round2(total(res[1]))
				b.res["rest_total_cpu_us_per_call_c32"] = round2(total(res[2]))
				b.res["grpc_client_cpu_us_per_call_c32"] = round2(float64(res[1].cpu["driver"]) / 1e3 / float64(max(1, res[1].calls)))
				b.res["throughput_cpu_model_c32"] = round2(total(res[0]) / max(total(res[1]), 1e-9))
				b.res["rest_throughput_cpu_model_c32"] = round2(total(res[0]) / max(total(res[2]), 1e-9))
				model = fmt.Sprintf("\nAt c=32 over stdio the machine is CPU-bound (CPU busy: direct %.0f %%, gRPC %.0f %%, REST %.0f %% of %d cores). "+
					"All processes' CPU per call: direct %.0f µs, gRPC %.0f µs (of which the driver's gRPC client %.0f µs), REST %.0f µs; "+
					"the throughput ratio that CPU alone predicts is %.2f for gRPC and %.2f for REST (measured %.2f and %.2f).\n",
					100*busy(res[0]), 100*busy(res[1]), 100*busy(res[2]), runtime.GOMAXPROCS(0),
					total(res[0]), total(res[1]), float64(res[1].cpu["driver"])/1e3/float64(max(1, res[1].calls)), total(res[2]),
					total(res[0])/max(total(res[1]), 1e-9), total(res[0])/max(total(res[2]), 1e-9), res[1].rate/directRate, res[2].rate/directRate)
			}
			if d, ok := num(b.res["direct_cpu_us_per_call_c32"]); ok && d > 0 && tr == "stdio" && c == 32 {
				if br, ok := num(b.res["bridge_cpu_us_per_call_c32"]); ok {
					b.res["bridge_cpu_over_direct_cpu_c32"] = round2(br / d)
				}
			}
			b.logf("S3 %s c=%d: direct %.0f/s, gRPC %.0f/s, REST %.0f/s", s.label, c, res[0].rate, res[1].rate, res[2].rate)
		}
		for _, c := range closers {
			c()
		}
		s.close()
	}
	b.res["s3"] = rows
	sb.WriteString(model)
	b.rep.add("S3 — throughput and CPU per call", sb.String())
	return nil
}

func round2(f float64) float64 { return float64(int64(f*100+0.5)) / 100 }

// descendantsNamed finds processes below pid whose command name starts with name.
func descendantsNamed(pid int, name string) []int {
	var out []int
	queue := []int{pid}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range children(p) {
			if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", c)); strings.HasPrefix(string(comm), name) {
				out = append(out, c)
			}
			queue = append(queue, c)
		}
	}
	return out
}

// --- S5 ---

func (b *bench) s5(ctx context.Context, br *bridge) error {
	var sb strings.Builder
	rounds, n := b.q(2, 8), b.q(30, 300)
	fmt.Fprintf(&sb, "One caller. The tool asks the client for something; the direct client answers in-process (go-sdk "+
		"handlers), the bridge parks the request and a host answers it over the `Connect` stream (gRPC). Each round runs "+
		"four paths interleaved — direct `echo`, direct tool, bridge `echo`, bridge tool — %d calls each, %d rounds. "+
		"**Hop added** = (bridge tool − bridge echo) − (direct tool − direct echo) per round: what the host hop costs on "+
		"top of a plain bridged call. *Legacy push*: `sample_push` calls sampling/createMessage while serving "+
		"(2025-11-25). *MRTR*: `sample`/`elicit` return input requests and the client retries tools/call (2026-07-28; on "+
		"2025-11-25 the SDK's server turns them into pushes).\n\n", n, rounds)
	sb.WriteString("| case | upstream | protocol | direct echo p50 µs | direct tool p50 µs | bridge echo p50 µs | bridge tool p50 µs | tool call added p50 µs | **hop added p50 µs** | hop added p99 µs | host answers |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	cases := []struct {
		name, tr, era, tool string
		args                map[string]any
		key                 string
	}{
		{"sampling, legacy push", "stdio", era2025, "sample_push", map[string]any{"prompt": "hi"}, "sampling_hop_p50_us"},
		{"sampling, MRTR", "stdio", "", "sample", map[string]any{"prompt": "hi"}, "sampling_hop_mrtr_p50_us"},
		{"elicitation, MRTR", "stdio", "", "elicit", map[string]any{}, "elicitation_hop_mrtr_p50_us"},
		{"elicitation, pushed by the SDK", "stdio", era2025, "elicit", map[string]any{}, "elicitation_hop_push_p50_us"},
		{"sampling, legacy push", "http", era2025, "sample_push", map[string]any{"prompt": "hi"}, "sampling_hop_http_p50_us"},
		{"sampling, MRTR", "http", "", "sample", map[string]any{"prompt": "hi"}, "sampling_hop_mrtr_http_p50_us"},
	}
	var rows []map[string]any
	for _, c := range cases {
		s, err := b.pair(ctx, br, c.tr, c.era, hostCaps)
		if err != nil {
			return err
		}
		h, err := br.c.startHost(ctx, s.sid)
		if err != nil {
			s.close()
			return fmt.Errorf("host stream: %w", err)
		}
		proto := br.c.proto(ctx, s.sid)
		paths := []*path{
			{name: "direct echo", fn: directCall(s.direct, "echo", smallArgs)},
			{name: "direct " + c.tool, fn: directCall(s.direct, c.tool, c.args)},
			{name: "bridge echo", fn: br.c.grpcCall(s.sid, "echo", smallArgs)},
			{name: "bridge " + c.tool, fn: br.c.grpcCall(s.sid, c.tool, c.args)},
		}
		rr, err := latencyRounds(ctx, paths, []int{1, 1, 1, 1}, rounds, n, b.q(10, 50))
		h.stop()
		s.close()
		if err != nil {
			return fmt.Errorf("%s %s: %w", c.name, c.tr, err)
		}
		hop := func(pick func(dist) time.Duration) []time.Duration {
			var out []time.Duration
			for k := range rr.rounds[0] {
				out = append(out, (pick(rr.rounds[3][k])-pick(rr.rounds[2][k]))-(pick(rr.rounds[1][k])-pick(rr.rounds[0][k])))
			}
			return out
		}
		var whole []time.Duration
		for k := range rr.rounds[0] {
			whole = append(whole, rr.rounds[3][k].P50-rr.rounds[1][k].P50)
		}
		h50, h99 := median(hop(pP50)), median(hop(pP99))
		fmt.Fprintf(&sb, "| %s | %s | %s | %s | %s | %s | %s | %s | **%s** | %s | %d |\n", c.name, s.label, proto,
			fus(rr.medianOf(0, pP50)), fus(rr.medianOf(1, pP50)), fus(rr.medianOf(2, pP50)), fus(rr.medianOf(3, pP50)),
			fus(median(whole)), fus(h50), fus(h99), h.served)
		b.res[c.key] = us(h50)
		rows = append(rows, map[string]any{"case": c.name, "upstream": s.label, "protocol": proto,
			"tool_added_p50_us": us(median(whole)), "hop_added_p50_us": us(h50), "hop_added_p99_us": us(h99),
			"bridge_tool_p50_us": us(rr.medianOf(3, pP50)), "direct_tool_p50_us": us(rr.medianOf(1, pP50))})
		b.logf("S5 %s %s %s: hop +%s µs", c.name, s.label, proto, fus(h50))
	}
	b.res["s5"] = rows
	if push, ok := num(b.res["elicitation_hop_push_p50_us"]); ok {
		if mrtr, ok := num(b.res["elicitation_hop_mrtr_p50_us"]); ok && mrtr > 0 {
			b.res["elicitation_hop_push_over_mrtr"] = round2(push / mrtr)
		}
	}
	b.rep.add("S5 — sampling and elicitation through the host stream", sb.String())
	return nil
}

// --- S9 ---

func (b *bench) s9(ctx context.Context, br *bridge) error {
	var sb strings.Builder
	n := b.q(100, 1000)
	s, err := b.pair(ctx, br, "stdio", "", nil)
	if err != nil {
		return err
	}
	defer s.close()
	proto := br.c.proto(ctx, s.sid)
	fmt.Fprintf(&sb, "Upstream over stdio, protocol %s. %d sequential `echo` calls alone, then the same with one `sleep` call "+
		"(60 s) in flight on the same session.\n\n", proto, n)
	sb.WriteString("| path | fast p50 alone µs | fast p50 with slow in flight µs | fast p99 alone µs | fast p99 with slow µs | fast max with slow µs |\n|---|---|---|---|---|---|\n")
	type pp struct {
		name string
		fast callFn
		slow func(ctx context.Context) error
		last func(ctx context.Context) (int64, error)
	}
	directLast := func(ctx context.Context) (int64, error) {
		res, err := s.direct.CallTool(ctx, &mcp.CallToolParams{Name: "last_cancel", Arguments: map[string]any{}})
		if err != nil {
			return 0, err
		}
		return strconv.ParseInt(textOf(res), 10, 64)
	}
	bridgeLast := func(ctx context.Context) (int64, error) {
		r, err := br.c.cli.CallTool(ctx, &pb.CallToolRequest{SessionId: s.sid, Name: "last_cancel"})
		if err != nil {
			return 0, err
		}
		return strconv.ParseInt(r.GetResult().GetContent()[0].GetText().GetText(), 10, 64)
	}
	slowArgs := map[string]any{"ms": 60000}
	list := []pp{
		{"direct go-sdk", directCall(s.direct, "echo", smallArgs), directCall(s.direct, "sleep", slowArgs), directLast},
		{"bridge gRPC", br.c.grpcCall(s.sid, "echo", smallArgs), br.c.grpcCall(s.sid, "sleep", slowArgs), bridgeLast},
		{"bridge REST", br.c.restToolCall(s.sid, "echo", smallArgs), br.c.restToolCall(s.sid, "sleep", slowArgs), bridgeLast},
	}
	var cancelRows strings.Builder
	reps := b.q(3, 20)
	for _, p := range list {
		alone, err := sample(ctx, p.fast, n)
		if err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		sctx, scancel := context.WithCancel(ctx)
		slowDone := make(chan struct{})
		go func() { _ = p.slow(sctx); close(slowDone) }()
		time.Sleep(20 * time.Millisecond)
		with, err := sample(ctx, p.fast, n)
		scancel()
		<-slowDone
		if err != nil {
			return fmt.Errorf("%s with slow: %w", p.name, err)
		}
		da, dw := summarize(alone), summarize(with)
		fmt.Fprintf(&sb, "| %s | %s | %s | %s | %s | %s |\n", p.name, fus(da.P50), fus(dw.P50), fus(da.P99), fus(dw.P99), fus(dw.Max))

		// Cancellation: from the caller's cancel to the upstream handler seeing its context end.
		var lat []time.Duration
		for range reps {
			prev, err := p.last(ctx)
			if err != nil {
				return err
			}
			cctx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() { _ = p.slow(cctx); close(done) }()
			time.Sleep(15 * time.Millisecond)
			t0 := time.Now()
			cancel()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				return fmt.Errorf("%s: cancelled call did not return", p.name)
			}
			var got int64
			for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				if got, err = p.last(ctx); err == nil && got != prev {
					break
				}
			}
			if got == prev {
				b.note("S9 %s: a cancel did not reach the server within 3 s", p.name)
				continue
			}
			lat = append(lat, time.Unix(0, got).Sub(t0))
		}
		d := summarize(lat)
		fmt.Fprintf(&cancelRows, "| %s | %d | %s | %s | %s |\n", p.name, d.N, fus(d.P50), fus(d.P90), fus(d.Max))
		switch p.name {
		case "bridge gRPC":
			b.res["cancel_grpc_p50_us"] = us(d.P50)
			b.res["hol_fast_p50_with_slow_us"] = us(dw.P50)
			b.res["hol_fast_p50_alone_us"] = us(da.P50)
		case "bridge REST":
			b.res["cancel_rest_p50_us"] = us(d.P50)
		case "direct go-sdk":
			b.res["cancel_direct_p50_us"] = us(d.P50)
		}
	}
	sb.WriteString("\nTime for a cancel to reach the server: from the caller cancelling a `sleep` call (context cancel; over REST the " +
		"HTTP request is abandoned) to the upstream handler observing its context end (both clocks are this machine's " +
		"wall clock).\n\n| path | cancels | p50 µs | p90 µs | max µs |\n|---|---|---|---|---|\n")
	sb.WriteString(cancelRows.String())
	b.rep.add("S9 — head-of-line blocking and cancellation", sb.String())
	return nil
}

// --- S6 ---

func (b *bench) s6(ctx context.Context, br *bridge) error {
	var sb strings.Builder
	n := b.q(5, 30)
	fmt.Fprintf(&sb, "%d serial open+close cycles per path, interleaved. Direct: the go-sdk client spawns the server "+
		"(stdio) or connects (HTTP) and completes the handshake (initialize, or server/discover on 2026-07-28); close ends "+
		"the session (stdio: the child exits). Bridge: CreateSession (READY) and DeleteSession over gRPC.\n\n", n)
	sb.WriteString("| upstream | path | protocol | open p50 ms | open p99 ms | close p50 ms | close p99 ms |\n|---|---|---|---|---|---|---|\n")
	snap := func(pid int) map[string]int64 {
		return map[string]int64{"fds": int64(fdCount(pid)), "children": int64(len(children(pid))), "threads": threads(pid), "rss": rss(pid)}
	}
	before := snap(br.pid())
	for _, tr := range []struct{ transport, era string }{{"stdio", ""}, {"http", ""}, {"http", era2025}} {
		server, url, label, _ := b.upstream(tr.transport, tr.era)
		var dOpen, dClose, bOpen, bClose []time.Duration
		var dProto, bProto string
		for range n {
			t0 := time.Now()
			cs, _, err := dialDirect(ctx, b.echoBin, url, tr.era)
			if err != nil {
				return err
			}
			dOpen = append(dOpen, time.Since(t0))
			dProto = cs.InitializeResult().ProtocolVersion
			t0 = time.Now()
			_ = cs.Close()
			dClose = append(dClose, time.Since(t0))

			t0 = time.Now()
			sess, err := br.c.open(ctx, server, tr.era, nil)
			if err != nil {
				return err
			}
			bOpen = append(bOpen, time.Since(t0))
			bProto = sess.GetProtocolVersion()
			t0 = time.Now()
			if err := br.c.closeSession(ctx, sess.GetSessionId()); err != nil {
				return err
			}
			bClose = append(bClose, time.Since(t0))
		}
		for _, r := range []struct {
			name, proto string
			o, c        []time.Duration
		}{{"direct go-sdk", dProto, dOpen, dClose}, {"bridge gRPC", bProto, bOpen, bClose}} {
			o, c := summarize(r.o), summarize(r.c)
			fmt.Fprintf(&sb, "| %s | %s | %s | %s | %s | %s | %s |\n", label, r.name, r.proto, fms(o.P50), fms(o.P99), fms(c.P50), fms(c.P99))
			key := "session_open_" + strings.ReplaceAll(strings.ToLower(label), " ", "_")
			if r.name == "bridge gRPC" {
				b.res[key+"_p50_ms"] = round2(float64(o.P50) / 1e6)
			} else {
				b.res[key+"_direct_p50_ms"] = round2(float64(o.P50) / 1e6)
			}
		}
	}
	// Let the last children exit and be reaped.
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline) && len(children(br.pid())) > int(before["children"]); {
		time.Sleep(20 * time.Millisecond)
	}
	after := snap(br.pid())

	// Goroutines: the binary exposes none, so the same cycles run against the instrumented twin.
	tw, err := b.startBridge(ctx, true)
	if err != nil {
		return err
	}
	defer tw.stop()
	g0, err := twinStat(tw.debug, true)
	if err != nil {
		return err
	}
	tb := snap(tw.pid())
	e0 := goroutineEntries(tw.debug)
	for range n {
		for _, t := range []struct{ server, era string }{{"echo", ""}, {"echohttp26", ""}, {"echohttp", era2025}} {
			sess, err := tw.c.open(ctx, t.server, t.era, nil)
			if err != nil {
				return err
			}
			if err := tw.c.closeSession(ctx, sess.GetSessionId()); err != nil {
				return err
			}
		}
	}
	var g1 map[string]uint64
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if g1, err = twinStat(tw.debug, true); err != nil {
			return err
		}
		if g1["/sched/goroutines:goroutines"] <= g0["/sched/goroutines:goroutines"] || time.Now().After(deadline) {
			break
		}
	}
	ta := snap(tw.pid())
	extra := goroutineDiff(e0, goroutineEntries(tw.debug))
	sb.WriteString("\nAfter the cycles, back to the baseline? (The binary has no debug endpoint, so goroutines are counted in " +
		"the instrumented twin (the binary built with `-tags benchdebug`), running the same cycles.)\n\n| process | measure | before | after |\n|---|---|---|---|\n")
	for _, k := range []string{"fds", "children", "threads"} {
		fmt.Fprintf(&sb, "| mcp-bridge | %s | %d | %d |\n", k, before[k], after[k])
	}
	fmt.Fprintf(&sb, "| mcp-bridge | RSS | %s | %s |\n", kib(float64(before["rss"])), kib(float64(after["rss"])))
	for _, k := range []string{"fds", "children"} {
		fmt.Fprintf(&sb, "| twin | %s | %d | %d |\n", k, tb[k], ta[k])
	}
	fmt.Fprintf(&sb, "| twin | goroutines | %d | %d |\n", g0["/sched/goroutines:goroutines"], g1["/sched/goroutines:goroutines"])
	fmt.Fprintf(&sb, "\nGoroutines the twin has after the cycles and did not have before, by the function they run: %s. "+
		"(`net/http.(*persistConn)` read/write loops are idle keep-alive connections to the HTTP upstreams, pooled by the "+
		"shared transport; the grpc server goroutines serve the driver's own connection, which grpc-go opens lazily at "+
		"its first call. Neither is a session.)\n", extra)
	b.res["s6_leak"] = map[string]any{"fds_before": before["fds"], "fds_after": after["fds"], "children_before": before["children"],
		"children_after": after["children"], "goroutines_before": g0["/sched/goroutines:goroutines"], "goroutines_after": g1["/sched/goroutines:goroutines"]}
	b.rep.add("S6 — session open and close", sb.String())
	return nil
}

// --- S7 ---

func (b *bench) s7(ctx context.Context) error {
	var sb strings.Builder
	nStreams := b.q(500, 10000)
	settle := b.qd(500*time.Millisecond, 2*time.Second)
	fmt.Fprintf(&sb, "Each measurement starts a fresh bridge. Memory per item = (RSS after − RSS before) / N, RSS from "+
		"/proc/PID/status after %s of quiet (the binary's RSS includes garbage not yet collected). The twin's figure is the "+
		"live heap after a forced GC plus the runtime's goroutine stack memory.\n\n", settle)
	sb.WriteString("| what | N | protocol | process | per item | fds per item | goroutines per item |\n|---|---|---|---|---|---|---|\n")

	var heapTops []string
	// Idle host streams: Connect, attached to one stdio session, over 8 connections.
	for _, twin := range []bool{false, true} {
		br, err := b.startBridge(ctx, twin)
		if err != nil {
			return err
		}
		sess, err := br.c.open(ctx, "echo", "", nil)
		if err != nil {
			br.stop()
			return err
		}
		proto := sess.GetProtocolVersion()
		conns := make([]*bridgeClient, 8)
		for i := range conns {
			if conns[i], err = newBridgeClient(strings.TrimPrefix(br.c.conn.Target(), "passthrough:///"), ""); err != nil {
				return err
			}
		}
		time.Sleep(settle)
		r0, f0 := rss(br.pid()), fdCount(br.pid())
		var g0 map[string]uint64
		h0, h1 := filepath.Join(b.tmp, "streams-heap0.pb.gz"), filepath.Join(b.tmp, "streams-heap1.pb.gz")
		if twin {
			g0, _ = twinStat(br.debug, true)
			_ = fetchTo(br.debug+"/debug/pprof/heap?gc=1", h0)
		}
		sctx, scancel := context.WithCancel(ctx)
		t0 := time.Now()
		if err := parallel(32, nStreams, func(i int) error { return conns[i%8].attachIdle(sctx, sess.GetSessionId()) }); err != nil {
			scancel()
			br.stop()
			return fmt.Errorf("opening idle streams: %w", err)
		}
		openRate := float64(nStreams) / time.Since(t0).Seconds()
		time.Sleep(settle)
		r1, f1 := rss(br.pid()), fdCount(br.pid())
		per := float64(r1-r0) / float64(nStreams)
		if twin {
			g1, _ := twinStat(br.debug, true)
			heap := float64(int64(g1["/memory/classes/heap/objects:bytes"])-int64(g0["/memory/classes/heap/objects:bytes"])) / float64(nStreams)
			gor := float64(g1["/sched/goroutines:goroutines"]-g0["/sched/goroutines:goroutines"]) / float64(nStreams)
			// Goroutine stacks are not in the heap: the runtime's stack memory after the same GC, per stream.
			stacks := float64(int64(g1["/memory/classes/heap/stacks:bytes"])-int64(g0["/memory/classes/heap/stacks:bytes"])) / float64(nStreams)
			b.res["idle_stream_stack_bytes"] = int(stacks)
			b.res["goroutine_starting_stack_bytes"] = int(g1["/gc/stack/starting-size:bytes"])
			b.logf("S7 streams twin: live heap %.0f B/stream, stacks %.0f B/stream (%.1f goroutines, starting stack %d B)", heap, stacks, gor, g1["/gc/stack/starting-size:bytes"])
			fmt.Fprintf(&sb, "| idle host stream (Connect, attached) | %d | %s | twin, live heap + goroutine stacks (after GC) | %s | — | %.1f |\n",
				nStreams, proto, kib(heap+stacks), gor)
			fmt.Fprintf(&sb, "| idle host stream (Connect, attached) | %d | %s | twin, RSS | %s | %.2f | %.1f |\n",
				nStreams, proto, kib(per), float64(f1-f0)/float64(nStreams), gor)
			b.res["idle_stream_heap_bytes"] = int(heap)
			b.res["idle_streams_per_gib_heap"] = int(float64(1<<30) / max(heap+stacks, 1))
			if err := fetchTo(br.debug+"/debug/pprof/heap?gc=1", h1); err == nil {
				if top, _, fns, err := pprofTopFns(h1, h0, "inuse_space"); err == nil {
					b.streamHeapFns, b.streamN = fns, nStreams
					heapTops = append(heapTops, fmt.Sprintf("Live heap added by %d idle host streams (twin, `inuse_space`, top functions):\n\n%s", nStreams, firstRows(top, 8)))
				}
			}
		} else {
			fmt.Fprintf(&sb, "| idle host stream (Connect, attached) | %d | %s | mcp-bridge, RSS | **%s** | %.2f | n/a |\n",
				nStreams, proto, kib(per), float64(f1-f0)/float64(nStreams))
			b.res["idle_stream_bytes"] = int(per)
			b.res["idle_streams_per_gib"] = int(float64(1<<30) / max(per, 1))
			b.res["idle_stream_open_per_s"] = int(openRate)
		}
		b.logf("S7 streams twin=%v: %.0f B/stream, %.0f streams/s", twin, per, openRate)
		scancel()
		for _, c := range conns {
			c.close()
		}
		br.stop()
	}

	// Idle Streamable HTTP sessions.
	type hc struct {
		era  string
		n    int
		twin bool
		h2c  bool // the same upstream configured with h2c: sessions share HTTP/2 connections
	}
	cases := []hc{{"", b.q(50, 1000), false, false}, {era2025, b.q(50, 1000), false, false}, {era2025, b.q(50, 1000), true, false},
		{"", b.q(50, 1000), false, true}, {era2025, b.q(50, 1000), false, true}}
	if !b.quick {
		cases = append(cases, hc{"", 10000, false, false})
	}
	worst, worstH2C := 0.0, 0.0
	for _, c := range cases {
		br, err := b.startBridge(ctx, c.twin)
		if err != nil {
			return err
		}
		server, _, _, _ := b.upstream("http", c.era)
		if c.h2c {
			server += "-h2c"
		}
		warm, err := br.c.open(ctx, server, c.era, nil) // first session pays for one-off allocations
		if err != nil {
			br.stop()
			return err
		}
		proto := warm.GetProtocolVersion()
		time.Sleep(settle)
		r0, f0 := rss(br.pid()), fdCount(br.pid())
		h0, h1 := filepath.Join(b.tmp, "http-heap0.pb.gz"), filepath.Join(b.tmp, "http-heap1.pb.gz")
		var g0 map[string]uint64
		if c.twin {
			g0, _ = twinStat(br.debug, true)
			_ = fetchTo(br.debug+"/debug/pprof/heap?gc=1", h0)
		}
		ids := make([]string, c.n)
		t0 := time.Now()
		err = parallel(16, c.n, func(i int) error {
			s, err := br.c.open(ctx, server, c.era, nil)
			if err == nil {
				ids[i] = s.GetSessionId()
			}
			return err
		})
		openRate := float64(c.n) / time.Since(t0).Seconds()
		if err != nil {
			br.stop()
			if c.n >= 10000 {
				b.note("S7: 10k HTTP sessions failed (%v); the row is missing", err)
				continue
			}
			return fmt.Errorf("opening HTTP sessions: %w", err)
		}
		time.Sleep(settle)
		r1, f1 := rss(br.pid()), fdCount(br.pid())
		per := float64(r1-r0) / float64(c.n)
		if c.twin {
			g1, _ := twinStat(br.debug, true)
			heap := float64(int64(g1["/memory/classes/heap/objects:bytes"])-int64(g0["/memory/classes/heap/objects:bytes"])) / float64(c.n)
			gor := float64(g1["/sched/goroutines:goroutines"]-g0["/sched/goroutines:goroutines"]) / float64(c.n)
			fmt.Fprintf(&sb, "| idle Streamable HTTP session (stateful server) | %d | %s | twin, live heap + 2 KiB/goroutine | %s | %.2f | %.1f |\n",
				c.n, proto, kib(heap+gor*2048), float64(f1-f0)/float64(c.n), gor)
			b.res["idle_http_session_heap_bytes"] = int(heap + gor*2048)
			if err := fetchTo(br.debug+"/debug/pprof/heap?gc=1", h1); err == nil {
				if top, _, fns, err := pprofTopFns(h1, h0, "inuse_space"); err == nil {
					b.httpHeapFns, b.httpN = fns, c.n
					heapTops = append(heapTops, fmt.Sprintf("Live heap added by %d idle Streamable HTTP sessions (twin, %s, `inuse_space`, top functions):\n\n%s", c.n, proto, firstRows(top, 8)))
				}
			}
			_ = parallel(16, c.n, func(i int) error { return br.c.closeSession(ctx, ids[i]) })
			br.stop()
			continue
		}
		how := map[bool]string{true: "stateful", false: "stateless"}[c.era == era2025] + " server"
		if c.h2c {
			how += ", `h2c: true`"
		}
		fmt.Fprintf(&sb, "| idle Streamable HTTP session (%s) | %d | %s | mcp-bridge, RSS | **%s** | %.2f | n/a |\n", how,
			c.n, proto, kib(per), float64(f1-f0)/float64(c.n))
		b.logf("S7 HTTP sessions n=%d %s h2c=%v: %.0f B/session, %.0f opens/s", c.n, proto, c.h2c, per, openRate)
		if c.h2c {
			worstH2C = max(worstH2C, per)
			b.res["idle_http_session_bytes_h2c_"+strings.ReplaceAll(proto, "-", "")] = int(per)
		} else if c.n <= 1000 || b.quick {
			worst = max(worst, per)
			b.res["idle_http_session_bytes_"+strings.ReplaceAll(proto, "-", "")] = int(per)
		} else {
			b.res["idle_http_session_bytes_10k"] = int(per)
		}
		_ = parallel(16, c.n, func(i int) error { return br.c.closeSession(ctx, ids[i]) })
		br.stop()
	}
	b.res["idle_http_session_bytes"] = int(worst)
	b.res["idle_http_session_bytes_h2c"] = int(worstH2C)
	sb.WriteString("\n`idle_http_session_bytes` in results.json is the larger of the two protocol eras at 1k sessions (binary RSS), " +
		"over HTTP/1.1 (the default): each idle session holds a connection of its own. `idle_http_session_bytes_h2c` is the same " +
		"with the server configured `h2c: true`, where sessions share HTTP/2 connections.\n")
	for _, t := range heapTops {
		sb.WriteString("\n" + t)
	}
	b.heapTops = heapTops
	b.rep.add("S7 — idle scale", sb.String())
	return nil
}

// parallel runs fn(0..n-1) on w workers and returns the first error.
func parallel(w, n int, fn func(i int) error) error {
	var mu sync.Mutex
	var first error
	next := make(chan int)
	var wg sync.WaitGroup
	for range w {
		wg.Go(func() {
			for i := range next {
				if err := fn(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		mu.Lock()
		stop := first != nil
		mu.Unlock()
		if stop {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}

// --- S10 ---

func (b *bench) s10(ctx context.Context) error {
	var sb strings.Builder
	n := b.q(3, 20)
	var ready, first, direct []time.Duration
	var idleRSS []int64
	for range n {
		g, h := freePort(), freePort()
		t0 := time.Now()
		p, err := startProc("bridge", []string{b.bridgeBin, "--config", b.cfgPath, "--grpc-addr", g, "--http-addr", h, "--log-level", "warn"}, nil, func(string) {})
		if err != nil {
			return err
		}
		at, err := waitHTTP(ctx, "http://"+h+"/healthz", 10*time.Second, 200*time.Microsecond)
		if err != nil {
			p.stop()
			return err
		}
		ready = append(ready, at.Sub(t0))
		c, err := newBridgeClient(g, h)
		if err != nil {
			p.stop()
			return err
		}
		sess, err := c.open(ctx, "echo", "", nil)
		if err == nil {
			err = c.grpcCall(sess.GetSessionId(), "echo", smallArgs)(ctx)
		}
		first = append(first, time.Since(t0))
		idleRSS = append(idleRSS, rss(p.pid()))
		c.close()
		p.stop()
		if err != nil {
			return err
		}
		t0 = time.Now()
		cs, _, err := dialDirect(ctx, b.echoBin, "", "")
		if err != nil {
			return err
		}
		err = directCall(cs, "echo", smallArgs)(ctx)
		direct = append(direct, time.Since(t0))
		cs.Close()
		if err != nil {
			return err
		}
	}
	r, f, d := summarize(ready), summarize(first), summarize(direct)
	slices.Sort(idleRSS)
	fi, _ := os.Stat(b.bridgeBin)
	fmt.Fprintf(&sb, "%d cold starts of bin/mcp-bridge (configuration with a stdio and an HTTP upstream; nothing spawned "+
		"before the first session). *Ready*: exec until GET /healthz answers 200 (polled every 0.2 ms over fresh "+
		"connections). *First call*: exec until CreateSession (spawn + handshake) and one CallTool over gRPC returned. "+
		"Direct: exec of the echo server by the go-sdk client until its first call returned.\n\n", n)
	sb.WriteString("| measure | p50 ms | p90 ms | max ms |\n|---|---|---|---|\n")
	fmt.Fprintf(&sb, "| exec → ready | **%s** | %s | %s |\n| exec → first tool call (through the bridge) | %s | %s | %s |\n| direct: exec → first tool call | %s | %s | %s |\n",
		fms(r.P50), fms(r.P90), fms(r.Max), fms(f.P50), fms(f.P90), fms(f.Max), fms(d.P50), fms(d.P90), fms(d.Max))
	fmt.Fprintf(&sb, "\nBinary size %.1f MB; RSS after the first call %s (median).\n", float64(fi.Size())/1e6, kib(float64(idleRSS[len(idleRSS)/2])))
	b.res["cold_start_ready_ms"] = round2(float64(r.P50) / 1e6)
	b.res["cold_start_first_call_ms"] = round2(float64(f.P50) / 1e6)
	b.res["binary_bytes"] = fi.Size()
	b.rep.add("S10 — cold start", sb.String())
	return nil
}

// --- S12 (short soak) ---

func (b *bench) s12(ctx context.Context, br *bridge) error {
	dur := b.qd(3*time.Second, 60*time.Second)
	if v := os.Getenv("BENCH_SOAK"); v != "" {
		if d, err := time.ParseDuration(v); err == nil {
			dur = d
		}
	}
	sat, _ := b.res["grpc_calls_per_s_c32"].(int)
	if sat == 0 {
		sat = 2000
	}
	rate := float64(sat) / 2
	s, err := b.pair(ctx, br, "stdio", "", nil)
	if err != nil {
		return err
	}
	defer s.close()
	fn := br.c.grpcCall(s.sid, "echo", smallArgs)
	interval := time.Duration(float64(time.Second) / rate)
	total := int(dur / interval)
	jobs := make(chan time.Time, total)
	var mu sync.Mutex
	var lat []time.Duration
	var errs int
	r0 := rss(br.pid())
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			for intended := range jobs {
				cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				err := fn(cctx)
				d := time.Since(intended) // from the intended send time: no coordinated omission
				cancel()
				mu.Lock()
				if err != nil {
					errs++
				} else {
					lat = append(lat, d)
				}
				mu.Unlock()
			}
		})
	}
	start := time.Now()
	for i := range total {
		at := start.Add(time.Duration(i) * interval)
		if w := time.Until(at); w > 0 {
			time.Sleep(w)
		}
		jobs <- at
	}
	close(jobs)
	wg.Wait()
	el := time.Since(start)
	d := summarize(lat)
	over := 0
	for _, l := range lat {
		if l > time.Second {
			over++
		}
	}
	r1 := rss(br.pid())
	var sb strings.Builder
	fmt.Fprintf(&sb, "Open loop over gRPC at half of the c=32 saturation rate measured in S3 (%.0f calls/s offered), for %s "+
		"(the issue's 10-minute soak: `BENCH_SOAK=10m make bench`). Latency from the intended send time.\n\n", rate, dur)
	sb.WriteString("| offered/s | achieved/s | calls | errors | p50 µs | p99 µs | max ms | calls > 1 s | bridge RSS start → end |\n|---|---|---|---|---|---|---|---|---|\n")
	fmt.Fprintf(&sb, "| %.0f | %.0f | %d | %d | %s | %s | %s | %d | %s → %s |\n", rate, float64(len(lat))/el.Seconds(), len(lat), errs,
		fus(d.P50), fus(d.P99), fms(d.Max), over, kib(float64(r0)), kib(float64(r1)))
	b.res["soak_seconds"] = int(dur.Seconds())
	b.res["soak_calls_over_1s"] = over
	b.res["soak_max_ms"] = round2(float64(d.Max) / 1e6)
	if r0 > 0 {
		b.res["soak_rss_drift_pct"] = round2(100 * float64(r1-r0) / float64(r0))
	}
	b.rep.add("S12 — soak (short)", sb.String())
	return nil
}

// firstRows keeps a markdown table's header and its first n rows.
func firstRows(table string, n int) string {
	lines := strings.Split(strings.TrimRight(table, "\n"), "\n")
	if len(lines) > n+2 {
		lines = lines[:n+2]
	}
	return strings.Join(lines, "\n") + "\n"
}
