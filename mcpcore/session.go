package mcpcore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// handshakeTimeout bounds a reconnection's handshake (the first one is bounded by Open's context).
const handshakeTimeout = 30 * time.Second

// Session is one host's session with one upstream MCP server. It survives crashes and lost HTTP sessions
// of the server (supervision reconnects it), and ends only with Close, Core.Close, or when supervision
// gives up.
//
// Every method is safe for concurrent use. Operations block while the session is connecting or
// reconnecting (bounded by their context), fail with ErrSessionClosed once it is closed, and fail with an
// error wrapping ErrUnavailable when the connection is lost while they run. A JSON-RPC error the server
// returned is a *jsonrpc.Error (see UpstreamCode); a tool's own failure is a result with IsError set.
//
// A Session owns one supervisor goroutine, which exits when the session closes, and, through the SDK,
// the goroutines of its current connection.
type Session struct {
	core       *Core
	records    sessionRecords // what the store keeps of the session, its rounds and its call ids (durable.go, callids.go)
	id         string
	owner      string
	server     ServerConfig
	caps       HostCapabilities
	clientInfo *mcp.Implementation
	created    time.Time
	// requestedVersion is the host's protocol version override (OpenParams.ProtocolVersion); adHoc marks an
	// unconfigured server's session, which the store does not keep.
	requestedVersion string
	adHoc            bool
	logger           *slog.Logger // redacts the server's secrets (redact.go)
	red              *redactor    // the server's secrets, for errors and state reasons
	sessionEvents                 // its event log and the subscriptions to it (events.go)
	badMessages                   // its server's unusable data, counted and logged (errors.go)

	// ctx ends when Close begins; every call and connection of the session derives from it.
	ctx    context.Context
	cancel context.CancelFunc

	mu        sync.Mutex // guards the fields below
	state     SessionState
	reason    string
	restarts  int
	changed   chan struct{} // closed and replaced at every state change
	gen       *generation   // the current connection (Ready) or the last one (Reconnecting); set by the supervisor
	info      SessionInfo
	roots     []*mcp.Root // the host's roots (hostRoots) or the configured ones
	hostRoots bool        // the host gave a list: roots/list is answered from it without asking
	logLevel  mcp.LoggingLevel
	calls     map[string]*activeCall // in-flight host calls by call id
	tokens    map[string]*activeCall // progress tokens of in-flight calls
	subs      map[string]bool        // resource URIs subscribed to, renewed after a reconnection
	// reconnectErr is the error of the last failed reconnection attempt while Reconnecting (nil
	// otherwise): calls fail at once with ErrUnavailable instead of waiting for the next attempt.
	reconnectErr error
	// closedErr is what calls fail with once the session is closing (see closedError).
	closedErr error

	// sessionWaits counts pending server requests that belong to no call (pushes over stdio and SSE): while
	// any is open, the request deadlines of the calls in flight do not expire (the server may be waiting
	// for the host on a call's behalf).
	sessionWaits atomic.Int32
	sessionUsage // its uses, attached hosts and when it was last used, for the service's idle reaper (usage.go)

	// A session restored after a bridge restart (durable.go, reattach.go): reattach is set once before the
	// session is shared; reattachNext hands it to the first connection's transport; restoredWG counts the
	// goroutines delivering answers to requests kept across the restart, waited for by shutdown.
	reattach     *reattachState
	reattachNext atomic.Pointer[reattachState]
	restoredWG   sync.WaitGroup

	lists          sessionLists         // its half of the core's list cache (listcache.go)
	logLevels      sessionLogLevel      // brings its log level to each connection (loglevel.go)
	auth           sessionAuthorization // its server's HTTP authorization (authorization.go)
	sessionMetrics                      // tells the core's Observer its facts (observe.go)
	supervisor     sessionSupervisor    // reconnects it when its connection ends (supervise.go)
	handlers       sessionHandlers      // its SDK client's options and the server's requests and notifications (handlers.go)
	refs           requestRefs          // server requests on their way from the wire tap to a handler (wiretap.go)
	ops            sessionOps           // times and traces its upstream requests (trace.go)
	requests       sessionRequests      // raises its server requests for hosts (serverrequests.go)
	access         sessionAccess        // applies its server's policy (policy.go)
	outcomes       callOutcomes         // one outcome per call id: resumed and kept calls (resume.go)
	callIDs        sessionCallIDs       // its call-id records scheduled for deletion at their TTL (callids.go); guarded by Core.callIDs.mu

	// What was restored from the store for its calls and waits for their retries (durable.go, approval.go).
	restoredRounds    keptCalls[*restoredCall]     // MRTR rounds, by call id
	restoredApprovals keptCalls[*restoredApproval] // approval requests, by call id

	pending pendingCount // how many of its server requests are pending in the dispatcher; guarded by Dispatcher.mu

	detached detachedCalls // the goroutines of detached calls (detach.go), waited for by shutdown

	tasks taskInputs // tasks that need input (taskinput.go); its goroutines end before shutdown returns

	closeOnce sync.Once
	closeDone chan struct{} // closed when Close has finished
	closeErr  error
	superDone chan struct{} // closed when the supervisor goroutine has exited
}

