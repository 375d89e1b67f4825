package mcpcore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// JSON-RPC error codes of the answers the dispatcher itself makes up. MCP defines none for these cases; the
// values follow the TypeScript SDK (RequestTimeout -32001, ConnectionClosed -32000) and LSP's
// RequestCancelled (-32800), which MCP implementations commonly recognise.
const (
	// CodeRequestCancelled is sent upstream when a host cancels a sampling or roots request
	// (Dispatcher.Cancel), and is what submit returns when the server itself cancelled the request.
	CodeRequestCancelled = -32800
	// CodeRequestTimedOut is the default answer to a sampling request whose deadline passed, when the
	// caller of submit supplies no fallback.
	CodeRequestTimedOut = -32001
	// CodeSessionClosed is the default answer to a sampling or roots request drained by a closing session,
	// when the caller of submit supplies no fallback.
	CodeSessionClosed = -32000
)

// The defaults of PendingPolicy and Limits the dispatcher applies (DefaultSamplingTimeout,
// DefaultMaxPendingPerSession, …) are declared with the others in core.go.
const (
	// Tombstones of ended requests (and markers of closed sessions) are kept this long and at most this
	// many, whichever bound is hit first; a late answer after that gets ErrRequestNotFound instead of
	// ErrRequestEnded. The bounds keep the memory of a long-running bridge flat.
	defaultTombstoneTTL  = 10 * time.Minute
	defaultMaxTombstones = 10_000
)

// Dispatcher is the bridge-wide registry of pending requests: every server-initiated request (sampling,
// elicitation, roots), whether a legacy push or an MRTR input request, is registered here by the session
// that received it, and waits until a host answers it, a host cancels it, the server cancels it, its
// deadline passes or its session closes — whichever comes first, decided atomically. Every request has
// exactly one outcome, and it is published as EventRequestEnded after the request's EventRequestCreated.
//
// All methods are safe for concurrent use. The dispatcher starts no goroutines of its own: a pending
// request is waited for by the goroutine that called submit (the session's request handler). Its deadline
// is a time.AfterFunc timer, stopped when the request ends otherwise; if it fires, the runtime runs
// pendingEntry.expire on a goroutine that ends the request (publishing EventRequestEnded) and exits.
//
// The path of a request, by name: submit → keeper.requestRaised (durable.go) → publish (watch.go: the
// session's log and the feed's subscriptions) → … → finishBy (or pendingEntry.expire, closeSession) →
// keeper.requestEnded → publish.
//
// Locks, always taken in this order: a pendingEntry's pubMu, then Dispatcher.mu. Neither is held while
// validating an answer or running a fallback; only pubMu is held while publishing.
type Dispatcher struct {
	logger        *slog.Logger
	policy        PendingPolicy // defaults applied
	maxPerSession int
	logs          sessionLookup // the sessions' event logs and pending counts (the core); nil in the dispatcher's own tests
	obs           Observer      // set by New; nil in the dispatcher's own tests

	// mu guards everything below: the registry, the sessions' pending counts (Session.pending, reached through
	// logs), every pendingEntry's end state (ended, outcome, answer, detail), the tombstones and the
	// closed-session markers. It is never held while calling out (publish, the keeper, fallback, logger) or
	// while validating an answer, nor while logs looks a session up.
	mu      sync.Mutex
	pending map[string]*pendingEntry // by request id; only requests that have not ended
	tombs   expiring[tombstone]      // ended requests, by id
	closed  expiring[struct{}]       // sessions that closeSession drained, by session id: they outlive the session
	now     func() time.Time         // time.Now; replaced in tests

	feed eventLog // the one feed of requests and their ends (watch.go); it has its own lock

	// keeper keeps requests in the core's store (durable.go); set once by New, nil in the dispatcher's own
	// tests.
	keeper requestKeeper
	// away are requests that ended because the bridge restarted (OutcomeBridgeRestarted), by id: hosts that
	// re-attach are told (EndedWhileAway). Guarded by mu.
	away expiring[tombstone]
}

