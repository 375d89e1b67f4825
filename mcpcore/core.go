package mcpcore

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"
)

// Version is the version mcp-bridge presents upstream in clientInfo when Options.ClientInfo is nil.
var Version = "0.1.0-dev"

// Defaults for Limits, PendingPolicy and RestartPolicy (see their field comments).
const (
	DefaultMaxMessageBytes      = 16 << 20
	DefaultMaxSessions          = 1024
	DefaultMaxSessionsPerOwner  = 64
	DefaultMaxPendingPerSession = 64
	DefaultMaxStdioProcesses    = 256
	DefaultEventBuffer          = 64
	// DefaultOpenTimeout bounds opening a session (Limits.OpenTimeout).
	DefaultOpenTimeout = 30 * time.Second

	DefaultSamplingTimeout    = 5 * time.Minute
	DefaultElicitationTimeout = 10 * time.Minute
	DefaultRootsTimeout       = 30 * time.Second

	// ServerConfig.RequestTimeout and MaxRequestTimeout: the seed design's per-request default, and a
	// total bound generous enough for long tools that report progress.
	DefaultRequestTimeout    = 30 * time.Second
	DefaultMaxRequestTimeout = 30 * time.Minute

	DefaultClosedRetention = 5 * time.Minute
	maxClosedRetained      = 10_000

	DefaultMaxRestarts    = 5
	DefaultInitialBackoff = 200 * time.Millisecond
	DefaultMaxBackoff     = 30 * time.Second
)

func (l Limits) withDefaults() Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.MaxMessageBytes, DefaultMaxMessageBytes)
	def(&l.MaxSessions, DefaultMaxSessions)
	def(&l.MaxSessionsPerOwner, DefaultMaxSessionsPerOwner)
	def(&l.MaxPendingPerSession, DefaultMaxPendingPerSession)
	def(&l.MaxStdioProcesses, DefaultMaxStdioProcesses)
	def(&l.EventBuffer, DefaultEventBuffer)
	if l.OpenTimeout <= 0 {
		l.OpenTimeout = DefaultOpenTimeout
	}
	return l
}

func (p PendingPolicy) withDefaults() PendingPolicy {
	def := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&p.SamplingTimeout, DefaultSamplingTimeout)
	def(&p.ElicitationTimeout, DefaultElicitationTimeout)
	def(&p.RootsTimeout, DefaultRootsTimeout)
	return p
}

func (r RestartPolicy) withDefaults() RestartPolicy {
	if r.InitialBackoff <= 0 {
		r.InitialBackoff = DefaultInitialBackoff
	}
	if r.MaxBackoff <= 0 {
		r.MaxBackoff = DefaultMaxBackoff
	}
	if r.MaxBackoff < r.InitialBackoff {
		r.MaxBackoff = r.InitialBackoff
	}
	return r
}

