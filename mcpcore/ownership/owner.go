// Package ownership decides which replica serves a session (docs/adr/0070-replicas-share-state.md,
// docs/adr/0103-one-owner-for-session-ownership.md). It is the one owner of that fact: the lookup of a
// session a call names, its takeover (the lease, then the core's adoption), the hand-back to its home
// replica, the release of what this replica lost or gave up, the renewal of the leases, and the fenced
// store through which the core writes a shared state. Its refusals are *Error values wrapping one of its
// sentinels (errors.go); package server maps them to gRPC statuses and does nothing else with ownership.
//
// With shared state (Options.Leases: replicas share their state in Redis) each replica serves the sessions
// whose lease it holds. A call naming a session this replica does not serve takes it over when no live
// lease holds it (its owner died, or drained and released it): the core adopts it from its records. When
// another replica's live lease holds it, the call is refused with ErrWrongReplica — except on the replica
// the session id names (its home, back after a restart): that one asks the holder to hand the session back
// and waits for it. Without shared state a session lives on the replica named in its id (ADR 0013): a call
// naming another replica is ErrWrongReplica.
package ownership

import (
	"context"
	"errors"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-bridge/mcp-bridge/internal/state"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// Options configure an Owner.
type Options struct {
	// Leases, when set, are this replica's leases on the sessions of a state shared with other replicas
	// (Redis): a session is served here while this replica holds its lease, and taken over when nobody
	// does. Start renews them until Close, which releases them. Nil: no shared state.
	Leases *state.Leases
	// OnStoreReachable is told when the shared store stops answering the renewals and answers again
	// (metrics); may be nil.
	OnStoreReachable func(ok bool)
	Logger           *slog.Logger
}

// Owner decides which replica serves a session, for the core it is given. Create it with New, Start it
// once the service serves, Close it after the core. All methods are safe for concurrent use.
type Owner struct {
	core   *mcpcore.Core
	leases *state.Leases // nil without shared state
	opts   Options
	logger *slog.Logger

	misrouted atomic.Uint64 // calls naming a session another replica serves
	takeovers atomic.Uint64 // sessions taken over from other replicas

	adoptMu  sync.Mutex            // guards adopting
	adopting map[string]*adoptGate // takeovers under way, by session id

	stopLeases context.CancelFunc // ends run; nil until Start, and without Leases
	running    sync.WaitGroup     // run
	closeOnce  sync.Once
}

// New returns the owner of the sessions of core on this replica.
func New(core *mcpcore.Core, opts Options) *Owner {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Owner{core: core, leases: opts.Leases, opts: opts, logger: opts.Logger, adopting: map[string]*adoptGate{}}
}

// Leases are the replica's leases on the sessions of a shared state; nil without one.
func (o *Owner) Leases() *state.Leases { return o.leases }

// Start renews the replica's leases until Close, and stops serving the sessions it lost or was asked to
// hand back. Without shared state it does nothing. Call it once.
func (o *Owner) Start() {
	if o.leases == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	o.stopLeases = cancel
	o.running.Add(1)
	go o.run(ctx) // ends when Close calls stopLeases
}

// Close gives up every lease, so that other replicas take the sessions over at once, and stops the
// renewals. Call it after the core closed its sessions (their records kept). It is idempotent.
func (o *Owner) Close(ctx context.Context) {
	o.closeOnce.Do(func() {
		if o.leases == nil {
			return
		}
		o.releaseLeases(context.WithoutCancel(ctx))
		if o.stopLeases != nil {
			o.stopLeases()
		}
		o.running.Wait()
	})
}

// Restore brings back what an earlier process of this replica kept, before the bridge serves: sessions
// under their ids, pending requests, MRTR rounds (docs/adr/0021-what-is-kept.md). Replicas sharing a
// store restore nothing at start: each session comes back on the replica a call for it reaches (a
// takeover), so that two replicas never both restore one session.
func (o *Owner) Restore(ctx context.Context) (mcpcore.RestoreReport, error) {
	if o.leases != nil {
		return mcpcore.RestoreReport{}, nil
	}
	return o.core.Restore(ctx)
}

// Lookup returns the session id that principal may use on this replica, taking it over when no live
// replica serves it. Errors: mcpcore.ErrSessionNotFound when it does not exist or belongs to another
// principal (the two are indistinguishable); an *Error wrapping ErrWrongReplica, ErrMoved or
// ErrStoreUnavailable; the core's errors of an adoption; ctx's error.
func (o *Owner) Lookup(ctx context.Context, id, principal string) (*mcpcore.Session, error) {
	if o.leases != nil {
		return o.lookupShared(ctx, id, principal)
	}
	if err := o.checkReplica(id); err != nil {
		return nil, err
	}
	sess, err := o.core.Session(id)
	if err != nil || sess.Owner() != principal {
		return nil, mcpcore.ErrSessionNotFound
	}
	return sess, nil
}

// CanOpen returns nil when this replica may open a session now: with shared state, the store must
// answer, since a session that could not be kept would not survive this replica (ErrStoreUnavailable).
func (o *Owner) CanOpen() error {
	if o.leases != nil && o.leases.Down() {
		return storeUnavailable()
	}
	return nil
}

// checkReplica returns nil when this bridge may own the session id: it names no replica, or this one. A
// session id naming another replica is ErrWrongReplica.
func (o *Owner) checkReplica(id string) error {
	own := o.core.Replica()
	owner, ok := mcpcore.SessionReplica(id)
	if !ok || own == "" || owner == own {
		return nil
	}
	return o.wrongReplica(id, owner)
}

// handBackWait bounds how long the session's home replica waits for the holder to hand it back: the
// holder sees the request at its next renewal, within a third of the TTL.
func (o *Owner) handBackWait() time.Duration { return 2 * o.leases.TTL() }

// lookupShared is Lookup with shared state: the session is served here if this replica holds its lease,
// and taken over if nobody does.
func (o *Owner) lookupShared(ctx context.Context, id, principal string) (*mcpcore.Session, error) {
	leases := o.leases
	sess, err := o.core.Session(id)
	if err == nil {
		if sess.Owner() != principal {
			return nil, mcpcore.ErrSessionNotFound
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
					o.core.Persist(id)
					return sess, nil
				}
			}
			o.core.Release(ctx, id, "another replica took the session over")
		}
	}
	return o.takeOver(ctx, id, principal)
}

