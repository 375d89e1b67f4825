package main

import (
	"context"
	"log/slog"

	mcpbridgev1 "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/internal/assembly"
	"github.com/mcp-bridge/mcp-bridge/internal/config"
	"github.com/mcp-bridge/mcp-bridge/internal/state"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
	"google.golang.org/grpc"
)

// bridgeService is the BridgeService implementation as serve needs it.
type bridgeService interface {
	mcpbridgev1.BridgeServiceServer
	// Close ends every session and stops what the service runs (the MCP client core and its
	// stdio processes). serve calls it once, after the gRPC server has stopped, with a deadline.
	Close(ctx context.Context) error
	// UnaryInterceptors is the unary interceptor chain of the options newObservedService returns: the REST
	// gateway runs unary methods in-process through it (server/gateway).
	UnaryInterceptors() []grpc.UnaryServerInterceptor
	// Core is the MCP client core the service runs on, or nil for a service without one (tests).
	Core() *mcpcore.Core
	// EndStreams ends the host streams (Connect, WatchEvents, StreamCallTool), which never end on their
	// own; shutdown calls it before draining the servers.
	EndStreams()
}

// newObservedService assembles the BridgeService for cfg (internal/assembly) and the gRPC server options it
// needs, with the core's metrics and tracing set up by obs (nil: none), and the core keeping its state in
// store (nil: nothing is kept). The caller closes store after the service. It is the only function that
// knows which implementation serves.
func newObservedService(cfg *config.Config, logger *slog.Logger, obs *observability, store state.Store) (bridgeService, []grpc.ServerOption, error) {
	o := assembly.Options{Logger: logger, Store: store, Version: buildVersion()}
	obs.assemblyOptions(&o)
	closeAudit, err := policyOptions(cfg, &o.Server)
	if err != nil {
		return nil, nil, err
	}
	svc, err := assembly.Assemble(cfg, o)
	if err != nil {
		_ = closeAudit.Close()
		return nil, nil, err
	}
	return &withAudit{Service: svc, closeAudit: closeAudit}, svc.GRPCOptions(), nil
}

// withAudit is the assembled service with what must close after it: the audit log file in force (policy.go). The
// peers close with the service itself (internal/assembly).
type withAudit struct {
	*assembly.Service
	closeAudit *auditFile // the audit log file in force (policy.go); a reload replaces it
}

func (w *withAudit) Close(ctx context.Context) error {
	err := w.Service.Close(ctx)
	_ = w.closeAudit.Close()
	return err
}

// coreOptions translates the configuration into the core's options (a reload's new servers: reload.go).
var coreOptions = assembly.CoreOptions

var _ bridgeService = (*withAudit)(nil)