func newSession(c *Core, id string, p OpenParams, cfg ServerConfig) *Session {
	ctx, cancel := context.WithCancel(context.Background())
	info := p.ClientInfo
	if info == nil {
		info = c.clientInfo
	}
	s := &Session{
		core:             c,
		id:               id,
		owner:            p.Owner,
		server:           cfg,
		caps:             p.Capabilities,
		clientInfo:       info,
		created:          time.Now(),
		red:              newRedactor(cfg),
		sessionEvents:    sessionEvents{events: newEventLog(id, c.limits)},
		ctx:              ctx,
		cancel:           cancel,
		state:            StateConnecting,
		logLevel:         p.LogLevel,
		requestedVersion: p.ProtocolVersion,
		adHoc:            p.AdHoc != nil,
		changed:          make(chan struct{}),
		calls:            map[string]*activeCall{},
		tokens:           map[string]*activeCall{},
		subs:             map[string]bool{},
		closeDone:        make(chan struct{}),
		superDone:        make(chan struct{}),
	}
	linkConcerns(s)
	s.logger = redactLogger(c.logger, s.red).With("session", id, "server", cfg.Name)
	s.events.obs = c.obs
	if p.Roots != nil {
		s.roots, s.hostRoots = slices.Clone(p.Roots), true
	} else {
		s.roots = slices.Clone(cfg.Roots)
	}
	return s
}

// linkConcerns gives the session's concern types (sessionRecords, sessionOps, …: a type per concern, in
// the file named for it) their back pointer to s.
func linkConcerns(s *Session) {
	s.records.s = s
	s.ops.s = s
	s.access.s = s
	s.outcomes.s = s
	s.tasks.s = s
	s.handlers.s = s
	s.supervisor.s = s
	s.lists.s = s
	s.logLevels.s = s
	s.auth.s = s
	s.sessionMetrics.s = s
	s.sessionEvents.s = s
	s.badMessages.s = s
	s.requests.s = s
}

// ID is the session's bridge-wide id ("s-…"), unguessable.
func (s *Session) ID() string { return s.id }

// Owner is the principal that opened the session.
func (s *Session) Owner() string { return s.owner }

// Server is the configuration of the session's server.
func (s *Session) Server() ServerConfig { return s.server }

// Capabilities are what the host declared when it opened the session.
func (s *Session) Capabilities() HostCapabilities { return s.caps }

// Created is when the session was opened.
func (s *Session) Created() time.Time { return s.created }

// State returns the session's state and the reason for the last change.
func (s *Session) State() (SessionState, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state, s.reason
}

// Restarts is how many times supervision has reconnected the session.
func (s *Session) Restarts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.restarts
}

// Info returns what the session negotiated; it changes only when supervision redoes the handshake.
func (s *Session) Info() SessionInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.info
}