// requestKeeper keeps pending requests for the next process (the Core, durable.go). Both methods are
// called with the request's pubMu held and no other lock, before the request's event is published.
// requestEnded reports whether the request is kept for the next process (the bridge is stopping with a
// store): for hosts it has not ended — the next process raises it again under its id — so its end is not
// published.
type requestKeeper interface {
	requestRaised(*PendingRequest)
	requestEnded(*PendingRequest, Outcome, Answer) (keptForNext bool)
}

// pendingEntry is the dispatcher's record of one pending request.
type pendingEntry struct {
	d   *Dispatcher
	req *PendingRequest
	// count is its session's pending count (nil: no session served, not counted); set before registration.
	count *pendingCount
	// done is closed (under Dispatcher.mu) when the request ends; after that the end state below is
	// immutable and may be read without the lock by whoever received from done.
	done chan struct{}

	// End state, guarded by Dispatcher.mu until done is closed.
	ended     bool
	outcome   Outcome
	answer    Answer // the host's answer (OutcomeAnswered) or the cancel answer (OutcomeCancelledByHost)
	detail    string
	endedInfo RequestEnded // what EventRequestEnded points to; immutable once set

	// pubMu orders this request's events. submit holds it from registration through publishing
	// EventRequestCreated; whoever ends the request holds it from the end through publishing
	// EventRequestEnded. So Ended never precedes Created (even when a host answers, having seen the request
	// through List, before Created is out), and submit, by taking pubMu once done is closed, returns only
	// after Ended has been published.
	pubMu sync.Mutex
	timer *time.Timer // the deadline; set before pubMu is first released

	// The elicitation schema, compiled once, on the first answer that needs it.
	schemaOnce sync.Once
	schema     *elicitSchema
}

// tombstone is what remains of an ended request: enough to refuse a late answer to the right owner and to
// answer Wait, without keeping the request's payload alive.
type tombstone struct {
	owner     string
	sessionID string
	ended     RequestEnded
	approvers *Approvers // an approval request's (approval.go): they, not the owner, may see it
}

// newDispatcher returns a dispatcher with policy and limits defaults applied. logs finds the session logs
// a request event also goes to and the sessions' pending counts (nil: none, only the feed, and no bound per
// session). A nil logger means slog.Default().
func newDispatcher(logger *slog.Logger, policy PendingPolicy, limits Limits, logs sessionLookup) *Dispatcher {
	if logger == nil {
		logger = slog.Default()
	}
	if policy.SamplingTimeout <= 0 {
		policy.SamplingTimeout = DefaultSamplingTimeout
	}
	if policy.ElicitationTimeout <= 0 {
		policy.ElicitationTimeout = DefaultElicitationTimeout
	}
	if policy.RootsTimeout <= 0 {
		policy.RootsTimeout = DefaultRootsTimeout
	}
	maxPer := limits.MaxPendingPerSession
	if maxPer <= 0 {
		maxPer = DefaultMaxPendingPerSession
	}
	return &Dispatcher{
		logger:        logger,
		policy:        policy,
		maxPerSession: maxPer,
		logs:          logs,
		feed:          newFeed(),
		pending:       make(map[string]*pendingEntry),
		tombs:         newExpiring[tombstone](defaultTombstoneTTL, defaultMaxTombstones),
		closed:        newExpiring[struct{}](defaultTombstoneTTL, defaultMaxTombstones),
		away:          newExpiring[tombstone](defaultTombstoneTTL, defaultMaxTombstones),
		now:           time.Now,
	}
}

// policyTimeout is the policy deadline for a request kind.
func (d *Dispatcher) policyTimeout(k RequestKind) time.Duration {
	switch k {
	case KindSampling:
		return d.policy.SamplingTimeout
	case KindElicitation:
		return d.policy.ElicitationTimeout
	case KindRoots:
		return d.policy.RootsTimeout
	}
	return d.policy.SamplingTimeout
}

