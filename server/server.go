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
	"sync/atomic"
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
	pb.UnimplementedBridgeServiceServer

	core   *mcpcore.Core
	logger *slog.Logger
	// auth and limiter are the authenticator and the rate limits in force, servers the servers' descriptions:
	// Reconfigure swaps them (live.go).
	auth    *authSwitch
	opts    Options
	limiter *limiterSwitch
	servers atomic.Pointer[[]ServerDescription]
	// streamCap is limits.maxEventStreamsPerPrincipal as Reconfigure set it; nil: Options' (live.go).
	streamCap atomic.Pointer[int]
	// auditCur is the audit log as SetAudit set it (nil: Options'); auditMu is held shared while a record
	// is written, exclusively by SetAudit (live.go).
	auditCur atomic.Pointer[auditSink]
	auditMu  sync.RWMutex

	// done is closed by Close: the idle reaper exits.
	done      chan struct{}
	reaperWG  sync.WaitGroup
	closeOnce sync.Once
	// streamsEnd is closed by EndStreams (and Close): host streams return UNAVAILABLE.
	streamsEnd     chan struct{}
	endStreamsOnce sync.Once

	mu      sync.Mutex          // guards tracked and closing
	tracked map[string]*tracked // sessions by id: usage and what the service remembers of them
	closing bool

	owner *ownership.Owner // who serves a session among the replicas (ownership.go)

	watches watchSlots // WatchEvents streams per principal (stream.go)
}

// tracked is what the service keeps per session.
type tracked struct {
	busy     int       // calls in flight (attached hosts are the session's to count: Session.HostsAttached)
	lastUsed time.Time // when the session last had no call and no host (or was created)
	closing  bool      // the idle reaper is closing it
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
		limiter:    newLimiterSwitch(opts.RateLimits),
		opts:       opts,
		done:       make(chan struct{}),
		streamsEnd: make(chan struct{}),
		tracked:    map[string]*tracked{},
		owner:      opts.Owner,
	}
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
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
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
		err = s.core.Close(ctx)
		// The sessions are closed here with their records kept: others take them over at once.
		s.owner.Close(ctx)
		close(s.done)
		s.reaperWG.Wait()
	})
	return err
}

// Core returns the core the service runs on.
func (s *Service) Core() *mcpcore.Core { return s.core }

// lookup returns the caller's session id, or NOT_FOUND when it does not exist or belongs to another
// principal (the two are indistinguishable).
func (s *Service) lookup(ctx context.Context, id string) (*mcpcore.Session, error) {
	if id == "" {
		return nil, invalidArgument(required("session_id"))
	}
	sess, err := s.owner.Lookup(ctx, id, Principal(ctx))
	if err != nil {
		return nil, lookupStatus(id, err)
	}
	return sess, nil
}

