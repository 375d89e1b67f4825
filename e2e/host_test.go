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

type callResult struct {
	resp *pb.CallToolResponse
	err  error
}

func (b *bridge) callAsync(ctx context.Context, req *pb.CallToolRequest) <-chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		r, err := b.client.CallTool(ctx, req)
		ch <- callResult{r, err}
	}()
	return ch
}
