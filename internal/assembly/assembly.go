// Package assembly builds the running service from the parsed configuration: the MCP client core, the
// gRPC service on it, the owner of its sessions among replicas (mcpcore/ownership) and the connections to
// a replica's peers. It owns the decisions that are not wiring (docs/adr/0103-one-owner-for-session-ownership.md):
// which store the core writes through (none, the durable store, or the store fenced by the leases of
// replicas that share it), restore or takeover at start (ownership.Owner.Restore), the move of an
// oauth.tokenStoreFile into the state store, the translation of the configuration into the core's
// options, and what the shared state exposes in metrics and /readyz. cmd/mcp-bridge parses the flags and
// the file, opens the listeners and the state store, calls Assemble, and serves.
package assembly

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcp-bridge/mcp-bridge/internal/config"
	"github.com/mcp-bridge/mcp-bridge/internal/state"
	"github.com/mcp-bridge/mcp-bridge/internal/telemetry"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
	"github.com/mcp-bridge/mcp-bridge/mcpcore/ownership"
	"github.com/mcp-bridge/mcp-bridge/mcpcore/upstreamauth"
	"github.com/mcp-bridge/mcp-bridge/server"
	"github.com/mcp-bridge/mcp-bridge/server/peers"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
)

// Options are what the binary gives Assemble besides the configuration.
type Options struct {
	Logger *slog.Logger
	// Store is the opened state store (nil: nothing is kept). The caller closes it after the service.
	Store state.Store
	// Server are the service's options the binary builds (the policy: principals, audit, rate limits);
	// Assemble fills in the rest.
	Server server.Options
	// Observer and TracerProvider are the core's metrics and tracing (nil: none); Metrics is the registry
	// the shared state's metrics go to (nil: none).
	Observer       mcpcore.Observer
	TracerProvider trace.TracerProvider
	Metrics        prometheus.Registerer
	// Version is the bridge's version, which the core tells the servers (clientInfo).
	Version string
}

// Service is the assembled service: the BridgeService with what must close after it.
type Service struct {
	*server.Service
	peers    *peers.Set           // nil without peers
	ua       *upstreamauth.Client // the upstream OAuth client, for the servers a reload adds
	store    state.Store          // nil: nothing kept
	durable  bool                 // the store outlives the process (a file, Redis)
	grpcOpts []grpc.ServerOption
}

// Assemble builds the service for cfg on a new MCP client core, restores what an earlier process of this
// replica kept, and returns it with the gRPC server options it needs (its interceptors: bearer-token
// authentication, panic recovery; the replica header; the encoding). The interceptors apply to REST too:
// the gateway reaches the gRPC server over an in-process client connection
// (docs/adr/0003-binary-and-configuration.md).
func Assemble(cfg *config.Config, o Options) (*Service, error) {
	logger := o.Logger
	if logger == nil {
		logger = slog.Default()
	}
	store := o.Store
	ua, err := upstreamAuth(cfg, logger, store)
	if err != nil {
		return nil, err
	}
	opts := CoreOptions(cfg, logger, ua)
	opts.ClientInfo.Version = o.Version
	opts.Observer = o.Observer
	opts.TracerProvider = o.TracerProvider
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
		opts.Store = ownership.FencedStore(store, leases, leases.Gone)
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
	svcOpts := o.Server
	svcOpts.Logger = logger
	svcOpts.IdleTimeout = cfg.Sessions.IdleTimeout
	svcOpts.Servers = servers
	svcOpts.Owner = ownership.New(core, ownership.Options{Leases: leases, Logger: logger})
	svcOpts.MaxEventStreamsPerPrincipal = cfg.Limits.MaxEventStreamsPerPrincipal
	var ps *peers.Set
	if len(cfg.Sessions.Peers) > 0 {
		ps = peers.New(cfg.Sessions.Peers, cfg.Sessions.Replica, cfg.Limits.MaxMessageBytes, logger)
		svcOpts.Peers = ps
	}
	svc := server.New(core, svcOpts)
	owner := svc.Owner()
	if leases != nil && o.Metrics != nil {
		telemetry.RegisterSharedState(o.Metrics, func() bool { return !leases.Down() },
			func() int { return len(leases.Held()) }, owner.Takeovers)
	}
	// What an earlier process kept comes back before the bridge serves (docs/adr/0021-what-is-kept.md);
	// replicas sharing a store take each session over on demand instead (the owner decides).
	rctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	rep, err := owner.Restore(rctx)
	cancel()
	if err != nil {
		_ = svc.Close(context.Background())
		if ps != nil {
			ps.Close()
		}
		return nil, fmt.Errorf("restoring the kept state: %w", err)
	}
	if rep != (mcpcore.RestoreReport{}) {
		logger.Info("state restored", "sessions", rep.Sessions, "pending_requests", rep.Requests, "mrtr_calls", rep.Rounds,
			"requests_ended_by_restart", rep.Ended, "records_dropped", rep.Dropped)
	}
	grpcOpts := append(append(svc.ServerOptions(), svc.RoutingOptions()...), svc.EncodingOptions()...)
	return &Service{Service: svc, peers: ps, ua: ua, store: store, durable: store != nil && cfg.State.Durable(), grpcOpts: grpcOpts}, nil
}

