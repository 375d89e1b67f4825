package e2e

// The hostile suite (issue 31, items 4 to 6): the walls of the process — descriptors, threads — and what a
// hostile upstream or host sends, driven against the real binary; each case asserts what the bridge keeps
// (peak RSS, descriptors) and that an innocent session keeps answering.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/mcp-bridge/mcp-bridge/e2e/probe"
	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// procFile is /proc/PID/name of the process.
func procFile(t testing.TB, pid int, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// peakRSS is the process's peak resident set (VmHWM), in bytes.
func peakRSS(t testing.TB, pid int) int64 {
	t.Helper()
	b := procFile(t, pid, "status")
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/PID/status")
	return 0
}

// plainHTTPProbe serves the probe MCP server over Streamable HTTP from the test process.
func plainHTTPProbe(t *testing.T) string {
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return probe.New() }, nil))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// Issue 31, item 4: at the process's descriptor limit (set with prlimit on the running binary), new
// sessions are refused with a reason of their own that names the key — DESCRIPTOR_LIMIT, before the
// descriptors run out — and every existing session keeps answering and says READY, /healthz answers and a
// new gRPC client connects. Before: sessions opened until the limit, the next failed UNAVAILABLE, and calls
// on existing sessions, /healthz and new clients failed with it.
func TestHostileDescriptorWall(t *testing.T) {
	if _, err := exec.LookPath("prlimit"); err != nil {
		t.Skip("prlimit (util-linux) is not installed: it sets the running bridge's descriptor limit")
	}
	url := plainHTTPProbe(t)
	b := start(t, bridgeConfig{extraServers: fmt.Sprintf("  web:\n    url: %q\n    protocolVersion: \"2025-11-25\"\n", url),
		extra: "limits:\n  maxSessionsPerPrincipal: 1000\n"})
	pid := b.cmd.Process.Pid
	limit := openFDs(t, pid) + 200
	if out, err := exec.Command("prlimit", "--pid", strconv.Itoa(pid), fmt.Sprintf("--nofile=%d:%d", limit, limit)).CombinedOutput(); err != nil {
		t.Fatalf("prlimit: %v: %s", err, out)
	}
	ctx := testCtx(t)
	var ids []string
	var refused error
	for range 1000 {
		cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "web"})
		if err != nil {
			refused = err
			break
		}
		ids = append(ids, cs.GetSession().GetSessionId())
	}
	if refused == nil {
		t.Fatalf("%d sessions opened under a limit of %d descriptors", len(ids), limit)
	}
	t.Logf("%d sessions opened under a limit of %d descriptors; then: %v", len(ids), limit, refused)
	if status.Code(refused) != codes.ResourceExhausted || reasonOf(refused) != "DESCRIPTOR_LIMIT" ||
		!strings.Contains(status.Convert(refused).Message(), "limits.descriptorReserve") {
		t.Errorf("the session over the descriptor wall: %v (reason %q), want RESOURCE_EXHAUSTED DESCRIPTOR_LIMIT naming limits.descriptorReserve", refused, reasonOf(refused))
	}
	if len(ids) == 0 {
		t.Fatal("no session opened at all")
	}
	// Every existing session answers — 16 at a time, each call needing a connection of its own — and is READY.
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			res, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: id, Name: "echo", Arguments: args(t, map[string]any{"text": "still here"})})
			if err != nil || !strings.Contains(textOf(res.GetResult()), "still here") {
				t.Errorf("session %s at the wall: %v, %v", id, res, err)
			}
			gs, err := b.client.GetSession(ctx, &pb.GetSessionRequest{SessionId: id})
			if err != nil || gs.GetSession().GetState() != pb.SessionState_SESSION_STATE_READY {
				t.Errorf("session %s at the wall: %v, %v; want READY", id, gs.GetSession().GetState(), err)
			}
		})
	}
	wg.Wait()
	resp, err := http.Get("http://" + b.http + "/healthz")
	if err != nil {
		t.Fatalf("/healthz at the wall: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz at the wall: %d", resp.StatusCode)
	}
	conn, err := grpc.NewClient(b.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := pb.NewBridgeServiceClient(conn).ListServers(ctx, &pb.ListServersRequest{}); err != nil {
		t.Errorf("a new gRPC client at the wall: %v", err)
	}
	// Closing sessions frees descriptors: a new session opens again.
	for _, id := range ids[:len(ids)/2] {
		if _, err := b.client.DeleteSession(ctx, &pb.DeleteSessionRequest{SessionId: id}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "web"}); err != nil {
		t.Errorf("a new session after half were closed: %v", err)
	}
}

