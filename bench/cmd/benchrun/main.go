// Command benchrun is mcp-bridge's benchmark suite (make bench → scripts/bench.sh). It measures the bridge
// side by side with a direct go-sdk client (the baseline) against one upstream, bench/cmd/benchecho, over
// stdio and Streamable HTTP, and rewrites BENCHMARKS.md and bench/results.json.
//
//	benchrun -bridge bin/mcp-bridge -echo .tools/bench-bin/benchecho [-supergateway DIR] [-mcpo BIN] \
//	         [-micro FILE] [-md BENCHMARKS.md] [-json bench/results.json]
//
// BENCH_QUICK=1 shrinks every scenario to a smoke run (its figures mean nothing); BENCH_ONLY=S7,S10 runs only
// the steps whose names start so (for development; the report is then partial); BENCH_NOTE adds a line to the
// report's notes (e.g. that the machine was shared). Every loop is bounded.
// Figures are deltas and ratios against the baseline measured in the same run, never timed assertions.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
)

type bench struct {
	quick        bool
	bridgeBin    string
	echoBin      string
	twinBin      string // the bridge built with -tags benchdebug: the same binary plus a pprof listener
	sgDir        string // .tools/bench-node (has node_modules/supergateway), or ""
	mcpoBin      string
	microFile    string
	tmp          string
	bareListFile string // the bare grpc server's ListTools response (writeBareList)
	cfgPath      string

	httpUp    *proc // stateful Streamable HTTP upstream (2025-11-25)
	httpURL   string
	httpUp26  *proc // stateless Streamable HTTP upstream (2026-07-28)
	httpURL26 string
	bareUp    *proc // bare grpc-go server (benchecho grpc): the floor under the bridge's gRPC path
	bare      *bareClient

	res     map[string]any // results.json
	loadAvg string
	// heapTops are S7's live-heap profiles (markdown), for the analysis.
	heapTops []string
	// The live-heap profiles' functions (flat bytes) and item counts, for the analysis.
	streamHeapFns, httpHeapFns []pkgSum
	streamN, httpN             int
	rep                        *report
	notes                      []string
	start                      time.Time
}

func main() {
	b := &bench{res: map[string]any{}, rep: &report{}, start: time.Now()}
	mdPath := flag.String("md", "BENCHMARKS.md", "report to write")
	jsonPath := flag.String("json", "bench/results.json", "results to write")
	flag.StringVar(&b.bridgeBin, "bridge", "bin/mcp-bridge", "the bridge binary")
	flag.StringVar(&b.twinBin, "twin", ".tools/bench-bin/mcp-bridge-benchdebug", "the bridge built with -tags benchdebug")
	flag.StringVar(&b.echoBin, "echo", ".tools/bench-bin/benchecho", "the upstream fixture")
	flag.StringVar(&b.sgDir, "supergateway", "", "directory with node_modules/supergateway (empty: skip)")
	flag.StringVar(&b.mcpoBin, "mcpo", "", "mcpo executable (empty: skip)")
	flag.StringVar(&b.microFile, "micro", "", "go test -bench output to include")
	flag.Parse()
	b.quick = os.Getenv("BENCH_QUICK") == "1"
	if n := os.Getenv("BENCH_NOTE"); n != "" { // what the person running it knows of the machine, e.g. its load
		b.notes = append(b.notes, n)
	}
	for _, p := range []*string{&b.bridgeBin, &b.twinBin, &b.echoBin} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			fatal(err)
		}
		*p = abs
	}
	var err error
	b.tmp, err = os.MkdirTemp("", "mcp-bridge-bench-")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(b.tmp)

	if err := b.run(); err != nil {
		b.cleanup()
		fatal(err)
	}
	b.cleanup()
	b.res["quick"] = b.quick
	b.res["duration_s"] = int(time.Since(b.start).Seconds())
	md := b.markdown() // also records targets_met in b.res
	js, _ := json.MarshalIndent(b.res, "", "  ")
	if err := os.WriteFile(*jsonPath, append(js, '\n'), 0o644); err != nil {
		fatal(err)
	}
	if err := os.WriteFile(*mdPath, []byte(md), 0o644); err != nil {
		fatal(err)
	}
	fmt.Printf("benchrun: wrote %s and %s in %s\n", *mdPath, *jsonPath, time.Since(b.start).Round(time.Second))
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "benchrun:", err)
	os.Exit(1)
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "[%6.1fs] %s\n", time.Since(b.start).Seconds(), fmt.Sprintf(format, args...))
}