// GRPCOptions are the gRPC server options the service needs.
func (s *Service) GRPCOptions() []grpc.ServerOption { return s.grpcOpts }

// UpstreamAuth is the upstream OAuth client the configured servers share (a reload's new servers too).
func (s *Service) UpstreamAuth() *upstreamauth.Client { return s.ua }

// Leases are the replica's leases on the sessions of a shared state; nil without one.
func (s *Service) Leases() *state.Leases { return s.Owner().Leases() }

// Close closes the service (its core, its sessions; the leases released), then the connections to the
// peers.
func (s *Service) Close(ctx context.Context) error {
	err := s.Service.Close(ctx)
	if s.peers != nil {
		s.peers.Close()
	}
	return err
}

// StateHealth is the state's health for /readyz; nil when there is none to report (nothing outlives the
// process). It is the writes' health (state.TrackedStore.Health) and, for replicas sharing their state,
// whether Redis answers the lease renewals (it says so but does not make the replica unready: the sessions
// it holds keep working, and every replica reaches the same Redis).
func (s *Service) StateHealth() func() error {
	leases := s.Leases()
	var writes func() error
	if h, ok := s.store.(interface{ Health() error }); ok && s.durable {
		writes = h.Health
	}
	if writes == nil && leases == nil {
		return nil
	}
	return func() error {
		if leases != nil && leases.Down() {
			return errStoreDown
		}
		if writes == nil {
			return nil
		}
		return writes()
	}
}

var errStoreDown = errors.New("the shared state store (redis) does not answer: held sessions keep working; takeovers and new sessions are refused until it does")

// OperatorOnly reports whether what only the operator may read is kept off the paths of the API's
// listeners that need no token (docs/adr/0030): it is when the bridge tells callers apart (bearer tokens,
// OIDC, principals from client certificates). Then the metrics — every configured server's name, those
// allowedPrincipals hides included, and the tools called — are served on the admin listener only, and the
// health of a server that allowedPrincipals hides is left out of the gRPC health service and the API
// listener's /readyz (HidesHealth). Without authentication every caller is the one principal "local" and
// all of it stays on the HTTP listener.
func OperatorOnly(cfg *config.Config) bool { return cfg.Auth.Configured() }

// HidesHealth reports whether the health of the configured server name is kept off the views that ask no
// token (the gRPC health service, the API listener's /readyz): with authentication configured, a server
// with allowedPrincipals — which ListServers shows only to those principals, and Open refuses to others
// exactly as a server that does not exist — is not named there. The admin listener names every server.
func HidesHealth(cfg *config.Config, name string) bool {
	if !OperatorOnly(cfg) {
		return false
	}
	s, ok := cfg.MCPServers[name]
	return ok && len(s.AllowedPrincipals) > 0
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

// CoreOptions translates the configuration into the MCP client core's options; ua authorizes the servers
// with an auth block of type oauth.
func CoreOptions(cfg *config.Config, logger *slog.Logger, ua *upstreamauth.Client) mcpcore.Options {
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
		ClientInfo:      &mcp.Implementation{Name: "mcp-bridge"},
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

// coreServer translates one configured server (its OAuth authorizer is CoreOptions's). maxRestarts means
// in the file what MaxRestarts means in mcpcore (0: never restart; the default is the configuration's).
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

// corePolicy translates a server's policy keys; nil when it has none.
func corePolicy(s *config.Server) *mcpcore.Policy {
	if len(s.AllowedPrincipals) == 0 && s.Tools == nil && s.Prompts == nil && s.Resources == nil {
		return nil
	}
	filter := func(f *config.ItemFilter) mcpcore.Filter {
		if f == nil {
			return mcpcore.Filter{}
		}
		return mcpcore.Filter{Allow: f.Allow, Deny: f.Deny}
	}
	p := &mcpcore.Policy{
		AllowedOwners: s.AllowedPrincipals,
		Tools:         filter(s.Tools),
		Prompts:       filter(s.Prompts),
		Resources:     filter(s.Resources),
	}
	if s.Tools != nil && len(s.Tools.Approve) > 0 && s.Approvers != nil {
		p.Approval = &mcpcore.ApprovalPolicy{
			Tools:     s.Tools.Approve,
			Approvers: mcpcore.Approvers{Principals: s.Approvers.Principals, Groups: s.Approvers.Groups, AllowSelf: s.Approvers.AllowSelf},
			Expiry:    s.ApprovalExpiry,
		}
	}
	return p
}
