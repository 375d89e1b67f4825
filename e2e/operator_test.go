package e2e

import (
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