// submit registers req and blocks until it ends; it returns what to send upstream (exactly one of the
// answer's fields set) and how the request ended.
//
// submit fills in req.ID ("req-" and 128 random bits), req.Created (now) and req.Deadline (Created plus the
// policy timeout of req.Kind) where they are empty; the caller must not modify req afterwards. It publishes
// EventRequestCreated once the request is visible to List, Get and Respond, and EventRequestEnded when it
// ends — before submit returns, so events the caller publishes afterwards follow it. The request ends when
//
//   - a host answers (Respond): the host's answer, OutcomeAnswered;
//   - a host cancels (Cancel): {"action":"cancel"} for elicitation, a CodeRequestCancelled error otherwise,
//     OutcomeCancelledByHost;
//   - ctx is done — the server sent notifications/cancelled or the originating call ended; use
//     context.WithCancelCause to give the reason, which becomes RequestEnded.Detail: a CodeRequestCancelled
//     error (which the caller should not send: a cancelled request gets no response), OutcomeCancelledByServer,
//     or OutcomeCallEnded when the cause wraps errCallEnded;
//   - req.Deadline passes: fallback(), OutcomeTimedOut;
//   - closeSession(req.SessionID): fallback(), OutcomeSessionClosed. A request submitted after its session
//     was closed ends so at once, without being registered.
//
// If ctx is already done when submit is called, it returns OutcomeCancelledByServer (or OutcomeCallEnded)
// at once, without registering the request or publishing anything.
//
// fallback supplies the policy default and is called at most once, on the calling goroutine, without
// locks held. A nil fallback means the built-in default: {"action":"cancel"} for elicitation, an empty root
// list for roots, a JSON-RPC error for sampling (CodeRequestTimedOut or CodeSessionClosed).
//
// The error is non-nil only when the request was refused and never registered: ErrTooManyPending when the
// session already has Limits.MaxPendingPerSession pending requests (the caller answers upstream with an
// error at once), or a duplicate req.ID.
func (d *Dispatcher) submit(ctx context.Context, req *PendingRequest, fallback func() Answer) (Answer, Outcome, error) {
	if err := ctx.Err(); err != nil {
		o := cancelOutcome(ctx)
		return cancelledAnswer(o), o, nil
	}
	now := d.now()
	if req.Created.IsZero() {
		req.Created = now
	}
	if req.Deadline.IsZero() {
		req.Deadline = req.Created.Add(d.policyTimeout(req.Kind))
	}
	id := req.ID
	if id == "" {
		id = newRequestID()
	}
	e := &pendingEntry{d: d, req: req, count: d.pendingOf(req.SessionID), done: make(chan struct{})}

	e.pubMu.Lock()
	d.mu.Lock()
	if _, closed := d.closed.get(req.SessionID, now); closed {
		d.mu.Unlock()
		e.pubMu.Unlock()
		return runFallback(req.Kind, fallback, OutcomeSessionClosed), OutcomeSessionClosed, nil
	}
	if e.count != nil && e.count.n >= d.maxPerSession {
		d.mu.Unlock()
		e.pubMu.Unlock()
		return Answer{}, 0, ErrTooManyPending
	}
	for d.idTakenLocked(id, now) {
		if req.ID != "" {
			d.mu.Unlock()
			e.pubMu.Unlock()
			return Answer{}, 0, fmt.Errorf("mcpcore: pending request id %q already used", req.ID)
		}
		id = newRequestID() // 128 random bits: practically never taken, but never reuse an id
	}
	req.ID = id
	if d.keeper != nil {
		// Kept before anyone can see it — List, Get and Respond included, not only the events — so that
		// a host is never shown a request that a crash would lose. The store is not written under d.mu.
		d.mu.Unlock()
		d.keeper.requestRaised(req)
		d.mu.Lock()
		if _, closed := d.closed.get(req.SessionID, now); closed {
			d.mu.Unlock()
			e.pubMu.Unlock()
			d.keeper.requestEnded(req, OutcomeSessionClosed, Answer{})
			return runFallback(req.Kind, fallback, OutcomeSessionClosed), OutcomeSessionClosed, nil
		}
	}
	d.addLocked(e)
	d.mu.Unlock()
	if d.obs != nil {
		d.obs.ServerRequestStarted(req.Kind)
	}
	// The timer's callback needs pubMu, so it cannot end the request before Created is published.
	e.timer = time.AfterFunc(req.Deadline.Sub(now), e.expire)
	d.publish(req, Event{Kind: EventRequestCreated})
	e.pubMu.Unlock()

	select {
	case <-e.done:
	case <-ctx.Done():
		d.finish(e, cancelOutcome(ctx), Answer{}, context.Cause(ctx).Error())
	}
	<-e.done // closed by whoever won; its end state is now safe to read
	// Wait until the winner has published EventRequestEnded: it holds pubMu from the end through the publish.
	e.pubMu.Lock()
	e.pubMu.Unlock() // an empty critical section on purpose: a barrier

	switch e.outcome {
	case OutcomeAnswered, OutcomeCancelledByHost:
		return e.answer, e.outcome, nil
	case OutcomeCancelledByServer, OutcomeCallEnded:
		return cancelledAnswer(e.outcome), e.outcome, nil
	default: // OutcomeTimedOut, OutcomeSessionClosed
		return runFallback(req.Kind, fallback, e.outcome), e.outcome, nil
	}
}

