// Package e2e tests the real mcp-bridge binary: TestMain builds it (or takes $MCPBRIDGE_BIN), each test
// starts it on ports the kernel picks (read back from its "mcp-bridge serving" log line) with a
// configuration file, and talks to it through a Go gRPC client and plain net/http, as hosts and curl users
// do. The upstream servers are this test binary itself acting as the demo server plus probe tools (package
// probe), pinned to 2025-11-25 or negotiating 2026-07-28, and @modelcontextprotocol/server-everything when
// installed (`make node-tools`).
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/mcp-bridge/mcp-bridge/e2e/probe"
	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/internal/testhost"
)

// binary is the mcp-bridge executable under test.
var binary string

func TestMain(m *testing.M) {
	probe.MaybeRun() // the bridge starts this binary as its upstream MCP server
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if b := os.Getenv("MCPBRIDGE_BIN"); b != "" {
		abs, err := filepath.Abs(b)
		if err != nil {
			fmt.Fprintln(os.Stderr, "e2e:", err)
			return 1
		}
		binary = abs
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "mcp-bridge-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "mcp-bridge")
	cmd := exec.Command("go", "build", "-race", "-o", binary, "github.com/mcp-bridge/mcp-bridge/cmd/mcp-bridge")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building mcp-bridge:", err)
		return 1
	}
	return m.Run()
}

// Servers of the default test configuration.
const (
	serverModern = "demo"      // negotiates: 2026-07-28
	serverLegacy = "demo-2025" // pinned to 2025-11-25
)

var versions = []struct{ server, protocol string }{
	{serverModern, "2026-07-28"},
	{serverLegacy, "2025-11-25"},
}

// bridge is one running mcp-bridge process.
type bridge struct {
	t       *testing.T
	grpc    string // host:port
	http    string // host:port
	admin   string // host:port of the admin listener, when bridgeConfig.args turned it on
	cmd     *exec.Cmd
	exited  chan struct{}
	reports *probe.Reports
	conn    *grpc.ClientConn
	client  pb.BridgeServiceClient
	logs    *testLog
	killed  bool // ended with SIGKILL by kill: its exit status is not checked
}

// probePlaceholder, in bridgeConfig.extraServers, becomes the command and environment of the probe
// server (this test binary), reporting to the test's Reports; see probeServer.
const probePlaceholder = "    {{probe}}\n"

// probeServer is the YAML of one more probe server named name, with more keys (indented by four spaces).
func probeServer(name, more string) string { return "  " + name + ":\n" + probePlaceholder + more }

type bridgeConfig struct {
	defaults     bool   // start without a configuration file: the built-in demo server only
	extraServers string // YAML lines added under mcpServers
	extra        string // YAML appended at the top level
	files        map[string]string
	flags        []string // more flags, after (and so overriding) the harness's own
	args         []string // more command-line flags (after flags)
	env          []string // more environment variables ("KEY=value")
}

