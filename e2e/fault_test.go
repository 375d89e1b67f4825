package e2e

// The fault suite: the moments a bridge exists for — an upstream that restarts, crashes or goes away, a
// request nobody answers, a shutdown — tried against the real binary, asserting the status a host gets.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/mcp-bridge/mcp-bridge/e2e/probe"
	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// restartableServer is a Streamable HTTP MCP server (the probe) on a fixed loopback port that can be
// restarted — forgetting its sessions, as a real server's restart does — or taken down and brought back.
// How it refuses a session id it does not know is set by lost, to mimic the servers in the wild.
type restartableServer struct {
	t    *testing.T
	addr string
	lost lostStyle

	mu      sync.Mutex
	srv     *http.Server
	known   map[string]bool // session ids the current incarnation issued
	done    chan struct{}   // closed when the current incarnation's Serve returned
	deleted map[string]bool // session ids a client ended with DELETE
}

// lostStyle is how a server answers a request for a session it does not know.
type lostStyle struct {
	status int
	body   string
	get405 bool // GET (the standalone SSE stream) answers 405, as servers without one do
}

var lostStyles = []struct {
	name  string
	style lostStyle
}{
	// The spec's 404; the TypeScript SDK's body (its "Session not found" is -32001).
	{"404 -32001", lostStyle{http.StatusNotFound, `{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`, true}},
	// The official Python SDK: 404 with -32600.
	{"404 -32600", lostStyle{http.StatusNotFound, `{"jsonrpc":"2.0","id":"server-error","error":{"code":-32600,"message":"Session not found"}}`, false}},
	// @modelcontextprotocol/server-everything: 400.
	{"400 -32000", lostStyle{http.StatusBadRequest, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}`, false}},
}

func newRestartableServer(t *testing.T, lost lostStyle) *restartableServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &restartableServer{t: t, addr: ln.Addr().String(), lost: lost}
	r.serve(ln)
	t.Cleanup(r.stop)
	return r
}

func (r *restartableServer) url() string { return "http://" + r.addr + "/mcp" }

func (r *restartableServer) serve(ln net.Listener) {
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return probe.New() }, nil)
	known := map[string]bool{} // guarded by r.mu
	h := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if r.lost.get405 && req.Method == http.MethodGet {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		if req.Method == http.MethodDelete {
			r.mu.Lock()
			if r.deleted == nil {
				r.deleted = map[string]bool{}
			}
			r.deleted[req.Header.Get("Mcp-Session-Id")] = true
			r.mu.Unlock()
		}
		if id := req.Header.Get("Mcp-Session-Id"); id != "" {
			r.mu.Lock()
			ok := known[id]
			r.mu.Unlock()
			if !ok {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(r.lost.status)
				_, _ = w.Write([]byte(r.lost.body))
				return
			}
		}
		sdk.ServeHTTP(&sessionRecorder{ResponseWriter: w, record: func(id string) {
			r.mu.Lock()
			known[id] = true
			r.mu.Unlock()
		}}, req)
	})
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	// One connection per request: a restart must meet the lost session, not a pooled connection that the
	// restart cut before the client noticed (that request fails UNAVAILABLE: whether it reached the server
	// cannot be known).
	srv.SetKeepAlivesEnabled(false)
	done := make(chan struct{})
	go func() { // ends when srv is closed (stop)
		defer close(done)
		_ = srv.Serve(ln)
	}()
	r.mu.Lock()
	r.srv, r.known, r.done = srv, known, done
	r.mu.Unlock()
}

// stop takes the server down: its port refuses connections, open connections are cut.
func (r *restartableServer) stop() {
	r.mu.Lock()
	srv, done := r.srv, r.done
	r.srv = nil
	r.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
		<-done
	}
}

// start brings a stopped server back on the same port, with no sessions.
func (r *restartableServer) start() {
	r.t.Helper()
	var ln net.Listener
	var err error
	// The port was just released (the kernel says nothing when); another process could only take it by chance.
	if !eventually(5*time.Second, func() bool {
		ln, err = net.Listen("tcp", r.addr)
		return err == nil
	}) {
		r.t.Fatalf("listening again on %s: %v", r.addr, err)
	}
	r.serve(ln)
}

func (r *restartableServer) restart() { r.stop(); r.start() }

// sawDelete reports whether a session the current incarnation issued was ended with DELETE.
func (r *restartableServer) sawDelete() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for id := range r.deleted {
		if r.known[id] {
			return true
		}
	}
	return false
}

// sessionRecorder records the Mcp-Session-Id the SDK issues.
type sessionRecorder struct {
	http.ResponseWriter
	record func(string)
}

func (s *sessionRecorder) WriteHeader(code int) {
	if id := s.Header().Get("Mcp-Session-Id"); id != "" {
		s.record(id)
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *sessionRecorder) Write(b []byte) (int, error) {
	if id := s.Header().Get("Mcp-Session-Id"); id != "" {
		s.record(id)
	}
	return s.ResponseWriter.Write(b)
}

func (s *sessionRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func reasonOf(err error) string {
	for _, d := range status.Convert(err).Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info.GetReason()
		}
	}
	return ""
}

// Issue 10, case 1: a Streamable HTTP server that restarts (forgetting its sessions) is re-initialized
// transparently whatever it answers for the lost session, and the call that met the loss succeeds; a
// server that is down puts the session in RECONNECTING and calls fail UNAVAILABLE at once; DeleteSession
// ends within its bound in every state.
func TestFaultHTTPServerRestarts(t *testing.T) {
	servers := make([]*restartableServer, len(lostStyles))
	var extra strings.Builder
	for i, ls := range lostStyles {
		servers[i] = newRestartableServer(t, ls.style)
		fmt.Fprintf(&extra, "  up%d:\n    url: %q\n    protocolVersion: \"2025-11-25\"\n    restart: {maxRestarts: 50, initialBackoff: 50ms, maxBackoff: 300ms}\n", i, servers[i].url())
	}
	b := start(t, bridgeConfig{extraServers: extra.String()})
	for i, ls := range lostStyles {
		t.Run(ls.name, func(t *testing.T) {
			srv := servers[i]
			ctx := testCtx(t)
			cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: fmt.Sprintf("up%d", i)})
			if err != nil {
				t.Fatal(err)
			}
			id := cs.GetSession().GetSessionId()
			h := b.connect(ctx)
			h.Attach(id)
			echo := func(ctx context.Context) (*pb.CallToolResponse, error) {
				return b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: id, Name: "echo", Arguments: args(t, map[string]any{"text": "hi"})})
			}
			if _, err := echo(ctx); err != nil {
				t.Fatalf("before the restart: %v", err)
			}

			// Restart: the next call meets the lost session, and succeeds on the re-initialized one.
			srv.restart()
			cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			res, err := echo(cctx)
			cancel()
			if err != nil || !strings.Contains(textOf(res.GetResult()), "hi") {
				t.Fatalf("after the restart: %v, %v; want the call to succeed on a re-initialized session", res, err)
			}
			if st := h.WaitState(id, pb.SessionState_SESSION_STATE_READY); st.GetRestarts() < 1 {
				t.Errorf("ready again with restarts %d", st.GetRestarts())
			}

			// Down: RECONNECTING, and calls fail UNAVAILABLE promptly (long before their deadline).
			srv.stop()
			cctx, cancel = context.WithTimeout(ctx, 20*time.Second)
			_, err = echo(cctx)
			cancel()
			if status.Code(err) != codes.Unavailable {
				t.Fatalf("while the server is down: %v, want UNAVAILABLE", err)
			}
			h.WaitState(id, pb.SessionState_SESSION_STATE_RECONNECTING)
			srv.start()
			h.WaitState(id, pb.SessionState_SESSION_STATE_READY)
			if _, err := echo(ctx); err != nil {
				t.Fatalf("after the server came back: %v", err)
			}

			// Delete ends within its bound, here from READY; TestFaultShutdown covers the rest. The server
			// is told: the bridge ends its MCP session with DELETE.
			dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
			defer cancel()
			if _, err := b.client.DeleteSession(dctx, &pb.DeleteSessionRequest{SessionId: id}); err != nil {
				t.Fatalf("DeleteSession: %v", err)
			}
			if !srv.sawDelete() {
				t.Error("DeleteSession did not end the MCP session upstream (no HTTP DELETE)")
			}
		})
	}
}

// Issue 10, case 1 (the wedge): a session whose server is gone for good is closed by supervision, and
// DeleteSession and shutdown end within their bounds meanwhile.
func TestFaultHTTPServerGone(t *testing.T) {
	srv := newRestartableServer(t, lostStyles[0].style)
	b := start(t, bridgeConfig{extraServers: fmt.Sprintf("  gone:\n    url: %q\n    protocolVersion: \"2025-11-25\"\n    restart: {maxRestarts: 1000, initialBackoff: 100ms, maxBackoff: 200ms}\n", srv.url())})
	ctx := testCtx(t)
	var ids []string
	for range 2 {
		cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "gone"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, cs.GetSession().GetSessionId())
	}
	h := b.connect(ctx)
	h.Attach(ids...)
	srv.stop()
	for _, id := range ids {
		_, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: id, Name: "echo", Arguments: args(t, map[string]any{"text": "x"})})
		if status.Code(err) != codes.Unavailable {
			t.Fatalf("call = %v, want UNAVAILABLE", err)
		}
		h.WaitState(id, pb.SessionState_SESSION_STATE_RECONNECTING)
	}
	dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if _, err := b.client.DeleteSession(dctx, &pb.DeleteSessionRequest{SessionId: ids[0]}); err != nil {
		t.Fatalf("DeleteSession of a RECONNECTING session: %v", err)
	}
	// The other stays RECONNECTING; the bridge must still shut down within its bound (the cleanup of
	// start sends SIGTERM and requires exit status 0).
	began := time.Now()
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	<-b.exited
	if took := time.Since(began); took > 30*time.Second {
		t.Errorf("shutdown with a RECONNECTING session took %v, over the 25s bound", took)
	}
}

// Issue 10, case 2: a stdio server killed while an MRTR elicitation is pending (2026-07-28). The session
// restarts the server; the host's answer, given after the crash, goes out in the retry to the new process
// and the call completes with it. The answer is never accepted and then lost.
func TestFaultMRTRAnswerSurvivesCrash(t *testing.T) {
	b := start(t, bridgeConfig{})
	ctx := testCtx(t)
	cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: serverModern, HostCapabilities: allCaps})
	if err != nil {
		t.Fatal(err)
	}
	if v := cs.GetSession().GetProtocolVersion(); v != "2026-07-28" {
		t.Fatalf("protocol %s, want 2026-07-28", v)
	}
	id := cs.GetSession().GetSessionId()
	h := b.connect(ctx)
	h.Attach(id)
	pid := b.serverPID(ctx, id)
	done := b.callAsync(ctx, &pb.CallToolRequest{SessionId: id, Name: "elicit"})
	req := h.NextRequest()
	if req.GetDelivery() != pb.Delivery_DELIVERY_MULTI_ROUND_TRIP {
		t.Fatalf("delivery %v, want MRTR", req.GetDelivery())
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	h.WaitState(id, pb.SessionState_SESSION_STATE_RECONNECTING)
	h.WaitState(id, pb.SessionState_SESSION_STATE_READY)
	ack := h.Reply(req.GetRequestId(), &pb.HostAnswer{Answer: &pb.HostAnswer_Elicitation{Elicitation: &pb.ElicitResult{
		Action: pb.ElicitAction_ELICIT_ACTION_ACCEPT, Content: args(t, map[string]any{"name": "Ada", "age": 36}),
	}}})
	if !ack.GetAccepted() {
		t.Fatalf("ack = %v", ack)
	}
	res := await(t, done)
	if res.Err != nil || !strings.Contains(textOf(res.Resp.GetResult()), "accepted: name=Ada age=36") {
		t.Fatalf("elicit after the crash = %v, %v; want the answer delivered to the restarted server", res.Resp, res.Err)
	}
}

// Issue 10, case 3: a server that never answers is bounded by its requestTimeout: the call fails
// DEADLINE_EXCEEDED (reason UPSTREAM_REQUEST_TIMEOUT) and the request is cancelled upstream, although the
// host set no deadline.
func TestFaultRequestTimeout(t *testing.T) {
	b := start(t, bridgeConfig{extraServers: probeServer("slow", "    protocolVersion: \"2025-11-25\"\n    requestTimeout: 1s\n") +
		probeServer("slow-modern", "    requestTimeout: 1s\n")})
	for _, server := range []string{"slow", "slow-modern"} {
		t.Run(server, func(t *testing.T) {
			cs, err := b.client.CreateSession(testCtx(t), &pb.CreateSessionRequest{Server: server})
			if err != nil {
				t.Fatal(err)
			}
			done := b.callAsync(context.Background(), &pb.CallToolRequest{SessionId: cs.GetSession().GetSessionId(), Name: "block", Arguments: args(t, map[string]any{"tag": server, "durationSeconds": 40})})
			if got := await(t, b.reports.Lines); got != "started "+server {
				t.Fatalf("report %q", got)
			}
			res := await(t, done)
			if status.Code(res.Err) != codes.DeadlineExceeded || reasonOf(res.Err) != "UPSTREAM_REQUEST_TIMEOUT" {
				t.Fatalf("call = %v (%s), want DEADLINE_EXCEEDED UPSTREAM_REQUEST_TIMEOUT", res.Err, reasonOf(res.Err))
			}
			if got := await(t, b.reports.Lines); got != "cancelled "+server {
				t.Fatalf("report %q, want the timeout to cancel the tool upstream", got)
			}
		})
	}
}

// Issue 10, case 4: on SIGTERM pending server requests end at once as "bridge shutting down" and the
// calls waiting on them fail UNAVAILABLE (SHUTTING_DOWN) at once, on both eras; a REST call still running
// at the HTTP drain bound gets a 503 JSON error; the process exits 0.
func TestFaultShutdown(t *testing.T) {
	b := start(t, bridgeConfig{})
	ctx := testCtx(t)
	h := b.connect(ctx)
	type pending struct {
		done <-chan callResult
		req  *pb.ServerRequest
	}
	var waits []pending
	for _, v := range versions {
		cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: v.server, HostCapabilities: allCaps})
		if err != nil {
			t.Fatal(err)
		}
		id := cs.GetSession().GetSessionId()
		h.Attach(id)
		done := b.callAsync(ctx, &pb.CallToolRequest{SessionId: id, Name: "elicit"})
		waits = append(waits, pending{done, h.NextRequest()})
	}
	r := b.rest("")
	sid, _ := r.must("POST", "/v1/sessions", `{"server": "`+serverLegacy+`"}`)["sessionId"].(string)
	restDone := make(chan struct {
		code int
		body map[string]any
	}, 1)
	go func() {
		code, body := r.do("POST", "/v1/sessions/"+sid+"/tools/block:call", `{"arguments": {"tag": "rest", "durationSeconds": 60}}`)
		restDone <- struct {
			code int
			body map[string]any
		}{code, body}
	}()
	if got := await(t, b.reports.Lines); got != "started rest" {
		t.Fatalf("report %q", got)
	}

	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	// The host streams end at drain start too (the core's unit tests check the requests' outcome); the
	// calls that waited on the requests tell the host why.
	for _, w := range waits {
		res := await(t, w.done)
		if status.Code(res.Err) != codes.Unavailable || reasonOf(res.Err) != "SHUTTING_DOWN" {
			t.Errorf("call waiting on %s = %v, %v; want UNAVAILABLE SHUTTING_DOWN", w.req.GetRequestId(), res.Resp, res.Err)
		}
	}
	got := await(t, restDone)
	if got.code != http.StatusServiceUnavailable || !strings.Contains(compact(got.body), "SHUTTING_DOWN") {
		t.Errorf("REST call cut by the drain bound = %d %s, want 503 SHUTTING_DOWN", got.code, compact(got.body))
	}
	select {
	case <-b.exited:
	case <-time.After(40 * time.Second):
		t.Fatal("the bridge did not exit")
	}
}

// A stdio server killed (SIGKILL) mid-call: the call fails UNAVAILABLE at once, the session restarts the
// server, and the next call works.
func TestFaultStdioKilledMidCall(t *testing.T) {
	b := start(t, bridgeConfig{})
	for _, v := range versions {
		t.Run(v.protocol, func(t *testing.T) {
			ctx := testCtx(t)
			cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: v.server})
			if err != nil {
				t.Fatal(err)
			}
			id := cs.GetSession().GetSessionId()
			h := b.connect(ctx)
			h.Attach(id)
			pid := b.serverPID(ctx, id)
			done := b.callAsync(ctx, &pb.CallToolRequest{SessionId: id, Name: "block", Arguments: args(t, map[string]any{"tag": "killed-" + v.protocol})})
			if got := await(t, b.reports.Lines); got != "started killed-"+v.protocol {
				t.Fatalf("report %q", got)
			}
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			if res := await(t, done); status.Code(res.Err) != codes.Unavailable {
				t.Fatalf("call in flight when the server died = %v, want UNAVAILABLE", res.Err)
			}
			h.WaitState(id, pb.SessionState_SESSION_STATE_READY)
			if _, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: id, Name: "echo", Arguments: args(t, map[string]any{"text": "again"})}); err != nil {
				t.Fatalf("after the restart: %v", err)
			}
		})
	}
}

// Malformed, oversized and duplicate frames from a server fail only the request they belong to (INTERNAL
// UPSTREAM_BAD_MESSAGE), or are dropped (a second response to an answered request); the session stays.
func TestFaultBadFrames(t *testing.T) {
	big := strings.Repeat("x", 64<<10)
	srv := newRawHTTPServer(t, func(method string, id json_) string {
		switch method {
		case "initialize":
			return rawInitialize(id, "bad-frames")
		case "tools/list":
			return rpcResult(id, `{"tools":[{"name":"ok","inputSchema":{"type":"object"}}]}`)
		}
		return ""
	})
	b := start(t, bridgeConfig{
		extraServers: srv.config("bad"),
		extra:        "limits:\n  maxMessageBytes: 32768\n",
	})
	srv.call = func(name string, id json_) (string, string) {
		ok := rpcResult(id, `{"content":[{"type":"text","text":"fine"}]}`)
		switch name {
		case "malformed":
			return "application/json", `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"content":[`
		case "oversized":
			return "application/json", rpcResult(id, `{"content":[{"type":"text","text":"`+big+`"}]}`)
		case "duplicate":
			return "text/event-stream", "data: " + ok + "\n\ndata: " + strings.Replace(ok, "fine", "second", 1) + "\n\n"
		}
		return "application/json", ok
	}
	ctx := testCtx(t)
	cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "bad"})
	if err != nil {
		t.Fatal(err)
	}
	id := cs.GetSession().GetSessionId()
	for _, name := range []string{"malformed", "oversized"} {
		_, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: id, Name: name})
		if status.Code(err) != codes.Internal || reasonOf(err) != "UPSTREAM_BAD_MESSAGE" {
			t.Errorf("%s = %v (%s), want INTERNAL UPSTREAM_BAD_MESSAGE", name, err, reasonOf(err))
		}
	}
	res, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: id, Name: "duplicate"})
	if err != nil || textOf(res.GetResult()) != "fine" {
		t.Errorf("duplicate = %v, %v; want the first response", res, err)
	}
	res, err = b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: id, Name: "ok"})
	if err != nil || textOf(res.GetResult()) != "fine" {
		t.Errorf("the session after bad frames: %v, %v", res, err)
	}
}

// 1000 concurrent calls over 10 sessions, one of them slow: every call gets its own answer (none lost, none
// misrouted), the slow one does not hold the others up, and once the sessions are deleted the bridge holds
// no child process and no more file descriptors than before they were opened.
func TestFaultConcurrentCallsAndLeaks(t *testing.T) {
	b := start(t, bridgeConfig{})
	ctx := testCtx(t)
	pid := b.cmd.Process.Pid
	// A first session warms up what the bridge opens once (the HTTP transport, the log), then the baseline.
	warm, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: serverLegacy})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.DeleteSession(ctx, &pb.DeleteSessionRequest{SessionId: warm.GetSession().GetSessionId()}); err != nil {
		t.Fatal(err)
	}
	fds := openFDs(t, pid)

	var ids []string
	for i := range 10 {
		server := serverLegacy
		if i%2 == 0 {
			server = serverModern
		}
		cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: server})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, cs.GetSession().GetSessionId())
	}
	slow := b.callAsync(ctx, &pb.CallToolRequest{SessionId: ids[0], Name: "block", Arguments: args(t, map[string]any{"tag": "slow", "durationSeconds": 20})})
	if got := await(t, b.reports.Lines); got != "started slow" {
		t.Fatalf("report %q", got)
	}
	const calls = 1000
	var wg sync.WaitGroup
	errs := make(chan error, calls)
	sem := make(chan struct{}, 64) // 64 in flight at once
	for i := range calls {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			text := fmt.Sprintf("call-%d", i)
			res, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: ids[i%len(ids)], Name: "echo", Arguments: args(t, map[string]any{"text": text})})
			switch {
			case err != nil:
				errs <- fmt.Errorf("%s: %v", text, err)
			case !strings.Contains(textOf(res.GetResult()), text) || strings.Contains(textOf(res.GetResult()), text+"0"):
				errs <- fmt.Errorf("%s got %q", text, textOf(res.GetResult()))
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	select {
	case res := <-slow:
		t.Fatalf("the slow call ended early: %v", res.Err)
	default:
	}
	for _, id := range ids {
		if _, err := b.client.DeleteSession(ctx, &pb.DeleteSessionRequest{SessionId: id}); err != nil {
			t.Fatal(err)
		}
	}
	if res := await(t, slow); status.Code(res.Err) != codes.Canceled {
		t.Errorf("the slow call after DeleteSession = %v, want CANCELLED", res.Err)
	}
	if kids := childProcesses(t, pid); len(kids) != 0 {
		t.Errorf("child processes left after every session closed: %v", kids)
	}
	if after := openFDs(t, pid); after > fds {
		t.Errorf("open file descriptors: %d after the sessions closed, %d before they opened", after, fds)
	}
}

// serverPID asks the probe server of session id for its process id.
func (b *bridge) serverPID(ctx context.Context, id string) int {
	b.t.Helper()
	res, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: id, Name: "pid"})
	if err != nil {
		b.t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Sscan(textOf(res.GetResult()), &pid); err != nil || pid <= 0 {
		b.t.Fatalf("pid = %q", textOf(res.GetResult()))
	}
	return pid
}

// openFDs counts the open file descriptors of process pid.
func openFDs(t *testing.T, pid int) int {
	t.Helper()
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// childProcesses lists the processes whose parent is pid.
func childProcesses(t *testing.T, pid int) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces, so read after the last ')'.
		s := string(stat)
		rest := s[strings.LastIndexByte(s, ')')+1:]
		var state string
		var ppid int
		if _, err := fmt.Sscan(rest, &state, &ppid); err == nil && ppid == pid {
			out = append(out, e.Name()+" "+s[:strings.LastIndexByte(s, ')')+1])
		}
	}
	return out
}

// TestFaultServerBusySaysWhenToRetry: a Streamable HTTP server that refuses a call as busy (429, or 503)
// with a Retry-After fails that call UNAVAILABLE with google.rpc.RetryInfo carrying its delay — on REST, 503
// with a Retry-After header — and the session stays: the next call works. Before, the host got UNAVAILABLE
// and no word on when to try again.
func TestFaultServerBusySaysWhenToRetry(t *testing.T) {
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return probe.New() }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			for _, busy := range []struct{ text, status, after string }{{"busy-429", "429", "7"}, {"busy-503", "503", "120"}} {
				if bytes.Contains(body, []byte(busy.text)) {
					code, _ := strconv.Atoi(busy.status)
					w.Header().Set("Retry-After", busy.after)
					http.Error(w, "busy", code)
					return
				}
			}
		}
		sdk.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	b := start(t, bridgeConfig{extraServers: fmt.Sprintf("  busy:\n    url: %q\n", srv.URL)})
	ctx := testCtx(t)
	cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "busy"})
	if err != nil {
		t.Fatal(err)
	}
	id := cs.GetSession().GetSessionId()
	for _, tc := range []struct {
		text  string
		delay time.Duration
	}{{"busy-429", 7 * time.Second}, {"busy-503", 2 * time.Minute}} {
		_, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: id, Name: "echo", Arguments: args(t, map[string]any{"text": tc.text})})
		var retry *errdetails.RetryInfo
		for _, d := range status.Convert(err).Details() {
			if ri, ok := d.(*errdetails.RetryInfo); ok {
				retry = ri
			}
		}
		if status.Code(err) != codes.Unavailable || retry == nil || retry.GetRetryDelay().AsDuration() != tc.delay {
			t.Errorf("gRPC call refused %s = %v, RetryInfo %v; want UNAVAILABLE with a RetryInfo of %v", tc.text, err, retry, tc.delay)
		}
		resp, err := http.DefaultClient.Do(b.rest("").request(ctx, "POST", "/v1/sessions/"+id+"/tools/echo:call",
			fmt.Sprintf(`{"arguments":{"text":%q}}`, tc.text)))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := strconv.Itoa(int(tc.delay / time.Second)); resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != want {
			t.Errorf("REST call refused %s = %d Retry-After %q %s, want 503 with Retry-After %s", tc.text, resp.StatusCode, resp.Header.Get("Retry-After"), body, want)
		}
	}
	res, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: id, Name: "echo", Arguments: args(t, map[string]any{"text": "after"})})
	if err != nil || !strings.Contains(textOf(res.GetResult()), "after") {
		t.Errorf("the next call = %v, %v; want it answered on the same session", res, err)
	}
}
