package e2e

// Issue 30, item 3 (docs/adr/0105-detached-calls.md): a call made with `detach` outlives the host's RPC —
// its server requests stay pending, a resume with its call id joins it and gets its result — and CancelCall
// is the deliberate cancellation, which reaches the server.

import (
	"context"
	"net/http"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// streamUntilRequest reads a StreamCallTool stream until its server request, which it returns.
func streamUntilRequest(t *testing.T, st interface {
	Recv() (*pb.StreamCallToolResponse, error)
}) *pb.ServerRequest {
	t.Helper()
	for {
		m, err := st.Recv()
		if err != nil {
			t.Fatalf("the stream ended before the server request: %v", err)
		}
		if r := m.GetServerRequest(); r != nil {
			return r
		}
		if m.GetResult() != nil {
			t.Fatalf("the call ended before its server request: %v", m)
		}
	}
}

func TestDetachedCallOutlivesItsStream(t *testing.T) {
	b := start(t, bridgeConfig{})
	ctx := testCtx(t)
	for _, v := range versions {
		t.Run(v.protocol, func(t *testing.T) {
			cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: v.server, HostCapabilities: allCaps})
			if err != nil {
				t.Fatal(err)
			}
			id := cs.GetSession().GetSessionId()
			callID := "detached-" + v.protocol

			// The first stream sees the elicitation and is cut off (a page reloaded).
			sctx, cut := context.WithCancel(ctx)
			st, err := b.client.StreamCallTool(sctx, &pb.StreamCallToolRequest{SessionId: id, Name: "elicit", CallId: callID, Detach: true})
			if err != nil {
				t.Fatal(err)
			}
			first := streamUntilRequest(t, st)
			cut()
			if _, err := st.Recv(); status.Code(err) != codes.Canceled {
				t.Fatalf("the cut stream: %v, want CANCELLED", err)
			}

			// The question is still pending: a host attaching now sees it.
			h := b.connect(ctx)
			h.Attach(id)
			if again := h.NextRequest(); again.GetRequestId() != first.GetRequestId() {
				t.Fatalf("after the stream ended: request %v, want %s still pending", again, first.GetRequestId())
			}

			// A resume joins the running call and shows its question again; the answer gives the result.
			st2, err := b.client.StreamCallTool(ctx, &pb.StreamCallToolRequest{SessionId: id, Name: "elicit", CallId: callID, Detach: true, Resume: true})
			if err != nil {
				t.Fatal(err)
			}
			if shown := streamUntilRequest(t, st2); shown.GetRequestId() != first.GetRequestId() {
				t.Fatalf("the resumed stream shows request %s, want %s", shown.GetRequestId(), first.GetRequestId())
			}
			if ack := h.Reply(first.GetRequestId(), &pb.HostAnswer{Answer: &pb.HostAnswer_Elicitation{Elicitation: &pb.ElicitResult{Action: pb.ElicitAction_ELICIT_ACTION_DECLINE}}}); !ack.GetAccepted() {
				t.Fatalf("ack = %v", ack)
			}
			var res *pb.CallToolResult
			for res == nil {
				m, err := st2.Recv()
				if err != nil {
					t.Fatalf("the resumed stream: %v", err)
				}
				res = m.GetResult()
			}
			if textOf(res) != "declined" {
				t.Fatalf("the resumed call's result = %v, want declined", res)
			}
			// Its one outcome is kept: a later resume gets it again.
			again, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: id, Name: "elicit", CallId: callID, Resume: true})
			if err != nil || textOf(again.GetResult()) != "declined" {
				t.Fatalf("resumed again = %v, %v", again, err)
			}
		})
	}
}

func TestCancelCall(t *testing.T) {
	b := start(t, bridgeConfig{})
	ctx := testCtx(t)
	cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: serverModern})
	if err != nil {
		t.Fatal(err)
	}
	id := cs.GetSession().GetSessionId()

	// A detached call whose RPC is gone goes on until CancelCall, which reaches the tool.
	cctx, cut := context.WithCancel(ctx)
	done := b.callAsync(cctx, &pb.CallToolRequest{SessionId: id, Name: "block", CallId: "to-cancel", Detach: true, Arguments: args(t, map[string]any{"tag": "detached"})})
	if got := await(t, b.reports.Lines); got != "started detached" {
		t.Fatalf("report %q", got)
	}
	cut()
	if res := await(t, done); status.Code(res.Err) != codes.Canceled {
		t.Fatalf("the cut call = %v, want CANCELLED", res.Err)
	}
	if _, err := b.client.CancelCall(ctx, &pb.CancelCallRequest{SessionId: id, CallId: "to-cancel"}); err != nil {
		t.Fatalf("CancelCall: %v", err)
	}
	if got := await(t, b.reports.Lines); got != "cancelled detached" {
		t.Fatalf("report %q, want the cancellation to reach the tool", got)
	}
	// The host cancelled it: a resume says so (CANCELLED), and does not run it again.
	_, err = b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: id, Name: "block", CallId: "to-cancel", Resume: true, Arguments: args(t, map[string]any{"tag": "detached"})})
	if status.Code(err) != codes.Canceled || reasonOf(err) != "CANCELLED" {
		t.Fatalf("a resume of the cancelled call = %v (reason %q), want CANCELLED, reason CANCELLED", err, reasonOf(err))
	}

	// A plain call in flight is cancelled too, and fails CANCELLED.
	done = b.callAsync(ctx, &pb.CallToolRequest{SessionId: id, Name: "block", CallId: "plain", Arguments: args(t, map[string]any{"tag": "plain"})})
	if got := await(t, b.reports.Lines); got != "started plain" {
		t.Fatalf("report %q", got)
	}
	if code, body := b.rest("").do(http.MethodPost, "/v1/sessions/"+id+"/calls/plain:cancel", ""); code != http.StatusOK {
		t.Fatalf("POST …/calls/plain:cancel = %d %v", code, body)
	}
	if res := await(t, done); status.Code(res.Err) != codes.Canceled {
		t.Fatalf("the cancelled call = %v, want CANCELLED", res.Err)
	}
	if got := await(t, b.reports.Lines); got != "cancelled plain" {
		t.Fatalf("report %q, want the cancellation to reach the tool", got)
	}

	// An unknown call id is NOT_FOUND.
	if _, err := b.client.CancelCall(ctx, &pb.CancelCallRequest{SessionId: id, CallId: "never"}); status.Code(err) != codes.NotFound {
		t.Fatalf("CancelCall of an unknown call = %v, want NOT_FOUND", err)
	}
	// A detached call needs a call id of the host's.
	if _, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: id, Name: "echo", Detach: true}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("a detached call without call_id = %v, want INVALID_ARGUMENT", err)
	}
}