// start writes the configuration and starts the bridge; it returns once the bridge listens. The bridge is
// stopped with SIGTERM when the test ends and must exit 0.
func start(t *testing.T, cfg bridgeConfig) *bridge {
	t.Helper()
	dir := t.TempDir()
	reports, err := probe.Listen()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reports.Close)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	server := func(name, version string) string {
		s := fmt.Sprintf("  %s:\n    command: %q\n    env:\n      %s: \"1\"\n      %s: %q\n", name, exe, probe.EnvRun, probe.EnvReport, reports.Addr())
		if version != "" {
			s += fmt.Sprintf("    protocolVersion: %q\n", version)
		}
		return s
	}
	// extraServers may start a probe server with probeServer(name).
	extra := strings.ReplaceAll(cfg.extraServers, probePlaceholder, "    command: "+strconv.Quote(exe)+"\n    env:\n      "+probe.EnvRun+": \"1\"\n      "+probe.EnvReport+": "+strconv.Quote(reports.Addr())+"\n")
	conf := "mcpServers:\n" + server(serverModern, "") + server(serverLegacy, "2025-11-25") + extra + cfg.extra
	for name, body := range cfg.files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "bridge.yaml")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	flags := []string{"--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--log-format", "json", "--log-level", "debug"}
	if !cfg.defaults {
		flags = append(flags, "--config", path)
	}
	flags = append(flags, cfg.flags...)
	cmd := exec.Command(binary, append(flags, cfg.args...)...)
	if cfg.env != nil {
		cmd.Env = append(os.Environ(), cfg.env...)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	logs := &testLog{t: t, changed: make(chan struct{}), eof: make(chan struct{})}
	b := &bridge{t: t, cmd: cmd, exited: make(chan struct{}), reports: reports, logs: logs}
	ready := make(chan struct{ grpc, http, admin string }, 1)
	go func() { // ends when the process closes stderr, i.e. exits
		defer close(logs.eof)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			logs.log(line)
			var rec struct {
				Msg   string `json:"msg"`
				GRPC  string `json:"grpc"`
				HTTP  string `json:"http"`
				Admin string `json:"admin"`
			}
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "mcp-bridge serving" {
				ready <- struct{ grpc, http, admin string }{rec.GRPC, rec.HTTP, rec.Admin}
			}
		}
	}()
	go func() { // ends when the process exits; Wait only after stderr is read to its end (os/exec)
		<-logs.eof
		_ = cmd.Wait()
		close(b.exited)
	}()
	select {
	case a := <-ready:
		b.grpc, b.http, b.admin = a.grpc, a.http, a.admin
	case <-b.exited:
		t.Fatalf("mcp-bridge exited before serving: %v", cmd.ProcessState)
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("mcp-bridge did not report its addresses within 60s")
	}
	conn, err := grpc.NewClient(b.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	b.conn, b.client = conn, pb.NewBridgeServiceClient(conn)
	t.Cleanup(func() {
		_ = conn.Close()
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-b.exited:
			if code := cmd.ProcessState.ExitCode(); code != 0 && !b.killed {
				t.Errorf("mcp-bridge exited with status %d after SIGTERM", code)
			}
		case <-time.After(40 * time.Second):
			_ = cmd.Process.Kill()
			<-b.exited
			t.Error("mcp-bridge did not exit within 40s of SIGTERM")
		}
		logs.stop()
	})
	return b
}

// stop ends the bridge with SIGTERM and waits for it to exit and for its log to be read to the end. The
// test's cleanup still checks the exit status.
func (b *bridge) stop() {
	b.t.Helper()
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.exited:
	case <-time.After(40 * time.Second):
		b.t.Fatal("mcp-bridge did not exit within 40s of SIGTERM")
	}
}

// kill ends the bridge with SIGKILL, as a crash or a node failure would, and waits for it to exit.
func (b *bridge) kill() {
	b.t.Helper()
	b.killed = true
	_ = b.cmd.Process.Kill()
	<-b.exited
}

// testLog copies the bridge's log to the test log until the test ends, and keeps every line.
type testLog struct {
	mu      sync.Mutex // guards the fields below
	t       *testing.T
	done    bool
	lines   []string
	changed chan struct{} // closed and replaced at every line
	eof     chan struct{} // closed when the bridge's stderr has been read to its end
}

func (l *testLog) log(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
	close(l.changed)
	l.changed = make(chan struct{})
	if !l.done {
		l.t.Log(line)
	}
}