// Core is the bridge's MCP client core: a registry of sessions to upstream servers and the dispatcher of
// their server-initiated requests.
//
// All methods are safe for concurrent use. The Core owns every Session it opened: Close closes them all.
type Core struct {
	logger *slog.Logger
	opts   Options // normalized: defaults filled in, Servers copied (read the servers with c.table(), not opts.Servers)
	limits Limits
	// servers is the generation of the configured servers every Open, policy check and listing reads; Reconfigure
	// swaps it whole (reconfigure.go).
	servers atomic.Pointer[map[string]ServerConfig]
	// tuning is the limits a reconfiguration changes that are read at each use (reconfigure.go).
	tuning atomic.Pointer[tunables]
	// retiring waits for the sessions of removed servers being ended (reconfigure.go); retireStop ends their waits.
	retiring   sync.WaitGroup
	retireStop chan struct{}
	retireOnce sync.Once
	clientInfo *mcp.Implementation
	dispatcher *Dispatcher
	procs      *slots // one slot per running stdio process (Limits.MaxStdioProcesses; Reconfigure resizes it)
	stats      coreStats
	obs        Observer     // Options.Observer or NopObserver
	lists      *listCache   // list results the protocol lets the bridge keep (listcache.go)
	trc        trace.Tracer // from Options.TracerProvider; nil: no spans
	listed     listedNames  // tool and prompt names the servers listed: the only names metrics and spans carry

	draining atomic.Bool // Drain was called: pending requests end as the bridge shuts down
	// hostsTracked: hosts say when they attach (TrackHosts, Session.AttachHost); until then one is assumed.
	hostsTracked atomic.Bool
	history      approvalHistory // approval requests that ended, bounded (approval.go)
	kept         *keptResults    // outcomes of completed tools/calls, for resumed calls (kept.go)
	callIDs      *callIDRecords  // the schedule of call-id records kept in the store, deleted at their TTL (callids.go)
	largeLists   *largeLists     // the slots of large tools/list responses (largelist.go)

	httpOnce sync.Once
	http     *http.Transport // shared by the sessions' HTTP clients; see httpTransport
	h2cOnce  sync.Once
	h2c      *http.Transport // shared by the sessions of servers configured for h2c; see h2cTransport

	// testDial, set only by tests, supplies the transport for servers of kind transportTest.
	testDial func(ServerConfig) (mcp.Transport, error)
	// testFDs, set only by tests, replaces the count of open descriptors (walls.go).
	testFDs func() (int, bool)

	mu sync.Mutex // guards the fields below
	// sessions is the one registry of sessions (registry.go): from the start of Open (or a restore) to the end
	// of Close, by id, with each one's phase. The limits count it; nothing else keyed by a session id is kept
	// beside it but the closed sessions below, which it no longer holds.
	sessions map[string]registered
	closedS  expiring[*Session] // closed sessions kept for Options.ClosedRetention, by id
	// maxSessions and maxPerOwner are Limits.MaxSessions and MaxSessionsPerOwner, which Reconfigure changes.
	maxSessions, maxPerOwner int
	closed                   bool
	opened                   map[string]openOutcome // the last Open of each server, by name (health.go)
}

// coreStats are the core's counters of bad input from servers; all fields are updated atomically.
type coreStats struct {
	malformed     atomic.Uint64
	oversized     atomic.Uint64
	stderrDropped atomic.Uint64
	restarts      atomic.Uint64
	reinitialized atomic.Uint64
	// descriptorRefusals counts sessions refused for want of descriptors (walls.go).
	descriptorRefusals atomic.Uint64
	// notificationsDropped counts servers' notifications over the rate a session may send (events.go).
	notificationsDropped atomic.Uint64
	// streamThrottled counts the waits of standalone SSE streams read over their budget (ssepace.go).
	streamThrottled atomic.Uint64
	// largeListWaits counts large tools/list responses that waited for a slot (largelist.go).
	largeListWaits atomic.Uint64
}

// Stats are counters of what the core has seen since New; they only grow.
type Stats struct {
	// MalformedMessages counts messages from servers the bridge could not use (reportBad): not valid
	// JSON-RPC, nested too deeply, a response the SDK could not use, a result the service could not convert.
	MalformedMessages uint64
	// OversizedMessages counts messages from servers larger than Limits.MaxMessageBytes.
	OversizedMessages uint64
	// StderrLinesDropped counts stdio servers' stderr lines not logged because of the rate bound.
	StderrLinesDropped uint64
	// Restarts counts stdio server restarts; Reinitialized counts re-initialized HTTP sessions.
	Restarts      uint64
	Reinitialized uint64
	// DescriptorRefusals counts new sessions refused because the process was near its descriptor limit.
	DescriptorRefusals uint64
	// NotificationsDropped counts progress and log notifications of servers dropped over the rate a
	// session may send.
	NotificationsDropped uint64
	// StreamThrottled counts the times the bridge stopped reading a server's SSE streams (the standalone GET
	// stream and the streams answering POSTs, one budget per connection) because they sent faster than their
	// budget (ssepace.go, docs/adr/0110).
	StreamThrottled uint64
	// LargeListWaits counts large tools/list responses that waited for another to be converted
	// (LargeListBytes); LargeListsHeld is how many are being read and converted now.
	LargeListWaits uint64
	LargeListsHeld int
}

