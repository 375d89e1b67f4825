package main

import (
	"context"
	"log/slog"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
)

// refusalLogger is a gRPC stats handler that logs the calls grpc-go itself refuses before any handler or
// interceptor runs — a message over limits.maxMessageBytes, one that does not decode — which the service's
// logging interceptor never sees. Errors a handler returned are the interceptor's to log; these are told apart
// by grpc-go's own "grpc: " prefix. It never logs a message's content.
type refusalLogger struct{ logger *slog.Logger }

type rpcNameKey struct{}

func (h refusalLogger) TagRPC(ctx context.Context, info *stats.RPCTagInfo) context.Context {
	return context.WithValue(ctx, rpcNameKey{}, info.FullMethodName)
}

func (h refusalLogger) HandleRPC(ctx context.Context, s stats.RPCStats) {
	end, ok := s.(*stats.End)
	if !ok || end.Error == nil || end.IsClient() {
		return
	}
	st := status.Convert(end.Error)
	if !strings.HasPrefix(st.Message(), "grpc: ") {
		return
	}
	method, _ := ctx.Value(rpcNameKey{}).(string)
	h.logger.Warn("gRPC message refused", "method", method, "code", st.Code().String(), "error", st.Message())
}

func (refusalLogger) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (refusalLogger) HandleConn(context.Context, stats.ConnStats)                       {}

// refusalLogging is the server option that installs refusalLogger.
func refusalLogging(logger *slog.Logger) grpc.ServerOption {
	return grpc.StatsHandler(refusalLogger{logger: logger})
}
