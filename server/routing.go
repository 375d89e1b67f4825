package server

import (
	"context"

	"github.com/mcp-bridge/mcp-bridge/mcpcore/ownership"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// Routing of sessions over the replicas of a shared service (docs/adr/0013-scaling-out.md).
//
// A bridge started with a replica name (sessions.replica, --replica) embeds it in every session id it makes:
// "s-<replica>.<random>". Hosts copy the session id of every session-scoped call into the metadata key
// SessionRoutingKey (the Python and Java clients do it for every call), and a proxy in front of the
// replicas sends the call to the replica named in it (deploy/haproxy/). Each response carries the
// answering replica's name under ReplicaHeader. A call that reaches a replica not serving its session is
// refused by mcpcore/ownership (ownership.go).
const (
	// SessionRoutingKey is the gRPC metadata key (and HTTP header) carrying the session id of a
	// session-scoped call, for the proxy to route on.
	SessionRoutingKey = ownership.RoutingKey
	// ReplicaHeader is the response header naming the replica that answered.
	ReplicaHeader = "mcpbridge-replica"
)

// RoutingOptions are the gRPC server options of a replica: every response carries ReplicaHeader. Without a
// replica name there is none.
func (ic *interceptors) RoutingOptions() []grpc.ServerOption {
	s := ic.s
	own := s.core.Replica()
	if own == "" {
		return nil
	}
	md := metadata.Pairs(ReplicaHeader, own)
	return []grpc.ServerOption{
		// The unary side is part of UnaryInterceptors, which ServerOptions installs.
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
			_ = ss.SetHeader(md)
			return handler(srv, ss)
		}),
	}
}

// replicaUnaryInterceptor sets ReplicaHeader on every unary response; nil without a replica name.
func (ic *interceptors) replicaUnaryInterceptor() grpc.UnaryServerInterceptor {
	s := ic.s
	own := s.core.Replica()
	if own == "" {
		return nil
	}
	md := metadata.Pairs(ReplicaHeader, own)
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		_ = grpc.SetHeader(ctx, md) // fails only once headers went out, which nothing did yet
		return handler(ctx, req)
	}
}