// Issue 31, item 5: WatchEvents streams per principal are capped (limits.maxEventStreamsPerPrincipal):
// one more is RESOURCE_EXHAUSTED TOO_MANY_STREAMS naming the key, and closing one frees its place. Before:
// no cap, the fourth stream opened.
func TestHostileWatchStreamCap(t *testing.T) {
	b := start(t, bridgeConfig{extra: "limits:\n  maxEventStreamsPerPrincipal: 3\n"})
	ctx := testCtx(t)
	cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: serverModern})
	if err != nil {
		t.Fatal(err)
	}
	id := cs.GetSession().GetSessionId()
	watch := func(ctx context.Context) error { return watchStream(ctx, b, id) }
	cancels := make([]context.CancelFunc, 3)
	for i := range cancels {
		wctx, cancel := context.WithCancel(ctx)
		cancels[i] = cancel
		defer cancel()
		if err := watch(wctx); err != nil {
			t.Fatalf("stream %d: %v", i+1, err)
		}
	}
	err = watch(ctx)
	if status.Code(err) != codes.ResourceExhausted || reasonOf(err) != "TOO_MANY_STREAMS" || !strings.Contains(status.Convert(err).Message(), "limits.maxEventStreamsPerPrincipal") {
		t.Fatalf("a fourth stream: %v (reason %q), want RESOURCE_EXHAUSTED TOO_MANY_STREAMS naming limits.maxEventStreamsPerPrincipal", err, reasonOf(err))
	}
	cancels[0]()
	for {
		err := watch(ctx) // the first stream's end reaches the bridge shortly after the cancel
		if err == nil {
			break
		}
		if status.Code(err) != codes.ResourceExhausted {
			t.Fatalf("after one stream closed: %v", err)
		}
	}
}

// Issue 31, item 5: an SSE response whose data is not JSON is the server's bad message — 502
// UPSTREAM_BAD_MESSAGE over REST, as the README promises — and the session goes on. Before: 500 INTERNAL.
func TestHostileSSEGarbage(t *testing.T) {
	srv := newRawHTTPServer(t, func(method string, id json_) string {
		switch method {
		case "initialize":
			return rawInitialize(id, "sse-garbage")
		case "tools/list":
			return rpcResult(id, `{"tools":[{"name":"ok","inputSchema":{"type":"object"}}]}`)
		}
		return ""
	})
	srv.call = func(name string, id json_) (string, string) {
		if name == "garbage" {
			return "text/event-stream", "data: this is not json\n\ndata: neither is this\n\n"
		}
		return "application/json", rpcResult(id, `{"content":[{"type":"text","text":"fine"}]}`)
	}
	b := start(t, bridgeConfig{extraServers: srv.config("bad")})
	r := b.rest("")
	cs := r.must("POST", "/v1/sessions", `{"server":"bad"}`)
	id, _ := cs["sessionId"].(string)
	code, body := r.do("POST", "/v1/sessions/"+id+"/tools/garbage:call", `{}`)
	if code != http.StatusBadGateway || !strings.Contains(compact(body), "UPSTREAM_BAD_MESSAGE") {
		t.Errorf("SSE of non-JSON data: %d %s, want 502 UPSTREAM_BAD_MESSAGE", code, compact(body))
	}
	if code, body := r.do("POST", "/v1/sessions/"+id+"/tools/ok:call", `{}`); code != http.StatusOK {
		t.Errorf("the session after SSE garbage: %d %s", code, compact(body))
	}
}

