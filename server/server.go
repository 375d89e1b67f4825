// Package server is mcp-bridge's gRPC service, mcpbridge.v1.BridgeService, on top of the MCP client core
// (package mcpcore). It converts between the API's messages and the MCP SDK's types, maps errors to gRPC
// statuses in one place (errors.go), authenticates callers (auth.go), keeps every session invisible to all
// but its owner, and runs the host streams (Connect, WatchEvents, StreamCallTool) through which hosts see and
// answer what upstream servers ask of them.
//
// REST is served by grpc-gateway in front of the same service (package server/gateway): unary calls run
// in-process through the service's own interceptor chain, streams over an in-process gRPC connection, so
// the interceptors apply to REST calls too.
package server

import (
	"context"
	"log/slog"

	"sync"
	"time"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
	"github.com/mcp-bridge/mcp-bridge/mcpcore/ownership"
)

// Defaults of Options.
const (
	defaultStreamBuffer = 256
	// idleCloseTimeout bounds closing one idle session (stdio shutdown has its own bounded waits).
	idleCloseTimeout = 30 * time.Second
)

// Options configure a Service. The zero value is valid: no bearer auth (every caller is LocalPrincipal),
// idle sessions kept, default buffers.
type Options struct {
	// Logger receives the service's logs; nil means slog.Default().
	Logger *slog.Logger
	// Tokens maps bearer tokens to the principal each one authenticates (the config's auth.tokensFile).
	// Empty turns bearer auth off and every caller is LocalPrincipal (docs/adr/0004-principals.md).
	Tokens map[string]string
	// IdleTimeout closes a session that has had no call in flight and no attached stream (Connect,
	// WatchEvents) for this long. Zero keeps idle sessions until they are deleted.
	IdleTimeout time.Duration
	// Servers describe the configured servers for ListServers, in the order to list them (the
	// configuration file's). Servers of the core missing here are listed after them, by name.
	Servers []ServerDescription
	// StreamBuffer bounds the messages queued for one host stream (Connect, WatchEvents, StreamCallTool)
	// waiting to be sent; default 256. A host that reads slower than events arrive loses events (announced
	// by an EventsDropped event); server requests stay pending and are listed by ListPendingRequests.
	StreamBuffer int
	// Peers, when set, lists the caller's sessions on the other replicas of a shared service: ListSessions
	// shows them too (peers.go). Nil for a single bridge.
	Peers PeerSessions

	// Policy (docs/adr/0012-policy.md). OIDC, when set, also accepts JWT bearer tokens of an identity
	// provider (oidc.go). CertPrincipal names the part of a verified client certificate that is the
	// caller's principal (CertCommonName, …); empty: certificates do not name principals. Caller tells how
	// a call reached the service (nil: every call is "grpc", with the TLS connection's client certificate).
	OIDC          *OIDCOptions
	CertPrincipal string
	Caller        func(ctx context.Context) CallerInfo
	// Audit receives the audit records (audit.go); nil turns the audit log off. AuditPayloads adds
	// tool arguments and hosts' answers to the records.
	Audit         *slog.Logger
	AuditPayloads bool
	// RateLimits returns a principal's limits (ratelimit.go); nil means none.
	RateLimits func(principal string) RateLimit
	// MaxEventStreamsPerPrincipal caps the WatchEvents streams one principal holds open (stream.go);
	// 0: no cap.
	MaxEventStreamsPerPrincipal int

	// Owner decides which replica serves a session (mcpcore/ownership): the lookup of the session a call
	// names, takeover, hand-back. The service starts it and closes it after the core (Close releases the
	// leases after the drain). Nil: sessions live on the replica named in their id, without shared state.
	Owner *ownership.Owner
}

// ServerDescription is what the operator wrote about a configured server.
type ServerDescription struct {
	Name        string
	Description string
}

// Service implements mcpbridgev1.BridgeServiceServer. Create it with New, register it on a grpc.Server
// created with ServerOptions (auth, panic recovery), and Close it on shutdown.
//
// All methods are safe for concurrent use.
type Service struct {
	unimplemented // the generated defaults, one level down: the concern types' methods take precedence

	// The service's concerns, each a type in the file named for it; their methods are the Service's
	// (embedded), and each reaches the rest of the service through its back pointer.
	sessionsAPI    // Create/Get/List/DeleteSession, ListServers (sessions.go, peers.go)
	upstreamOps    // tools, resources, prompts, completion, log level, ping, roots (ops.go)
	toolCalls      // CallTool, StreamCallTool, CancelCall, tasks (calls.go, stream.go, audit.go)
	hostAPI        // server requests to hosts: Connect, WatchEvents, ListPending/RespondToRequest (host.go, connect.go, opening.go, stream.go)
	approvalAPI    // approval requests and their history (approval.go)
	sessionUse     // finds sessions, marks them used, the idle reaper (usage.go)
	liveConfig     // what a reload changes (live.go)
	auditLog       // the audit log (audit.go)
	interceptors   // the interceptor chain: auth, rate limits, logging, replica routing (auth.go, logging.go, routing.go)
	replicaRouting // which replica serves a session (ownership.go)
	identityAPI    // who the caller is (identity.go, identity_rpc.go)

	core   *mcpcore.Core
	logger *slog.Logger
	opts   Options

	// done is closed by Close: the idle reaper exits.
	done      chan struct{}
	reaperWG  sync.WaitGroup
	closeOnce sync.Once
	// streamsEnd is closed by EndStreams (and Close): host streams return UNAVAILABLE.
	streamsEnd     chan struct{}
	endStreamsOnce sync.Once
}

