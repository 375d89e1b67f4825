package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	"github.com/mcp-bridge/mcp-bridge/e2e/probe"
	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/internal/state"
	"github.com/mcp-bridge/mcp-bridge/internal/testhost"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// The test binary doubles as the upstream MCP server: the bridge runs os.Args[0] with $MCPBRIDGE_PROBE=1,
// which serves the demo server plus the probe's tools over stdio (package probe).
func TestMain(m *testing.M) {
	probe.MaybeRun()
	goleak.VerifyTestMain(m)
}

// Server names of the test bridge: "demo" negotiates (2026-07-28), "demo-2025" is pinned to 2025-11-25.
const (
	serverModern = "demo"
	serverLegacy = "demo-2025"
)

// testLog writes slog output to t.Log until the test ends (goroutines may log after it).
type testLog struct {
	mu   sync.Mutex
	t    testing.TB
	done bool
}

func (w *testLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

func (w *testLog) stop() {
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
}

// bridge is an in-process bridge: real mcpcore, real upstream (the probe subprocess), gRPC over bufconn.
type bridge struct {
	t       *testing.T
	core    *mcpcore.Core
	svc     *Service
	conn    *grpc.ClientConn
	client  pb.BridgeServiceClient
	reports *probe.Reports
}

type bridgeConfig struct {
	opts    Options
	limits  mcpcore.Limits
	pending mcpcore.PendingPolicy
	store   state.Store // nil: nothing kept
}

func newBridge(t *testing.T, cfg bridgeConfig) *bridge {
	t.Helper()
	logs := &testLog{t: t}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	reports, err := probe.Listen()
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	server := func(name, version string) mcpcore.ServerConfig {
		return mcpcore.ServerConfig{Name: name, Transport: mcpcore.TransportStdio, Command: exe, Env: probe.Env(reports.Addr()), ProtocolVersion: version,
			Restart: mcpcore.RestartPolicy{MaxRestarts: -1}}
	}
	core := mcpcore.New(mcpcore.Options{
		Logger: logger,
		Servers: map[string]mcpcore.ServerConfig{
			serverModern: server(serverModern, ""),
			serverLegacy: server(serverLegacy, "2025-11-25"),
		},
		Limits:  cfg.limits,
		Pending: cfg.pending,
		Store:   cfg.store,
	})
	cfg.opts.Logger = logger
	t.Cleanup(func() { // runs after serveBridge's (cleanups run last first), which closes the service
		reports.Close()
		logs.stop()
	})
	b := serveBridge(t, core, New(core, cfg.opts))
	b.reports = reports
	return b
}

// serveBridge serves svc over bufconn with the options cmd/mcp-bridge gives it and returns a bridge whose
// client talks to it; the test's cleanup closes the service, the connection and the server, and waits.
func serveBridge(t *testing.T, core *mcpcore.Core, svc *Service) *bridge {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	gs := grpc.NewServer(append(svc.ServerOptions(), svc.EncodingOptions()...)...)
	pb.RegisterBridgeServiceServer(gs, svc)
	served := make(chan struct{})
	go func() { // ends when gs stops
		defer close(served)
		_ = gs.Serve(lis)
	}()
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := svc.Close(ctx); err != nil {
			t.Errorf("Service.Close: %v", err)
		}
		_ = conn.Close()
		gs.Stop()
		<-served
	})
	return &bridge{t: t, core: core, svc: svc, conn: conn, client: pb.NewBridgeServiceClient(conn)}
}

// ctx returns a context for one test step, with the bearer token of principal when it is not empty.
func testCtx(t *testing.T, token string) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	if token != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	}
	return ctx
}

// allCaps declares every host capability.
var allCaps = &pb.HostCapabilities{
	Sampling:    &pb.SamplingCapability{},
	Elicitation: &pb.ElicitationCapability{Form: true, Url: true},
	Roots:       &pb.RootsCapability{ListChanged: true},
}

func (b *bridge) create(ctx context.Context, server string) *pb.Session {
	b.t.Helper()
	r, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: server, HostCapabilities: allCaps})
	if err != nil {
		b.t.Fatalf("CreateSession(%s): %v", server, err)
	}
	return r.GetSession()
}

// wantCode fails unless err is a status with code c.
func wantCode(t *testing.T, err error, c codes.Code) *status.Status {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok || st.Code() != c {
		t.Fatalf("got error %v, want code %v", err, c)
	}
	return st
}

// hostConn is a host's Connect stream (internal/testhost, shared with the e2e tests).
type hostConn = testhost.Conn

func (b *bridge) connect(ctx context.Context) *hostConn {
	b.t.Helper()
	return testhost.Connect(ctx, b.t, b.client)
}

type callResult = testhost.CallResult

func (b *bridge) callAsync(ctx context.Context, req *pb.CallToolRequest) <-chan callResult {
	return testhost.CallAsync(ctx, b.client, req)
}

func await[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	return testhost.Await(t, ch)
}

func textOf(r *pb.CallToolResult) string {
	var sb strings.Builder
	for _, c := range r.GetContent() {
		sb.WriteString(c.GetText().GetText())
	}
	return sb.String()
}

var _ = io.EOF
