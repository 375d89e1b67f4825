package mcpcore

// Takeover: replicas that share their state (a Redis store) cover for each other
// (docs/adr/0070-replicas-share-state.md). The replica that holds a session's lease serves it; when its
// owner dies (the lease expires) or drains (it releases the lease), the replica a call reaches adopts the
// session from its records, as a restarted bridge restores it (durable.go): the session comes back under
// its id, Reconnecting then Ready; MRTR input requests are raised again under their ids; pushed requests
// whose connection died with the old owner end with OutcomeBridgeRestarted.
//
// Ownership itself (leases, fencing) is the caller's: Adopt expects the lease taken, and FencedStore makes
// every write of a session's records carry its fence.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/mcp-bridge/mcp-bridge/internal/state"
)

// ErrSessionMoved: the session is served by another replica now (this one gave it up or lost its lease).
// Calls cut short by the move fail with it; retrying through the proxy reaches the new owner, and a call
// retried with the same call id resumes there.
var ErrSessionMoved = errors.New("the session moved to another replica")

// Adopt takes over a session kept in the store by another replica, which no longer serves it: it comes
// back under its id as after a restart (Reconnecting, then Ready), with its MRTR rounds and their input
// requests, and its pushed requests ended with OutcomeBridgeRestarted. principal must be the session's
// owner. The caller holds the session's lease (its writes are fenced). Errors: ErrSessionNotFound when
// the store has no such session or it belongs to another principal; others when the store fails.
func (c *Core) Adopt(ctx context.Context, id, principal string) (*Session, error) {
	st := c.opts.Store
	if st == nil {
		return nil, ErrSessionNotFound
	}
	c.mu.Lock()
	if s, ok := c.sessions[id]; ok {
		c.mu.Unlock()
		if s.owner != principal {
			return nil, ErrSessionNotFound
		}
		return s, nil
	}
	c.mu.Unlock()
	raw, err := st.Get(ctx, state.KindSession, id)
	if errors.Is(err, state.ErrNotFound) {
		return nil, ErrSessionNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("%w: reading the session from the state store: %w", ErrUnavailable, err)
	}
	var r sessionRecord
	if err := json.Unmarshal(raw, &r); err != nil || r.ID != id || r.Version > recordVersion {
		c.logger.Error("a kept session cannot be taken over: its record does not decode", "session", id, "error", err)
		return nil, ErrSessionNotFound
	}
	if r.Owner != principal {
		return nil, ErrSessionNotFound
	}
	var calls []callRecord
	if err := st.List(ctx, state.KindCall, func(key string, v []byte) error {
		if !strings.HasPrefix(key, id+"/") {
			return nil
		}
		if cr, ok := decodeRecord[callRecord](v); ok && cr.Version <= recordVersion && cr.SessionID == id {
			calls = append(calls, cr)
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("%w: reading the session's calls from the state store: %w", ErrUnavailable, err)
	}
	var reqs []requestRecord
	if err := st.List(ctx, state.KindRequest, func(key string, v []byte) error {
		if rr, ok := decodeRecord[requestRecord](v); ok && rr.Request != nil && rr.Request.ID == key && rr.Request.SessionID == id && rr.Version <= recordVersion {
			reqs = append(reqs, rr)
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("%w: reading the session's requests from the state store: %w", ErrUnavailable, err)
	}
	c.Forget(id) // a closed copy from an earlier hold of this session
	c.dispatcher.reopen(id)
	s, err := c.restoreSession(r)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.reason = "taken over from another replica; reconnecting"
	s.mu.Unlock()
	var rep RestoreReport
	c.restoreRequests(calls, reqs, map[string]*Session{id: s}, &rep)
	c.logger.Info("session taken over", "session", id, "server", r.Server, "mrtr_calls", rep.Rounds, "requests", rep.Requests, "requests_ended", rep.Ended)
	return s, nil
}

// Release stops serving a session here without ending it: another replica serves it from its records
// now (it lost the lease, or handed the session over). Calls in flight fail with ErrSessionMoved, the
// upstream connection closes and hosts attached here see the session end with reason. The records stay:
// the caller has given up the session's fence first, so the deletions of the close are refused.
func (c *Core) Release(ctx context.Context, id, reason string) {
	c.mu.Lock()
	s := c.sessions[id]
	c.mu.Unlock()
	if s == nil {
		return
	}
	cause := fmt.Errorf("%w: %s", ErrSessionMoved, reason)
	for _, call := range s.inFlight() {
		call.cancel(cause)
	}
	_ = s.closeWith(ctx, reason, cause)
	c.logger.Info("session given up to another replica", "session", id, "reason", reason)
}

// Persist writes a session's record anew (the shared store lost it: state.LeaseEvents.Reseeded).
func (c *Core) Persist(id string) {
	c.mu.Lock()
	s := c.sessions[id]
	c.mu.Unlock()
	if s != nil {
		s.persist()
	}
}

// Fences gives the fence of the sessions a replica holds (state.Leases).
type Fences interface {
	// Fence is the fence of a session this replica holds.
	Fence(session string) (state.Fence, bool)
	// Acquire takes the lease of a session nobody holds (a session this replica just opened).
	Acquire(ctx context.Context, session string) (state.Fence, error)
	// Forget drops the lease of a session that ended for good.
	Forget(ctx context.Context, session string)
}

// ErrNotHeld is the error of a write for a session this replica does not hold (any more): the write did
// not happen.
var ErrNotHeld = errors.New("state: write refused: this replica does not hold the session")

// FencedStore wraps the shared store so that every write of a session's records carries the fence of the
// replica's lease on it (state.WithFence), and is refused at once (ErrNotHeld) for a session this replica
// gave up or lost. A session's first write takes its lease (a session this replica just opened);
// gone(session) reports the sessions the replica gave up or lost, whose writes are refused instead.
// OAuth grants are shared and not fenced.
func FencedStore(s state.Store, fences Fences, gone func(session string) bool) state.Store {
	return &fencedStore{Store: s, fences: fences, gone: gone, reqs: map[string]string{}}
}

type fencedStore struct {
	state.Store
	fences Fences
	gone   func(string) bool

	mu   sync.Mutex        // guards reqs
	reqs map[string]string // request id → session id, learned from the requests' records
}

// sessionOf is the session a record belongs to; "" for records of no session.
func (f *fencedStore) sessionOf(kind state.Kind, key string, value []byte) string {
	switch kind {
	case state.KindSession:
		return key
	case state.KindCall, state.KindTask:
		sid, _, _ := strings.Cut(key, "/")
		return sid
	case state.KindRequest:
		f.mu.Lock()
		sid := f.reqs[key]
		f.mu.Unlock()
		if sid == "" && value != nil {
			var rr requestRecord
			if json.Unmarshal(value, &rr) == nil && rr.Request != nil {
				sid = rr.Request.SessionID
			}
		}
		return sid
	}
	return ""
}

func (f *fencedStore) fenced(ctx context.Context, sid string) (context.Context, error) {
	fence, ok := f.fences.Fence(sid)
	if !ok {
		if f.gone(sid) {
			return nil, fmt.Errorf("%w %s", ErrNotHeld, sid)
		}
		var err error
		if fence, err = f.fences.Acquire(ctx, sid); err != nil {
			return nil, err
		}
	}
	return state.WithFence(ctx, fence), nil
}

func (f *fencedStore) Put(ctx context.Context, kind state.Kind, key string, value []byte) error {
	sid := f.sessionOf(kind, key, value)
	if sid == "" {
		return f.Store.Put(ctx, kind, key, value)
	}
	fctx, err := f.fenced(ctx, sid)
	if err != nil {
		if !errors.Is(err, ErrNotHeld) {
			state.NoteFailedWrite(f.Store, err) // the lease is the write's first step: its failure is the store's
		}
		return err
	}
	if err := f.Store.Put(fctx, kind, key, value); err != nil {
		return err
	}
	if kind == state.KindRequest {
		f.mu.Lock()
		f.reqs[key] = sid
		f.mu.Unlock()
	}
	return nil
}

func (f *fencedStore) Delete(ctx context.Context, kind state.Kind, key string) error {
	sid := f.sessionOf(kind, key, nil)
	if sid == "" {
		return f.Store.Delete(ctx, kind, key)
	}
	fence, ok := f.fences.Fence(sid)
	if !ok {
		return fmt.Errorf("%w %s", ErrNotHeld, sid)
	}
	if err := f.Store.Delete(state.WithFence(ctx, fence), kind, key); err != nil {
		return err
	}
	switch kind {
	case state.KindRequest:
		f.mu.Lock()
		delete(f.reqs, key)
		f.mu.Unlock()
	case state.KindSession:
		f.fences.Forget(ctx, sid)
	}
	return nil
}

// List learns which session each request record belongs to, so that its later deletion is fenced.
func (f *fencedStore) List(ctx context.Context, kind state.Kind, fn func(key string, value []byte) error) error {
	if kind != state.KindRequest {
		return f.Store.List(ctx, kind, fn)
	}
	return f.Store.List(ctx, kind, func(key string, value []byte) error {
		var rr requestRecord
		if json.Unmarshal(value, &rr) == nil && rr.Request != nil && rr.Request.SessionID != "" {
			f.mu.Lock()
			f.reqs[key] = rr.Request.SessionID
			f.mu.Unlock()
		}
		return fn(key, value)
	})
}

// reopen forgets that a session was closed here (an earlier hold of it that this replica gave up): it is
// served here again, and its requests must not end as those of a closed session.
func (d *Dispatcher) reopen(sessionID string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed.remove(sessionID)
}
