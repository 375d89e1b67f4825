package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

func twinStat(debug string, gc bool) (map[string]uint64, error) {
	u := debug + "/debug/stats"
	if gc {
		u += "?gc=1"
	}
	resp, err := http.Get(u)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]uint64{}
	return out, json.NewDecoder(resp.Body).Decode(&out)
}

func fetchTo(url, file string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(f, resp.Body)
	return err
}

// twinProfiles measures allocation per proxied call in the bridge process and takes CPU and allocation
// profiles, on the instrumented twin.
func (b *bench) twinProfiles(ctx context.Context) error {
	tw, err := b.startBridge(ctx, true)
	if err != nil {
		return err
	}
	defer tw.stop()
	var sb strings.Builder

	// Allocation per call: the twin's cumulative counters around N calls at c=1.
	n := b.q(300, 5000)
	sb.WriteString("### Allocation per proxied call (bridge process)\n\n")
	fmt.Fprintf(&sb, "Cumulative heap allocation of the twin (runtime/metrics `/gc/heap/allocs`) around %d calls at c=1, divided "+
		"by the calls. The *direct client* row is this harness's own allocation per call with the go-sdk client — the same "+
		"SDK code the bridge runs towards the upstream.\n\n", n)
	sb.WriteString("| call | upstream | protocol | bytes/call | allocs/call |\n|---|---|---|---|---|\n")
	type ac struct {
		label, tr, era, kind string
	}
	for _, c := range []ac{{"echo via gRPC", "stdio", "", "grpc"}, {"echo via REST", "stdio", "", "rest"},
		{"echo via gRPC", "http", "", "grpc"}, {"echo via gRPC", "stdio", era2025, "grpc"},
		{"blob 64 KiB via gRPC", "stdio", "", "grpc64"}, {"sample (MRTR) via gRPC + Connect", "stdio", "", "sample"}} {
		s, err := b.pair(ctx, tw, c.tr, c.era, hostCaps)
		if err != nil {
			return err
		}
		var h *host
		fn := tw.c.grpcCall(s.sid, "echo", smallArgs)
		dfn := directCall(s.direct, "echo", smallArgs)
		switch c.kind {
		case "rest":
			fn = tw.c.restToolCall(s.sid, "echo", smallArgs)
		case "grpc64":
			fn = tw.c.grpcCall(s.sid, "blob", map[string]any{"n": 64 << 10})
			dfn = directCall(s.direct, "blob", map[string]any{"n": 64 << 10})
		case "sample":
			if h, err = tw.c.startHost(ctx, s.sid); err != nil {
				return err
			}
			fn = tw.c.grpcCall(s.sid, "sample", map[string]any{"prompt": "hi"})
			dfn = directCall(s.direct, "sample", map[string]any{"prompt": "hi"})
		}
		proto := tw.c.proto(ctx, s.sid)
		if _, err := sample(ctx, fn, 200); err != nil {
			return err
		}
		m0, _ := twinStat(tw.debug, false)
		if _, err := sample(ctx, fn, n); err != nil {
			return err
		}
		m1, _ := twinStat(tw.debug, false)
		bpc := float64(m1["/gc/heap/allocs:bytes"]-m0["/gc/heap/allocs:bytes"]) / float64(n)
		opc := float64(m1["/gc/heap/allocs:objects"]-m0["/gc/heap/allocs:objects"]) / float64(n)
		fmt.Fprintf(&sb, "| %s | %s | %s | **%s** | %.0f |\n", c.label, s.label, proto, kib(bpc), opc)
		if c.tr == "stdio" && c.era == "" {
			switch c.kind {
			case "grpc":
				b.res["bridge_alloc_bytes_per_call"] = int(bpc)
				b.res["bridge_allocs_per_call"] = int(opc)
			case "rest":
				b.res["bridge_rest_alloc_bytes_per_call"] = int(bpc)
			}
		}
		if c.kind == "grpc" || c.kind == "grpc64" || c.kind == "sample" {
			// The direct client's own allocation for the same call, in this process.
			_, _ = sample(ctx, dfn, 100)
			var a0, a1 runtime.MemStats
			runtime.ReadMemStats(&a0)
			_, _ = sample(ctx, dfn, n)
			runtime.ReadMemStats(&a1)
			dbpc := float64(a1.TotalAlloc-a0.TotalAlloc) / float64(n)
			fmt.Fprintf(&sb, "| %s — direct go-sdk client, for reference | %s | %s | %s | %.0f |\n", strings.Replace(c.label, " via gRPC", "", 1),
				s.label, directProto(ctx, s.direct), kib(dbpc), float64(a1.Mallocs-a0.Mallocs)/float64(n))
			if c.kind == "grpc" && c.tr == "stdio" && c.era == "" {
				b.res["direct_client_alloc_bytes_per_call"] = int(dbpc)
			}
		}
		if h != nil {
			h.stop()
		}
		s.close()
	}

	// The twin is the binary plus a pprof listener; its added latency is printed next to S1's as a check.
	s, err := b.pair(ctx, tw, "stdio", "", nil)
	if err != nil {
		return err
	}
	defer s.close()
	rr, err := latencyRounds(ctx, s.paths(ctx, tw, "echo", smallArgs)[:2], []int{1, 1}, b.q(2, 5), b.q(100, 1000), 100)
	if err != nil {
		return err
	}
	fmt.Fprintf(&sb, "\nThe twin's own added latency over gRPC (stdio, same method as S1): p50 +%s µs (S1, the binary: +%v µs).\n",
		fus(median(rr.added(1, pP50))), b.res["grpc_added_p50_us"])

	// Profiles under load: gRPC echo at c=8.
	dur := b.qd(2*time.Second, 8*time.Second)
	fn := tw.c.grpcCall(s.sid, "echo", smallArgs)
	dir := filepath.Join(b.tmp, "prof")
	_ = os.MkdirAll(dir, 0o755)
	cpuFile, a0File, a1File := filepath.Join(dir, "cpu.pb.gz"), filepath.Join(dir, "allocs0.pb.gz"), filepath.Join(dir, "allocs1.pb.gz")
	if err := fetchTo(tw.debug+"/debug/pprof/allocs", a0File); err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() {
		errc <- fetchTo(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", tw.debug, int(dur.Seconds())-1), cpuFile)
	}()
	lr := closedLoop(ctx, fn, 8, dur, map[string]int{"front": tw.pid()})
	if err := <-errc; err != nil {
		return err
	}
	if err := fetchTo(tw.debug+"/debug/pprof/allocs", a1File); err != nil {
		return err
	}
	fmt.Fprintf(&sb, "\n### Profiles of the bridge process (twin), gRPC `echo` at c=8 over stdio, %s, %.0f calls/s\n\n", dur, lr.rate)
	cpuTop, cpuPk, err := pprofTop(cpuFile, "", "")
	if err != nil {
		b.note("pprof CPU: %v", err)
	} else {
		sb.WriteString("CPU by package (flat time, all samples of the process):\n\n" + pkgTable(cpuPk) + "\nTop functions by flat CPU:\n\n" + cpuTop)
		b.res["cpu_profile_by_package"] = pkgShares(cpuPk)
	}
	allocTop, allocPk, err := pprofTop(a1File, a0File, "alloc_space")
	if err != nil {
		b.note("pprof allocs: %v", err)
	} else {
		sb.WriteString("\nAllocated bytes by package (flat, during the run):\n\n" + pkgTable(allocPk) + "\nTop functions by allocated bytes:\n\n" + allocTop)
		b.res["alloc_profile_by_package"] = pkgShares(allocPk)
	}
	cum, err := pprofCum(cpuFile)
	if err == nil {
		sb.WriteString("\nThe bridge's own functions, cumulative CPU share (includes what they call):\n\n" + cum)
	}
	b.rep.add("Allocations and profiles", sb.String())
	return nil
}

type pkgSum struct {
	name  string
	value float64
}

// pkgOf classifies a function name by the code it belongs to.
func pkgOf(fn string) string {
	switch {
	case strings.HasPrefix(fn, "github.com/modelcontextprotocol/go-sdk/internal/json"), strings.HasPrefix(fn, "github.com/segmentio/"):
		return "go-sdk JSON (segmentio decoder)"
	case strings.HasPrefix(fn, "github.com/modelcontextprotocol/go-sdk"):
		return "go-sdk (other)"
	case strings.HasPrefix(fn, "github.com/google/jsonschema-go"):
		return "jsonschema-go (SDK)"
	case strings.HasPrefix(fn, "github.com/mcp-bridge/mcp-bridge/server"):
		return "bridge: server (conversions, service)"
	case strings.HasPrefix(fn, "github.com/mcp-bridge/mcp-bridge/mcpcore"):
		return "bridge: mcpcore"
	case strings.HasPrefix(fn, "github.com/grpc-ecosystem/"):
		return "grpc-gateway"
	case strings.HasPrefix(fn, "google.golang.org/grpc"), strings.HasPrefix(fn, "golang.org/x/net/http2"):
		return "grpc-go (+x/net/http2)"
	case strings.HasPrefix(fn, "google.golang.org/protobuf"):
		return "protobuf"
	case strings.HasPrefix(fn, "encoding/json"):
		return "encoding/json"
	case strings.HasPrefix(fn, "runtime"), strings.HasPrefix(fn, "internal/runtime"):
		return "Go runtime (GC, scheduler, malloc)"
	case strings.HasPrefix(fn, "syscall"), strings.HasPrefix(fn, "internal/poll"), strings.HasPrefix(fn, "net."),
		strings.HasPrefix(fn, "net/http"), strings.HasPrefix(fn, "os."), strings.HasPrefix(fn, "bufio"), strings.HasPrefix(fn, "io."):
		return "syscalls, net, os, io"
	}
	return "other (std: reflect, sync, strconv, …)"
}

var unitScale = map[string]float64{"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1, "s": 1e3, "B": 1, "kB": 1 << 10,
	"MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40, "": 1}

func parseQty(s string) float64 {
	i := 0
	for i < len(s) && (s[i] == '.' || s[i] == '-' || (s[i] >= '0' && s[i] <= '9')) {
		i++
	}
	v, _ := strconv.ParseFloat(s[:i], 64)
	return v * unitScale[s[i:]]
}

// pprofTop runs go tool pprof -top and returns the top-15 functions as a markdown table and flat totals
// by package.
func pprofTop(file, base, index string) (string, []pkgSum, error) {
	md, pk, _, err := pprofTopFns(file, base, index)
	return md, pk, err
}

// pprofTopFns is pprofTop that also returns the flat value of every function, largest first.
func pprofTopFns(file, base, index string) (string, []pkgSum, []pkgSum, error) {
	args := []string{"tool", "pprof", "-top", "-nodecount=100000"}
	if index != "" {
		args = append(args, "-sample_index="+index)
	}
	if base != "" {
		args = append(args, "-base", base)
	}
	out, err := exec.Command("go", append(args, file)...).CombinedOutput()
	if err != nil {
		return "", nil, nil, fmt.Errorf("%v: %.300s", err, out)
	}
	var fns []pkgSum
	var top strings.Builder
	top.WriteString("| flat | flat % | cum % | function |\n|---|---|---|---|\n")
	sums := map[string]float64{}
	rows := 0
	started := false
	for line := range strings.SplitSeq(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "flat" {
			started = true
			continue
		}
		if !started || len(f) < 6 {
			continue
		}
		name := strings.Join(f[5:], " ")
		v := parseQty(f[0])
		sums[pkgOf(name)] += v
		fns = append(fns, pkgSum{name, v})
		if rows < 15 {
			fmt.Fprintf(&top, "| %s | %s | %s | `%s` |\n", f[0], f[1], f[4], shortFn(name))
			rows++
		}
	}
	var pk []pkgSum
	for k, v := range sums {
		pk = append(pk, pkgSum{k, v})
	}
	sort.Slice(pk, func(i, j int) bool { return pk[i].value > pk[j].value })
	sort.SliceStable(fns, func(i, j int) bool { return fns[i].value > fns[j].value })
	return top.String(), pk, fns, nil
}

func shortFn(s string) string {
	s = strings.TrimPrefix(s, "github.com/")
	s = strings.TrimPrefix(s, "google.golang.org/")
	if len(s) > 110 {
		s = s[:110] + "…"
	}
	return s
}

func pkgTable(pk []pkgSum) string {
	var total float64
	for _, p := range pk {
		total += p.value
	}
	var sb strings.Builder
	sb.WriteString("| code | share |\n|---|---|\n")
	for _, p := range pk {
		fmt.Fprintf(&sb, "| %s | %.1f %% |\n", p.name, 100*p.value/max(total, 1e-9))
	}
	return sb.String()
}

func pkgShares(pk []pkgSum) map[string]float64 {
	var total float64
	for _, p := range pk {
		total += p.value
	}
	out := map[string]float64{}
	for _, p := range pk {
		out[p.name] = round2(100 * p.value / max(total, 1e-9))
	}
	return out
}

// pprofCum lists the bridge's own functions by cumulative CPU share.
func pprofCum(file string) (string, error) {
	out, err := exec.Command("go", "tool", "pprof", "-top", "-cum", "-nodecount=100000", file).CombinedOutput()
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	sb.WriteString("| cum % | function |\n|---|---|\n")
	n := 0
	for line := range strings.SplitSeq(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 6 || !strings.HasPrefix(f[5], "github.com/mcp-bridge/") {
			continue
		}
		fmt.Fprintf(&sb, "| %s | `%s` |\n", f[4], shortFn(strings.Join(f[5:], " ")))
		if n++; n >= 15 {
			break
		}
	}
	return sb.String(), nil
}

// goroutineEntries counts the twin's goroutines by the function each was started with (the outermost frame
// of /debug/pprof/goroutine?debug=1).
func goroutineEntries(debug string) map[string]int {
	resp, err := http.Get(debug + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := map[string]int{}
	for group := range strings.SplitSeq(string(raw), "\n\n") {
		lines := strings.Split(strings.TrimSpace(group), "\n")
		if len(lines) < 2 || !strings.Contains(lines[0], " @ ") {
			continue
		}
		n, err := strconv.Atoi(strings.Fields(lines[0])[0])
		if err != nil {
			continue
		}
		last := ""
		for _, l := range lines[1:] {
			if f := strings.Fields(l); len(f) >= 3 && f[0] == "#" {
				last = f[2]
			}
		}
		if i := strings.LastIndex(last, "+0x"); i > 0 {
			last = last[:i]
		}
		out[last] += n
	}
	return out
}

// goroutineDiff lists the entry functions with more goroutines after than before.
func goroutineDiff(before, after map[string]int) string {
	var keys []string
	for k, v := range after {
		if v > before[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("`%s` +%d", shortFn(k), after[k]-before[k]))
	}
	return strings.Join(parts, ", ")
}