// takeOver adopts a session no live replica holds. Adoptions of one session are serialized.
func (o *Owner) takeOver(ctx context.Context, id, principal string) (*mcpcore.Session, error) {
	leases := o.leases
	if leases.Down() {
		return nil, storeUnavailable()
	}
	unlock := o.adoptLock(id)
	defer unlock()
	if sess, err := o.core.Session(id); err == nil && leases.Holds(id) {
		if st, _ := sess.State(); st != mcpcore.StateClosed {
			if sess.Owner() != principal {
				return nil, mcpcore.ErrSessionNotFound
			}
			return sess, nil // adopted by a concurrent call
		}
	}
	if err := o.acquire(ctx, id); err != nil {
		return nil, err
	}
	sess, err := o.core.Adopt(ctx, id, principal)
	if err != nil {
		if errors.Is(err, mcpcore.ErrSessionNotFound) {
			leases.Forget(context.WithoutCancel(ctx), id)
			return nil, mcpcore.ErrSessionNotFound
		}
		_ = leases.Release(context.WithoutCancel(ctx), id)
		return nil, err
	}
	o.takeovers.Add(1)
	return sess, nil
}

// acquire takes the session's lease. A live lease of another replica is waited out: on the session's
// home replica (named in its id, back after a restart) the holder is asked to hand it back (it does
// within a third of the TTL); elsewhere the call came because the home replica is down, and the holder
// is most likely the dead owner, whose lease expires within the TTL. A lease held under this replica's
// own name by another process — an earlier incarnation killed and started again at once under the same
// name, as a StatefulSet does — is waited out too (docs/adr/0093): a dead process renews nothing, so its
// lease ends within the TTL. A holder that still holds the lease after the wait is alive: the call was
// misrouted (ErrWrongReplica), another live process uses this replica's name (ErrWrongReplica, naming no
// replica twice), or, on the home replica, the holder did not hand it over yet (ErrMoved, retry).
func (o *Owner) acquire(ctx context.Context, id string) error {
	leases := o.leases
	own := o.core.Replica()
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
			return ctx.Err()
		default:
			o.logger.Warn("taking a session over failed", "session", id, "err", err)
			return storeUnavailable()
		}
		if wait == nil {
			bound := leases.TTL() + leases.TTL()/2
			if held.Holder == own {
				o.logger.Info("the session's lease is held under this replica's name by another process (an earlier incarnation?): waiting for it to expire",
					"session", id, "bound", bound)
			} else if home == own {
				if err := leases.AskBack(ctx, id); err != nil {
					return storeUnavailable()
				}
				bound = o.handBackWait()
			}
			wait = time.After(bound)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wait:
			if held.Holder == own {
				return o.nameShared(id)
			}
			if home != own && held.Holder != home {
				return o.wrongReplica(id, held.Holder)
			}
			// On its home replica, or held by its home replica (back after a restart, which the proxy has not
			// seen yet): the session is moving, and a retry reaches the right replica.
			return stillHeld(id, held.Holder, own)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// nameShared is the error of a call for a session whose lease another live process holds under this
// replica's own name: two processes were given one replica name.
func (o *Owner) nameShared(id string) error {
	o.misrouted.Add(1)
	return nameShared(id, o.core.Replica())
}

// wrongReplica is the error of a call for a session that another replica, owner, serves: the session id
// names it (without shared state), or its live lease holds it (owner is never this replica's own name:
// see nameShared).
func (o *Owner) wrongReplica(id, owner string) error {
	o.misrouted.Add(1)
	return wrongReplica(id, owner, o.core.Replica())
}

// adoptLock serializes the takeovers of one session on this replica.
func (o *Owner) adoptLock(id string) (unlock func()) {
	o.adoptMu.Lock()
	l := o.adopting[id]
	if l == nil {
		l = &adoptGate{}
		o.adopting[id] = l
	}
	l.users++
	o.adoptMu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		o.adoptMu.Lock()
		if l.users--; l.users == 0 {
			delete(o.adopting, id)
		}
		o.adoptMu.Unlock()
	}
}

