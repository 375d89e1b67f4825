package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	mcpbridgev1 "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/internal/config"
	"github.com/mcp-bridge/mcp-bridge/internal/state"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
	"github.com/mcp-bridge/mcp-bridge/mcpcore/upstreamauth"
	"github.com/mcp-bridge/mcp-bridge/server"
	"github.com/mcp-bridge/mcp-bridge/server/peers"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
)

// bridgeService is the BridgeService implementation as serve needs it.
type bridgeService interface {
	mcpbridgev1.BridgeServiceServer
	// Close ends every session and stops what the service runs (the MCP client core and its
	// stdio processes). serve calls it once, after the gRPC server has stopped, with a deadline.
	Close(ctx context.Context) error
	// UnaryInterceptors is the unary interceptor chain of the options newBridgeService returns: the REST
	// gateway runs unary methods in-process through it (server/gateway).
	UnaryInterceptors() []grpc.UnaryServerInterceptor
	// Core is the MCP client core the service runs on, or nil for a service without one (tests).
	Core() *mcpcore.Core
	// EndStreams ends the host streams (Connect, WatchEvents, StreamCallTool), which never end on their
	// own; shutdown calls it before draining the servers.
	EndStreams()
}

// newBridgeService builds the BridgeService for cfg on a new MCP client core, and the gRPC
// server options it needs (its interceptors: bearer-token authentication, panic recovery). It is
// the only function that knows which implementation serves. The interceptors apply to REST too:
// the gateway reaches the gRPC server over an in-process client connection
// (docs/adr/0003-binary-and-configuration.md).
func newBridgeService(cfg *config.Config, logger *slog.Logger) (bridgeService, []grpc.ServerOption, error) {
	return newObservedService(cfg, logger, nil, nil)
}

// newObservedService is newBridgeService with the core's metrics and tracing set up by obs (nil: none), and
// the core keeping its state in store (nil: nothing is kept). The caller closes store after the service.
func newObservedService(cfg *config.Config, logger *slog.Logger, obs *observability, store state.Store) (bridgeService, []grpc.ServerOption, error) {
	ua, err := upstreamAuth(cfg, logger, store)
	if err != nil {
		return nil, nil, err
	}
	opts := coreOptions(cfg, logger, ua)
	obs.coreOptions(&opts)
	if store != nil && cfg.State.Durable() {
		// A store in memory keeps nothing past the process: the core writes nothing then (a plain
		// memory store would only cost each MRTR hop an encoding for nothing).
		opts.Store = store
	}
	// Replicas sharing their state in Redis own sessions by leases, and every write of a session's
	// records carries its fence (docs/adr/0070-replicas-share-state.md).
	var leases *state.Leases
	if rs := state.RedisEngine(store); rs != nil && cfg.State.Redis != nil {
		leases = state.NewLeases(rs, cfg.Sessions.Replica, cfg.State.Redis.LeaseTTL, logger)
		opts.Store = mcpcore.FencedStore(store, leases, leases.Gone)
	}
	core := mcpcore.New(opts)
	// A stdio server whose command cannot be run is said at start (log and /readyz), not at the first
	// CreateSession; the bridge starts all the same.
	for _, err := range core.CheckCommands() {
		logger.Warn("a configured server cannot start: its sessions will fail until the command is there", "err", err)
	}
	var servers []server.ServerDescription // in configuration order, as ListServers lists them
	for _, name := range cfg.ServerNames() {
		servers = append(servers, server.ServerDescription{Name: name, Description: cfg.MCPServers[name].Description})
	}
	svcOpts := server.Options{
		Logger:      logger,
		Tokens:      cfg.Auth.Tokens,
		IdleTimeout: cfg.Sessions.IdleTimeout,
		Servers:     servers,
		Leases:      leases,

		MaxEventStreamsPerPrincipal: cfg.Limits.MaxEventStreamsPerPrincipal,
	}
	closeAudit, err := policyOptions(cfg, &svcOpts)
	if err != nil {
		_ = core.Close(context.Background())
		return nil, nil, err
	}
	var ps *peers.Set
	if len(cfg.Sessions.Peers) > 0 {
		ps = peers.New(cfg.Sessions.Peers, cfg.Sessions.Replica, cfg.Limits.MaxMessageBytes, logger)
		svcOpts.Peers = ps
	}
	svc := server.New(core, svcOpts)
	if leases != nil {
		registerSharedState(obs, leases, svc)
	}
	// What an earlier process kept comes back before the bridge serves: sessions under their ids,
	// pending requests, MRTR rounds (docs/adr/0021-what-is-kept.md). Replicas sharing a store restore
	// nothing at start: each session comes back on the replica a call for it reaches (takeover).
	var rep mcpcore.RestoreReport
	if leases == nil {
		rctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		rep, err = core.Restore(rctx)
		cancel()
	}
	if err != nil {
		_ = svc.Close(context.Background())
		return nil, nil, fmt.Errorf("restoring the kept state: %w", err)
	}
	if rep != (mcpcore.RestoreReport{}) {
		logger.Info("state restored", "sessions", rep.Sessions, "pending_requests", rep.Requests, "mrtr_calls", rep.Rounds,
			"requests_ended_by_restart", rep.Ended, "records_dropped", rep.Dropped)
	}
	grpcOpts := append(append(svc.ServerOptions(), svc.RoutingOptions()...), svc.EncodingOptions()...)
	return &withPeers{Service: svc, peers: ps, closeAudit: closeAudit, leases: leases, ua: ua}, grpcOpts, nil
}

