package server

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/mcp-bridge/mcp-bridge/internal/state"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// Replicas that cover for each other (docs/adr/0070-replicas-share-state.md). With Options.Leases the
// replicas share their state in Redis and each serves the sessions whose lease it holds. A call naming a
// session this replica does not serve takes it over when no live lease holds it (its owner died, or
// drained and released it): the core adopts it from its records. When another replica's live lease holds
// it, the call is refused with UNAVAILABLE WRONG_REPLICA — except on the replica the session id names
// (its home, back after a restart): that one asks the holder to hand the session back and waits for it.

// handBackWait bounds how long the session's home replica waits for the holder to hand it back: the
// holder sees the request at its next renewal, within a third of the TTL.
func (s *Service) handBackWait() time.Duration { return 2 * s.opts.Leases.TTL() }

// lookupShared is lookup with shared state: the session is served here if this replica holds its lease,
// and taken over if nobody does.
func (s *Service) lookupShared(ctx context.Context, id string) (*mcpcore.Session, error) {
	leases := s.opts.Leases
	sess, err := s.core.Session(id)
	if err == nil {
		if sess.Owner() != Principal(ctx) {
			return nil, sessionNotFound(id)
		}
		if st, _ := sess.State(); st == mcpcore.StateClosed {
			if !leases.Gone(id) {
				return sess, nil // it ended here for good: its calls say so
			}
		} else {
			if leases.Holds(id) {
				return sess, nil
			}
			// By this process's clock the lease may have lapsed (a pause, renewals failing): ask Redis.
			_, cerr := leases.Confirm(ctx, id)
			if cerr == nil || errors.Is(cerr, state.ErrUnreachable) {
				return sess, nil
			}
			if !leases.Gone(id) {
				// Never held here: its first write could not take the lease (Redis failed then). Take it now
				// and write its record.
				if _, err := leases.Acquire(ctx, id); err == nil {
					s.core.Persist(id)
					return sess, nil
				}
			}
			s.core.Release(ctx, id, "another replica took the session over")
		}
	}
	return s.takeOver(ctx, id)
}

// takeOver adopts a session no live replica holds. Adoptions of one session are serialized.
func (s *Service) takeOver(ctx context.Context, id string) (*mcpcore.Session, error) {
	leases := s.opts.Leases
	if leases.Down() {
		return nil, storeUnavailable()
	}
	unlock := s.adoptLock(id)
	defer unlock()
	if sess, err := s.core.Session(id); err == nil && leases.Holds(id) {
		if st, _ := sess.State(); st != mcpcore.StateClosed {
			if sess.Owner() != Principal(ctx) {
				return nil, sessionNotFound(id)
			}
			return sess, nil // adopted by a concurrent call
		}
	}
	if err := s.acquire(ctx, id); err != nil {
		return nil, err
	}
	sess, err := s.core.Adopt(ctx, id, Principal(ctx))
	if err != nil {
		if errors.Is(err, mcpcore.ErrSessionNotFound) {
			leases.Forget(context.WithoutCancel(ctx), id)
			return nil, sessionNotFound(id)
		}
		_ = leases.Release(context.WithoutCancel(ctx), id)
		return nil, toStatus(err)
	}
	s.takeovers.Add(1)
	return sess, nil
}