// New returns a Core configured by opts. It starts no goroutines; sessions start their own.
func New(opts Options) *Core {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	opts.Servers = maps.Clone(opts.Servers)
	opts.Limits = opts.Limits.withDefaults()
	opts.Pending = opts.Pending.withDefaults()
	if opts.ClosedRetention <= 0 {
		opts.ClosedRetention = DefaultClosedRetention
	}
	info := opts.ClientInfo
	if info == nil {
		info = &mcp.Implementation{Name: "mcp-bridge", Version: Version}
	}
	c := &Core{
		logger:     opts.Logger,
		opts:       opts,
		limits:     opts.Limits,
		clientInfo: info,
		procs:      newSlots(opts.Limits.MaxStdioProcesses),
		sessions:   map[string]registered{},
		closedS:    newExpiring[*Session](opts.ClosedRetention, maxClosedRetained),
		lists:      newListCache(),
		retireStop: make(chan struct{}),

		maxSessions: opts.Limits.MaxSessions,
		maxPerOwner: opts.Limits.MaxSessionsPerOwner,
		kept:        newKeptResults(opts.KeptResults),
		largeLists:  newLargeLists(LargeListsAtOnce),
	}
	servers := opts.Servers
	c.servers.Store(&servers)
	c.tuning.Store(&tunables{openTimeout: c.limits.OpenTimeout, descriptorReserve: c.limits.DescriptorReserve, approvalHistory: opts.ApprovalHistory})
	c.obs = opts.Observer
	if c.obs == nil {
		c.obs = NopObserver{}
	}
	if opts.TracerProvider != nil {
		c.trc = opts.TracerProvider.Tracer(instrumentationName, trace.WithInstrumentationVersion(Version))
	}
	c.dispatcher = newDispatcher(opts.Logger, opts.Pending, opts.Limits, c)
	c.dispatcher.obs = c.obs
	c.dispatcher.keeper = c // durable.go: requestRaised, requestEnded
	c.callIDs = newCallIDRecords(c.delCallRecord)
	return c
}

// Dispatcher returns the registry of pending server-initiated requests of all sessions.
func (c *Core) Dispatcher() *Dispatcher { return c.dispatcher }

// Stats returns the core's counters.
func (c *Core) Stats() Stats {
	return Stats{
		MalformedMessages:    c.stats.malformed.Load(),
		OversizedMessages:    c.stats.oversized.Load(),
		StderrLinesDropped:   c.stats.stderrDropped.Load(),
		Restarts:             c.stats.restarts.Load(),
		Reinitialized:        c.stats.reinitialized.Load(),
		DescriptorRefusals:   c.stats.descriptorRefusals.Load(),
		NotificationsDropped: c.stats.notificationsDropped.Load(),
		StreamThrottled:      c.stats.streamThrottled.Load(),
		LargeListWaits:       c.stats.largeListWaits.Load(),
		LargeListsHeld:       c.largeLists.inUse(),
	}
}

