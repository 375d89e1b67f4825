package e2e

// Statuses a host can act on (issue 11, item 2): each case through the real binary, with the gRPC code and
// the google.rpc.ErrorInfo reason the host branches on.

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// The user declines the upstream authorization during CreateSession: FAILED_PRECONDITION
// UPSTREAM_AUTHORIZATION_FAILED with the reason (it was UNKNOWN "rejected by transport").
func TestStatusAuthorizationDeclined(t *testing.T) {
	b, _, _, _ := startOAuth(t)
	alice := withToken(testCtx(t), "tok-alice")
	h := b.connect(alice)
	created := b.createAsync(alice, "secured")
	req := h.NextRequest()
	if req.GetAuthorization() == nil {
		t.Fatalf("pushed %v, want an authorization request", req)
	}
	if ack := h.Reply(req.GetRequestId(), &pb.HostAnswer{Answer: &pb.HostAnswer_Error{Error: &pb.JsonRpcError{Code: -1, Message: "the user declined"}}}); !ack.GetAccepted() {
		t.Fatalf("the host's refusal was not accepted: %v", ack)
	}
	cr := await(t, created)
	if status.Code(cr.err) != codes.FailedPrecondition || reasonOf(cr.err) != "UPSTREAM_AUTHORIZATION_FAILED" || !strings.Contains(status.Convert(cr.err).Message(), "the user declined") {
		t.Fatalf("CreateSession = %v (%s), want FAILED_PRECONDITION UPSTREAM_AUTHORIZATION_FAILED naming the reason", cr.err, reasonOf(cr.err))
	}
}

// An unreachable Streamable HTTP server: CreateSession fails UNAVAILABLE (it was HTTP 500 / UNKNOWN).
func TestStatusUnreachableServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	b := start(t, bridgeConfig{extraServers: fmt.Sprintf("  nowhere:\n    url: \"http://%s/mcp\"\n", addr)})
	_, err = b.client.CreateSession(testCtx(t), &pb.CreateSessionRequest{Server: "nowhere"})
	if status.Code(err) != codes.Unavailable || reasonOf(err) != "UPSTREAM_UNAVAILABLE" {
		t.Fatalf("CreateSession = %v (%s), want UNAVAILABLE UPSTREAM_UNAVAILABLE", err, reasonOf(err))
	}
	code, body := b.rest("").do("POST", "/v1/sessions", `{"server": "nowhere"}`)
	if code != http.StatusServiceUnavailable {
		t.Errorf("REST = %d %s, want 503", code, compact(body))
	}
}

// A sampling request nobody answers by its deadline: the call fails DEADLINE_EXCEEDED
// SERVER_REQUEST_TIMED_OUT on both eras (it was PERMISSION_DENIED, the user's rejection, blamed on the
// server).
func TestStatusSamplingNotAnswered(t *testing.T) {
	b := start(t, bridgeConfig{extra: "pending:\n  samplingTimeout: 500ms\n"})
	for _, v := range versions {
		t.Run(v.protocol, func(t *testing.T) {
			ctx := testCtx(t)
			cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: v.server, HostCapabilities: allCaps})
			if err != nil {
				t.Fatal(err)
			}
			_, err = b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: cs.GetSession().GetSessionId(), Name: "sample", Arguments: args(t, map[string]any{"prompt": "anyone?"})})
			if status.Code(err) != codes.DeadlineExceeded || reasonOf(err) != "SERVER_REQUEST_TIMED_OUT" {
				t.Fatalf("call = %v (%s), want DEADLINE_EXCEEDED SERVER_REQUEST_TIMED_OUT", err, reasonOf(err))
			}
		})
	}
}