// RawServerCapabilities returns the server's capabilities object exactly as the server sent it in the
// initialize (or server/discover) result: it holds what the SDK's mcp.ServerCapabilities drops, such as
// the 2025-11-25 tasks capability. Nil while the session is not Ready.
func (s *Session) RawServerCapabilities() json.RawMessage {
	s.mu.Lock()
	g := s.gen
	s.mu.Unlock()
	if g == nil {
		return nil
	}
	if p := g.rawCaps.Load(); p != nil {
		return append(json.RawMessage(nil), p.raw...)
	}
	return nil
}

// TasksCapability returns the server's 2025-11-25 tasks capability (which the SDK's mcp.ServerCapabilities
// drops), as parsed when the capabilities came; nil when it declared none or the session is not Ready. The
// result is the caller's to keep.
func (s *Session) TasksCapability() *TasksCapability {
	s.mu.Lock()
	g := s.gen
	s.mu.Unlock()
	if g == nil {
		return nil
	}
	if p := g.rawCaps.Load(); p != nil && p.tasks != nil {
		c := *p.tasks
		return &c
	}
	return nil
}

// rawCapabilities is a server's capabilities object as it sent it, and the tasks capability read from it.
type rawCapabilities struct {
	raw   json.RawMessage
	tasks *TasksCapability
}

func newRawCapabilities(raw json.RawMessage) *rawCapabilities {
	return &rawCapabilities{raw: raw, tasks: ParseTasksCapability(raw)}
}

// Roots returns the roots the session exposes: the host's (given at Open or by SetRoots) or, when the host
// gave none, the server's configured roots. The slice is a copy.
func (s *Session) Roots() []*mcp.Root {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.roots)
}

// toolTasks reports whether the server declared task-augmented tools/call (2025-11-25 tasks.requests.tools.call).
func (g *generation) toolTasks() bool {
	p := g.rawCaps.Load()
	return p != nil && p.tasks != nil && p.tasks.ToolCall
}

// modern reports whether the negotiated version is 2026-07-28 or later (stateless era).
func (info SessionInfo) modern() bool { return info.ProtocolVersion >= "2026-07-28" }

// The session's state machine. One place moves a session between its states, and one goroutine owns its
// upstream connection:
//
//	Connecting ──start ok──▶ Ready ──connection ends──▶ Reconnecting ──reconnected──▶ Ready
//	     │                     │                            │
//	     └──start fails──▶ Closed ◀──Close / gave up─────────┘
//
// start makes the first connection and hands it to the supervisor goroutine. From then on only the
// supervisor installs a connection (s.gen), moves the session between Ready and Reconnecting, and closes
// connections: anything that learns that a connection is broken — a read or write error, the server's
// 404 for a lost HTTP session, an unreachable HTTP server — calls generation.markDead, which only records
// the reason and wakes the supervisor. Close cancels s.ctx, which wakes the supervisor too; it closes the
// live connection and exits, and shutdown publishes Closed. ADR 0008 records the design.

// setState changes the state and publishes the change; it is a no-op once Closed. Only start, the
// supervisor and shutdown call it.
func (s *Session) setState(st SessionState, reason string, info *SessionInfo) {
	reason = s.red.redact(reason)
	s.mu.Lock()
	if s.state == StateClosed {
		s.mu.Unlock()
		return
	}
	if st == StateReady && s.state == StateReconnecting {
		s.restarts++
	}
	if st != StateReconnecting {
		s.reconnectErr = nil
	}
	from := s.state
	s.state, s.reason = st, reason
	if info != nil {
		s.info = *info
	}
	restarts := s.restarts
	version := s.info.ProtocolVersion
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
	s.observeState(from, st, version, "")
	s.logger.Info("session state", "state", st.String(), "reason", reason, "restarts", restarts)
	s.events.publish(Event{Kind: EventStateChanged, State: st, Reason: reason, Restarts: restarts})
}

// install makes g the session's connection and the session Ready.
func (s *Session) install(g *generation, reason string) {
	s.mu.Lock()
	s.gen = g
	s.mu.Unlock()
	s.setState(StateReady, reason, g.info())
	if reason != "connected" {
		s.records.persist() // a reconnection may change the protocol version and the upstream session
	}
}