// errCallEnded is the cancellation cause of a request whose originating host call ended: submit then ends
// it with OutcomeCallEnded rather than OutcomeCancelledByServer.
var errCallEnded = errors.New("the originating call ended")

// cancelOutcome is the outcome of a request whose ctx is done.
func cancelOutcome(ctx context.Context) Outcome {
	if errors.Is(context.Cause(ctx), errCallEnded) {
		return OutcomeCallEnded
	}
	return OutcomeCancelledByServer
}

// addLocked registers e as pending and counts it in its session. The caller holds d.mu.
func (d *Dispatcher) addLocked(e *pendingEntry) {
	d.pending[e.req.ID] = e
	if e.count != nil {
		e.count.n++
	}
}

func (d *Dispatcher) idTakenLocked(id string, now time.Time) bool {
	if _, ok := d.pending[id]; ok {
		return true
	}
	_, ok := d.tombs.get(id, now)
	return ok
}

// expire is the deadline timer's callback; it runs on a goroutine of its own and exits when done.
func (e *pendingEntry) expire() {
	d := e.d
	if d.finish(e, OutcomeTimedOut, Answer{}, "deadline passed") {
		d.logger.Info("pending request timed out; policy default sent upstream",
			"request_id", e.req.ID, "session_id", e.req.SessionID, "kind", e.req.Kind.String())
	}
}

// finish ends e with the given outcome unless it has already ended, and publishes its
// EventRequestEnded; it reports whether it ended e. Callers must not hold e.pubMu or d.mu.
func (d *Dispatcher) finish(e *pendingEntry, o Outcome, a Answer, detail string) bool {
	return d.finishBy(e, o, a, detail, "")
}

// finishBy is finish recording who ended the request (RequestEnded.AnsweredBy).
func (d *Dispatcher) finishBy(e *pendingEntry, o Outcome, a Answer, detail, by string) bool {
	e.pubMu.Lock()
	defer e.pubMu.Unlock()
	d.mu.Lock()
	if e.ended {
		d.mu.Unlock()
		return false
	}
	d.endLocked(e, o, a, detail, by)
	d.mu.Unlock()
	keptForNext := d.keeper != nil && d.keeper.requestEnded(e.req, o, a)
	now := d.now()
	if d.obs != nil {
		d.obs.ServerRequestEnded(e.req.Kind, o, now.Sub(e.req.Created))
	}
	if keptForNext { // its waiters are woken (endLocked); its hosts will see it again after the restart
		return true
	}
	d.publish(e.req, Event{Kind: EventRequestEnded, Ended: &e.endedInfo})
	return true
}