// Servers returns the configured servers sorted by name. Header values and environment are included:
// callers that show them to hosts must redact them.
func (c *Core) Servers() []ServerConfig {
	table := c.table()
	out := make([]ServerConfig, 0, len(table))
	for name, s := range table {
		if s.Name == "" {
			s.Name = name
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b ServerConfig) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// Session returns the session with the given id: an open one, or one closed less than
// Options.ClosedRetention ago (its State says Closed and why; its calls fail). Otherwise
// ErrSessionNotFound. It does not check the owner: callers compare Session.Owner with their principal.
func (c *Core) Session(id string) (*Session, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.openLocked(id); s != nil {
		return s, nil
	}
	if s, ok := c.closedS.get(id, time.Now()); ok {
		return s, nil
	}
	return nil, ErrSessionNotFound
}

// Forget drops a closed session from the closed sessions kept for Options.ClosedRetention (a host deleted
// it). It does nothing to an open session.
func (c *Core) Forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closedS.remove(id)
}

// Sessions returns the open sessions of owner ("" means every owner), oldest first.
func (c *Core) Sessions(owner string) []*Session {
	c.mu.Lock()
	var out []*Session
	for _, r := range c.sessions {
		if r.phase == phaseOpen && (owner == "" || r.s.owner == owner) {
			out = append(out, r.s)
		}
	}
	c.mu.Unlock()
	slices.SortFunc(out, func(a, b *Session) int {
		if d := a.created.Compare(b.created); d != 0 {
			return d
		}
		return cmp.Compare(a.id, b.id)
	})
	return out
}

// Open opens a session to a configured server (or, when allowed, an ad-hoc one) for p.Owner. It returns
// once the session is Ready: the transport is connected and the protocol era negotiated (server/discover
// for 2026-07-28, else the initialize handshake). ctx bounds only the opening; the session lives until
// Session.Close or Core.Close.
//
// Errors: ErrServerNotFound, ErrUnconfiguredServer, ErrTooManySessions (also when MaxStdioProcesses is
// reached), ErrSessionClosed after Close, *InvalidError for a bad config, and ErrUnavailable wrapping the
// cause when the server cannot be reached or the handshake fails (a *jsonrpc.Error from the server stays
// reachable with errors.As).
func (c *Core) Open(ctx context.Context, p OpenParams) (*Session, error) {
	cfg, err := c.resolve(p)
	if err != nil {
		return nil, err
	}
	s := newSession(c, c.newSessionID(), p, cfg)
	if err := c.register(s); err != nil {
		s.cancel()
		return nil, err
	}
	if err := c.checkDescriptors(); err != nil {
		c.unregister(s)
		s.cancel()
		c.noteOpen(cfg.Name, err)
		return nil, err
	}
	// The bridge's own deadline on opening: a server that accepts and never answers does not hold the
	// session (and its host) for as long as the host's deadline says. A server behind OAuth may wait for a
	// person to authorize: that wait has its own bound (OAuthOptions.AuthorizationTimeout), added.
	openTimeout := c.tuned().openTimeout
	if cfg.OAuth != nil {
		openTimeout += cmp.Or(c.opts.OAuth.AuthorizationTimeout, DefaultAuthorizationTimeout)
	}
	ctx, cancelOpen := context.WithTimeoutCause(ctx, openTimeout,
		fmt.Errorf("%w: the server did not complete the handshake within %v (limits.openTimeout)", ErrUnavailable, openTimeout))
	defer cancelOpen()
	if err := s.start(ctx); err != nil {
		c.unregister(s)
		c.noteOpen(cfg.Name, err)
		return nil, s.red.err(err)
	}
	c.noteOpen(cfg.Name, nil)
	c.mu.Lock()
	if c.closed {
		delete(c.sessions, s.id)
		c.mu.Unlock()
		_ = s.closeWith(context.Background(), shutdownReason, ErrShuttingDown)
		return nil, ErrShuttingDown
	}
	c.openedLocked(s)
	c.mu.Unlock()
	s.records.persist()
	return s, nil
}

func (c *Core) resolve(p OpenParams) (ServerConfig, error) {
	var cfg ServerConfig
	if p.AdHoc != nil {
		if !c.opts.AllowUnconfigured {
			return cfg, ErrUnconfiguredServer
		}
		cfg = *p.AdHoc
		if cfg.Name == "" {
			cfg.Name = p.Server
		}
	} else {
		var ok bool
		cfg, ok = c.table()[p.Server]
		if !ok || !cfg.Policy.AllowsOwner(p.Owner) { // no oracle: a server the owner may not use does not exist
			return cfg, fmt.Errorf("%w: %q", ErrServerNotFound, p.Server)
		}
		if cfg.Name == "" {
			cfg.Name = p.Server
		}
	}
	if p.ProtocolVersion != "" {
		cfg.ProtocolVersion = p.ProtocolVersion
	}
	cfg.Restart = cfg.Restart.withDefaults()
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = DefaultRequestTimeout
	}
	if cfg.MaxRequestTimeout <= 0 {
		cfg.MaxRequestTimeout = DefaultMaxRequestTimeout
	}
	cfg.MaxRequestTimeout = max(cfg.MaxRequestTimeout, cfg.RequestTimeout)
	var v []FieldViolation
	switch cfg.Transport {
	case TransportStdio:
		if cfg.Command == "" {
			v = append(v, FieldViolation{Field: "command", Description: "required for the stdio transport"})
		}
	case TransportStreamableHTTP, TransportSSE:
		if cfg.URL == "" {
			v = append(v, FieldViolation{Field: "url", Description: "required for HTTP transports"})
		}
	case transportTest:
		if c.testDial == nil {
			v = append(v, FieldViolation{Field: "transport", Description: "test transport without a dialer"})
		}
	case "":
		v = append(v, FieldViolation{Field: "transport", Description: "required"})
	default:
		v = append(v, FieldViolation{Field: "transport", Description: fmt.Sprintf("unknown transport %q", cfg.Transport)})
	}
	if cfg.ProtocolVersion != "" && !slices.Contains(mcp.SupportedProtocolVersions(), cfg.ProtocolVersion) {
		v = append(v, FieldViolation{Field: "protocolVersion", Description: fmt.Sprintf("unsupported protocol version %q", cfg.ProtocolVersion)})
	}
	if len(v) > 0 {
		return cfg, &InvalidError{Err: errInvalidServerConfig, Violations: v}
	}
	return cfg, nil
}

