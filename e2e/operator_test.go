package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// A configured stdio server whose command does not exist is reported when the bridge starts (issue 32):
// a warning in the log naming the server and the command, and /readyz lists it not_serving with the reason.
// The bridge starts all the same and serves its other servers. Before, it started silently, /readyz said
// the server was "unknown", and only a CreateSession found out.
func TestMissingCommandReportedAtStart(t *testing.T) {
	b := start(t, bridgeConfig{extraServers: "  typo:\n    command: /nonexistent/bin/mcp-server-typo\n"})
	rec := b.logs.waitFor(t, func(rec map[string]any) bool {
		return rec["level"] == "WARN" && strings.Contains(compact(rec["err"]), "typo")
	})
	if !strings.Contains(compact(rec["err"]), "/nonexistent/bin/mcp-server-typo") {
		t.Errorf("start-up warning %v does not name the command", rec)
	}
	code, ready := b.rest("").do("GET", "/readyz", "")
	if code != 200 || ready["status"] != "READY" {
		t.Fatalf("/readyz = %d %v, want 200 READY: a missing command does not make the bridge unready", code, ready)
	}
	if got := jsonPath(ready, "servers", "typo"); got != "NOT_SERVING" {
		t.Errorf("/readyz servers.typo = %v, want NOT_SERVING", got)
	}
	if reason := compact(jsonPath(ready, "serverReasons", "typo")); !strings.Contains(reason, "does not exist") {
		t.Errorf("/readyz serverReasons.typo = %s, want the reason", reason)
	}
	if got := jsonPath(ready, "serverReasons", serverModern); got != nil {
		t.Errorf("a working server has a reason: %v", got)
	}
	// The other servers serve; a session to the broken one fails as unavailable.
	ctx := testCtx(t)
	if _, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: serverModern}); err != nil {
		t.Fatalf("CreateSession %s: %v", serverModern, err)
	}
	if _, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "typo"}); status.Code(err) != codes.Unavailable {
		t.Errorf("CreateSession typo = %v, want UNAVAILABLE", err)
	}
}

// A client that ends its own call — a stream it closes, a call it cancels — and a lookup of an id that is not
// there are how clients normally behave: none of it is logged as a failure (issue 32: before, every client
// exit logged `rpc failed … code=Canceled`, and expected 404s were "failed" too).
func TestNormalClientBehaviourIsNotLoggedAsFailure(t *testing.T) {
	b := start(t, bridgeConfig{})
	ctx := testCtx(t)
	s, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: serverModern})
	if err != nil {
		t.Fatal(err)
	}
	id := s.GetSession().GetSessionId()
	wctx, cancel := context.WithCancel(ctx)
	w, err := b.client.WatchEvents(wctx, &pb.WatchEventsRequest{SessionId: id})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Header(); err != nil { // the stream is open on the bridge
		t.Fatal(err)
	}
	cancel()
	b.logs.waitFor(t, func(rec map[string]any) bool {
		return rec["msg"] == "rpc cancelled" && rec["code"] == "Canceled" && rec["level"] == "DEBUG"
	})
	if _, err := b.client.GetSession(ctx, &pb.GetSessionRequest{SessionId: "s-no-such-session"}); status.Code(err) != codes.NotFound {
		t.Fatalf("GetSession of an unknown id = %v, want NOT_FOUND", err)
	}
	b.logs.waitFor(t, func(rec map[string]any) bool {
		return rec["msg"] == "rpc refused" && rec["code"] == "NotFound" && rec["level"] == "INFO"
	})
	for _, line := range b.logs.all() {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		if rec["msg"] == "rpc failed" || rec["level"] == "ERROR" || (rec["level"] == "WARN" && rec["code"] != nil) {
			t.Errorf("normal client behaviour logged as a failure: %s", line)
		}
	}
}