// A server that answers tools/call with a result of the wrong shape: INTERNAL UPSTREAM_BAD_MESSAGE that
// says what was wrong, and a log line (it was INTERNAL "internal error" with nothing logged).
func TestStatusWrongShapeResult(t *testing.T) {
	b := startWithWrongShapeServer(t)
	ctx := testCtx(t)
	cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "wrong"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: cs.GetSession().GetSessionId(), Name: "x"})
	if status.Code(err) != codes.Internal || reasonOf(err) != "UPSTREAM_BAD_MESSAGE" || !strings.Contains(status.Convert(err).Message(), "tools/call") {
		t.Fatalf("call = %v (%s), want INTERNAL UPSTREAM_BAD_MESSAGE naming the request", err, reasonOf(err))
	}
	b.logs.waitFor(t, func(rec map[string]any) bool { return rec["msg"] == "dropped a bad message from the server" })
}

// A result the SDK decodes but the service cannot convert (a tool whose inputSchema is a string) is the
// server's bad data on the one path the core's frames take: UPSTREAM_BAD_MESSAGE, logged as a bad message,
// and counted in mcp_bridge_upstream_malformed_messages_total (it was logged apart and never counted).
func TestStatusUnconvertibleResultCounted(t *testing.T) {
	srv := newRawHTTPServer(t, func(method string, id json_) string {
		switch method {
		case "initialize":
			return rawInitialize(id, "schema")
		case "tools/list":
			return rpcResult(id, `{"tools":[{"name":"t","inputSchema":"not a schema"}]}`)
		}
		return `{"jsonrpc":"2.0","id":` + string(id) + `,"error":{"code":-32601,"message":"no"}}`
	})
	b := start(t, bridgeConfig{extraServers: srv.config("schema")})
	ctx := testCtx(t)
	cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "schema"})
	if err != nil {
		t.Fatal(err)
	}
	before, _ := metric(scrape(t, b.http), "mcp_bridge_upstream_malformed_messages_total", nil)
	_, err = b.client.ListTools(ctx, &pb.ListToolsRequest{SessionId: cs.GetSession().GetSessionId()})
	if status.Code(err) != codes.Internal || reasonOf(err) != "UPSTREAM_BAD_MESSAGE" {
		t.Fatalf("ListTools = %v (%s), want INTERNAL UPSTREAM_BAD_MESSAGE", err, reasonOf(err))
	}
	b.logs.waitFor(t, func(rec map[string]any) bool {
		return rec["msg"] == "dropped a bad message from the server" && rec["problem"] == "unusable result"
	})
	if after, _ := metric(scrape(t, b.http), "mcp_bridge_upstream_malformed_messages_total", nil); after != before+1 {
		t.Errorf("mcp_bridge_upstream_malformed_messages_total %v → %v, want one more", before, after)
	}
}

// startWithWrongShapeServer starts a bridge with the server "wrong", which answers every tools/call with a
// result that is a string.
func startWithWrongShapeServer(t *testing.T) *bridge {
	srv := newRawHTTPServer(t, func(method string, id json_) string {
		switch method {
		case "initialize":
			return rawInitialize(id, "wrong-shape")
		case "tools/call":
			return rpcResult(id, `"string"`)
		}
		return `{"jsonrpc":"2.0","id":` + string(id) + `,"error":{"code":-32601,"message":"no"}}`
	})
	return start(t, bridgeConfig{extraServers: srv.config("wrong")})
}

// The server's own -32001 ("Session not found" in the TypeScript SDK) for a call is the server's code:
// reason UPSTREAM_ERROR, not the bridge's own DEADLINE_EXCEEDED.
func TestStatusUpstreamCodeIsTheServers(t *testing.T) {
	srv := newRawHTTPServer(t, func(method string, id json_) string {
		switch method {
		case "initialize":
			return rawInitialize(id, "codes")
		}
		return `{"jsonrpc":"2.0","id":` + string(id) + `,"error":{"code":-32001,"message":"the server's own -32001"}}`
	})
	b := start(t, bridgeConfig{extraServers: srv.config("codes")})
	ctx := testCtx(t)
	cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "codes"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: cs.GetSession().GetSessionId(), Name: "x"})
	if status.Code(err) == codes.DeadlineExceeded || reasonOf(err) != "UPSTREAM_ERROR" {
		t.Fatalf("call = %v (%s), want the server's error (UPSTREAM_ERROR), not a deadline", err, reasonOf(err))
	}
}

