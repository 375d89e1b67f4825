package e2e

// Issue 21: state that outlives the process. A bridge killed with SIGKILL (or stopped with SIGTERM) and
// started again on the same state file brings back every session under its id, raises again every
// 2026-07-28 input request a person had not answered yet under its id, resumes the calls that wait on
// them by call id with the answer the person gives after the restart, and tells re-attaching hosts how
// the pushed requests whose connection died with the old process ended.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/mcp-bridge/mcp-bridge/e2e/probe"
	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// httpProbe serves the probe MCP server over Streamable HTTP from the test process, so that it outlives
// the bridge: the server that asked is still there after the bridge's restart. responses receives the
// JSON-RPC responses the server is sent (a client's answers to the server's own requests).
func httpProbe(t *testing.T, stateless bool) (url string, responses <-chan string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 64)
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return probe.New() }, &mcp.StreamableHTTPOptions{Stateless: stateless})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string          `json:"method"`
				Result json.RawMessage `json:"result"`
			}
			if json.Unmarshal(body, &msg) == nil && msg.Method == "" && msg.Result != nil {
				select {
				case got <- string(msg.Result):
				default:
				}
			}
		}
		sdk.ServeHTTP(w, r)
	})
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan struct{})
	go func() { // ends when srv is closed at cleanup
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() { _ = srv.Close(); <-done })
	return "http://" + ln.Addr().String() + "/mcp", got
}

func TestRestartKeepsSessionsRequestsAndAnswers(t *testing.T) {
	for _, how := range []string{"kill -9", "SIGTERM"} {
		t.Run(how, func(t *testing.T) { testRestart(t, how == "kill -9") })
	}
}