// Issue 31, item 5: CR or LF in a tool name or URI on a 2026-07-28 Streamable HTTP session (where the name
// goes in the Mcp-Name header) is the host's error — INVALID_ARGUMENT — and the session is not touched: it
// stays READY with no restart and answers the next call. Before: 503 UNAVAILABLE and a reconnection.
func TestHostileCRLFName(t *testing.T) {
	url := plainHTTPProbe(t)
	b := start(t, bridgeConfig{extraServers: fmt.Sprintf("  web:\n    url: %q\n    protocolVersion: \"2026-07-28\"\n", url)})
	ctx := testCtx(t)
	cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "web"})
	if err != nil {
		t.Fatal(err)
	}
	id := cs.GetSession().GetSessionId()
	if _, err := b.client.ListTools(ctx, &pb.ListToolsRequest{SessionId: id}); err != nil {
		t.Fatal(err)
	}
	_, err = b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: id, Name: "echo\r\nX-Injected: 1"})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("a tool name with CR/LF: %v, want INVALID_ARGUMENT", err)
	}
	_, err = b.client.ReadResource(ctx, &pb.ReadResourceRequest{SessionId: id, Uri: "demo://x\ny"})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("a URI with LF: %v, want INVALID_ARGUMENT", err)
	}
	sessionUntouched(ctx, t, b, id)
}

// sessionUntouched checks that the session a refused request named is READY, was never restarted, and
// answers its next call (the probe's echo).
func sessionUntouched(ctx context.Context, t *testing.T, b *bridge, id string) {
	t.Helper()
	gs, err := b.client.GetSession(ctx, &pb.GetSessionRequest{SessionId: id})
	if err != nil || gs.GetSession().GetState() != pb.SessionState_SESSION_STATE_READY || gs.GetSession().GetRestarts() != 0 {
		t.Errorf("the session after: %v (restarts %d), %v; want READY, never restarted", gs.GetSession().GetState(), gs.GetSession().GetRestarts(), err)
	}
	res, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: id, Name: "echo", Arguments: args(t, map[string]any{"text": "ok"})})
	if err != nil || !strings.Contains(textOf(res.GetResult()), "ok") {
		t.Errorf("the next call: %v, %v", res, err)
	}
}

// Issue 34 (no matching on error text) and issue 31, item 5: a task id goes in the Mcp-Name header of a
// 2026-07-28 tasks/get; one with CR or LF is refused as the host's error — INVALID_ARGUMENT, by the rule
// net/http applies, checked before sending — and the session is not touched. Before: 503 UNAVAILABLE
// ("rejected by transport"), and only a match on net/http's error text kept the connection.
func TestHostileCRLFTaskID(t *testing.T) {
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return probe.New() }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(srv.Close)
	b := start(t, bridgeConfig{extraServers: fmt.Sprintf("  web:\n    url: %q\n", srv.URL+"/mcp")})
	ctx := testCtx(t)
	cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "web"})
	if err != nil {
		t.Fatal(err)
	}
	id := cs.GetSession().GetSessionId()
	if v := cs.GetSession().GetProtocolVersion(); v != "2026-07-28" {
		t.Fatalf("negotiated %q, want 2026-07-28", v)
	}
	_, err = b.client.GetTask(ctx, &pb.GetTaskRequest{SessionId: id, TaskId: "t\r\nX-Injected: 1"})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("a task id with CR/LF: %v, want INVALID_ARGUMENT", err)
	}
	sessionUntouched(ctx, t, b, id)
}

// Issue 31, item 5: opening a session has the bridge's own deadline (limits.openTimeout): a server that
// accepts and never answers the handshake fails CreateSession UNAVAILABLE naming the key, long before the
// host's deadline, and the handler it held is released. Before: only the host's deadline ended it.
func TestHostileNeverAnsweringHandshake(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select { // accept, read, never answer
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	b := start(t, bridgeConfig{extraServers: fmt.Sprintf("  mute:\n    url: %q\n    protocolVersion: \"2025-11-25\"\n", srv.URL+"/mcp"),
		extra: "limits:\n  openTimeout: 1s\n"})
	ctx, cancel := context.WithTimeout(testCtx(t), 10*time.Minute) // the host's deadline: far away
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "mute"})
		done <- err
	}()
	select {
	case err := <-done:
		if status.Code(err) != codes.Unavailable || !strings.Contains(status.Convert(err).Message(), "limits.openTimeout") {
			t.Errorf("CreateSession against a mute server: %v, want UNAVAILABLE naming limits.openTimeout", err)
		}
	case <-time.After(60 * time.Second): // a hang check, not a timing assertion: the bridge's bound is 1s
		t.Fatal("CreateSession against a server that never answers did not end within 60s")
	}
}

