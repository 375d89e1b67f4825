package mcpcore

// What the core keeps in the state store (Options.Store) so that it outlives the bridge's process
// (docs/adr/0021-what-is-kept.md): sessions, pending server requests with the answers accepted for them,
// and multi round-trip calls between rounds. Records are written when what they describe changes — a
// session opens, reconnects, changes roots, log level or subscriptions; a request is raised or answered; an
// MRTR round begins or ends — and the id of a tools/call with a host call id while it is in flight and for
// the kept results' TTL after it completed (callids.go, docs/adr/0099), nothing else per message.
//
// After a restart Core.Restore brings every kept session back under its id (Reconnecting, then Ready once
// the server is reached again), re-raises every MRTR input request still waiting for a person under its old
// id, keeps every accepted MRTR answer for the call's resumption, and ends every pushed request whose
// connection died with the old process with OutcomeBridgeRestarted, which hosts that re-attach are told.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-bridge/mcp-bridge/internal/state"
)

// recordVersion is the version of the records' JSON; a record of a newer version is left alone.
const recordVersion = 1

// storeTimeout bounds one write or read of the store on a session's behalf.
const storeTimeout = 10 * time.Second

// sessionRecord is what is kept of a session.
type sessionRecord struct {
	Version           int                 `json:"v"`
	ID                string              `json:"id"`
	Owner             string              `json:"owner"`
	Server            string              `json:"server"`
	Capabilities      HostCapabilities    `json:"caps"`
	Roots             []*mcp.Root         `json:"roots,omitempty"`
	HostRoots         bool                `json:"hostRoots,omitempty"`
	LogLevel          mcp.LoggingLevel    `json:"logLevel,omitempty"`
	Subscriptions     []string            `json:"subs,omitempty"`
	RequestedVersion  string              `json:"requestedVersion,omitempty"`
	ProtocolVersion   string              `json:"protocolVersion,omitempty"`
	ClientInfo        *mcp.Implementation `json:"clientInfo,omitempty"`
	UpstreamSessionID string              `json:"upstreamSessionId,omitempty"`
	// Initialize is the server's initialize result on a handshake-era HTTP connection, for re-attaching
	// to the server's session after a restart (reattach.go).
	Initialize json.RawMessage `json:"initialize,omitempty"`
	State      string          `json:"state"`
	Created    time.Time       `json:"created"`
}

// requestRecord is what is kept of a pending server request, and of its accepted answer until the server
// has it.
type requestRecord struct {
	Version int             `json:"v"`
	Request *PendingRequest `json:"request"`
	// Answer is the host's accepted answer of an MRTR input request, kept until the retried call carries it.
	Answer *Answer `json:"answer,omitempty"`
	// UpstreamID is the JSON-RPC id of a pushed request as the server sent it (reattach.go).
	UpstreamID json.RawMessage `json:"upstreamId,omitempty"`
}