func testRestart(t *testing.T, kill bool) {
	stateFile := filepath.Join(t.TempDir(), "state.db")
	modernURL, _ := httpProbe(t, true)
	legacyURL, legacyResponses := httpProbe(t, false)
	cfg := bridgeConfig{
		extraServers: fmt.Sprintf("  http-modern:\n    url: %q\n  http-legacy:\n    url: %q\n    protocolVersion: \"2025-11-25\"\n", modernURL, legacyURL),
		flags:        []string{"--state-file", stateFile},
	}
	b := start(t, cfg)
	ctx := testCtx(t)

	// 20 sessions: stdio and Streamable HTTP, both eras.
	servers := []string{serverModern, serverLegacy, "http-modern", "http-legacy"}
	var ids []string
	byServer := map[string][]string{}
	for i := range 20 {
		srv := servers[i%len(servers)]
		cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: srv, HostCapabilities: allCaps})
		if err != nil {
			t.Fatalf("CreateSession %s: %v", srv, err)
		}
		id := cs.GetSession().GetSessionId()
		if want := map[string]string{serverModern: "2026-07-28", "http-modern": "2026-07-28"}[srv]; want != "" && cs.GetSession().GetProtocolVersion() != want {
			t.Fatalf("%s negotiated %s, want %s", srv, cs.GetSession().GetProtocolVersion(), want)
		}
		ids = append(ids, id)
		byServer[srv] = append(byServer[srv], id)
	}
	h := b.connect(ctx)
	h.Attach(ids...)

	// Elicitations pending for a person: over MRTR (2026-07-28, stdio and HTTP) and pushed (2025-11-25).
	type pendingCall struct {
		session, server, callID, requestID string
		delivery                           pb.Delivery
	}
	var calls []pendingCall
	for _, sv := range [][2]string{{"http-modern", byServer["http-modern"][0]}, {"http-modern", byServer["http-modern"][1]}, {serverModern, byServer[serverModern][0]}, {"http-legacy", byServer["http-legacy"][0]}, {serverLegacy, byServer[serverLegacy][0]}} {
		srv, id := sv[0], sv[1]
		callID := "call-restart-" + id
		b.callAsync(ctx, &pb.CallToolRequest{SessionId: id, Name: "elicit", CallId: callID})
		req := h.NextRequest()
		if req.GetSessionId() != id {
			t.Fatalf("request of session %s, want %s", req.GetSessionId(), id)
		}
		calls = append(calls, pendingCall{session: id, server: srv, callID: callID, requestID: req.GetRequestId(), delivery: req.GetDelivery()})
	}

	// A round of two questions on a 2026-07-28 session of each transport: the first is answered before the
	// bridge goes down, the second after it comes back.
	type pair struct{ session, callID, answered, pending string }
	var pairs []pair
	for _, id := range []string{byServer[serverModern][1], byServer["http-modern"][2]} {
		callID := "call-pair-" + id
		b.callAsync(ctx, &pb.CallToolRequest{SessionId: id, Name: "elicit_pair", CallId: callID})
		r1, r2 := h.NextRequest(), h.NextRequest()
		if r1.GetOriginCallId() != callID || r2.GetOriginCallId() != callID {
			t.Fatalf("pair requests of calls %s and %s, want %s", r1.GetOriginCallId(), r2.GetOriginCallId(), callID)
		}
		if r1.GetInputKey() != "first" {
			r1, r2 = r2, r1
		}
		ack := h.Reply(r1.GetRequestId(), &pb.HostAnswer{Answer: &pb.HostAnswer_Elicitation{Elicitation: &pb.ElicitResult{
			Action: pb.ElicitAction_ELICIT_ACTION_ACCEPT, Content: args(t, map[string]any{"name": "Grace"}),
		}}})
		if !ack.GetAccepted() {
			t.Fatalf("answer before the restart: %v", ack)
		}
		pairs = append(pairs, pair{session: id, callID: callID, answered: r1.GetRequestId(), pending: r2.GetRequestId()})
	}

	if kill {
		b.kill()
	} else {
		b.stop()
	}
	b2 := start(t, cfg)

	// Every session is back under its id and reaches READY.
	for _, id := range ids {
		waitReady(t, b2, id)
	}

	// A host that re-attaches gets every request again under its id whose server still waits for it — the
	// MRTR ones, and the one pushed by the HTTP server, whose session the bridge re-attaches to — and is
	// told how the one pushed by the stdio server ended (the process died with the old bridge).
	raisedAgain := func(c pendingCall) bool {
		return c.delivery == pb.Delivery_DELIVERY_MULTI_ROUND_TRIP || c.server == "http-legacy"
	}
	h2 := b2.connect(ctx)
	h2.Attach(ids...)
	want := map[string]pendingCall{}
	for _, c := range calls {
		want[c.requestID] = c
	}
	for _, p := range pairs { // the answered question is not asked again; the other one is
		want[p.pending] = pendingCall{session: p.session, callID: p.callID, requestID: p.pending, delivery: pb.Delivery_DELIVERY_MULTI_ROUND_TRIP}
	}
	seen := map[string]bool{}
	for len(seen) < len(want) {
		m := h2.Next(func(m *pb.ConnectResponse) bool {
			ev := m.GetEvent()
			return ev.GetServerRequest() != nil || ev.GetRequestEnded() != nil
		})
		ev := m.GetEvent()
		if r := ev.GetServerRequest(); r != nil {
			c, ok := want[r.GetRequestId()]
			if !ok {
				t.Fatalf("after the restart, request %s was raised, which was not pending before", r.GetRequestId())
			}
			if !raisedAgain(c) {
				t.Errorf("request %s of %s raised again; the server that asked died with the bridge", r.GetRequestId(), c.server)
			}
			seen[r.GetRequestId()] = true
			continue
		}
		e := ev.GetRequestEnded()
		c, ok := want[e.GetRequestId()]
		if !ok {
			continue
		}
		if raisedAgain(c) || e.GetOutcome() != pb.RequestOutcome_REQUEST_OUTCOME_BRIDGE_RESTARTED {
			t.Errorf("request %s (%v) ended %v after the restart", e.GetRequestId(), c.delivery, e.GetOutcome())
		}
		seen[e.GetRequestId()] = true
	}

	// The person answers each MRTR request after the restart, and the host resumes each call by its id:
	// the call completes with that answer, and the tool did not ask again.
	for i, c := range calls {
		name := fmt.Sprintf("Ada%d", i)
		if raisedAgain(c) {
			ack := h2.Reply(c.requestID, &pb.HostAnswer{Answer: &pb.HostAnswer_Elicitation{Elicitation: &pb.ElicitResult{
				Action: pb.ElicitAction_ELICIT_ACTION_ACCEPT, Content: args(t, map[string]any{"name": name, "age": 36}),
			}}})
			if !ack.GetAccepted() {
				t.Fatalf("answer to %s after the restart: %v", c.requestID, ack)
			}
		}
		if c.delivery != pb.Delivery_DELIVERY_MULTI_ROUND_TRIP {
			if c.server == "http-legacy" {
				// The answer reaches the server that asked, under its own session.
				select {
				case got := <-legacyResponses:
					if !strings.Contains(got, name) {
						t.Errorf("the HTTP server received %s, want the answer with %s", got, name)
					}
				case <-ctx.Done():
					t.Fatalf("the answer to %s given after the restart never reached the HTTP server", c.requestID)
				}
			}
			// A pushed request's call was in flight upstream when the bridge died: its result went with the
			// old process, and "elicit" is not idempotent, so a resumed call says the outcome is unknown
			// instead of running it again.
			_, err := b2.client.CallTool(ctx, &pb.CallToolRequest{SessionId: c.session, Name: "elicit", CallId: c.callID, Resume: true})
			if status.Code(err) != codes.Aborted || reasonOf(err) != "CALL_OUTCOME_UNKNOWN" {
				t.Errorf("resumed pushed call %s = %v, want ABORTED CALL_OUTCOME_UNKNOWN", c.callID, err)
			}
			continue
		}
		res, err := b2.client.CallTool(ctx, &pb.CallToolRequest{SessionId: c.session, Name: "elicit", CallId: c.callID, Resume: true})
		if err != nil {
			t.Fatalf("resumed call %s: %v", c.callID, err)
		}
		if got := textOf(res.GetResult()); !strings.Contains(got, "accepted: name="+name+" age=36") {
			t.Fatalf("resumed call %s = %q, want the answer given after the restart", c.callID, got)
		}
	}

	// The answer accepted before the restart was kept: once the second question is answered, the resumed
	// call completes with both.
	for i, p := range pairs {
		name := fmt.Sprintf("Lin%d", i)
		ack := h2.Reply(p.pending, &pb.HostAnswer{Answer: &pb.HostAnswer_Elicitation{Elicitation: &pb.ElicitResult{
			Action: pb.ElicitAction_ELICIT_ACTION_ACCEPT, Content: args(t, map[string]any{"name": name}),
		}}})
		if !ack.GetAccepted() {
			t.Fatalf("answer to %s after the restart: %v", p.pending, ack)
		}
		res, err := b2.client.CallTool(ctx, &pb.CallToolRequest{SessionId: p.session, Name: "elicit_pair", CallId: p.callID, Resume: true})
		if err != nil {
			t.Fatalf("resumed call %s: %v", p.callID, err)
		}
		if got, want := textOf(res.GetResult()), "first=Grace second="+name; got != want {
			t.Fatalf("resumed call %s = %q, want %q: the answer given before the restart and the one after", p.callID, got, want)
		}
	}
}