// nested returns a JSON object nested depth levels deep: {"a":{"a":…{}}}.
func nested(depth int) string {
	return strings.Repeat(`{"a":`, depth-1) + "{}" + strings.Repeat("}", depth-1)
}

// Issue 31, item 5: arguments nested 1,000 deep are the host's error (INVALID_ARGUMENT) and never reach the
// server (the demo server exits on them; each such call restarted it); a result nested 5,000 deep is the
// server's bad message (UPSTREAM_BAD_MESSAGE, REST 502), not INTERNAL. The session goes on.
func TestHostileDeepNesting(t *testing.T) {
	var gotDeep sync.Mutex
	deepSeen := false
	srv := newRawHTTPServer(t, func(method string, id json_) string {
		switch method {
		case "initialize":
			return rawInitialize(id, "deep")
		case "tools/list":
			return rpcResult(id, `{"tools":[{"name":"ok","inputSchema":{"type":"object"}}]}`)
		}
		return ""
	})
	srv.call = func(name string, id json_) (string, string) {
		switch name {
		case "deep-result":
			return "application/json", rpcResult(id, `{"content":[],"structuredContent":`+nested(5000)+`}`)
		case "deep-args":
			gotDeep.Lock()
			deepSeen = true
			gotDeep.Unlock()
		}
		return "application/json", rpcResult(id, `{"content":[{"type":"text","text":"fine"}]}`)
	}
	b := start(t, bridgeConfig{extraServers: srv.config("deep")})
	r := b.rest("")
	id, _ := r.must("POST", "/v1/sessions", `{"server":"deep"}`)["sessionId"].(string)
	code, body := r.do("POST", "/v1/sessions/"+id+"/tools/deep-args:call", `{"arguments":{"x":`+nested(1000)+`}}`)
	if code != http.StatusBadRequest {
		t.Errorf("arguments nested 1000 deep: %d %s, want 400", code, compact(body))
	}
	gotDeep.Lock()
	if deepSeen {
		t.Error("arguments nested 1000 deep reached the server")
	}
	gotDeep.Unlock()
	code, body = r.do("POST", "/v1/sessions/"+id+"/tools/deep-result:call", `{}`)
	if code != http.StatusBadGateway || !strings.Contains(compact(body), "UPSTREAM_BAD_MESSAGE") {
		t.Errorf("a result nested 5000 deep: %d %s, want 502 UPSTREAM_BAD_MESSAGE", code, compact(body))
	}
	if code, body := r.do("POST", "/v1/sessions/"+id+"/tools/ok:call", `{}`); code != http.StatusOK {
		t.Errorf("the session after: %d %s", code, compact(body))
	}
}

// Issue 31, item 5: an upstream's plain HTTP 400 (a text body, no JSON-RPC error) answering one call of a
// stateful session is that call's failure — the server's bad answer, INTERNAL UPSTREAM_BAD_MESSAGE (REST
// 502) — and the session is not touched: READY, no restart, the next call answered. Before, the SDK failed
// the connection: the session re-initialized (RECONNECTING) and the host got INTERNAL without a reason.
func TestHostilePlainHTTP400FailsOnlyTheCall(t *testing.T) {
	srv := serveRaw(t, &rawServer{sessionID: "plain-400", answer: func(method string, id json_) string {
		switch method {
		case "initialize":
			return rawInitialize(id, "plain400")
		case "tools/list":
			return rpcResult(id, `{"tools":[{"name":"ok","inputSchema":{"type":"object"}},{"name":"refuse","inputSchema":{"type":"object"}}]}`)
		case "tools/call":
			return rpcResult(id, `{"content":[{"type":"text","text":"fine"}]}`)
		}
		return `{"jsonrpc":"2.0","id":` + string(id) + `,"error":{"code":-32601,"message":"no"}}`
	}})
	srv.refuse = func(name string) int {
		if name == "refuse" {
			return http.StatusBadRequest
		}
		return 0
	}
	b := start(t, bridgeConfig{extraServers: srv.config("plain400")})
	ctx := testCtx(t)
	cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "plain400"})
	if err != nil {
		t.Fatal(err)
	}
	id := cs.GetSession().GetSessionId()
	_, err = b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: id, Name: "refuse"})
	if status.Code(err) != codes.Internal || reasonOf(err) != "UPSTREAM_BAD_MESSAGE" {
		t.Errorf("a call refused with a plain 400: %v (%s), want INTERNAL UPSTREAM_BAD_MESSAGE", err, reasonOf(err))
	}
	code, body := b.rest("").do("POST", "/v1/sessions/"+id+"/tools/refuse:call", `{}`)
	if code != http.StatusBadGateway || !strings.Contains(compact(body), "UPSTREAM_BAD_MESSAGE") {
		t.Errorf("REST: a call refused with a plain 400: %d %s, want 502 UPSTREAM_BAD_MESSAGE", code, compact(body))
	}
	res, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: id, Name: "ok"})
	if err != nil || !strings.Contains(textOf(res.GetResult()), "fine") {
		t.Errorf("the next call: %v, %v", res, err)
	}
	gs, err := b.client.GetSession(ctx, &pb.GetSessionRequest{SessionId: id})
	if err != nil {
		t.Fatal(err)
	}
	if st := gs.GetSession().GetState(); st != pb.SessionState_SESSION_STATE_READY || gs.GetSession().GetRestarts() != 0 {
		t.Errorf("the session after two refused calls: %v, %d restarts; want READY, 0", st, gs.GetSession().GetRestarts())
	}
}