// endLocked records e's end, moves it from the registry to the tombstones, stops its timer and wakes its
// waiters. The caller holds e.pubMu and d.mu, and publishes EventRequestEnded before releasing pubMu.
func (d *Dispatcher) endLocked(e *pendingEntry, o Outcome, a Answer, detail, by string) {
	e.ended, e.outcome, e.answer, e.detail = true, o, a, detail
	id, sid := e.req.ID, e.req.SessionID
	e.endedInfo = RequestEnded{RequestID: id, SessionID: sid, Outcome: o, Detail: detail, AnsweredBy: by}
	e.timer.Stop()
	delete(d.pending, id)
	if e.count != nil {
		e.count.n--
	}
	t := tombstone{owner: e.req.Owner, sessionID: sid, ended: e.endedInfo}
	if e.req.Approval != nil {
		t.approvers = &e.req.Approval.Approvers
	}
	d.tombs.add(id, t, d.now())
	close(e.done)
}

// closeSession drains a closing session: every request of it still pending ends with
// OutcomeSessionClosed (its submit returns the fallback answer), oldest first, and its EventRequestEnded
// is published before closeSession returns, so a caller that closes the session's event log afterwards
// has delivered them. Requests submitted for the session afterwards end the same way at once, unregistered.
// closeSession does not wait for the submit calls to return. Calling it again is harmless. detail says
// why ("session closed", "bridge shutting down"); it becomes RequestEnded.Detail.
func (d *Dispatcher) closeSession(sessionID, detail string) {
	count := d.pendingOf(sessionID)
	d.mu.Lock()
	d.closed.add(sessionID, struct{}{}, d.now())
	var drained []*pendingEntry
	if count == nil || count.n > 0 {
		for _, e := range d.pending {
			if e.req.SessionID == sessionID {
				drained = append(drained, e)
			}
		}
	}
	d.mu.Unlock()
	slices.SortFunc(drained, func(a, b *pendingEntry) int { return compareRequests(a.req, b.req) })
	for _, e := range drained {
		d.finish(e, OutcomeSessionClosed, Answer{}, detail) // false if a host won meanwhile
	}
}

// List returns the pending requests (not yet ended) of owner in sessionID, oldest first. An empty owner
// matches every owner (admin and internal use); an empty sessionID matches every session. The returned
// requests are shared and must not be modified.
func (d *Dispatcher) List(owner, sessionID string) []*PendingRequest {
	d.mu.Lock()
	var out []*PendingRequest
	for _, e := range d.pending {
		// An approval request is not its owner's to see (approval.go: ListApprovals lists it for its approvers).
		if (owner == "" || (e.req.Owner == owner && e.req.Kind != KindApproval)) && (sessionID == "" || e.req.SessionID == sessionID) {
			out = append(out, e.req)
		}
	}
	d.mu.Unlock()
	slices.SortFunc(out, compareRequests)
	return out
}

