package server

// What the service keeps per session (sessionTable): its usage — calls in flight, when it was last used —
// for the idle reaper, which closes the sessions nobody uses.

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// sessionTable is what the service keeps per session, by id, and the idle reaper that reads it. Service
// embeds it.
type sessionTable struct {
	s *Service

	mu      sync.Mutex          // guards tracked and closing
	tracked map[string]*tracked // sessions by id: usage and what the service remembers of them
	closing bool                // EndStreams ran: no new sessions
	sweep   uint64              // the idle reaper's sweeps so far (reapIdle)
}

// tracked is what the service keeps per session.
type tracked struct {
	busy     int       // calls in flight (attached hosts are the session's to count: Session.HostsAttached)
	lastUsed time.Time // when the session last had no call and no host (or was created)
	closing  bool      // the idle reaper is closing it
	sweep    uint64    // the reaper's last sweep that found the session open, or the one under way when the record was made
}

// refuseNew makes opening refuse new sessions (EndStreams).
func (tb *sessionTable) refuseNew() {
	tb.mu.Lock()
	tb.closing = true
	tb.mu.Unlock()
}

// refusingNew tells whether refuseNew ran.
func (tb *sessionTable) refusingNew() bool {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.closing
}

// opened records a session the caller just created as used now.
func (tb *sessionTable) opened(id string) {
	tb.mu.Lock()
	tb.trackLocked(id).lastUsed = time.Now()
	tb.mu.Unlock()
}

// lookup returns the caller's session id, or NOT_FOUND when it does not exist or belongs to another
// principal (the two are indistinguishable).
func (tb *sessionTable) lookup(ctx context.Context, id string) (*mcpcore.Session, error) {
	if id == "" {
		return nil, invalidArgument(required("session_id"))
	}
	sess, err := tb.s.owner.Lookup(ctx, id, Principal(ctx))
	if err != nil {
		return nil, lookupStatus(id, err)
	}
	return sess, nil
}

// use is lookup that also marks the session busy until release is called, so that the idle reaper leaves
// it alone.
func (tb *sessionTable) use(ctx context.Context, id string) (sess *mcpcore.Session, release func(), err error) {
	sess, t, err := tb.lookupLocking(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	t.busy++
	tb.mu.Unlock()
	var once sync.Once
	return sess, func() {
		once.Do(func() {
			tb.mu.Lock()
			if t.busy--; t.busy == 0 && sess.HostsAttached() == 0 {
				t.lastUsed = time.Now()
			}
			tb.mu.Unlock()
		})
	}, nil
}

// attachHost looks the session up for a host stream (a Connect attachment, a WatchEvents watcher) and
// tells the core that a host that may answer its requests is attached until the returned release, which is
// idempotent. The session owns that count (mcpcore.Session.AttachHost): the idle reaper leaves a session a
// host is attached to (reapIdle), and the host-streams gauge (HostStreams) sums the sessions' counts. A
// session the reaper is closing is not found.
func (tb *sessionTable) attachHost(ctx context.Context, id string) (sess *mcpcore.Session, release func(), err error) {
	sess, t, err := tb.lookupLocking(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	detach := sess.AttachHost() // under tb.mu: the reaper decides on a session with its count settled
	tb.mu.Unlock()
	var once sync.Once
	return sess, func() {
		once.Do(func() {
			tb.mu.Lock()
			detach()
			if t.busy == 0 && sess.HostsAttached() == 0 {
				t.lastUsed = time.Now()
			}
			tb.mu.Unlock()
		})
	}, nil
}

// lookupLocking is lookup that also returns the session's record, unless the idle reaper is closing the
// session (then it is not found). On success it returns with tb.mu held: the caller marks the session used
// (use, attachHost) and unlocks.
func (tb *sessionTable) lookupLocking(ctx context.Context, id string) (*mcpcore.Session, *tracked, error) {
	sess, err := tb.lookup(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	tb.mu.Lock()
	t := tb.trackLocked(id)
	if t.closing {
		tb.mu.Unlock()
		return nil, nil, sessionNotFound(id)
	}
	return sess, t, nil
}

// trackLocked returns the record of session id, creating it. The caller holds tb.mu.
func (tb *sessionTable) trackLocked(id string) *tracked {
	t := tb.tracked[id]
	if t == nil {
		t = &tracked{lastUsed: time.Now(), sweep: tb.sweep}
		tb.tracked[id] = t
	}
	return t
}

// forget drops the record of session id (deleted or closed).
func (tb *sessionTable) forget(id string) {
	tb.mu.Lock()
	delete(tb.tracked, id)
	tb.mu.Unlock()
}

// sweepIdle brings the table up to date with the core's open sessions — records of sessions no longer open
// are dropped — and marks closing, and returns, the sessions idle at now for longer than Options.IdleTimeout.
func (tb *sessionTable) sweepIdle(now time.Time) []*mcpcore.Session {
	tb.mu.Lock()
	tb.sweep++ // records made from here on belong to this sweep: their sessions are open
	sweep := tb.sweep
	tb.mu.Unlock()
	var idle []*mcpcore.Session
	open := tb.s.core.Sessions("") // the core keeps the sessions by id; the table asks it, it keeps no copy
	tb.mu.Lock()
	defer tb.mu.Unlock()
	for _, sess := range open {
		t := tb.trackLocked(sess.ID()) // sessions opened by others are tracked from the first time they are seen
		t.sweep = sweep
		if t.busy == 0 && sess.HostsAttached() == 0 && !t.closing && now.Sub(t.lastUsed) >= tb.s.opts.IdleTimeout {
			t.closing = true
			idle = append(idle, sess)
		}
	}
	for id, t := range tb.tracked {
		if t.sweep != sweep { // made before this sweep and no longer open: closed and forgotten
			delete(tb.tracked, id)
		}
	}
	return idle
}

// reapIdle closes sessions idle for longer than Options.IdleTimeout. It checks at a quarter of the timeout
// (at least every 10ms, at most every minute) and exits when Close closes s.done.
func (tb *sessionTable) reapIdle() {
	s := tb.s
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
		idle := tb.sweepIdle(time.Now())
		for _, sess := range idle {
			s.logger.Info("closing idle session", "session", sess.ID(), "idle_timeout", s.opts.IdleTimeout)
			ctx, cancel := context.WithTimeout(context.Background(), idleCloseTimeout)
			if err := sess.CloseWithReason(ctx, idleReason); err != nil {
				s.logger.Warn("closing idle session", "session", sess.ID(), "error", err)
			}
			cancel()
			tb.forget(sess.ID())
			s.audit(WithPrincipal(context.Background(), sess.Owner()), auditSessionDeleted, nil, slog.String("session", sess.ID()), slog.String("server", sess.Server().Name), slog.String("state_reason", idleReason))
		}
	}
}
