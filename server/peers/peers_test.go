package peers

import (
	"context"
	"log/slog"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	mcpbridgev1 "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/server"
)

// replica is a peer that lists one session of its own and records what it was asked with.
type replica struct {
	mcpbridgev1.UnimplementedBridgeServiceServer
	name string
	seen chan metadata.MD
}

func (r *replica) ListSessions(ctx context.Context, _ *mcpbridgev1.ListSessionsRequest) (*mcpbridgev1.ListSessionsResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	r.seen <- md
	_ = grpc.SetHeader(ctx, metadata.Pairs(server.ReplicaHeader, r.name))
	return &mcpbridgev1.ListSessionsResponse{Sessions: []*mcpbridgev1.Session{{SessionId: "s-" + r.name + ".A"}}}, nil
}

func startReplica(t *testing.T, name string) (string, *replica) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &replica{name: name, seen: make(chan metadata.MD, 4)}
	gs := grpc.NewServer()
	mcpbridgev1.RegisterBridgeServiceServer(gs, r)
	go func() { _ = gs.Serve(ln) }() // ends at Stop
	t.Cleanup(gs.Stop)
	return ln.Addr().String(), r
}

// The fan-out asks every peer with the caller's token and the local-only key, skips this replica's own
// answer and leaves out a peer that cannot be reached.
func TestListSessionsAsksThePeers(t *testing.T) {
	other, r2 := startReplica(t, "r2")
	self, _ := startReplica(t, "r1")
	gone, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	goneAddr := gone.Addr().String()
	gone.Close()

	set := New([]string{other, self, goneAddr}, "r1", 1<<20, slog.New(slog.DiscardHandler))
	defer set.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ctx = metadata.NewIncomingContext(ctx, metadata.Pairs("authorization", "Bearer tok"))
	pages, err := set.ListSessions(ctx, &mcpbridgev1.ListSessionsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) != 1 || pages[0].GetSessions()[0].GetSessionId() != "s-r2.A" {
		t.Fatalf("pages = %v, want r2's only", pages)
	}
	md := <-r2.seen
	if got := md.Get("authorization"); len(got) != 1 || got[0] != "Bearer tok" {
		t.Errorf("authorization to the peer = %v", got)
	}
	if len(md.Get(server.LocalOnlyKey)) != 1 {
		t.Errorf("the peer was not asked for its own sessions only: %v", md)
	}

	set.Close()
	if pages, _ := set.ListSessions(ctx, &mcpbridgev1.ListSessionsRequest{}); len(pages) != 0 {
		t.Errorf("after Close: %d pages, want none", len(pages))
	}
}