func compareRequests(a, b *PendingRequest) int {
	if c := a.Created.Compare(b.Created); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// Get returns the pending request id if owner owns it. It returns ErrRequestEnded (wrapped, with the
// outcome) for a request of owner that has ended and is still remembered, and ErrRequestNotFound for an id
// that never existed, is forgotten, or belongs to another owner — requests of others are invisible. Unlike
// List, an empty owner matches only requests whose owner is empty.
func (d *Dispatcher) Get(owner, id string) (*PendingRequest, error) {
	e, err := d.lookup(owner, id)
	if err != nil {
		return nil, err
	}
	return e.req, nil
}

// lookup finds the pending entry id of owner, or says why not (ErrRequestNotFound, ErrRequestEnded).
func (d *Dispatcher) lookup(owner, id string) (*pendingEntry, error) {
	return d.lookupFor(Identity{Principal: owner}, id)
}

// lookupFor is lookup for an identity: the owner of a request, or an approver of an approval request
// (visibleTo, approval.go).
func (d *Dispatcher) lookupFor(who Identity, id string) (*pendingEntry, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if e, ok := d.pending[id]; ok {
		if !visibleTo(e.req, who) {
			return nil, ErrRequestNotFound
		}
		return e, nil
	}
	if t, ok := d.tombs.get(id, d.now()); ok {
		seen := t.owner == who.Principal
		if t.approvers != nil {
			seen = t.approvers.Admits(t.owner, who)
		}
		if seen {
			return nil, endedError(t.ended.Outcome)
		}
	}
	return nil, ErrRequestNotFound
}

// GetFor is Get for an identity: it also finds the approval requests who may decide (approval.go).
func (d *Dispatcher) GetFor(who Identity, id string) (*PendingRequest, error) {
	e, err := d.lookupFor(who, id)
	if err != nil {
		return nil, err
	}
	return e.req, nil
}

func endedError(o Outcome) error { return fmt.Errorf("%w: %s", ErrRequestEnded, o) }

// Respond delivers a host's answer to the pending request id of owner. The first valid answer wins,
// atomically; the request's submit returns it and EventRequestEnded (OutcomeAnswered) is published before
// Respond returns.
//
// Errors:
//   - ErrRequestNotFound: no such request for this owner (never existed, forgotten, or another owner's);
//   - ErrRequestEnded (wrapped, with the outcome): the request already ended — answered, cancelled, timed
//     out or drained. The answer is dropped and logged (a tombstone hit), never delivered elsewhere;
//   - ErrWrongAnswerKind (wrapped): the answer's result does not match the request's kind;
//   - *InvalidError wrapping ErrInvalidAnswer, with field violations: not exactly one of the answer's fields
//     set (field "answer"), or a result that is not valid for the request. Violation fields are JSON paths
//     relative to the result that is set: "model", "role", "content[0].mimeType" for sampling;
//     "action", "content", "content.age", "content.colors[1]" for elicitation; "roots[0].uri" for roots;
//     "message" for an error answer;
//   - ctx's error if ctx is done before the answer is recorded.
//
// What is checked: a sampling result needs a role (assistant or user), a model and content; without tools
// offered in the request the content is one text, image or audio block; tool_use blocks are allowed only
// when tools were offered (and toolChoice is not "none"), each naming an offered tool. An elicitation result
// has action accept, decline or cancel; content only with accept; in form mode, accept content must match
// the request's requestedSchema (see elicitschema.go); in URL mode, accept carries no content. Roots must be
// file:// URIs (MCP spec: "This *must* start with file:// for now"). An error answer needs a message.
func (d *Dispatcher) Respond(ctx context.Context, owner, id string, a Answer) error {
	return d.RespondAs(ctx, owner, id, "", a)
}

// RespondAs is Respond on behalf of the receiver named by (a host stream's key, "respond" for the
// RespondToRequest call): the dispatcher records it as the request's RequestEnded.AnsweredBy, so that every
// receiver can tell its own answer from another's.
func (d *Dispatcher) RespondAs(ctx context.Context, owner, id, by string, a Answer) error {
	return d.RespondFor(ctx, Identity{Principal: owner}, id, by, a)
}

// RespondFor is RespondAs for an identity: an approver may decide the approval requests it may see.
func (d *Dispatcher) RespondFor(ctx context.Context, who Identity, id, by string, a Answer) error {
	owner := who.Principal
	if err := ctx.Err(); err != nil {
		return err
	}
	e, err := d.lookupFor(who, id)
	if err != nil {
		if errors.Is(err, ErrRequestEnded) {
			d.logLate(owner, id, "answer")
		}
		return err
	}
	a = e.withElicitDefaults(d.logger, a) // elicitschema.go
	a = decidedBy(e.req, a, who)          // approval.go
	if err := d.validateAnswer(e, a); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if !d.finishBy(e, OutcomeAnswered, a, "", by) {
		d.logLate(owner, id, "answer")
		<-e.done
		return endedError(e.outcome)
	}
	return nil
}

// logLate records an answer or cancel that came after its request ended. The answer itself is not logged:
// it may carry user data.
func (d *Dispatcher) logLate(owner, id, what string) {
	d.logger.Info("late "+what+" for an ended pending request dropped", "request_id", id, "owner", owner)
}

// Cancel withdraws the pending request id of owner on the host's behalf: the server gets
// {"action":"cancel"} for an elicitation (the spec's answer for "the user dismissed it", which servers
// handle as a normal outcome) and a JSON-RPC error CodeRequestCancelled "request cancelled by host" (with
// reason appended) for sampling and roots. The outcome is OutcomeCancelledByHost with reason as detail.
// Errors are those of Get; a request that ended meanwhile gives ErrRequestEnded.
func (d *Dispatcher) Cancel(owner, id, reason string) error {
	return d.CancelFor(Identity{Principal: owner}, id, reason)
}

// CancelFor is Cancel for an identity; an approver's cancel of an approval request denies the call.
func (d *Dispatcher) CancelFor(who Identity, id, reason string) error {
	owner := who.Principal
	e, err := d.lookupFor(who, id)
	if err != nil {
		if errors.Is(err, ErrRequestEnded) {
			d.logLate(owner, id, "cancel")
		}
		return err
	}
	if !d.finish(e, OutcomeCancelledByHost, decidedBy(e.req, hostCancelAnswer(e.req.Kind, reason), who), reason) {
		d.logLate(owner, id, "cancel")
		<-e.done
		return endedError(e.outcome)
	}
	return nil
}

// Wait blocks until the request id ends and reports how; for a request that has already ended and is still
// remembered it returns at once. It returns ErrRequestNotFound for an unknown or forgotten id and ctx's
// error when ctx is done first. Wait does not check the owner: callers on behalf of a host check it with
// Get first.
func (d *Dispatcher) Wait(ctx context.Context, id string) (RequestEnded, error) {
	d.mu.Lock()
	e, ok := d.pending[id]
	if !ok {
		t, ok := d.tombs.get(id, d.now())
		d.mu.Unlock()
		if ok {
			return t.ended, nil
		}
		return RequestEnded{}, ErrRequestNotFound
	}
	d.mu.Unlock()
	select {
	case <-e.done:
		return e.endedInfo, nil
	case <-ctx.Done():
		return RequestEnded{}, ctx.Err()
	}
}

// Ended reports how the request id ended, while the dispatcher remembers it (a tombstone); ok is false for a
// request that is still pending, unknown or forgotten. Like Wait, it does not check the owner.
func (d *Dispatcher) Ended(id string) (RequestEnded, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	t, ok := d.tombs.get(id, d.now())
	return t.ended, ok
}

// restore registers a request kept from an earlier process (durable.go) as pending again, under its id and
// deadline, and publishes its EventRequestCreated. No submit waits for it: whoever resumes its call waits on
// the returned entry's done and reads its outcome and answer. A deadline already past ends it at once.
func (d *Dispatcher) restore(req *PendingRequest) *pendingEntry {
	e := &pendingEntry{d: d, req: req, count: d.pendingOf(req.SessionID), done: make(chan struct{})}
	now := d.now()
	e.pubMu.Lock()
	d.mu.Lock()
	d.addLocked(e)
	d.mu.Unlock()
	if d.obs != nil {
		d.obs.ServerRequestStarted(req.Kind)
	}
	e.timer = time.AfterFunc(max(req.Deadline.Sub(now), 0), e.expire)
	d.publish(req, Event{Kind: EventRequestCreated})
	e.pubMu.Unlock()
	return e
}

// endRestored records that req, kept from an earlier process, ended because the bridge restarted
// (OutcomeBridgeRestarted): hosts that re-attach to its session are told (EndedWhileAway), and a late answer
// gets ErrRequestEnded. sessionAlive says whether its session was restored (else the detail says so).
func (d *Dispatcher) endRestored(req *PendingRequest, sessionAlive bool) {
	detail := "the bridge restarted while the request was pending; the connection it came on ended with the old process"
	if !sessionAlive {
		detail = "the bridge restarted while the request was pending, and its session could not be restored"
	}
	ended := RequestEnded{RequestID: req.ID, SessionID: req.SessionID, Outcome: OutcomeBridgeRestarted, Detail: detail}
	now := d.now()
	t := tombstone{owner: req.Owner, sessionID: req.SessionID, ended: ended}
	d.mu.Lock()
	d.tombs.add(req.ID, t, now)
	d.away.add(req.ID, t, now)
	d.mu.Unlock()
	d.publish(req, Event{Kind: EventRequestEnded, Ended: &ended})
}

// EndedWhileAway returns the requests of owner in sessionID that ended because the bridge restarted while
// they were pending (OutcomeBridgeRestarted), for a bounded time after the restart: a host that re-attaches
// is told how the requests it was shown before ended.
func (d *Dispatcher) EndedWhileAway(owner, sessionID string) []RequestEnded {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []RequestEnded
	d.away.each(d.now(), func(_ string, t tombstone) {
		if t.owner == owner && (sessionID == "" || t.sessionID == sessionID) {
			out = append(out, t.ended)
		}
	})
	slices.SortFunc(out, func(a, b RequestEnded) int { return cmp.Compare(a.RequestID, b.RequestID) })
	return out
}

// hostCancelAnswer is what goes upstream when a host cancels a request.
func hostCancelAnswer(k RequestKind, reason string) Answer {
	if k == KindElicitation {
		return Answer{Elicitation: &mcp.ElicitResult{Action: "cancel"}}
	}
	if k == KindApproval {
		return approvalCancelAnswer(reason)
	}
	msg := "request cancelled by host"
	if reason != "" {
		msg += ": " + reason
	}
	return Answer{Error: &RPCError{Code: CodeRequestCancelled, Message: msg}}
}

// cancelledAnswer is the answer of a request whose ctx ended, saying who cancelled it: the server
// (notifications/cancelled or its connection's end; the answer is not sent then, a cancelled request gets no
// response) or the client — the host call the request belongs to ended (cancelled, timed out or returned),
// and the server does get this answer to its still-open request.
func cancelledAnswer(o Outcome) Answer {
	msg := "request cancelled by server"
	if o == OutcomeCallEnded {
		msg = "request cancelled by client: the call it belongs to ended"
	}
	return Answer{Error: &RPCError{Code: CodeRequestCancelled, Message: msg}}
}

// runFallback returns fallback() or, for a nil fallback, the built-in default for k and the outcome.
func runFallback(k RequestKind, fallback func() Answer, o Outcome) Answer {
	if fallback != nil {
		return fallback()
	}
	switch k {
	case KindElicitation:
		return Answer{Elicitation: &mcp.ElicitResult{Action: "cancel"}}
	case KindRoots:
		return Answer{Roots: &mcp.ListRootsResult{Roots: []*mcp.Root{}}}
	}
	if o == OutcomeSessionClosed {
		return Answer{Error: &RPCError{Code: CodeSessionClosed, Message: "session closed before the host answered"}}
	}
	return Answer{Error: &RPCError{Code: CodeRequestTimedOut, Message: "no host answered before the deadline"}}
}
