package e2e

import (
	"testing"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// sessions.idleTimeout closes, on the bridge's own clock, a session nobody uses — no call, no call later —
// with the reason "idle timeout", and leaves alone a session a host is attached to (docs/adr/0115: the usage
// is the session's, the service's reaper asks the core which sessions are idle).
func TestIdleSessionsCloseOnTheBridgeClock(t *testing.T) {
	b := start(t, bridgeConfig{extra: "sessions:\n  idleTimeout: 3s\n"})
	ctx := testCtx(t)
	held := createSession(ctx, t, b, serverModern)
	h := b.connect(ctx)
	h.Attach(held)
	idle := createSession(ctx, t, b, serverLegacy)

	// Nobody uses idle from here: the bridge says when it closes it, and when it is closed.
	b.logs.waitFor(t, func(rec map[string]any) bool {
		return rec["msg"] == "closing idle session" && rec["session"] == idle
	})
	b.logs.waitFor(t, func(rec map[string]any) bool {
		return rec["msg"] == "session state" && rec["session"] == idle && rec["state"] == "closed"
	})
	got, err := b.client.GetSession(ctx, &pb.GetSessionRequest{SessionId: idle})
	if err != nil {
		t.Fatal(err)
	}
	if st, reason := got.GetSession().GetState(), got.GetSession().GetStateReason(); st != pb.SessionState_SESSION_STATE_CLOSED || reason != "idle timeout" {
		t.Errorf("idle session %v %q, want CLOSED \"idle timeout\"", st, reason)
	}
	if _, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: idle, Name: "echo", Arguments: args(t, map[string]any{"text": "x"})}); err == nil {
		t.Error("a call on the idle-closed session succeeded")
	}

	// held was created first, so it has been idle as long — but a host is attached to it all along.
	got, err = b.client.GetSession(ctx, &pb.GetSessionRequest{SessionId: held})
	if err != nil {
		t.Fatal(err)
	}
	if st := got.GetSession().GetState(); st == pb.SessionState_SESSION_STATE_CLOSED {
		t.Errorf("the session a host is attached to was closed: %q", got.GetSession().GetStateReason())
	}
	if _, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: held, Name: "echo", Arguments: args(t, map[string]any{"text": "x"})}); err != nil {
		t.Errorf("a call on the attached session: %v", err)
	}
}