// unimplemented holds the generated server's defaults (pb.UnimplementedBridgeServiceServer). Service embeds it
// one level deeper than its concern types, so that their methods, not the defaults, are the Service's. An RPC
// two concern types both implement is ambiguous and is then no method of Service: the assertion below fails
// to compile (TestEveryRPCHasOneConcern checks that no RPC falls through to a default).
type unimplemented struct {
	pb.UnimplementedBridgeServiceServer
}

// respondKey is the answerer key (mcpcore.RequestEnded.AnsweredBy) of answers given with RespondToRequest.
const respondKey = "respond"

// New returns the service for core. The service owns core from now on: Close closes it. It starts one
// goroutine, the idle reaper, when opts.IdleTimeout is set; Close stops it.
func New(core *mcpcore.Core, opts Options) *Service {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.StreamBuffer <= 0 {
		opts.StreamBuffer = defaultStreamBuffer
	}
	s := &Service{
		core:       core,
		logger:     opts.Logger,
		opts:       opts,
		done:       make(chan struct{}),
		streamsEnd: make(chan struct{}),
	}
	s.sessionsAPI.s, s.upstreamOps.s, s.toolCalls.s, s.hostAPI.s, s.approvalAPI.s = s, s, s, s, s
	s.sessionUse.s = s
	s.liveConfig = liveConfig{s: s, limiter: newLimiterSwitch(opts.RateLimits)}
	s.auditLog.s, s.interceptors.s, s.identityAPI.s = s, s, s
	s.replicaRouting = replicaRouting{s: s, owner: opts.Owner}
	if s.owner == nil {
		s.owner = ownership.New(core, ownership.Options{Logger: opts.Logger})
	}
	a := newAuthenticator(opts.Tokens)
	a.configure(opts, s.logger)
	s.auth = newAuthSwitch(a)
	core.TrackHosts() // the service's host streams say when a host is attached (attachHost)
	if opts.IdleTimeout > 0 {
		s.reaperWG.Add(1)
		go s.reapIdle() // ends when Close closes s.done
	}
	s.owner.Start() // renews the leases of a shared state until Close
	return s
}

// EndStreams is the first step of shutdown: new sessions are refused, pending server requests end with
// the outcome SESSION_CLOSED "bridge shutting down" (mcpcore.Core.Drain), and the host streams (Connect,
// WatchEvents, StreamCallTool) end with UNAVAILABLE "the bridge is shutting down", so that they do not
// hold up the HTTP server's Shutdown and the gRPC server's GracefulStop. Sessions and calls in flight
// stay until Close. It is idempotent.
func (s *Service) EndStreams() {
	s.refuseNew()
	// Pending server requests end now ("bridge shutting down"), and the calls that wait on them fail
	// with UNAVAILABLE at once, rather than when the gRPC drain bound runs out.
	s.core.Drain()
	s.endStreamsOnce.Do(func() { close(s.streamsEnd) })
}

// Close shuts the service down: EndStreams if not done yet, then the core drains bounded by ctx (pending
// requests get their policy defaults, sessions close, stdio servers exit) and the idle reaper stops. Close
// is idempotent; later calls return nil.
func (s *Service) Close(ctx context.Context) error {
	var err error
	s.closeOnce.Do(func() {
		s.EndStreams()
		err = s.core.Close(ctx) // the detached calls end with their sessions, their audit records written
		// The sessions are closed here with their records kept: others take them over at once.
		s.owner.Close(ctx)
		close(s.done)
		s.reaperWG.Wait()
	})
	return err
}

// Core returns the core the service runs on.
func (s *Service) Core() *mcpcore.Core { return s.core }

// callIDOf is the host's call id, or a new one the core mints: the core owns call ids and refuses a
// duplicate of a call in flight (mcpcore.ErrCallInFlight).
func callIDOf(id string) string {
	if id == "" {
		return mcpcore.NewCallID()
	}
	return id
}

// Close reasons of sessions the service closes (Session.state_reason); Service.Close's is the core's
// "bridge shutting down".
const (
	idleReason    = "idle timeout"
	deletedReason = "deleted by the host"
)

// outcomeFor returns how an answered request looks to the receiver with key: ANSWERED if it answered it,
// else ANSWERED_ELSEWHERE. Watchers (key "") see answers given with RespondToRequest, and answers whose
// answerer is not known, as their own. Who answered is the dispatcher's to say (RequestEnded.AnsweredBy).
func outcomeFor(key string) func(mcpcore.RequestEnded) pb.RequestOutcome {
	return func(e mcpcore.RequestEnded) pb.RequestOutcome {
		if e.AnsweredBy == key || (key == "" && (e.AnsweredBy == respondKey || e.AnsweredBy == "")) {
			return pb.RequestOutcome_REQUEST_OUTCOME_ANSWERED
		}
		return pb.RequestOutcome_REQUEST_OUTCOME_ANSWERED_ELSEWHERE
	}
}