func (b *bench) note(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	b.notes = append(b.notes, s)
	b.logf("note: %s", s)
}

// q picks the quick or the full value.
func (b *bench) q(quick, full int) int {
	if b.quick {
		return quick
	}
	return full
}

func (b *bench) qd(quick, full time.Duration) time.Duration {
	if b.quick {
		return quick
	}
	return full
}

func (b *bench) cleanup() {
	b.httpUp.stop()
	b.httpUp26.stop()
	if b.bare != nil {
		b.bare.close()
	}
	b.bareUp.stop()
}

func (b *bench) run() error {
	ctx := context.Background()
	if la, err := os.ReadFile("/proc/loadavg"); err == nil {
		b.loadAvg = strings.Join(strings.Fields(string(la))[:3], " ")
	}
	b.logf("GOMAXPROCS=%d quick=%v load %s", runtime.GOMAXPROCS(0), b.quick, b.loadAvg)

	// The shared Streamable HTTP upstreams.
	var err error
	if b.httpUp, b.httpURL, err = b.startHTTPUpstream(false); err != nil {
		return err
	}
	if b.httpUp26, b.httpURL26, err = b.startHTTPUpstream(true); err != nil {
		return err
	}
	if b.bareUp, b.bare, err = b.startBareGRPC(); err != nil {
		return err
	}
	if err := b.writeConfig(); err != nil {
		return err
	}

	peers := b.startPeers(ctx)
	defer peers.stop()

	br, err := b.startBridge(ctx, false)
	if err != nil {
		return err
	}
	defer br.stop()

	steps := []struct {
		name string
		fn   func() error
	}{
		{"S1 latency", func() error { return b.s1(ctx, br, peers) }},
		{"S2 payload sweep", func() error { return b.s2(ctx, br) }},
		{"S3 throughput", func() error { return b.s3(ctx, br, peers) }},
		{"S5 sampling and elicitation", func() error { return b.s5(ctx, br) }},
		{"S9 head-of-line and cancellation", func() error { return b.s9(ctx, br) }},
		{"S6 session open and close", func() error { return b.s6(ctx, br) }},
		{"S7 idle scale", func() error { return b.s7(ctx) }},
		{"S10 cold start", func() error { return b.s10(ctx) }},
		{"twin: allocations and profiles", func() error { return b.twinProfiles(ctx) }},
		{"S12 soak", func() error { return b.s12(ctx, br) }},
		{"S13 observability cost", func() error { return b.s13(ctx, br) }},
		{"S14 state", func() error { return b.s14(ctx) }}, // state.go
	}
	only := os.Getenv("BENCH_ONLY") // e.g. "S7,S10": run only the steps whose names start so
	for _, s := range steps {
		if only != "" && !slices.ContainsFunc(strings.Split(only, ","), func(p string) bool { return strings.HasPrefix(s.name, p) }) {
			continue
		}
		b.logf("== %s", s.name)
		if err := s.fn(); err != nil {
			// The bridge logs at warn: its failed RPCs and session changes say what went wrong.
			return fmt.Errorf("%s: %w\nthe bridge's log (tail):\n%s", s.name, err, br.p.stderr)
		}
	}
	b.micro()
	return nil
}