// start makes the first connection (bounded by ctx) and starts the supervisor.
func (s *Session) start(ctx context.Context) error {
	s.events.publish(Event{Kind: EventStateChanged, State: StateConnecting, Reason: "opening"})
	s.core.obs.SessionStateChanged(s.server.Name, 0, StateConnecting)
	g, err := s.connect(ctx)
	if err != nil {
		s.observeState(StateConnecting, StateClosed, "", ErrorType(err))
		s.cancel()
		s.mu.Lock()
		s.state, s.reason = StateClosed, s.red.redact(err.Error())
		s.closedErr = s.red.err(fmt.Errorf("%w: %w", ErrSessionClosed, err))
		s.mu.Unlock()
		s.events.close()
		close(s.superDone)
		close(s.closeDone)
		s.closeOnce.Do(func() {})
		return err
	}
	s.logLevels.applyLogLevel(ctx, g)
	s.install(g, "connected")
	go s.supervisor.supervise(g)
	return nil
}

// generation is one connection of a session: one SDK client session over one transport connection (and,
// for stdio, one process). The supervisor owns it: it alone closes it.
type generation struct {
	s      *Session
	ctx    context.Context // parent of the connection's reads and of its handlers; cancelled when it ends
	cancel context.CancelFunc
	client *mcp.Client
	cs     *mcp.ClientSession
	tap    *wireTap
	start  time.Time

	proc atomic.Pointer[process] // stdio only

	// rawCaps is the server's capabilities object as it came in the initialize or server/discover result,
	// with what the SDK's ServerCapabilities does not hold (tasks), parsed once when it came.
	rawCaps atomic.Pointer[rawCapabilities]

	// lost is set when the HTTP server reported the session missing (404, or 400 naming the session): the
	// supervisor re-initializes at once instead of backing off.
	lost atomic.Bool
	// dead is set as soon as the connection is known to be broken (read error, write error, close).
	dead atomic.Bool
	// toolsListing serializes the tools/list a call makes when the connection does not know its tool
	// (paramheaders.go).
	toolsListing sync.Mutex
	// absentTools is the tools a listing of the connection did not find, until a list_changed
	// (paramheaders.go).
	absentTools absentTools

	endOnce sync.Once
	ended   chan struct{} // closed by markDead: the supervisor must replace the connection
	reason  string        // why it ended; written once, before ended is closed
	waited  chan struct{} // closed when the goroutine waiting on cs.Wait has exited
}

// newGeneration returns a new connection of s. Its context is not a child of the session's: the supervisor
// ends it (close), after a graceful close has had the chance to talk to the server (a Streamable HTTP
// DELETE of the session, MCP 2025-11-25 transports, session management).
func newGeneration(s *Session) *generation {
	gctx, gcancel := context.WithCancel(context.WithoutCancel(s.ctx))
	return &generation{s: s, ctx: gctx, cancel: gcancel, start: time.Now(), ended: make(chan struct{}), waited: make(chan struct{})}
}

func (g *generation) info() *SessionInfo {
	r := g.cs.InitializeResult()
	if r == nil {
		return &SessionInfo{}
	}
	return &SessionInfo{ProtocolVersion: r.ProtocolVersion, ServerInfo: r.ServerInfo, Capabilities: r.Capabilities, Instructions: r.Instructions}
}

// markDead records that g's connection is broken, and why, and wakes the supervisor, which moves the
// session to Reconnecting, closes the connection and reconnects. New calls stop using g at once (acquire
// checks dead). Safe for concurrent use; the first reason stands.
func (g *generation) markDead(reason string) {
	g.endOnce.Do(func() {
		g.dead.Store(true)
		g.reason = reason
		close(g.ended)
	})
}

// endReason is the reason given to markDead; call it only after ended is closed.
func (g *generation) endReason() string { return g.reason }

// watch starts the goroutine that turns the end of the SDK session (cs.Wait returns when the transport
// connection closes: EOF, a failed read, Close) into markDead. It is owned by the supervisor, which waits
// for waited after closing the connection.
func (g *generation) watch() {
	go func() {
		defer close(g.waited)
		err := g.cs.Wait()
		reason := "connection lost"
		if err != nil && !errors.Is(err, io.EOF) {
			reason = "connection lost: " + err.Error()
		}
		g.markDead(reason)
	}()
}

