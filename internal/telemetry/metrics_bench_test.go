package telemetry

import (
	"context"
	"testing"
	"time"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
)

// BenchmarkBenchObserverPerCall is what the metrics cost one tool call in the core: one OperationDone and
// two MessageTransferred (the request and its response).
func BenchmarkBenchObserverPerCall(b *testing.B) {
	m := NewMetrics(prometheus.NewRegistry(), []string{"demo"})
	op := mcpcore.Operation{Server: "demo", Transport: mcpcore.TransportStdio, Method: "tools/call", Target: "echo", ProtocolVersion: "2026-07-28", Duration: time.Millisecond}
	b.ReportAllocs()
	for b.Loop() {
		m.OperationDone(op)
		m.MessageTransferred(mcpcore.TransportStdio, true, 200)
		m.MessageTransferred(mcpcore.TransportStdio, false, 200)
	}
}

// BenchmarkBenchGRPCMetricsPerCall is what the gRPC server metrics (with the handling-time histogram) and the
// trace-context interceptor of a bridge that does not trace cost one unary RPC.
func BenchmarkBenchGRPCMetricsPerCall(b *testing.B) {
	gm := grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram())
	prometheus.NewRegistry().MustRegister(gm)
	metrics := gm.UnaryServerInterceptor()
	info := &grpc.UnaryServerInfo{FullMethod: "/mcpbridge.v1.BridgeService/CallTool"}
	handler := func(ctx context.Context, req any) (any, error) { return extract(ctx), nil }
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = metrics(ctx, nil, info, handler)
	}
}
