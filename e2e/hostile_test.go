package e2e

// The hostile suite (issue 31, items 4 to 6): the walls of the process — descriptors, threads — and what a
// hostile upstream or host sends, driven against the real binary; each case asserts what the bridge keeps
// (peak RSS, descriptors) and that an innocent session keeps answering.

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/mcp-bridge/mcp-bridge/e2e/probe"
	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// peakRSS is the process's peak resident set (VmHWM), in bytes.
func peakRSS(t testing.TB, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/PID/status")
	return 0
}

// plainHTTPProbe serves the probe MCP server over Streamable HTTP from the test process.
func plainHTTPProbe(t *testing.T) string {
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return probe.New() }, nil))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// Issue 31, item 4: at the process's descriptor limit (set with prlimit on the running binary), new
// sessions are refused with a reason of their own that names the key — DESCRIPTOR_LIMIT, before the
// descriptors run out — and every existing session keeps answering and says READY, /healthz answers and a
// new gRPC client connects. Before: sessions opened until the limit, the next failed UNAVAILABLE, and calls
// on existing sessions, /healthz and new clients failed with it.
func TestHostileDescriptorWall(t *testing.T) {
	if _, err := exec.LookPath("prlimit"); err != nil {
		t.Skip("prlimit (util-linux) is not installed: it sets the running bridge's descriptor limit")
	}
	url := plainHTTPProbe(t)
	b := start(t, bridgeConfig{extraServers: fmt.Sprintf("  web:\n    url: %q\n    protocolVersion: \"2025-11-25\"\n", url),
		extra: "limits:\n  maxSessionsPerPrincipal: 1000\n"})
	pid := b.cmd.Process.Pid
	limit := openFDs(t, pid) + 200
	if out, err := exec.Command("prlimit", "--pid", strconv.Itoa(pid), fmt.Sprintf("--nofile=%d:%d", limit, limit)).CombinedOutput(); err != nil {
		t.Fatalf("prlimit: %v: %s", err, out)
	}
	ctx := testCtx(t)
	var ids []string
	var refused error
	for range 1000 {
		cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "web"})
		if err != nil {
			refused = err
			break
		}
		ids = append(ids, cs.GetSession().GetSessionId())
	}
	if refused == nil {
		t.Fatalf("%d sessions opened under a limit of %d descriptors", len(ids), limit)
	}
	t.Logf("%d sessions opened under a limit of %d descriptors; then: %v", len(ids), limit, refused)
	if status.Code(refused) != codes.ResourceExhausted || reasonOf(refused) != "DESCRIPTOR_LIMIT" ||
		!strings.Contains(status.Convert(refused).Message(), "limits.descriptorReserve") {
		t.Errorf("the session over the descriptor wall: %v (reason %q), want RESOURCE_EXHAUSTED DESCRIPTOR_LIMIT naming limits.descriptorReserve", refused, reasonOf(refused))
	}
	if len(ids) == 0 {
		t.Fatal("no session opened at all")
	}
	// Every existing session answers — 16 at a time, each call needing a connection of its own — and is READY.
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			res, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: id, Name: "echo", Arguments: args(t, map[string]any{"text": "still here"})})
			if err != nil || !strings.Contains(textOf(res.GetResult()), "still here") {
				t.Errorf("session %s at the wall: %v, %v", id, res, err)
			}
			gs, err := b.client.GetSession(ctx, &pb.GetSessionRequest{SessionId: id})
			if err != nil || gs.GetSession().GetState() != pb.SessionState_SESSION_STATE_READY {
				t.Errorf("session %s at the wall: %v, %v; want READY", id, gs.GetSession().GetState(), err)
			}
		})
	}
	wg.Wait()
	resp, err := http.Get("http://" + b.http + "/healthz")
	if err != nil {
		t.Fatalf("/healthz at the wall: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz at the wall: %d", resp.StatusCode)
	}
	conn, err := grpc.NewClient(b.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := pb.NewBridgeServiceClient(conn).ListServers(ctx, &pb.ListServersRequest{}); err != nil {
		t.Errorf("a new gRPC client at the wall: %v", err)
	}
	// Closing sessions frees descriptors: a new session opens again.
	for _, id := range ids[:len(ids)/2] {
		if _, err := b.client.DeleteSession(ctx, &pb.DeleteSessionRequest{SessionId: id}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "web"}); err != nil {
		t.Errorf("a new session after half were closed: %v", err)
	}
}

// Issue 31, item 5: WatchEvents streams per principal are capped (limits.maxEventStreamsPerPrincipal):
// one more is RESOURCE_EXHAUSTED TOO_MANY_STREAMS naming the key, and closing one frees its place. Before:
// no cap, the fourth stream opened.
func TestHostileWatchStreamCap(t *testing.T) {
	b := start(t, bridgeConfig{extra: "limits:\n  maxEventStreamsPerPrincipal: 3\n"})
	ctx := testCtx(t)
	cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: serverModern})
	if err != nil {
		t.Fatal(err)
	}
	id := cs.GetSession().GetSessionId()
	watch := func(ctx context.Context) (pb.BridgeService_WatchEventsClient, error) {
		st, err := b.client.WatchEvents(ctx, &pb.WatchEventsRequest{SessionId: id})
		if err != nil {
			return nil, err
		}
		_, err = st.Recv() // the session's state: the stream is being served
		return st, err
	}
	cancels := make([]context.CancelFunc, 3)
	for i := range cancels {
		wctx, cancel := context.WithCancel(ctx)
		cancels[i] = cancel
		defer cancel()
		if _, err := watch(wctx); err != nil {
			t.Fatalf("stream %d: %v", i+1, err)
		}
	}
	_, err = watch(ctx)
	if status.Code(err) != codes.ResourceExhausted || reasonOf(err) != "TOO_MANY_STREAMS" || !strings.Contains(status.Convert(err).Message(), "limits.maxEventStreamsPerPrincipal") {
		t.Fatalf("a fourth stream: %v (reason %q), want RESOURCE_EXHAUSTED TOO_MANY_STREAMS naming limits.maxEventStreamsPerPrincipal", err, reasonOf(err))
	}
	cancels[0]()
	for {
		_, err := watch(ctx) // the first stream's end reaches the bridge shortly after the cancel
		if err == nil {
			break
		}
		if status.Code(err) != codes.ResourceExhausted {
			t.Fatalf("after one stream closed: %v", err)
		}
	}
}