// withPeers is the service with what must close after it: the connections to a replica's peers, and the
// audit log file (policy.go).
type withPeers struct {
	*server.Service
	peers      *peers.Set           // nil without peers
	closeAudit *auditFile           // the audit log file in force (policy.go)
	leases     *state.Leases        // nil unless replicas share their state
	ua         *upstreamauth.Client // the upstream OAuth client, for the servers a reload adds (reload.go)
}

// Leases are the replica's leases on the sessions of a shared state; nil without one.
func (w *withPeers) Leases() *state.Leases { return w.leases }

func (w *withPeers) Close(ctx context.Context) error {
	err := w.Service.Close(ctx)
	if w.peers != nil {
		w.peers.Close()
	}
	_ = w.closeAudit.Close()
	return err
}

// upstreamAuth builds the upstream OAuth client the configured servers share, with its token store: the
// state store when the bridge's state is durable — a file, or Redis that replicas share, so that a replica
// taking a session over uses the grant a person gave through another (an oauth.tokenStoreFile of before is
// moved into it once) — else the encrypted token file when configured, else memory.
func upstreamAuth(cfg *config.Config, logger *slog.Logger, st state.Store) (*upstreamauth.Client, error) {
	opts := upstreamauth.Options{
		AllowLinkLocal:    cfg.OAuth.AllowLinkLocal,
		AllowInsecureHTTP: cfg.OAuth.AllowInsecureHTTP,
	}
	if st != nil && cfg.State.Durable() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		store, err := upstreamauth.OpenStateTokenStore(ctx, st, logger)
		if err != nil {
			return nil, err
		}
		if cfg.OAuth.TokenStoreFile != "" {
			key, err := upstreamauth.ParseTokenStoreKey([]byte(cfg.OAuth.TokenStoreKey.Reveal()))
			if err != nil {
				return nil, fmt.Errorf("oauth token store key: %w", err)
			}
			n, err := store.MigrateTokenFile(cfg.OAuth.TokenStoreFile, key)
			if err != nil {
				return nil, err
			}
			if n > 0 {
				logger.Info("oauth grants moved from the token file into the state store; the file was renamed to .migrated",
					"file", cfg.OAuth.TokenStoreFile, "grants", n)
			}
		}
		opts.Store = store
	} else if cfg.OAuth.TokenStoreFile != "" {
		key, err := upstreamauth.ParseTokenStoreKey([]byte(cfg.OAuth.TokenStoreKey.Reveal()))
		if err != nil {
			return nil, fmt.Errorf("oauth token store key: %w", err)
		}
		store, err := upstreamauth.OpenTokenStore(cfg.OAuth.TokenStoreFile, key, logger)
		if err != nil {
			return nil, err
		}
		opts.Store = store
	}
	return upstreamauth.NewClient(opts), nil
}