var errInvalidServerConfig = errors.New("invalid server configuration")

// shutdownReason is the state reason of sessions closed by Core.Close.
const shutdownReason = "bridge shutting down"

// Drain begins the core's shutdown: new sessions are refused, every pending server request ends at once
// with OutcomeSessionClosed and the detail "bridge shutting down" (its policy default goes upstream, and
// the host call that waited on it fails with ErrShuttingDown), and server requests raised from now on end
// the same way. Sessions and other calls in flight go on until Close. Drain is idempotent.
func (c *Core) Drain() {
	c.mu.Lock()
	c.closed = true
	c.draining.Store(true)
	sessions := c.sessionsLocked(false)
	c.mu.Unlock()
	for _, s := range sessions {
		c.dispatcher.closeSession(s.id, shutdownReason)
	}
}

// Close drains the core: it refuses new sessions, answers every pending request with its policy default,
// closes every session (stdio servers are shut down in the spec's order and their process groups killed)
// and returns when all are gone or ctx ends; on ctx's end the remaining servers are killed at once and
// ctx's error is returned. Sessions close with the reason "bridge shutting down". Close is idempotent.
func (c *Core) Close(ctx context.Context) error {
	c.mu.Lock()
	c.closed = true
	sessions := c.sessionsLocked(true)
	c.mu.Unlock()
	c.stopRetiring()
	var wg sync.WaitGroup
	errs := make([]error, len(sessions))
	for i, s := range sessions {
		wg.Go(func() { errs[i] = s.closeWith(ctx, shutdownReason, ErrShuttingDown) })
	}
	wg.Wait()
	c.kept.close()
	c.callIDs.close()
	c.httpTransport().(*http.Transport).CloseIdleConnections()
	c.h2cTransport().(*http.Transport).CloseIdleConnections()
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.Join(errs...)
}

// sessionLog is the event log of the session sessionID the core serves, or nil (sessionLookup): where the
// dispatcher's publish numbers a request event of the session in the session's stream.
func (c *Core) sessionLog(sessionID string) *eventLog {
	s := c.liveSession(sessionID)
	if s == nil {
		return nil
	}
	return s.events
}

// sessionPending is the pending-request count of the session sessionID the core serves, or nil
// (sessionLookup): what the dispatcher bounds by Limits.MaxPendingPerSession.
func (c *Core) sessionPending(sessionID string) *pendingCount {
	s := c.liveSession(sessionID)
	if s == nil {
		return nil
	}
	return &s.pending
}

// newID returns prefix followed by 26 characters of crypto/rand base32: unguessable and unique.
func newID(prefix string) string { return prefix + rand.Text() }