// exitReasonWait bounds how long the supervisor waits for a stdio server whose connection broke to exit,
// for its exit status to be the reason (it is killed afterwards anyway).
const exitReasonWait = time.Second

// closeConnWait bounds how long the supervisor waits for a closed connection's SDK session to end.
const closeConnWait = 10 * time.Second

// close closes g's connection and waits (bounded) until it has ended. A connection that is still sound
// (the session is closing) is closed gracefully: the SDK session first — for stdio, stdin closed, then
// SIGTERM and SIGKILL to the process group after bounded waits — then its context. A broken one is cut
// at once: its context first, so that nothing waits on a server that is gone, and its process killed.
func (g *generation) close(graceful bool) {
	if !graceful {
		g.cancel()
		if p := g.proc.Load(); p != nil {
			p.kill()
		}
	}
	if err := g.cs.Close(); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, context.Canceled) {
		g.s.logger.Debug("closing the connection", "error", err)
	}
	if p := g.proc.Load(); p != nil {
		p.waitExit(context.Background())
	}
	g.cancel()
	t := time.NewTimer(closeConnWait)
	defer t.Stop()
	select {
	case <-g.waited:
	case <-t.C:
		g.s.logger.Error("a closed connection did not end", "waited", closeConnWait)
	}
}

// connect dials the server and negotiates the protocol era. ctx bounds the handshake only.
func (s *Session) connect(ctx context.Context) (*generation, error) {
	g := newGeneration(s)
	g.tap = newWireTap(s, g)
	tr, err := s.transport(g, g.tap)
	if err != nil {
		g.cancel()
		return nil, err
	}
	client := mcp.NewClient(s.clientInfo, s.handlers.clientOptions())
	client.AddReceivingMiddleware(s.handlers.receivingMiddleware)
	if err := registerTaskMethods(client); err != nil {
		g.cancel()
		return nil, err
	}
	g.client = client
	// The SDK uses the Connect context both for the handshake and as the parent of the connection's
	// lifetime, so connect with g.ctx and let ctx cut only the handshake short.
	stop := context.AfterFunc(ctx, g.cancel)
	cs, err := client.Connect(g.ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: s.server.ProtocolVersion})
	if !stop() && err == nil {
		// ctx ended just as the handshake finished; the connection is already being torn down.
		_ = cs.Close()
		err = ctx.Err()
	}
	if err != nil {
		g.cancel()
		if p := g.proc.Load(); p != nil {
			p.kill()
			p.waitExit(context.Background())
		}
		if errors.Is(err, ErrTooManySessions) || errors.Is(err, ErrDescriptorLimit) {
			return nil, err // a limit of the bridge's, not the server unavailable: its own reason
		}
		if ctx.Err() != nil {
			if cause := context.Cause(ctx); errors.Is(cause, ErrUnavailable) {
				return nil, fmt.Errorf("connecting to %q: %w", s.server.Name, cause)
			}
			return nil, fmt.Errorf("%w: connecting to %q: %w", ErrUnavailable, s.server.Name, ctx.Err())
		}
		return nil, fmt.Errorf("%w: connecting to %q: %w", ErrUnavailable, s.server.Name, err)
	}
	g.cs = cs
	// On 2026-07-28 the SDK opened a subscriptions/listen stream for list changes if the server offers
	// them; the session is Ready once the server acknowledged it, so no change after Ready is missed.
	if g.modern() {
		if c := g.serverCaps(); (c.Tools != nil && c.Tools.ListChanged) || (c.Prompts != nil && c.Prompts.ListChanged) || (c.Resources != nil && c.Resources.ListChanged) {
			if !g.tap.waitAck(ctx, 0, listenAckWait) {
				s.logger.Info("the server did not acknowledge subscriptions/listen", "waited", listenAckWait)
			}
		}
	}
	return g, nil
}

// listenAckWait bounds the wait for a 2026-07-28 server's notifications/subscriptions/acknowledged.
const listenAckWait = 5 * time.Second

