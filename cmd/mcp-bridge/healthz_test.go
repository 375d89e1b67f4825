package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	mcpbridgev1 "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/server"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// closedURL is an HTTP MCP server nothing listens at.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/mcp"
}

// waitHealth watches the health of service (the health service's Watch stream: each change is sent) until it
// is want; the health of servers is copied from the core every healthInterval. It fails the test if that
// does not happen within testTimeout.
func waitHealth(t *testing.T, hc healthpb.HealthClient, service string, want healthpb.HealthCheckResponse_ServingStatus) {
	t.Helper()
	ctx := testContext(t)
	st, err := hc.Watch(ctx, &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		t.Fatal(err)
	}
	var last *healthpb.HealthCheckResponse
	for {
		resp, err := st.Recv()
		if err != nil {
			t.Fatalf("health of %q = %v, %v; want %v", service, last, err, want)
		}
		if resp.Status == want {
			return
		}
		last = resp
	}
}

func TestServerHealth(t *testing.T) {
	cfg := fmt.Sprintf("mcpServers:\n  demo:\n    command: %q\n    args: [demo-server]\n    env: {%s: \"1\", GORACE: atexit_sleep_ms=0}\n  down:\n    url: %s\nsessions:\n  replica: r1\n",
		os.Args[0], mainEnv, closedURL(t))
	tb := startBridge(t, runOptions{}, "--config", writeConfig(t, "bridge.yaml", cfg))
	conn := dial(t, tb.addrs.GRPC)
	hc := healthpb.NewHealthClient(conn)
	client := mcpbridgev1.NewBridgeServiceClient(conn)

	// Nothing tried yet: UNKNOWN, per server.
	for _, s := range []string{"servers/demo", "servers/down"} {
		waitHealth(t, hc, s, healthpb.HealthCheckResponse_UNKNOWN)
	}
	var hdr metadata.MD
	cs, err := client.CreateSession(testContext(t), &mcpbridgev1.CreateSessionRequest{Server: "demo"}, grpc.Header(&hdr))
	if err != nil {
		t.Fatal(err)
	}
	if got := hdr.Get("mcpbridge-replica"); len(got) != 1 || got[0] != "r1" {
		t.Errorf("replica header = %v, want r1", got)
	}
	if id := cs.GetSession().GetSessionId(); len(id) < 6 || id[:5] != "s-r1." {
		t.Errorf("session id %q does not name replica r1", id)
	}
	if _, err := client.CreateSession(testContext(t), &mcpbridgev1.CreateSessionRequest{Server: "down"}); err == nil {
		t.Fatal("a session to a server nothing listens for opened")
	}
	waitHealth(t, hc, "servers/demo", healthpb.HealthCheckResponse_SERVING)
	waitHealth(t, hc, "servers/down", healthpb.HealthCheckResponse_NOT_SERVING)

	code, body := httpGet(t, nil, "http://"+tb.addrs.HTTP+"/readyz")
	want := map[string]any{"status": "READY", "replica": "r1", "servers": map[string]any{"demo": "SERVING", "down": "NOT_SERVING"}}
	got := decodeJSON(t, body)
	// The configuration in force (docs/adr/0095-live-configuration.md): the file as started, generation 1.
	if c, _ := got["config"].(map[string]any); c["generation"] != float64(1) {
		t.Errorf("/readyz config = %v, want generation 1", got["config"])
	}
	delete(got, "config")
	if diff := cmp.Diff(want, got); code != http.StatusOK || diff != "" {
		t.Errorf("/readyz = %d (-want +got):\n%s", code, diff)
	}

	// A call naming a session of another replica is refused: the proxy did not route it.
	_, err = client.GetSession(testContext(t), &mcpbridgev1.GetSessionRequest{SessionId: "s-r2.ABCDEFGHIJKLMNOPQRSTUVWXYZ"})
	if reason := errorReason(err); reason != server.ReasonWrongReplica {
		t.Errorf("GetSession of replica r2's session on r1 = %v, want WRONG_REPLICA", err)
	}

}

func errorReason(err error) string {
	for _, d := range status.Convert(err).Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info.Reason
		}
	}
	return ""
}
