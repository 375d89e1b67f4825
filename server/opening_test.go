package server

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/internal/testauth"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
	"github.com/mcp-bridge/mcp-bridge/mcpcore/upstreamauth"
)

// newOAuthBridge is an in-process bridge with one OAuth-protected Streamable HTTP server, "secured", whose
// dispatcher feeds them to the service (Dispatcher.Watch) the way cmd/mcp-bridge runs it.
func newOAuthBridge(t *testing.T) *bridge {
	t.Helper()
	logs := &testLog{t: t}
	t.Cleanup(logs.stop)
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	as := testauth.New(testauth.Options{ScopesSupported: []string{"mcp"}})
	t.Cleanup(as.Close)
	up := mcp.NewServer(&mcp.Implementation{Name: "secured", Version: "1.0.0"}, nil)
	var guard http.Handler = http.NotFoundHandler()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { guard.ServeHTTP(w, r) }))
	t.Cleanup(hs.Close)
	guard = as.NewGuard(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil),
		testauth.GuardOptions{Resource: hs.URL + "/mcp", Scopes: []string{"mcp"}})

	core := mcpcore.New(mcpcore.Options{
		Logger: logger,
		Servers: map[string]mcpcore.ServerConfig{"secured": {
			Name: "secured", Transport: mcpcore.TransportStreamableHTTP, URL: hs.URL + "/mcp", OAuth: upstreamauth.NewClient(upstreamauth.Options{}).Server(&upstreamauth.Config{}),
			Restart: mcpcore.RestartPolicy{MaxRestarts: -1},
		}},
	})
	svc := New(core, Options{Logger: logger, Tokens: map[string]string{"tok-alice": "alice", "tok-bob": "bob"}})
	lis := bufconn.Listen(1 << 20)
	gs := grpc.NewServer(svc.ServerOptions()...)
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

// consent plays the person: it opens the authorization URL (the test authorization server approves at once)
// and returns where the browser was redirected.
func consent(t *testing.T, r *pb.AuthorizationRequest) string {
	t.Helper()
	hc := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Get(r.GetAuthorizationUrl())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("authorization endpoint: %d", resp.StatusCode)
	}
	return resp.Header.Get("Location")
}

// The core's hook pushes the authorization request of a session being created, with no poll, to the owner's
// Connect stream and WatchEvents on "-" (not to another principal's), once, and then its end.
func TestOpeningAuthorizationPushedByHook(t *testing.T) {
	b := newOAuthBridge(t)
	alice, bob := testCtx(t, "tok-alice"), testCtx(t, "tok-bob")
	host := b.connect(alice)
	other := b.connect(bob)
	w, err := b.client.WatchEvents(alice, &pb.WatchEventsRequest{SessionId: "-"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Header(); err != nil { // the stream is subscribed
		t.Fatal(err)
	}
	created := make(chan createResult, 1)
	go func() {
		r, err := b.client.CreateSession(alice, &pb.CreateSessionRequest{Server: "secured"})
		created <- createResult{r, err}
	}()

	req := host.nextRequest()
	if req.GetAuthorization() == nil {
		t.Fatalf("Connect got %v, want an authorization request", req)
	}
	ev, err := w.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if got := ev.GetEvent().GetServerRequest().GetRequestId(); got != req.GetRequestId() {
		t.Fatalf("WatchEvents on - got %v, want request %s", ev, req.GetRequestId())
	}
	if _, err := b.client.RespondToRequest(alice, &pb.RespondToRequestRequest{SessionId: "-", RequestId: req.GetRequestId(),
		Answer: &pb.HostAnswer{Answer: &pb.HostAnswer_Authorization{Authorization: &pb.AuthorizationResponse{RedirectUrl: consent(t, req.GetAuthorization())}}}}); err != nil {
		t.Fatal(err)
	}
	if r := <-created; r.err != nil {
		t.Fatalf("CreateSession: %v", r.err)
	}
	host.nextEnded(req.GetRequestId())
	for {
		ev, err := w.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if ev.GetEvent().GetServerRequest() != nil {
			t.Fatalf("WatchEvents on - got the request again: %v", ev)
		}
		if ev.GetEvent().GetRequestEnded().GetRequestId() == req.GetRequestId() {
			break
		}
	}
	for _, m := range other.backlog {
		if m.GetEvent() != nil {
			t.Errorf("another principal's Connect stream got %v", m)
		}
	}
	select {
	case m := <-other.msgs:
		t.Errorf("another principal's Connect stream got %v", m)
	default:
	}
}

// A session opened on the core directly (an embedder's, not CreateSession's) has its authorization request
// pushed as well: the hook fires whoever opens.
func TestOpeningAuthorizationOfCoreOpen(t *testing.T) {
	b := newOAuthBridge(t)
	alice := testCtx(t, "tok-alice")
	w, err := b.client.WatchEvents(alice, &pb.WatchEventsRequest{SessionId: "-"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Header(); err != nil {
		t.Fatal(err)
	}
	opened := make(chan error, 1)
	go func() {
		sess, err := b.core.Open(alice, mcpcore.OpenParams{Owner: "alice", Server: "secured"})
		if err == nil {
			err = sess.Close(context.Background())
		}
		opened <- err
	}()
	ev, err := w.Recv()
	if err != nil {
		t.Fatal(err)
	}
	req := ev.GetEvent().GetServerRequest()
	if req.GetAuthorization() == nil {
		t.Fatalf("WatchEvents on - got %v, want an authorization request", ev)
	}
	if _, err := b.client.RespondToRequest(alice, &pb.RespondToRequestRequest{SessionId: "-", RequestId: req.GetRequestId(),
		Answer: &pb.HostAnswer{Answer: &pb.HostAnswer_Authorization{Authorization: &pb.AuthorizationResponse{RedirectUrl: consent(t, req.GetAuthorization())}}}}); err != nil {
		t.Fatal(err)
	}
	if err := <-opened; err != nil {
		t.Fatalf("Open: %v", err)
	}
	ev, err = w.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if ev.GetEvent().GetRequestEnded().GetRequestId() != req.GetRequestId() {
		t.Fatalf("WatchEvents on - got %v, want the end of %s", ev, req.GetRequestId())
	}
}

type createResult struct {
	resp *pb.CreateSessionResponse
	err  error
}
