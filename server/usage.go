package server

// How the service uses sessions (sessionUse): it finds the caller's session, marks it in use while a call or
// a host stream has it, and closes the sessions nobody uses (the idle reaper). The usage itself — uses in
// flight, attached hosts, when the session was last used, whether the reaper claimed it — lives on the
// session (mcpcore.Session.Use, AttachHost, Core.ClaimIdle; docs/adr/0115-session-usage-on-the-session.md):
// the service keeps nothing by session id.

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// sessionUse finds sessions for the RPCs, marks them used, and runs the idle reaper. Service embeds it.
type sessionUse struct {
	s *Service

	closing atomic.Bool // EndStreams ran: no new sessions
}

// refuseNew makes opening refuse new sessions (EndStreams).
func (su *sessionUse) refuseNew() { su.closing.Store(true) }

// refusingNew tells whether refuseNew ran.
func (su *sessionUse) refusingNew() bool { return su.closing.Load() }

// lookup returns the caller's session id, or NOT_FOUND when it does not exist or belongs to another
// principal (the two are indistinguishable).
func (su *sessionUse) lookup(ctx context.Context, id string) (*mcpcore.Session, error) {
	if id == "" {
		return nil, invalidArgument(required("session_id"))
	}
	sess, err := su.s.owner.Lookup(ctx, id, Principal(ctx))
	if err != nil {
		return nil, lookupStatus(id, err)
	}
	return sess, nil
}

// use is lookup that also marks the session in use until release (idempotent) is called, so that the idle
// reaper leaves it alone (mcpcore.Session.Use). A session the reaper is closing is not found.
func (su *sessionUse) use(ctx context.Context, id string) (sess *mcpcore.Session, release func(), err error) {
	return su.lookupMarked(ctx, id, (*mcpcore.Session).Use)
}

// attachHost looks the session up for a host stream (a Connect attachment, a WatchEvents watcher) and
// tells the core that a host that may answer its requests is attached until the returned release, which is
// idempotent. The session owns that count (mcpcore.Session.AttachHost): the idle reaper leaves a session a
// host is attached to, and the host-streams gauge (HostStreams) sums the sessions' counts. A session the
// reaper is closing is not found.
func (su *sessionUse) attachHost(ctx context.Context, id string) (sess *mcpcore.Session, release func(), err error) {
	return su.lookupMarked(ctx, id, (*mcpcore.Session).AttachHost)
}

// lookupMarked is lookup followed by mark, the session's Use or AttachHost; a session whose mark is refused
// (the idle reaper claimed it) is not found.
func (su *sessionUse) lookupMarked(ctx context.Context, id string, mark func(*mcpcore.Session) (func(), error)) (*mcpcore.Session, func(), error) {
	sess, err := su.lookup(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	release, err := mark(sess)
	if err != nil {
		return nil, nil, lookupStatus(id, err)
	}
	return sess, release, nil
}

// reapIdle closes sessions idle for longer than Options.IdleTimeout. It checks at a quarter of the timeout
// (at least every 10ms, at most every minute) and exits when Close closes s.done.
func (su *sessionUse) reapIdle() {
	s := su.s
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
		for _, sess := range s.core.ClaimIdle(time.Now(), s.opts.IdleTimeout) {
			s.logger.Info("closing idle session", "session", sess.ID(), "idle_timeout", s.opts.IdleTimeout)
			ctx, cancel := context.WithTimeout(context.Background(), idleCloseTimeout)
			if err := sess.CloseWithReason(ctx, idleReason); err != nil {
				s.logger.Warn("closing idle session", "session", sess.ID(), "error", err)
			}
			cancel()
			s.audit(WithPrincipal(context.Background(), sess.Owner()), auditSessionDeleted, nil, slog.String("session", sess.ID()), slog.String("server", sess.Server().Name), slog.String("state_reason", idleReason))
		}
	}
}

// useFor is use for an RPC about one item of the session (a call, a task, a resource, a prompt): after the
// session, the item's id or name (field) is required.
func (su *sessionUse) useFor(ctx context.Context, sessionID, field, id string) (*mcpcore.Session, func(), error) {
	sess, release, err := su.use(ctx, sessionID)
	if err != nil {
		return nil, nil, err
	}
	if id == "" {
		release()
		return nil, nil, invalidArgument(required(field))
	}
	return sess, release, nil
}
