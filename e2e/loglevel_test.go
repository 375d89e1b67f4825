package e2e

import (
	"fmt"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/mcp-bridge/mcp-bridge/e2e/probe"
	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// A server's log messages behave alike on both protocol eras (docs/adr/0006-log-level.md): a level chosen
// at CreateSession applies from the first call, without SetLogLevel; SetLogLevel succeeds when the server
// declares logging and fails FAILED_PRECONDITION when it does not.
func TestLogLevelOnBothEras(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	noLogging := func(name, version string) string {
		s := fmt.Sprintf("  %s:\n    command: %q\n    env:\n      %s: \"1\"\n      %s: \"1\"\n", name, exe, probe.EnvRun, probe.EnvNoLogging)
		if version != "" {
			s += fmt.Sprintf("    protocolVersion: %q\n", version)
		}
		return s
	}
	b := start(t, bridgeConfig{extraServers: noLogging("nolog", "") + noLogging("nolog-2025", "2025-11-25")})
	ctx := testCtx(t)
	for _, v := range []struct{ server, noLogging, protocol string }{
		{serverModern, "nolog", "2026-07-28"},
		{serverLegacy, "nolog-2025", "2025-11-25"},
	} {
		t.Run(v.protocol, func(t *testing.T) {
			t.Run("level at CreateSession", func(t *testing.T) {
				cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: v.server, LogLevel: pb.LoggingLevel_LOGGING_LEVEL_WARNING})
				if err != nil {
					t.Fatal(err)
				}
				sid := cs.GetSession().GetSessionId()
				if got := cs.GetSession().GetProtocolVersion(); got != v.protocol {
					t.Fatalf("negotiated %s, want %s", got, v.protocol)
				}
				w, err := b.client.WatchEvents(ctx, &pb.WatchEventsRequest{SessionId: sid})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: sid, Name: "log"}); err != nil {
					t.Fatal(err)
				}
				var got []pb.LoggingLevel
				for {
					ev, err := w.Recv()
					if err != nil {
						t.Fatalf("event stream: %v (log levels so far %v)", err, got)
					}
					if l := ev.GetEvent().GetLog(); l != nil {
						got = append(got, l.GetLevel())
						if l.GetLevel() == pb.LoggingLevel_LOGGING_LEVEL_EMERGENCY {
							break
						}
					}
				}
				want := []pb.LoggingLevel{pb.LoggingLevel_LOGGING_LEVEL_WARNING, pb.LoggingLevel_LOGGING_LEVEL_ERROR,
					pb.LoggingLevel_LOGGING_LEVEL_CRITICAL, pb.LoggingLevel_LOGGING_LEVEL_ALERT, pb.LoggingLevel_LOGGING_LEVEL_EMERGENCY}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("log messages' levels (-want +got):\n%s", diff)
				}
				if _, err := b.client.SetLogLevel(ctx, &pb.SetLogLevelRequest{SessionId: sid, Level: pb.LoggingLevel_LOGGING_LEVEL_DEBUG}); err != nil {
					t.Errorf("SetLogLevel on a server with logging: %v", err)
				}
			})
			t.Run("server without logging", func(t *testing.T) {
				cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: v.noLogging, LogLevel: pb.LoggingLevel_LOGGING_LEVEL_INFO})
				if err != nil {
					t.Fatalf("CreateSession with a log level, server without logging: %v", err)
				}
				sid := cs.GetSession().GetSessionId()
				if got := cs.GetSession().GetProtocolVersion(); got != v.protocol {
					t.Fatalf("negotiated %s, want %s", got, v.protocol)
				}
				_, err = b.client.SetLogLevel(ctx, &pb.SetLogLevelRequest{SessionId: sid, Level: pb.LoggingLevel_LOGGING_LEVEL_INFO})
				if status.Code(err) != codes.FailedPrecondition {
					t.Errorf("SetLogLevel on a server without logging = %v, want FAILED_PRECONDITION", err)
				}
				if _, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: sid, Name: "echo", Arguments: args(t, map[string]any{"text": "hi"})}); err != nil {
					t.Errorf("CallTool: %v", err)
				}
			})
		})
	}
}