// acquire takes the session's lease. A live lease of another replica is waited out: on the session's
// home replica (named in its id, back after a restart) the holder is asked to hand it back (it does
// within a third of the TTL); elsewhere the call came because the home replica is down, and the holder
// is most likely the dead owner, whose lease expires within the TTL. A lease held under this replica's
// own name by another process — an earlier incarnation killed and started again at once under the same
// name, as a StatefulSet does — is waited out too (docs/adr/0093): a dead process renews nothing, so its
// lease ends within the TTL. A holder that still holds the lease after the wait is alive: the call was
// misrouted (WRONG_REPLICA), another live process uses this replica's name (WRONG_REPLICA, naming no
// replica twice), or, on the home replica, the holder did not hand it over yet (SESSION_MOVED, retry).
func (s *Service) acquire(ctx context.Context, id string) error {
	leases := s.opts.Leases
	own := s.core.Replica()
	home, _ := mcpcore.SessionReplica(id)
	var wait <-chan time.Time
	for {
		_, err := leases.Acquire(ctx, id)
		var held *state.HeldError
		switch {
		case err == nil:
			return nil
		case errors.As(err, &held):
		case errors.Is(err, state.ErrUnreachable):
			return storeUnavailable()
		case ctx.Err() != nil:
			return toStatus(ctx.Err())
		default:
			s.logger.Warn("taking a session over failed", "session", id, "err", err)
			return storeUnavailable()
		}
		if wait == nil {
			bound := leases.TTL() + leases.TTL()/2
			if held.Holder == own {
				s.logger.Info("the session's lease is held under this replica's name by another process (an earlier incarnation?): waiting for it to expire",
					"session", id, "bound", bound)
			} else if home == own {
				if err := leases.AskBack(ctx, id); err != nil {
					return storeUnavailable()
				}
				bound = s.handBackWait()
			}
			wait = time.After(bound)
		}
		select {
		case <-ctx.Done():
			return toStatus(ctx.Err())
		case <-wait:
			if held.Holder == own {
				return s.nameShared(id)
			}
			if home != own && held.Holder != home {
				return s.wrongReplica(id, held.Holder)
			}
			// On its home replica, or held by its home replica (back after a restart, which the proxy has not
			// seen yet): the session is moving, and a retry reaches the right replica.
			return toStatus(&mcpcore.ReplicaError{Err: mcpcore.ErrSessionMoved, Owner: held.Holder, Replica: own,
				Message: "session " + strconv.Quote(id) + " is still held by replica " + strconv.Quote(held.Holder) + ", which was asked to hand it back: retry"})
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// nameShared is the error of a call for a session whose lease another live process holds under this
// replica's own name: two processes were given one replica name.
func (s *Service) nameShared(id string) error {
	s.misrouted.Add(1)
	own := s.core.Replica()
	return toStatus(&mcpcore.ReplicaError{Err: mcpcore.ErrWrongReplica, Owner: own, Replica: own,
		Message: "session " + strconv.Quote(id) + " is held by another live process under this replica's own name " + strconv.Quote(own) + ": every replica needs a name of its own (sessions.replica)"})
}

// wrongReplica is the error of a call for a session another replica's live lease holds (holder is never
// this replica's own name: see nameShared).
func (s *Service) wrongReplica(id, holder string) error {
	s.misrouted.Add(1)
	own := s.core.Replica()
	return toStatus(&mcpcore.ReplicaError{Err: mcpcore.ErrWrongReplica, Owner: holder, Replica: own,
		Message: "session " + strconv.Quote(id) + " is served by replica " + strconv.Quote(holder) + ", not " + strconv.Quote(own) + ": the proxy must route on the " + SessionRoutingKey + " header"})
}

func storeUnavailable() error {
	return toStatus(&mcpcore.ReplicaError{Err: mcpcore.ErrStateStoreUnavailable,
		Message: "the shared state store (redis) does not answer: sessions of other replicas cannot be taken over and new sessions cannot be opened until it does; retry"})
}

// adoptLock serializes the takeovers of one session on this replica.
func (s *Service) adoptLock(id string) (unlock func()) {
	s.adoptMu.Lock()
	l := s.adopting[id]
	if l == nil {
		l = &adoptGate{}
		s.adopting[id] = l
	}
	l.users++
	s.adoptMu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		s.adoptMu.Lock()
		if l.users--; l.users == 0 {
			delete(s.adopting, id)
		}
		s.adoptMu.Unlock()
	}
}

// adoptGate is one session's takeover lock and how many calls use it.
type adoptGate struct {
	mu    sync.Mutex
	users int // guarded by Service.adoptMu
}

// Takeovers counts the sessions this replica took over since New.
func (s *Service) Takeovers() uint64 { return s.takeovers.Load() }

// runLeases renews this replica's leases until Close, and stops serving the sessions it lost or was asked
// to hand back. It is owned by the service: Close ends it and waits.
func (s *Service) runLeases(ctx context.Context) {
	defer s.reaperWG.Done()
	defer logPanic(s.logger, "lease renewal")
	leases := s.opts.Leases
	s.opts.Leases.Run(ctx, state.LeaseEvents{
		Lost: func(id string) {
			s.logger.Warn("lost the lease of a session: another replica serves it now", "session", id)
			s.core.Release(ctx, id, "another replica took the session over")
		},
		Wanted: func(id string) {
			home, _ := mcpcore.SessionReplica(id)
			if err := leases.Relinquish(ctx, id, func() {
				s.core.Release(ctx, id, "handed back to replica "+home)
			}); err != nil {
				s.logger.Warn("handing a session back failed; its lease will expire", "session", id, "err", err)
			}
		},
		Reseeded:  s.core.Persist,
		Reachable: s.opts.OnStoreReachable,
	})
}

// releaseLeases gives up every lease at the end of a drain, so that other replicas take the sessions over
// at once.
func (s *Service) releaseLeases(ctx context.Context) {
	n, err := s.opts.Leases.ReleaseAll(ctx)
	if err != nil {
		s.logger.Warn("releasing the leases failed: other replicas take those sessions over when they expire", "released", n, "err", err)
		return
	}
	s.logger.Info("leases released: other replicas take the sessions over", "sessions", n)
}

// movedError is the error that ends a host stream (Connect, WatchEvents) instead of ev, the final state
// event of a session this replica gave up to another (a hand-back, a lost lease): the session lives on
// there, and the host, told UNAVAILABLE SESSION_MOVED, connects again through the proxy and attaches it
// where it is served. nil for any other event.
func (s *Service) movedError(ev mcpcore.Event) error {
	if s.opts.Leases == nil || ev.Kind != mcpcore.EventStateChanged || ev.State != mcpcore.StateClosed || !s.opts.Leases.Gone(ev.SessionID) {
		return nil
	}
	return toStatus(&mcpcore.ReplicaError{Err: mcpcore.ErrSessionMoved, Session: ev.SessionID, Replica: s.core.Replica(),
		Message: "session " + strconv.Quote(ev.SessionID) + " moved to another replica: connect again through the proxy and attach it"})
}

// hiddenByMove reports whether ev, an event of a session this replica gave up to another, is one the host
// must not see: a pending request ended SESSION_CLOSED by the local close of the session, which lives on —
// the new owner raises the request again under its id.
func (s *Service) hiddenByMove(ev mcpcore.Event) bool {
	return s.opts.Leases != nil && ev.Kind == mcpcore.EventRequestEnded && ev.Ended != nil &&
		ev.Ended.Outcome == mcpcore.OutcomeSessionClosed && s.opts.Leases.Gone(ev.SessionID)
}