// coreOptions translates the configuration into the MCP client core's options; ua authorizes the servers
// with an auth block of type oauth.
func coreOptions(cfg *config.Config, logger *slog.Logger, ua *upstreamauth.Client) mcpcore.Options {
	servers := make(map[string]mcpcore.ServerConfig, len(cfg.MCPServers))
	for name, s := range cfg.MCPServers {
		sc := coreServer(s)
		if oc := oauthConfig(s.Auth); oc != nil {
			sc.OAuth = ua.Server(oc)
		}
		servers[name] = sc
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
			DescriptorReserve:    cfg.Limits.DescriptorReserve,
			OpenTimeout:          cfg.Limits.OpenTimeout,
		},
		Pending: mcpcore.PendingPolicy{
			SamplingTimeout:    cfg.Pending.SamplingTimeout,
			ElicitationTimeout: cfg.Pending.ElicitationTimeout,
			RootsTimeout:       cfg.Pending.RootsTimeout,
		},
		KeptResults:     mcpcore.KeptResultsPolicy{MaxBytes: int64(cfg.Limits.KeptResultsBytes), TTL: cfg.Limits.KeptResultsTTL},
		ClosedRetention: cfg.Sessions.ClosedRetention,
		ApprovalHistory: mcpcore.ApprovalHistoryLimits{Max: cfg.Limits.ApprovalHistory, MaxAge: cfg.Limits.ApprovalHistoryAge},
		Replica:         cfg.Sessions.Replica,
		ClientInfo:      &mcp.Implementation{Name: "mcp-bridge", Version: buildVersion()},
		OAuth:           mcpcore.OAuthOptions{AuthorizationTimeout: cfg.OAuth.AuthorizationTimeout},
	}
}

// oauthConfig translates a server's auth block of type oauth; nil for other servers.
func oauthConfig(a *config.ServerAuth) *upstreamauth.Config {
	if a == nil || a.Type != config.AuthOAuth {
		return nil
	}
	return &upstreamauth.Config{
		Grant:                      upstreamauth.Grant(a.Grant),
		ClientID:                   a.ClientID,
		ClientSecret:               a.ClientSecret(),
		Issuer:                     a.Issuer,
		ClientMetadataURL:          a.ClientMetadataURL,
		RedirectURL:                a.RedirectURL,
		Scopes:                     a.Scopes,
		DisableDynamicRegistration: !a.DynamicRegistrationAllowed(),
		ClientKey:                  secretSource(a.ClientKeyFile, a.ClientKeyEnv),
		ClientKeyAlg:               a.ClientKeyAlg,
		Assertion:                  secretSource(a.AssertionFile, a.AssertionEnv),
		IdP:                        coreIdP(a.IdP),
		DPoP:                       a.DPoP,
	}
}

// secretSource is the upstreamauth source of a credential kept in file or the environment variable env
// (read at every use); nil when neither is set.
func secretSource(file, env string) *upstreamauth.SecretSource {
	if file == "" && env == "" {
		return nil
	}
	return &upstreamauth.SecretSource{File: file, Env: env}
}

// coreIdP translates the idp block of the enterprise_managed grant.
func coreIdP(p *config.IdPAuth) *upstreamauth.IdPConfig {
	if p == nil {
		return nil
	}
	return &upstreamauth.IdPConfig{
		Issuer:           p.Issuer,
		TokenEndpoint:    p.TokenEndpoint,
		ClientID:         p.ClientID,
		ClientSecret:     secretSource(p.ClientSecretFile, p.ClientSecretEnv),
		SubjectToken:     secretSource(p.SubjectTokenFile, p.SubjectTokenEnv),
		SubjectTokenType: p.SubjectTokenType,
	}
}

// coreServer translates one configured server (its OAuth authorizer is coreOptions's). In the file, maxRestarts 0 means "never restart";
// in mcpcore that is a negative MaxRestarts (0 there means the default).
func coreServer(s *config.Server) mcpcore.ServerConfig {
	var roots []*mcp.Root
	for _, r := range s.Roots {
		roots = append(roots, &mcp.Root{URI: r.URI, Name: r.Name})
	}
	return mcpcore.ServerConfig{
		Name:              s.Name,
		Transport:         mcpcore.TransportKind(s.Transport),
		Command:           s.Command,
		Args:              s.Args,
		Env:               s.Env,
		Dir:               s.Cwd,
		URL:               s.URL,
		H2C:               s.H2C,
		Headers:           s.UpstreamHeaders(), // headers plus bearer/headers credentials; secrets
		ProtocolVersion:   s.ProtocolVersion,
		Roots:             roots,
		RequestTimeout:    s.RequestTimeout,
		MaxRequestTimeout: s.MaxRequestTimeout,
		Policy:            corePolicy(s),
		Restart: mcpcore.RestartPolicy{
			MaxRestarts:    s.Restart.MaxRestarts,
			InitialBackoff: s.Restart.InitialBackoff,
			MaxBackoff:     s.Restart.MaxBackoff,
		},
	}
}
