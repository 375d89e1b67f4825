package mcpcore

// Takeover: replicas that share their state (a Redis store) cover for each other
// (docs/adr/0070-replicas-share-state.md). The replica that holds a session's lease serves it; when its
// owner dies (the lease expires) or drains (it releases the lease), the replica a call reaches adopts the
// session from its records, as a restarted bridge restores it (durable.go): the session comes back under
// its id, Reconnecting then Ready; MRTR input requests are raised again under their ids; pushed requests
// whose connection died with the old owner end with OutcomeBridgeRestarted.
//
// Who owns a session is decided in mcpcore/ownership: Adopt expects the lease taken, and the ownership
// package's fenced store makes every write of a session's records carry its fence. This file holds what
// the core does for it: adopt a session from its records, release one another replica serves now.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcp-bridge/mcp-bridge/internal/state"
)

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
	if s := c.openSession(id); s != nil {
		if s.owner != principal {
			return nil, ErrSessionNotFound
		}
		return s, nil
	}
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
	s := c.openSession(id)
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
	if s := c.openSession(id); s != nil {
		s.records.persist()
	}
}

// RecordSession is the session a kept record belongs to; "" for records of no session (OAuth grants). A
// request record names its session in its value: with value nil, a request's session is unknown ("").
// The fenced store (mcpcore/ownership) fences a record's writes by it.
func RecordSession(kind state.Kind, key string, value []byte) string {
	switch kind {
	case state.KindSession:
		return key
	case state.KindCall, state.KindTask:
		sid, _, _ := strings.Cut(key, "/")
		return sid
	case state.KindRequest:
		var rr requestRecord
		if value != nil && json.Unmarshal(value, &rr) == nil && rr.Request != nil {
			return rr.Request.SessionID
		}
	}
	return ""
}

// reopen forgets that a session was closed here (an earlier hold of it that this replica gave up): it is
// served here again, and its requests must not end as those of a closed session.
func (d *Dispatcher) reopen(sessionID string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed.remove(sessionID)
}