// all returns the lines logged so far.
func (l *testLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// waitFor returns the first log record (JSON) for which match is true, waiting for it to be logged.
func (l *testLog) waitFor(t testing.TB, match func(rec map[string]any) bool) map[string]any {
	t.Helper()
	timeout := time.After(60 * time.Second)
	seen := 0
	for {
		l.mu.Lock()
		lines, ch := l.lines[seen:], l.changed
		l.mu.Unlock()
		for _, line := range lines {
			var rec map[string]any
			if json.Unmarshal([]byte(line), &rec) == nil && match(rec) {
				return rec
			}
		}
		seen += len(lines)
		select {
		case <-ch:
		case <-l.eof:
			t.Fatal("the bridge exited before logging the expected record")
		case <-timeout:
			t.Fatal("timed out waiting for a log record")
		}
	}
}

func (l *testLog) stop() {
	l.mu.Lock()
	l.done = true
	l.mu.Unlock()
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func withToken(ctx context.Context, token string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
}

// --- REST ---

// rest is a plain HTTP client of the bridge's REST API, as curl would use it.
type rest struct {
	t     *testing.T
	base  string
	token string
}

func (b *bridge) rest(token string) *rest {
	return &rest{t: b.t, base: "http://" + b.http, token: token}
}

func (r *rest) request(ctx context.Context, method, path, body string) *http.Request {
	r.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.base+path, rd)
	if err != nil {
		r.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if r.token != "" {
		req.Header.Set("Authorization", "Bearer "+r.token)
	}
	return req
}

// do sends a request and returns the status and the body decoded as JSON.
func (r *rest) do(method, path, body string) (int, map[string]any) {
	r.t.Helper()
	resp, err := http.DefaultClient.Do(r.request(testCtx(r.t), method, path, body))
	if err != nil {
		r.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		r.t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		r.t.Fatalf("%s %s: %d, body is not a JSON object: %q", method, path, resp.StatusCode, raw)
	}
	return resp.StatusCode, out
}

// must is do that fails unless the status is 200.
func (r *rest) must(method, path, body string) map[string]any {
	r.t.Helper()
	code, out := r.do(method, path, body)
	if code != http.StatusOK {
		r.t.Fatalf("%s %s %s = %d %v", method, path, body, code, out)
	}
	return out
}

// async runs must in a goroutine.
func (r *rest) async(method, path, body string) <-chan map[string]any {
	ch := make(chan map[string]any, 1)
	go func() {
		resp, err := http.DefaultClient.Do(r.request(context.Background(), method, path, body))
		if err != nil {
			ch <- map[string]any{"transportError": err.Error()}
			return
		}
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		if resp.StatusCode != http.StatusOK {
			out = map[string]any{"httpStatus": resp.StatusCode, "body": out}
		}
		ch <- out
	}()
	return ch
}

// events opens GET /v1/sessions/{id}/events and delivers its newline-delimited JSON lines as Events.
type events struct {
	t      *testing.T
	ch     chan *pb.Event
	cancel context.CancelFunc
	done   chan struct{}
	// header is the response's header, set before the first event is sent on ch (read it after one).
	header http.Header
}

func (r *rest) events(sessionID string) *events {
	r.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	e := &events{t: r.t, ch: make(chan *pb.Event, 64), cancel: cancel, done: make(chan struct{})}
	req := r.request(ctx, http.MethodGet, "/v1/sessions/"+sessionID+"/events", "")
	go func() { // ends when the response ends or cancel is called
		defer close(e.done)
		defer close(e.ch)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		e.header = resp.Header
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var line struct {
				Result json.RawMessage `json:"result"`
			}
			if json.Unmarshal(sc.Bytes(), &line) != nil || line.Result == nil {
				continue
			}
			var ev pb.Event
			if protojson.Unmarshal(line.Result, &ev) == nil {
				e.ch <- &ev
			}
		}
	}()
	r.t.Cleanup(e.close)
	return e
}

func (e *events) close() {
	e.cancel()
	<-e.done
}

// next returns the next event matching match.
func (e *events) next(match func(*pb.Event) bool) *pb.Event {
	e.t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case ev, ok := <-e.ch:
			if !ok {
				e.t.Fatal("event stream ended")
			}
			if match(ev) {
				return ev
			}
		case <-timeout:
			e.t.Fatal("timed out waiting for an event")
		}
	}
}

// eventually calls cond until it returns true or within has passed, pausing pollPause between tries, and
// reports whether cond returned true; the caller fails with its own message (cond keeps its last error)
// when it did not. It is the one wait of these tests on a condition that another process reaches with
// nothing to signal it — a session restored, a lease lapsing on Redis's clock, a proxy routing again, a
// port released — and so the one place they pause. Where the bridge does signal (its log: testLog.waitFor;
// an event stream, a host's Connect stream), wait on that instead.
func eventually(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollPause)
	}
	return true
}

// pollPause is eventually's pause between tries: short next to the bounds it is used with, long enough not
// to load the machine.
const pollPause = 50 * time.Millisecond

func await[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	return testhost.Await(t, ch)
}

// jsonPath digs into decoded JSON: keys for objects, ints for arrays.
func jsonPath(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func compact(v any) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSpace(buf.String())
}
