package e2e

import (
	"context"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/internal/testhost"
)

// hostConn is a host's Connect stream (internal/testhost, shared with the server package's tests).
type hostConn = testhost.Conn

func (b *bridge) connect(ctx context.Context) *hostConn {
	b.t.Helper()
	return testhost.Connect(ctx, b.t, b.client)
}

type callResult = testhost.CallResult

func (b *bridge) callAsync(ctx context.Context, req *pb.CallToolRequest) <-chan callResult {
	return testhost.CallAsync(ctx, b.client, req)
}