// Issue 31, item 5: a malformed baggage header from a host must not write a line that is not JSON under
// --log-format json (OpenTelemetry's default error handler printed plain text to stderr).
func TestHostileBadBaggageKeepsJSONLog(t *testing.T) {
	b := start(t, bridgeConfig{})
	ctx := testCtx(t)
	const bad = "k1=v1;;;,=,%%%zz,\x7f=\x7f"
	req := b.rest("").request(ctx, "GET", "/v1/servers", "")
	req.Header.Set("baggage", bad)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		_ = resp.Body.Close()
	}
	if _, err := b.client.ListServers(metadata.AppendToOutgoingContext(ctx, "baggage", "=;;%zz"), &pb.ListServersRequest{}); err != nil {
		t.Logf("ListServers with a bad baggage: %v", err)
	}
	b.stop() // the whole log is read once the bridge exits
	for _, line := range b.logs.all() {
		if !json.Valid([]byte(line)) {
			t.Errorf("a log line that is not JSON under --log-format json: %q", line)
		}
	}
}

// Issue 31, items 5 and 6: a server that answers one call with 10,000 progress notifications in a burst
// takes a bounded share of the bridge: the call's SSE stream is read at the connection's stream budget
// (ADR 0110: POST response streams are paced like the standalone stream, so the server is held back and
// nothing is read faster than it is delivered; upstream_stream_throttled_total counts the waits), the call
// still gets its result, an innocent session on another server keeps answering meanwhile, and the bridge's
// peak RSS and descriptors stay bounded. Before ADR 0110 the stream was read as fast as it came and what
// passed the per-session notification rate was dropped (200,000 notifications: ~88,000 delivered).
func TestHostileNotificationFlood(t *testing.T) {
	const floods = 10_000
	var sse strings.Builder
	for i := range floods {
		fmt.Fprintf(&sse, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"x\",\"progress\":%d}}\n\n", i)
	}
	flood := sse.String()
	srv := newRawHTTPServer(t, func(method string, id json_) string {
		switch method {
		case "initialize":
			return rawInitialize(id, "flood")
		case "tools/list":
			return rpcResult(id, `{"tools":[{"name":"flood","inputSchema":{"type":"object"}}]}`)
		}
		return ""
	})
	srv.call = func(name string, id json_) (string, string) {
		return "text/event-stream", flood + "data: {\"jsonrpc\":\"2.0\",\"id\":" + string(id) + ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"flooded\"}]}}\n\n"
	}
	b := start(t, bridgeConfig{extraServers: srv.config("flood")})
	ctx := testCtx(t)
	pid := b.cmd.Process.Pid
	innocent, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: serverLegacy})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "flood"})
	if err != nil {
		t.Fatal(err)
	}
	fdsBefore, rssBefore := openFDs(t, pid), peakRSS(t, pid)
	done := make(chan error, 1)
	go func() {
		res, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: fs.GetSession().GetSessionId(), Name: "flood"})
		if err == nil && textOf(res.GetResult()) != "flooded" {
			err = fmt.Errorf("result %v", res)
		}
		done <- err
	}()
	calls := 0
	for flooding := true; flooding; {
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("the flooded call: %v", err)
			}
			flooding = false
		default:
			res, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: innocent.GetSession().GetSessionId(), Name: "echo", Arguments: args(t, map[string]any{"text": "innocent"})})
			if err != nil || !strings.Contains(textOf(res.GetResult()), "innocent") {
				t.Fatalf("the innocent session during the flood: %v, %v", res, err)
			}
			calls++
		}
	}
	rss := peakRSS(t, pid)
	t.Logf("innocent calls answered during the flood: %d; peak RSS %d MB before, %d MB after; descriptors %d before, %d after",
		calls, rssBefore>>20, rss>>20, fdsBefore, openFDs(t, pid))
	if grew := rss - rssBefore; grew > 150<<20 {
		t.Errorf("peak RSS grew by %d MB for a 1 MB flood", grew>>20)
	}
	if fds := openFDs(t, pid); fds > fdsBefore+8 {
		t.Errorf("descriptors: %d after the flood, %d before", fds, fdsBefore)
	}
	resp, err := http.Get("http://" + b.http + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var metrics strings.Builder
	_, _ = io.Copy(&metrics, resp.Body)
	var throttled float64
	for line := range strings.SplitSeq(metrics.String(), "\n") {
		if v, ok := strings.CutPrefix(line, "mcp_bridge_upstream_stream_throttled_total "); ok {
			throttled, _ = strconv.ParseFloat(v, 64)
		}
	}
	if throttled == 0 {
		t.Errorf("a %d-notification burst on a call's SSE stream was read without a wait: the stream is not paced", floods)
	}
	t.Logf("%v waits for the stream budget over a %d-notification burst", throttled, floods)
}