// adoptGate is one session's takeover lock and how many calls use it.
type adoptGate struct {
	mu    sync.Mutex
	users int // guarded by Owner.adoptMu
}

// Takeovers counts the sessions this replica took over since New.
func (o *Owner) Takeovers() uint64 { return o.takeovers.Load() }

// Misrouted counts the calls that named a session another replica serves since New.
func (o *Owner) Misrouted() uint64 { return o.misrouted.Load() }

// run renews this replica's leases until Close, and stops serving the sessions it lost or was asked to
// hand back. Start starts it; Close ends it and waits.
func (o *Owner) run(ctx context.Context) {
	defer o.running.Done()
	defer func() {
		if r := recover(); r != nil {
			o.logger.Error("panic", "where", "lease renewal", "panic", r, "stack", string(debug.Stack()))
		}
	}()
	leases := o.leases
	leases.Run(ctx, state.LeaseEvents{
		Lost: func(id string) {
			o.logger.Warn("lost the lease of a session: another replica serves it now", "session", id)
			o.core.Release(ctx, id, "another replica took the session over")
		},
		Wanted: func(id string) {
			home, _ := mcpcore.SessionReplica(id)
			if err := leases.Relinquish(ctx, id, func() {
				o.core.Release(ctx, id, "handed back to replica "+home)
			}); err != nil {
				o.logger.Warn("handing a session back failed; its lease will expire", "session", id, "err", err)
			}
		},
		Reseeded:  o.core.Persist,
		Reachable: o.opts.OnStoreReachable,
	})
}

// releaseLeases gives up every lease at the end of a drain, so that other replicas take the sessions over
// at once.
func (o *Owner) releaseLeases(ctx context.Context) {
	n, err := o.leases.ReleaseAll(ctx)
	if err != nil {
		o.logger.Warn("releasing the leases failed: other replicas take those sessions over when they expire", "released", n, "err", err)
		return
	}
	o.logger.Info("leases released: other replicas take the sessions over", "sessions", n)
}

// Moved returns the error that ends a host stream (Connect, WatchEvents) instead of ev, the final state
// event of a session this replica gave up to another (a hand-back, a lost lease): the session lives on
// there, and the host, told ErrMoved, connects again through the proxy and attaches it where it is
// served. nil for any other event.
func (o *Owner) Moved(ev mcpcore.Event) error {
	if o.leases == nil || ev.Kind != mcpcore.EventStateChanged || ev.State != mcpcore.StateClosed || !o.leases.Gone(ev.SessionID) {
		return nil
	}
	return movedAway(ev.SessionID, o.core.Replica())
}

// HiddenByMove reports whether ev, an event of a session this replica gave up to another, is one the
// host must not see: a pending request ended SESSION_CLOSED by the local close of the session, which
// lives on — the new owner raises the request again under its id.
func (o *Owner) HiddenByMove(ev mcpcore.Event) bool {
	return o.leases != nil && ev.Kind == mcpcore.EventRequestEnded && ev.Ended != nil &&
		ev.Ended.Outcome == mcpcore.OutcomeSessionClosed && o.leases.Gone(ev.SessionID)
}
