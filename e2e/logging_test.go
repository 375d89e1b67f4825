package e2e

import (
	"strings"
	"testing"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// With --log-level debug (the harness's level) the bridge logs the MCP traffic in summary at DEBUG —
// method, JSON-RPC id, direction and, for responses, the round trip's duration — without payloads; and
// every failed RPC is logged with its method, code and cause (WARN for server-side faults), with the
// session id when there is one.
func TestLogs(t *testing.T) {
	const missing = "/nonexistent/mcp-server-binary"
	b := start(t, bridgeConfig{extraServers: "  broken:\n    command: " + missing + "\n    restart:\n      maxRestarts: 0\n"})
	ctx := testCtx(t)

	t.Run("failed CreateSession", func(t *testing.T) {
		_, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "broken"})
		if err == nil {
			t.Fatal("CreateSession of a server whose command is missing succeeded")
		}
		rec := b.logs.waitFor(t, func(rec map[string]any) bool {
			return rec["method"] == "/mcpbridge.v1.BridgeService/CreateSession" && rec["code"] != nil
		})
		if rec["level"] != "WARN" || rec["code"] != "Unavailable" || !strings.Contains(compact(rec), missing) {
			t.Errorf("failed CreateSession logged as %s; want WARN, code Unavailable and the cause (%s)", compact(rec), missing)
		}
	})

	t.Run("failed call with a session", func(t *testing.T) {
		cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: serverLegacy})
		if err != nil {
			t.Fatal(err)
		}
		sid := cs.GetSession().GetSessionId()
		if _, err := b.client.GetPrompt(ctx, &pb.GetPromptRequest{SessionId: sid, Name: "no-such-prompt"}); err == nil {
			t.Fatal("GetPrompt of an unknown prompt succeeded")
		}
		rec := b.logs.waitFor(t, func(rec map[string]any) bool {
			return rec["method"] == "/mcpbridge.v1.BridgeService/GetPrompt" && rec["code"] != nil
		})
		if rec["session"] != sid || rec["error"] == "" {
			t.Errorf("failed GetPrompt logged as %s; want the session %s and the cause", compact(rec), sid)
		}
	})

	t.Run("debug traffic summary", func(t *testing.T) {
		for _, v := range versions {
			cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: v.server})
			if err != nil {
				t.Fatal(err)
			}
			sid := cs.GetSession().GetSessionId()
			if _, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: sid, Name: "echo", Arguments: args(t, map[string]any{"text": "payload-marker"})}); err != nil {
				t.Fatal(err)
			}
			for _, dir := range []string{"send", "receive"} {
				rec := b.logs.waitFor(t, func(rec map[string]any) bool {
					return rec["level"] == "DEBUG" && rec["session"] == sid && rec["method"] == "tools/call" && rec["direction"] == dir
				})
				if rec["id"] == nil {
					t.Errorf("%s: tools/call %s logged without its JSON-RPC id: %s", v.protocol, dir, compact(rec))
				}
				if dir == "receive" && rec["duration"] == nil {
					t.Errorf("%s: the response to tools/call logged without the duration: %s", v.protocol, compact(rec))
				}
			}
		}
		for _, line := range b.logs.all() {
			if strings.Contains(line, "payload-marker") {
				t.Errorf("the log shows a payload: %s", line)
			}
		}
	})
}