// json_ is a JSON-RPC id as it came (a number or a string, in JSON).
type json_ []byte

// rawServer is a minimal Streamable HTTP MCP server of the 2025-11-25 era whose answers the test writes, for
// servers that misbehave in ways the SDKs do not allow. Notifications get 202. Without a session id it keeps
// no sessions and has no standalone GET stream (405); with one, every answer carries it, get serves the
// standalone GET stream, and DELETE ends the session (200).
type rawServer struct {
	url string
	// answer writes the JSON response to a request; call, when set, answers tools/call by tool name with
	// a content type and a body (JSON, or SSE frames).
	answer    func(method string, id json_) string
	call      func(name string, id json_) (contentType, body string)
	sessionID string
	get       func(w http.ResponseWriter, r *http.Request)
	// refuse, when set, names the HTTP status (0: none) with which a tools/call of a tool is refused, with a
	// plain text body and no JSON-RPC error.
	refuse func(name string) int
	// sse answers every request on an SSE stream (one event) instead of a JSON body.
	sse bool
}

// newRawHTTPServer serves a rawServer without sessions that answers with answer (and call, once set).
func newRawHTTPServer(t *testing.T, answer func(method string, id json_) string) *rawServer {
	t.Helper()
	return serveRaw(t, &rawServer{answer: answer})
}

// serveRaw serves rs on a port the kernel picks until the test ends, and sets rs.url.
func serveRaw(t *testing.T, rs *rawServer) *rawServer {
	t.Helper()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && rs.get != nil:
			rs.get(w, r)
			return
		case r.Method == http.MethodDelete && rs.sessionID != "":
			w.WriteHeader(http.StatusOK)
			return
		case r.Method != http.MethodPost:
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		var msg struct {
			ID     json_  `json:"id"`
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if err := json.NewDecoder(r.Body).Decode(&msg); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if len(msg.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if code := 0; msg.Method == "tools/call" && rs.refuse != nil {
			if code = rs.refuse(msg.Params.Name); code != 0 {
				http.Error(w, "refused", code)
				return
			}
		}
		ctype, body := "application/json", ""
		if msg.Method == "tools/call" && rs.call != nil {
			ctype, body = rs.call(msg.Params.Name, msg.ID)
		} else {
			body = rs.answer(msg.Method, msg.ID)
		}
		if rs.sse && ctype == "application/json" {
			ctype, body = "text/event-stream", "event: message\ndata: "+body+"\n\n"
		}
		w.Header().Set("Content-Type", ctype)
		if rs.sessionID != "" {
			w.Header().Set("Mcp-Session-Id", rs.sessionID)
		}
		_, _ = w.Write([]byte(body))
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { // ends when the server is closed at cleanup
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() { _ = srv.Close(); <-done })
	rs.url = "http://" + ln.Addr().String() + "/mcp"
	return rs
}

// config is the YAML, under mcpServers, of a server named name at rs's URL, pinned to 2025-11-25.
func (rs *rawServer) config(name string) string {
	return fmt.Sprintf("  %s:\n    url: %q\n    protocolVersion: \"2025-11-25\"\n", name, rs.url)
}

// rpcResult is a JSON-RPC response to id with result (JSON).
func rpcResult(id json_, result string) string {
	return `{"jsonrpc":"2.0","id":` + string(id) + `,"result":` + result + `}`
}

// rawInitialize is the 2025-11-25 initialize result of a server named name that has tools.
func rawInitialize(id json_, name string) string {
	return rpcResult(id, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"`+name+`","version":"1"}}`)
}

func (j *json_) UnmarshalJSON(b []byte) error { *j = append((*j)[:0], b...); return nil }