func (b *bench) startHTTPUpstream(stateless bool) (*proc, string, error) {
	urlc := make(chan string, 1)
	argv := []string{b.echoBin, "http"}
	if stateless {
		argv = append(argv, "-stateless")
	}
	p, err := startProc("benchecho-http", argv, nil, func(line string) {
		if u, ok := strings.CutPrefix(line, "listening "); ok {
			urlc <- u
		}
	})
	if err != nil {
		return nil, "", err
	}
	select {
	case u := <-urlc:
		return p, u, nil
	case <-time.After(10 * time.Second):
		p.stop()
		return nil, "", fmt.Errorf("benchecho http did not start: %s", p.stderr)
	}
}

// upstream resolves a transport ("stdio", "http") and era to the configured server, the URL for the
// direct client ("" for stdio), a label and the upstream process (0 for stdio: one per session). Over HTTP
// the handshake era goes to the stateful server, 2026-07-28 (era "") to the stateless one.
func (b *bench) upstream(transport, era string) (server, url, label string, pid int) {
	switch {
	case transport == "stdio":
		return "echo", "", "stdio", 0
	case era == era2025:
		return "echohttp", b.httpURL, "HTTP", b.httpUp.pid()
	default:
		return "echohttp26", b.httpURL26, "HTTP stateless", b.httpUp26.pid()
	}
}

func (b *bench) writeConfig() error {
	b.cfgPath = filepath.Join(b.tmp, "bridge.yaml")
	cfg := fmt.Sprintf(`mcpServers:
  echo:
    command: %q
    args: [stdio]
  echohttp:
    url: %q
  echohttp26:
    url: %q
  echohttp-h2c:
    url: %q
    h2c: true
  echohttp26-h2c:
    url: %q
    h2c: true
limits:
  maxSessions: 30000
  maxSessionsPerPrincipal: 30000
  maxPendingPerSession: 1024
  maxStdioProcesses: 512
sessions:
  idleTimeout: 0s
`, b.echoBin, b.httpURL, b.httpURL26, b.httpURL, b.httpURL26)
	return os.WriteFile(b.cfgPath, []byte(cfg), 0o644)
}

// bridge is a running bridge process (the real binary, or the twin) and a client of it.
type bridge struct {
	p     *proc
	c     *bridgeClient
	debug string // twin only: http://ADDR of pprof and /debug/stats
}

func (br *bridge) pid() int { return br.p.pid() }

func (br *bridge) stop() {
	if br == nil {
		return
	}
	br.c.close()
	br.p.stop()
}

func (b *bench) startBridge(ctx context.Context, twin bool) (*bridge, error) {
	return b.startBridgeWith(ctx, twin, b.bridgeBin, nil)
}

// startBridgeWith starts the bridge binary bin (or the twin) with env added to the environment.
func (b *bench) startBridgeWith(ctx context.Context, twin bool, bin string, env []string) (*bridge, error) {
	g, h := freePort(), freePort()
	argv := []string{bin, "--config", b.cfgPath, "--grpc-addr", g, "--http-addr", h, "--log-level", "warn"}
	var debug string
	env = append([]string{"GOMAXPROCS=" + fmt.Sprint(runtime.NumCPU())}, env...)
	if twin {
		debug = freePort()
		argv[0] = b.twinBin
		env = append(env, "MCPBRIDGE_BENCH_DEBUG_ADDR="+debug)
		debug = "http://" + debug
	}
	p, err := startProc("bridge", argv, env, func(string) {})
	if err != nil {
		return nil, err
	}
	if _, err := waitHTTP(ctx, "http://"+h+"/healthz", 20*time.Second, 2*time.Millisecond); err != nil {
		p.stop()
		return nil, fmt.Errorf("%w; stderr: %s", err, p.stderr)
	}
	c, err := newBridgeClient(g, h)
	if err != nil {
		p.stop()
		return nil, err
	}
	return &bridge{p: p, c: c, debug: debug}, nil
}

// goVersion of a binary, from go version -m.
func goVersionOf(bin string) string {
	out, err := exec.Command("go", "version", bin).Output()
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(out))
	if len(f) >= 2 {
		return f[len(f)-1]
	}
	return strings.TrimSpace(string(out))
}