// use is lookup that also marks the session busy until release is called, so that the idle reaper leaves
// it alone.
func (s *Service) use(ctx context.Context, id string) (sess *mcpcore.Session, release func(), err error) {
	sess, t, err := s.lookupLocking(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	t.busy++
	s.mu.Unlock()
	var once sync.Once
	return sess, func() {
		once.Do(func() {
			s.mu.Lock()
			if t.busy--; t.busy == 0 && sess.HostsAttached() == 0 {
				t.lastUsed = time.Now()
			}
			s.mu.Unlock()
		})
	}, nil
}

// lookupLocking is lookup that also returns the session's record, unless the idle reaper is closing the
// session (then it is not found). On success it returns with s.mu held: the caller marks the session used
// (use, attachHost) and unlocks.
func (s *Service) lookupLocking(ctx context.Context, id string) (*mcpcore.Session, *tracked, error) {
	sess, err := s.lookup(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	t := s.trackLocked(id)
	if t.closing {
		s.mu.Unlock()
		return nil, nil, sessionNotFound(id)
	}
	return sess, t, nil
}

// trackLocked returns the record of session id, creating it. The caller holds s.mu.
func (s *Service) trackLocked(id string) *tracked {
	t := s.tracked[id]
	if t == nil {
		t = &tracked{lastUsed: time.Now()}
		s.tracked[id] = t
	}
	return t
}

// callIDOf is the host's call id, or a new one the core mints: the core owns call ids and refuses a
// duplicate of a call in flight (mcpcore.ErrCallInFlight).
func callIDOf(id string) string {
	if id == "" {
		return mcpcore.NewCallID()
	}
	return id
}

func (s *Service) forget(id string) {
	s.mu.Lock()
	delete(s.tracked, id)
	s.mu.Unlock()
}

// Close reasons of sessions the service closes (Session.state_reason); Service.Close's is the core's
// "bridge shutting down".
const (
	idleReason    = "idle timeout"
	deletedReason = "deleted by the host"
)

// reapIdle closes sessions idle for longer than Options.IdleTimeout. It checks at a quarter of the timeout
// (at least every 10ms, at most every minute) and exits when Close closes s.done.
func (s *Service) reapIdle() {
	defer s.reaperWG.Done()
	defer logPanic(s.logger, "idle reaper")
	every := min(max(s.opts.IdleTimeout/4, 10*time.Millisecond), time.Minute)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-tick.C:
		}
		now := time.Now()
		open := map[string]*mcpcore.Session{}
		for _, sess := range s.core.Sessions("") {
			open[sess.ID()] = sess
		}
		var idle []*mcpcore.Session
		s.mu.Lock()
		for id := range open {
			s.trackLocked(id) // sessions opened by others are tracked from the first time they are seen
		}
		for id, t := range s.tracked {
			sess, ok := open[id]
			switch {
			case !ok:
				delete(s.tracked, id)
			case t.busy == 0 && sess.HostsAttached() == 0 && !t.closing && now.Sub(t.lastUsed) >= s.opts.IdleTimeout:
				t.closing = true
				idle = append(idle, sess)
			}
		}
		s.mu.Unlock()
		for _, sess := range idle {
			s.logger.Info("closing idle session", "session", sess.ID(), "idle_timeout", s.opts.IdleTimeout)
			ctx, cancel := context.WithTimeout(context.Background(), idleCloseTimeout)
			if err := sess.CloseWithReason(ctx, idleReason); err != nil {
				s.logger.Warn("closing idle session", "session", sess.ID(), "error", err)
			}
			cancel()
			s.forget(sess.ID())
			s.audit(WithPrincipal(context.Background(), sess.Owner()), auditSessionDeleted, nil, slog.String("session", sess.ID()), slog.String("server", sess.Server().Name), slog.String("state_reason", idleReason))
		}
	}
}

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

// respond delivers an answer on behalf of the receiver with key (see outcomeFor).
func (s *Service) respond(ctx context.Context, who mcpcore.Identity, id, key string, a mcpcore.Answer) error {
	return s.core.Dispatcher().RespondFor(ctx, who, id, key, a)
}

// sessionToProto describes a session.
func (s *Service) sessionToProto(sess *mcpcore.Session) (*pb.Session, error) {
	st, reason := sess.State()
	info := sess.Info()
	caps, err := serverCapsToProto(info.Capabilities, sess.TasksCapability())
	if err != nil {
		return nil, err
	}
	pr, err := rootsToProto(sess.Roots())
	if err != nil {
		return nil, err
	}
	return &pb.Session{
		SessionId:          sess.ID(),
		Server:             sess.Server().Name,
		State:              stateToProto(st),
		StateReason:        reason,
		ProtocolVersion:    info.ProtocolVersion,
		ServerInfo:         implementationToProto(info.ServerInfo),
		ServerCapabilities: caps,
		Instructions:       info.Instructions,
		CreateTime:         timestamp(sess.Created()),
		HostCapabilities:   hostCapsToProto(sess.Capabilities()),
		Roots:              pr,
		Restarts:           uint32(max(sess.Restarts(), 0)),
	}, nil
}
