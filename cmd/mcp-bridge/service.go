package main

import (
	"context"
	"log/slog"

	mcpbridgev1 "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/internal/config"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
)

// bridgeService is the BridgeService implementation as serve needs it.
type bridgeService interface {
	mcpbridgev1.BridgeServiceServer
	// Close ends every session and stops what the service runs (the MCP client core and its
	// stdio processes). serve calls it once, after the gRPC server has stopped, with a deadline.
	Close(ctx context.Context) error
}

// newBridgeService builds the BridgeService for cfg, and the gRPC server options it needs
// (interceptors: authentication, limits). It is the only function that knows which
// implementation serves: until package server lands it is listServersOnly; then it becomes
//
//	core := mcpcore.New(coreOptions(cfg, logger))
//	svc := server.New(core, cfg, logger) // whatever server's constructor takes
//	return svc, svc.ServerOptions(), nil
//
// The interceptors apply to REST too: the gateway reaches the gRPC server over an in-process
// client connection (docs/adr/0003-binary-and-configuration.md).
func newBridgeService(cfg *config.Config, logger *slog.Logger) (bridgeService, []grpc.ServerOption, error) {
	_ = logger
	return newListServersOnly(cfg), nil, nil
}

// listServersOnly answers ListServers from the configuration and UNIMPLEMENTED for the rest. It
// stands in for package server's BridgeService until that lands.
type listServersOnly struct {
	mcpbridgev1.UnimplementedBridgeServiceServer
	servers []*mcpbridgev1.UpstreamServer
}

func newListServersOnly(cfg *config.Config) *listServersOnly {
	return &listServersOnly{servers: upstreamServers(cfg)}
}

func (s *listServersOnly) ListServers(context.Context, *mcpbridgev1.ListServersRequest) (*mcpbridgev1.ListServersResponse, error) {
	return &mcpbridgev1.ListServersResponse{Servers: s.servers}, nil
}

func (s *listServersOnly) Close(context.Context) error { return nil }

// upstreamServers describes the configured servers for ListServers, in configuration order.
// Only what is safe to show: never the command line, environment, headers or URL credentials.
func upstreamServers(cfg *config.Config) []*mcpbridgev1.UpstreamServer {
	var out []*mcpbridgev1.UpstreamServer
	for _, name := range cfg.ServerNames() {
		s := cfg.MCPServers[name]
		out = append(out, &mcpbridgev1.UpstreamServer{
			Name:            name,
			Transport:       protoTransport(s.Transport),
			Description:     s.Description,
			ProtocolVersion: s.ProtocolVersion,
		})
	}
	return out
}

func protoTransport(t config.Transport) mcpbridgev1.Transport {
	switch t {
	case config.TransportStdio:
		return mcpbridgev1.Transport_TRANSPORT_STDIO
	case config.TransportStreamableHTTP:
		return mcpbridgev1.Transport_TRANSPORT_STREAMABLE_HTTP
	case config.TransportSSE:
		return mcpbridgev1.Transport_TRANSPORT_SSE
	}
	return mcpbridgev1.Transport_TRANSPORT_UNSPECIFIED
}

// coreOptions translates the configuration into the MCP client core's options.
func coreOptions(cfg *config.Config, logger *slog.Logger) mcpcore.Options {
	servers := make(map[string]mcpcore.ServerConfig, len(cfg.MCPServers))
	for name, s := range cfg.MCPServers {
		servers[name] = coreServer(s)
	}
	return mcpcore.Options{
		Logger:            logger,
		Servers:           servers,
		AllowUnconfigured: cfg.AllowUnconfiguredServers,
		Limits: mcpcore.Limits{
			MaxMessageBytes:      cfg.Limits.MaxMessageBytes,
			MaxSessions:          cfg.Limits.MaxSessions,
			MaxSessionsPerOwner:  cfg.Limits.MaxSessionsPerPrincipal,
			MaxPendingPerSession: cfg.Limits.MaxPendingPerSession,
			MaxStdioProcesses:    cfg.Limits.MaxStdioProcesses,
		},
		Pending: mcpcore.PendingPolicy{
			SamplingTimeout:    cfg.Pending.SamplingTimeout,
			ElicitationTimeout: cfg.Pending.ElicitationTimeout,
			RootsTimeout:       cfg.Pending.RootsTimeout,
		},
		ClientInfo: &mcp.Implementation{Name: "mcp-bridge", Version: buildVersion()},
	}
}

// coreServer translates one configured server. In the file, maxRestarts 0 means "never restart";
// in mcpcore that is a negative MaxRestarts (0 there means the default).
func coreServer(s *config.Server) mcpcore.ServerConfig {
	restarts := s.Restart.MaxRestarts
	if restarts == 0 {
		restarts = -1
	}
	var roots []*mcp.Root
	for _, r := range s.Roots {
		roots = append(roots, &mcp.Root{URI: r.URI, Name: r.Name})
	}
	return mcpcore.ServerConfig{
		Name:            s.Name,
		Transport:       mcpcore.TransportKind(s.Transport),
		Command:         s.Command,
		Args:            s.Args,
		Env:             s.Env,
		Dir:             s.Cwd,
		URL:             s.URL,
		Headers:         s.Headers,
		ProtocolVersion: s.ProtocolVersion,
		Roots:           roots,
		Restart: mcpcore.RestartPolicy{
			MaxRestarts:    restarts,
			InitialBackoff: s.Restart.InitialBackoff,
			MaxBackoff:     s.Restart.MaxBackoff,
		},
	}
}