// deepValue is a google.protobuf.Value nested depth levels of ListValue deep (two messages a level).
func deepValue(depth int) *structpb.Value {
	v := &structpb.Value{}
	for range depth {
		v = structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{v}})
	}
	return v
}

// Issue 31, item 5: a gRPC request nested deeper than protobuf's own decoder goes (its recursion limit,
// reached near 5,000 levels of Struct values) is refused as REST refuses the same: INVALID_ARGUMENT,
// INVALID_INPUT, naming the bridge's nesting limit, on unary and streaming methods alike, and logged. Before:
// grpc-go answered INTERNAL "grpc: error unmarshalling request" before any interceptor ran.
func TestHostileGRPCDeepNesting(t *testing.T) {
	b := start(t, bridgeConfig{})
	ctx := testCtx(t)
	cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: serverLegacy})
	if err != nil {
		t.Fatal(err)
	}
	sid := cs.GetSession().GetSessionId()
	want := func(what string, err error) {
		t.Helper()
		if status.Code(err) != codes.InvalidArgument || reasonOf(err) != "INVALID_INPUT" ||
			!strings.Contains(status.Convert(err).Message(), "deeper than 128 levels") {
			t.Errorf("%s = %v (reason %q), want INVALID_ARGUMENT INVALID_INPUT naming the nesting limit", what, err, reasonOf(err))
		}
	}
	for _, depth := range []int{200, 5000, 10000} {
		req := &pb.CallToolRequest{SessionId: sid, Name: "echo",
			Arguments: &structpb.Struct{Fields: map[string]*structpb.Value{"a": deepValue(depth)}}}
		_, err := b.client.CallTool(ctx, req)
		want(fmt.Sprintf("CallTool %d deep", depth), err)
		st, err := b.client.StreamCallTool(ctx, &pb.StreamCallToolRequest{SessionId: sid, Name: "echo", Arguments: req.Arguments})
		if err == nil {
			_, err = st.Recv()
		}
		want(fmt.Sprintf("StreamCallTool %d deep", depth), err)
	}
	b.logs.waitFor(t, func(rec map[string]any) bool {
		return rec["msg"] == "gRPC message refused" && rec["method"] == "/mcpbridge.v1.BridgeService/CallTool" &&
			rec["code"] == "InvalidArgument"
	})
	// The session goes on.
	res, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: sid, Name: "echo", Arguments: args(t, map[string]any{"text": "still here"})})
	if err != nil || !strings.Contains(textOf(res.GetResult()), "still here") {
		t.Errorf("after the deep requests: %v, %v", res, err)
	}
}