// callRecord is an MRTR call between rounds: what the retry needs (method, name or URI, arguments, the
// server's requestState) and which pending request answers which input request.
type callRecord struct {
	Version   int             `json:"v"`
	SessionID string          `json:"session"`
	CallID    string          `json:"call"`
	Method    string          `json:"method"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Digest is callDigest of a tools/call's tool and arguments (docs/adr/0106): a call without resume under
	// the id with the same digest is the same call delivered again. Absent from records written before it:
	// such an id is refused ErrCallIDUsed.
	Digest       string            `json:"digest,omitempty"`
	RequestState string            `json:"requestState,omitempty"`
	Inputs       json.RawMessage   `json:"inputRequests,omitempty"`
	Requests     map[string]string `json:"requests"` // input key → pending request id
	Created      time.Time         `json:"created"`
	// InFlight marks the record of a tools/call with a host-chosen id that was sent upstream and has no
	// round (callBegins): it carries only the call's id, so that a process that finds it after a crash
	// knows the id and does not run it a second time (docs/adr/0099).
	InFlight bool `json:"inFlight,omitempty"`
	// Ended is when an InFlight call had an outcome kept for a resumed call (callEnds): its id stays known
	// until Ended plus the kept results' TTL, its outcome is lost with the process (callids.go).
	Ended time.Time `json:"ended,omitzero"`
}

func roundKey(sessionID, callID string) string { return sessionID + "/" + callID }

// storeCtx is the context of a store operation made on the core's behalf.
func storeCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), storeTimeout)
}

// put writes a record, logging (never returning) a failure: the bridge keeps serving when its store
// fails (the store's health says so).
func (c *Core) put(kind state.Kind, key string, v any) {
	if c.opts.Store == nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		c.logger.Error("state record not written: encoding failed", "kind", string(kind), "key", key, "error", err)
		return
	}
	ctx, cancel := storeCtx()
	defer cancel()
	if err := c.opts.Store.Put(ctx, kind, key, b); err != nil {
		c.logger.Debug("state record not written", "kind", string(kind), "key", key, "error", err)
	}
}

func (c *Core) del(kind state.Kind, key string) {
	if c.opts.Store == nil {
		return
	}
	ctx, cancel := storeCtx()
	defer cancel()
	if err := c.opts.Store.Delete(ctx, kind, key); err != nil {
		c.logger.Debug("state record not deleted", "kind", string(kind), "key", key, "error", err)
	}
}

// delCallRecord deletes a call's record from the store (callIDRecords, callids.go).
func (c *Core) delCallRecord(key string) { c.del(state.KindCall, key) }

// keeping reports whether the core's records must outlive the end now under way: the core keeps state and
// the bridge itself is shutting down (a restart or an upgrade), so sessions, pending requests and rounds are
// kept for the next process, and nothing is said upstream that would end them there: no default answers to
// pushed requests, no cancellation of calls, no DELETE of HTTP sessions.
func (c *Core) keeping() bool { return c.opts.Store != nil && c.draining.Load() }

// --- sessions ---

// sessionRecords is a session's part of what the core keeps in the store: the session's record (persist,
// forgetRecord), its MRTR rounds' records (roundBegins … roundEnds, adoptRound, resumeInput) and the ids of
// its tools/calls (callids.go: callBegins, callEnds). The session holds it as Session.records.
type sessionRecords struct {
	s *Session
}

// persist writes the session's record. It is called when the session opens and whenever something kept
// changes.
func (r *sessionRecords) persist() {
	s := r.s
	if s.core.opts.Store == nil {
		return
	}
	s.mu.Lock()
	rec := sessionRecord{
		Version: recordVersion, ID: s.id, Owner: s.owner, Server: s.server.Name, Capabilities: s.caps,
		Roots: slices.Clone(s.roots), HostRoots: s.hostRoots, LogLevel: s.logLevel,
		Subscriptions: slices.Sorted(maps.Keys(s.subs)), RequestedVersion: s.requestedVersion,
		ProtocolVersion: s.info.ProtocolVersion, ClientInfo: s.clientInfo, State: s.state.String(), Created: s.created,
	}
	if !rec.HostRoots {
		rec.Roots = nil
	}
	if s.gen != nil && s.gen.cs != nil {
		rec.UpstreamSessionID = s.gen.cs.ID()
		rec.Initialize = s.gen.initializeRecord()
	}
	s.mu.Unlock()
	if s.adHoc {
		return // an ad-hoc server's configuration came from the host and is not kept
	}
	s.core.put(state.KindSession, s.id, rec)
}

// forgetRecord deletes the session's record unless the bridge is shutting down (then the next process
// restores it).
func (r *sessionRecords) forgetRecord() {
	s := r.s
	if s.core.opts.Store == nil || s.core.keeping() {
		return
	}
	s.core.del(state.KindSession, s.id)
	for _, rc := range s.restoredRounds.takeAll() {
		s.core.dropRound(rc.rec)
	}
	for _, ra := range s.restoredApprovals.takeAll() { // approval.go
		s.core.del(state.KindRequest, ra.req.ID)
	}
	for _, callID := range s.core.callIDs.takeSession(s) { // ids of completed calls, and of calls in flight at a crash (callids.go)
		s.core.del(state.KindCall, roundKey(s.id, callID))
	}
}

// --- pending requests (the dispatcher's hooks) ---

// kept reports whether req is one the store keeps: a server's request (not the bridge's own authorization
// requests, which belong to a session being opened).
func kept(req *PendingRequest) bool { return req.Kind != KindAuthorization }

// requestRaised writes a new pending request. Called by the dispatcher with the request's pubMu held,
// before EventRequestCreated: a host never sees a request that is not yet kept.
func (c *Core) requestRaised(req *PendingRequest) {
	if c.opts.Store == nil || !kept(req) {
		return
	}
	if req.Delivery == DeliveryMRTR && req.OriginCallID != "" {
		if s := c.liveSession(req.SessionID); s != nil {
			s.mu.Lock()
			call := s.calls[req.OriginCallID]
			s.mu.Unlock()
			s.records.roundRequest(call, req.InputKey, req.ID)
		}
	}
	rec := requestRecord{Version: recordVersion, Request: req}
	if req.upstreamID != nil {
		rec.UpstreamID, _ = json.Marshal(req.upstreamID)
	}
	c.put(state.KindRequest, req.ID, rec)
}

// requestEnded updates the record of a request that ended: an accepted MRTR answer is kept until the retry
// carries it (the round's end deletes it); a request ended by the bridge's own shutdown is kept for the next
// process; any other end deletes it. Called by the dispatcher with the request's pubMu held, before
// EventRequestEnded and before Respond returns: an answer a host was told is accepted is durable. It
// reports whether the request is kept for the next process, whose end hosts are then not told (dispatch.go).
func (c *Core) requestEnded(req *PendingRequest, o Outcome, a Answer) (keptForNext bool) {
	if c.opts.Store == nil || !kept(req) {
		return false
	}
	switch {
	case o == OutcomeAnswered && (req.Delivery == DeliveryMRTR || req.Kind == KindApproval):
		// An approval's decision too, until its call is sent (approval.go deletes it then).
		c.put(state.KindRequest, req.ID, requestRecord{Version: recordVersion, Request: req, Answer: &a})
	case o == OutcomeSessionClosed && c.keeping():
		return true
	default:
		c.del(state.KindRequest, req.ID)
	}
	return false
}

// --- MRTR rounds ---

// keptCalls is a session's memory of what was restored from the store for its calls not resumed yet — MRTR
// rounds (restoredCall), approvals (restoredApproval) — by call id (Session.restoredRounds,
// Session.restoredApprovals): it goes with the session. Safe for concurrent use.
type keptCalls[T any] struct {
	mu sync.Mutex
	m  map[string]T
}

func (k *keptCalls[T]) put(callID string, v T) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil {
		k.m = map[string]T{}
	}
	k.m[callID] = v
}

// peek returns what is kept for the call, leaving it; ok is false when nothing is.
func (k *keptCalls[T]) peek(callID string) (v T, ok bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	v, ok = k.m[callID]
	return v, ok
}

// take removes and returns what is kept for the call; ok is false when nothing is.
func (k *keptCalls[T]) take(callID string) (v T, ok bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	v, ok = k.m[callID]
	delete(k.m, callID)
	return v, ok
}

// takeAll removes and returns what is kept for every call (the session ended for good).
func (k *keptCalls[T]) takeAll() []T {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make([]T, 0, len(k.m))
	for _, v := range k.m {
		out = append(out, v)
	}
	k.m = nil
	return out
}

// size is how many calls have something kept.
func (k *keptCalls[T]) size() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.m)
}

// restoredCall is an MRTR call restored after a restart: its record, and the pending request of each input
// request (still pending, or ended with its answer kept in answers).
type restoredCall struct {
	rec     callRecord
	entries map[string]*pendingEntry // input key → the re-raised request (nil when answered before)
	answers map[string]Answer        // input key → answer accepted before the restart
}

// roundBegins prepares the record of an MRTR call that must wait for hosts: called with the round's input
// requests before they are raised; roundRequest writes it with the first of them.
func (r *sessionRecords) roundBegins(call *activeCall, reqs mcp.InputRequestMap, st string) {
	s := r.s
	if s.core.opts.Store == nil || call.resume == nil {
		return
	}
	raw, err := json.Marshal(reqs)
	if err != nil {
		s.logger.Warn("MRTR round not kept: its input requests do not encode", "error", err)
		return
	}
	call.resume.mu.Lock()
	defer call.resume.mu.Unlock()
	call.resume.rec.RequestState = st
	call.resume.rec.Inputs = raw
	call.resume.rec.Requests = map[string]string{}
	call.resume.written = true
	// Not written yet: the record matters once a request of the round is, and roundRequest writes it then,
	// with that request (one write per round fewer on the MRTR hop).
}

// roundRequest records which pending request answers input key of the call's round, and rewrites the
// call's record. Called once the request is registered, before it is kept.
func (r *sessionRecords) roundRequest(call *activeCall, key, requestID string) {
	s := r.s
	if s.core.opts.Store == nil || call == nil || call.resume == nil {
		return
	}
	// The lock is held across the write: concurrent input requests of one round must not write an older
	// record over a newer one.
	call.resume.mu.Lock()
	defer call.resume.mu.Unlock()
	if !call.resume.written {
		return
	}
	call.resume.rec.Requests[key] = requestID
	s.core.put(state.KindCall, roundKey(s.id, call.id), call.resume.rec)
}

// roundEnds deletes the call's round records once the retry carried the answers (or the call ended for
// good); when the bridge is shutting down they are kept for the next process.
func (r *sessionRecords) roundEnds(call *activeCall) {
	s := r.s
	if s.core.opts.Store == nil || call.resume == nil || s.core.keeping() {
		return
	}
	call.resume.mu.Lock()
	if !call.resume.written {
		call.resume.mu.Unlock()
		return
	}
	rec := call.resume.rec
	rec.Requests = maps.Clone(rec.Requests)
	call.resume.written = false
	idKept := call.resume.idKept
	call.resume.mu.Unlock()
	if idKept {
		// The call's id stays recorded between rounds and until callEnds settles it (callids.go): the
		// round's record is written over by the call's, not deleted, so that no moment leaves the id
		// unknown to a process that restores the session after a kill -9.
		s.core.put(state.KindCall, roundKey(s.id, call.id), inFlightRecord(s.id, call))
		for _, id := range rec.Requests {
			s.core.del(state.KindRequest, id)
		}
		return
	}
	s.core.dropRound(rec)
}

// dropRound deletes an MRTR call's record and its requests' records.
func (c *Core) dropRound(rec callRecord) {
	for _, id := range rec.Requests {
		c.del(state.KindRequest, id)
	}
	c.del(state.KindCall, roundKey(rec.SessionID, rec.CallID))
}

// callResume is the part of an activeCall that makes it resumable: its round record.
type callResume struct {
	mu      sync.Mutex // guards rec and written, and is held across their writes to the store
	rec     callRecord
	written bool // the record is in the store (a round is under way)
	// idKept: the call's id is recorded in the store (callBegins, or a resumed round): the record is
	// settled by callEnds, and a round's end writes it back rather than deleting it.
	idKept bool
}

// newCallResume prepares the round record of an MRTR-capable call.
func newCallResume(sessionID, callID, method, name string, args json.RawMessage) *callResume {
	return &callResume{rec: callRecord{Version: recordVersion, SessionID: sessionID, CallID: callID, Method: method, Name: name, Arguments: args, Created: time.Now()}}
}

// newResume prepares the round record of an MRTR-capable call when the core keeps state; args is the
// call's arguments as sent (tools/call), nil otherwise.
func (r *sessionRecords) newResume(call *activeCall, args any) *callResume {
	s := r.s
	if s.core.opts.Store == nil {
		return nil
	}
	var raw json.RawMessage
	switch a := args.(type) {
	case json.RawMessage:
		raw = a
	case nil:
	default:
		b, err := json.Marshal(a)
		if err != nil {
			return nil
		}
		raw = b
	}
	cr := newCallResume(s.id, call.id, call.method, call.name, raw)
	cr.rec.Digest = call.digest.get()
	return cr
}

// adoptRound makes a restored round the call's own: its records are deleted when the call has its outcome.
func (*sessionRecords) adoptRound(call *activeCall, rc *restoredCall) {
	if call.resume == nil {
		return
	}
	call.resume.mu.Lock()
	call.resume.rec.RequestState = rc.rec.RequestState
	call.resume.rec.Inputs = rc.rec.Inputs
	call.resume.rec.Requests = maps.Clone(rc.rec.Requests)
	call.resume.written = true
	// The round's record names the call's id; it stays recorded until the call ends (callEnds).
	call.resume.idKept = call.method == "tools/call" && call.opts.CallID != "" && !call.opts.MintedID
	call.resume.mu.Unlock()
}

// resumeInput waits for the answers of a restored call's input requests and returns them as the retry's
// inputResponses. A request that ended without an answer fails the call the way an unanswered MRTR request
// does.
func (*sessionRecords) resumeInput(ctx context.Context, rc *restoredCall) (mcp.InputResponseMap, error) {
	out := make(mcp.InputResponseMap, len(rc.rec.Requests))
	for key, id := range rc.rec.Requests {
		a, ok := rc.answers[key]
		if !ok {
			e := rc.entries[key]
			if e == nil {
				return nil, fmt.Errorf("%w: input request %q was lost", ErrServerRequestTimedOut, key)
			}
			select {
			case <-e.done:
			case <-ctx.Done():
				return nil, ctxError(ctx)
			}
			if e.outcome != OutcomeAnswered {
				return nil, fmt.Errorf("%w: input request %q (%s) ended %s", ErrServerRequestTimedOut, key, id, e.outcome)
			}
			a = e.answer
		}
		switch r := a.result(); {
		case r != nil:
			out[key] = r
		case a.Error != nil:
			return nil, fmt.Errorf("%w: %s (code %d)", ErrInputRefused, a.Error.Message, a.Error.Code)
		default:
			return nil, fmt.Errorf("%w: input request %q has no answer", ErrServerRequestTimedOut, key)
		}
	}
	return out, nil
}

// --- restore ---

// RestoreReport says what Core.Restore brought back.
type RestoreReport struct {
	Sessions, Requests, Rounds int
	// Ended counts pushed requests ended with OutcomeBridgeRestarted; Dropped counts records that could
	// not be restored (a server no longer configured, a record that does not decode), each logged.
	Ended, Dropped int
	// InFlight counts calls that were in flight upstream when the earlier process died: their ids are
	// known (a call under one without resume is refused), their outcomes not.
	InFlight int
}

// Restore brings back what the store kept of an earlier process (see the top of this file). Call it once,
// after New and before serving. Sessions come back Reconnecting and reach Ready in the background.
func (c *Core) Restore(ctx context.Context) (RestoreReport, error) {
	var rep RestoreReport
	st := c.opts.Store
	if st == nil {
		return rep, nil
	}
	var sessions []sessionRecord
	err := st.List(ctx, state.KindSession, func(key string, v []byte) error {
		var r sessionRecord
		if err := json.Unmarshal(v, &r); err != nil || r.ID != key || r.Version > recordVersion {
			c.logger.Error("a kept session cannot be restored: its record does not decode", "session", key, "error", err)
			rep.Dropped++
			return nil
		}
		sessions = append(sessions, r)
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("reading the kept sessions: %w", err)
	}
	slices.SortFunc(sessions, func(a, b sessionRecord) int { return a.Created.Compare(b.Created) })
	restored := map[string]*Session{}
	for _, r := range sessions {
		s, err := c.restoreSession(r)
		if err != nil {
			c.logger.Error("a kept session cannot be restored", "session", r.ID, "server", r.Server, "error", err)
			c.del(state.KindSession, r.ID)
			rep.Dropped++
			continue
		}
		restored[s.id] = s
		rep.Sessions++
	}
	var calls []callRecord
	if err := st.List(ctx, state.KindCall, func(key string, v []byte) error {
		r, ok := decodeRecord[callRecord](v)
		if !ok || r.Version > recordVersion {
			rep.Dropped++ // not fatal: the rest is restored
			return nil
		}
		calls = append(calls, r)
		return nil
	}); err != nil {
		return rep, fmt.Errorf("reading the kept calls: %w", err)
	}
	var reqs []requestRecord
	if err := st.List(ctx, state.KindRequest, func(key string, v []byte) error {
		r, ok := decodeRecord[requestRecord](v)
		if !ok || r.Request == nil || r.Request.ID != key || r.Version > recordVersion {
			rep.Dropped++
			c.del(state.KindRequest, key)
			return nil
		}
		reqs = append(reqs, r)
		return nil
	}); err != nil {
		return rep, fmt.Errorf("reading the kept requests: %w", err)
	}
	c.restoreRequests(calls, reqs, restored, &rep)
	return rep, nil
}

// restoreRequests brings back the kept MRTR rounds and requests of restored sessions (Restore, after a
// restart; Adopt, a session taken over from another replica): every MRTR input request still waiting for a
// person is raised again under its id and its round kept for the call's resumption; an approval is raised
// again for the caller's retry; a request the server of a re-attachable session pushed is raised again, to
// be answered there; any other request — its connection died with the process that had it — ends with
// OutcomeBridgeRestarted, and its record goes. Rounds of sessions that were not restored are dropped.
func (c *Core) restoreRequests(calls []callRecord, reqs []requestRecord, restored map[string]*Session, rep *RestoreReport) {
	byID := map[string]requestRecord{}
	for _, r := range reqs {
		byID[r.Request.ID] = r
	}
	inRound := map[string]bool{}
	for _, cr := range calls {
		if restored[cr.SessionID] == nil {
			c.dropRound(cr)
			continue
		}
		if cr.InFlight {
			// A call in flight upstream when the process that sent it died — its id is known, its outcome
			// not — or one that completed there, its outcome lost with that process's memory. Without
			// resume it is refused rather than run again (docs/adr/0099); with resume, its outcome is
			// unknown (in flight) or evicted (completed: the tool ran once). The record stays for the
			// kept results' TTL, for whoever serves the session next (a hand-back, another crash), and
			// goes at its end (callIDRecords) or with the session.
			key := roundKey(cr.SessionID, cr.CallID)
			from := cr.Created
			if !cr.Ended.IsZero() {
				from = cr.Ended
			}
			if expires := from.Add(c.kept.policy.TTL); time.Now().Before(expires) {
				if cr.Ended.IsZero() {
					c.kept.markUnknownUntil(key, expires, cr.Digest)
				} else {
					c.kept.markEvictedUntil(key, expires, cr.Digest)
				}
				c.callIDs.add(restored[cr.SessionID], cr.CallID, expires)
				rep.InFlight++
			} else {
				c.del(state.KindCall, key)
			}
			continue
		}
		rc := &restoredCall{rec: cr, entries: map[string]*pendingEntry{}, answers: map[string]Answer{}}
		for key, id := range cr.Requests {
			inRound[id] = true
			r, ok := byID[id]
			switch {
			case !ok:
			case r.Answer != nil:
				rc.answers[key] = *r.Answer
			default:
				rc.entries[key] = c.dispatcher.restore(r.Request)
				rep.Requests++
			}
		}
		restored[cr.SessionID].restoredRounds.put(cr.CallID, rc)
		rep.Rounds++
	}
	for _, r := range reqs {
		if inRound[r.Request.ID] {
			continue
		}
		if r.Request.Kind == KindApproval { // re-raised for the caller's retry (approval.go)
			if c.restoreApproval(r, restored[r.Request.SessionID]) {
				rep.Requests++
			}
			continue
		}
		if r.Request.OriginCallID != "" && restored[r.Request.SessionID] != nil {
			// Its call was in flight upstream when the process died: its id is known, its outcome not. A call
			// under that id without resume is refused rather than run again (docs/adr/0093).
			c.kept.markUnknown(roundKey(r.Request.SessionID, r.Request.OriginCallID))
		}
		if s := restored[r.Request.SessionID]; s != nil && s.reattach != nil && r.Request.Delivery == DeliveryPush {
			if id, ok := decodeRPCID(r.UpstreamID); ok {
				// The server may still wait for it under its session: raised again, and answered there
				// if the session re-attaches (reattach.go).
				e := c.dispatcher.restore(r.Request)
				s.restoredWG.Add(1)
				go s.reattach.deliverRestoredPush(s, e, id) // owned by the session (restoredWG)
				rep.Requests++
				continue
			}
		}
		// A pushed request (or an input request whose round record was never written): the connection it
		// came on died with the process that had it, so no answer can reach the server that asked. Say so.
		c.dispatcher.endRestored(r.Request, restored[r.Request.SessionID] != nil)
		c.del(state.KindRequest, r.Request.ID)
		rep.Ended++
	}
}

// restoreSession recreates a kept session under its id and starts reaching its server again.
func (c *Core) restoreSession(r sessionRecord) (*Session, error) {
	cfg, err := c.resolve(OpenParams{Owner: r.Owner, Server: r.Server, ProtocolVersion: r.RequestedVersion})
	if err != nil {
		return nil, err
	}
	p := OpenParams{Owner: r.Owner, Server: r.Server, Capabilities: r.Capabilities, ProtocolVersion: r.RequestedVersion, ClientInfo: r.ClientInfo, LogLevel: r.LogLevel}
	if r.HostRoots {
		p.Roots = r.Roots
		if p.Roots == nil {
			p.Roots = []*mcp.Root{}
		}
	}
	s := newSession(c, r.ID, p, cfg)
	s.created = r.Created
	for _, uri := range r.Subscriptions {
		s.subs[uri] = true
	}
	s.state, s.reason = StateReconnecting, "bridge restarted; reconnecting"
	if canReattach(r, cfg) {
		s.reattach = newReattach(r)
	}
	s.info.ProtocolVersion = r.ProtocolVersion
	c.mu.Lock()
	if _, dup := c.sessions[r.ID]; dup {
		c.mu.Unlock()
		s.cancel()
		return nil, fmt.Errorf("session %s is already open", r.ID)
	}
	// Restored past the limits: the sessions were the bridge's before it restarted (or another replica's).
	c.openedLocked(s)
	c.mu.Unlock()
	c.obs.SessionStateChanged(cfg.Name, 0, StateReconnecting)
	go s.resume() // owned by the session like its supervisor; ends with it
	return s, nil
}

// resume reaches a restored session's server again (as after a crash of the server: stdio servers are
// started anew, HTTP sessions initialized anew), then supervises it. It closes superDone when it gives up.
func (s *Session) resume() {
	var g *generation
	var err error
	if s.reattach != nil {
		g, err = s.reattach.connect(s)
	}
	if g == nil && s.ctx.Err() == nil {
		g, err = s.supervisor.reconnect(s.server.Restart, 0, 0)
	}
	if err != nil || g == nil { // g is nil without an error when the session ended before it was reached
		close(s.superDone)
		if err != nil && s.ctx.Err() == nil {
			s.supervisor.giveUp("reconnecting after a bridge restart: "+err.Error(), "bridge restarted")
		}
		return
	}
	s.install(g, "restored after a bridge restart") // writes the session's record (install)
	s.resubscribe(g)
	s.supervisor.supervise(g)
}

// decodeRecord decodes a kept record; false when it does not decode (the caller drops it and goes on).
func decodeRecord[T any](v []byte) (T, bool) {
	var r T
	return r, json.Unmarshal(v, &r) == nil
}

// decodeRPCID reads a kept JSON-RPC id (a string or an integer).
func decodeRPCID(raw json.RawMessage) (jsonrpc.ID, bool) {
	if len(raw) == 0 {
		return jsonrpc.ID{}, false
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return jsonrpc.ID{}, false
	}
	if n, ok := v.(json.Number); ok {
		i, err := n.Int64()
		if err != nil {
			return jsonrpc.ID{}, false
		}
		v = float64(i) // MakeID takes JSON's numbers as float64 (and makes an integer id of them)
	}
	id, err := jsonrpc.MakeID(v)
	return id, err == nil && id.IsValid()
}