// acquire returns the live connection, waiting while the session connects or a reconnection is under way.
// While the session is Reconnecting after a failed attempt (the server is down) it fails at once with
// ErrUnavailable and the reason, instead of waiting for the next attempt of the backoff.
func (s *Session) acquire(ctx context.Context) (*generation, error) {
	for {
		s.mu.Lock()
		st, g, ch, reason, rerr, cerr := s.state, s.gen, s.changed, s.reason, s.reconnectErr, s.closedErr
		s.mu.Unlock()
		switch {
		case st == StateClosed || cerr != nil: // closed or closing
			return nil, s.closedError()
		case st == StateReady && g != nil && !g.dead.Load():
			return g, nil
		case st == StateReconnecting && rerr != nil:
			return nil, fmt.Errorf("%w: %s", ErrUnavailable, reason)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: session is %s: %w", ErrUnavailable, st, ctxError(ctx))
		case <-ch:
		}
	}
}

// closedError is what operations on a closed session fail with: ErrSessionClosed when the host closed it,
// ErrUnavailable when supervision gave up, ErrShuttingDown when the core is closing.
func (s *Session) closedError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closedErr != nil {
		return s.closedErr
	}
	return ErrSessionClosed
}

// Close closes the session: pending requests get their policy defaults (sent upstream while the connection
// still stands), in-flight calls are cancelled, the connection is closed (stdio servers: stdin closed,
// then SIGTERM and SIGKILL to the process group after bounded waits), the final state event is published
// and subscriptions are closed. If ctx ends first the server is killed at once and ctx's error returned.
// Close is idempotent; concurrent calls wait for the first. Calls cut short fail with ErrSessionClosed.
func (s *Session) Close(ctx context.Context) error {
	return s.closeWith(ctx, "closed by the host", ErrSessionClosed)
}

// CloseWithReason is Close with the reason the final state event and State report instead of "closed by
// the host" (e.g. "idle timeout", "deleted by the host"). If the session is already closing, the first
// reason stands.
func (s *Session) CloseWithReason(ctx context.Context, reason string) error {
	if reason == "" {
		reason = "closed by the host"
	}
	return s.closeWith(ctx, reason, fmt.Errorf("%w: %s", ErrSessionClosed, reason))
}

// closeWith closes the session with reason; cause is what calls cut short and later operations fail with.
func (s *Session) closeWith(ctx context.Context, reason string, cause error) error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closedErr = cause
		s.mu.Unlock()
		go func() { // owned by Close; ends when the teardown is complete
			s.closeErr = s.shutdown(reason)
			close(s.closeDone)
		}()
	})
	select {
	case <-s.closeDone:
		return s.closeErr
	case <-ctx.Done():
		s.kill()
		<-s.closeDone
		return ctx.Err()
	}
}

// kill ends the current connection at once (used when a Close deadline passes): its server process is
// killed and its context cancelled, so the supervisor's graceful close returns promptly.
func (s *Session) kill() {
	s.mu.Lock()
	g := s.gen
	s.mu.Unlock()
	if g != nil {
		if p := g.proc.Load(); p != nil {
			p.kill()
		}
		g.cancel()
	}
}

func (s *Session) shutdown(reason string) error {
	// Pending requests first, so their defaults still reach the server.
	s.core.dispatcher.closeSession(s.id, reason)
	if s.core.keeping() && s.server.Transport != TransportStdio {
		// Kept for the next process: the connection is cut before the calls are cancelled, so that the
		// server is told nothing (no notifications/cancelled) and keeps its session and its requests.
		s.mu.Lock()
		g := s.gen
		s.mu.Unlock()
		if g != nil {
			g.cancel()
		}
	}
	s.cancel() // cancels in-flight calls and wakes the supervisor, which closes the connection and exits
	s.tasks.close()
	s.detached.closeAndWait()
	s.restoredWG.Wait()
	<-s.superDone
	s.setState(StateClosed, reason, nil)
	s.records.forgetRecord()
	s.events.close()
	s.core.remove(s)
	return nil
}
