package mcpcore

// A session's usage, for the embedding service's idle reaper (docs/adr/0115-session-usage-on-the-session.md):
// its uses in flight (Use), the hosts attached to it (AttachHost), when it was last used, and whether the
// reaper has claimed it. The facts live on the session, so no map keyed by its id has to agree with the
// registry; the service keeps the clock and the policy (the timeout, the close reason, its audit) and asks
// the core which sessions are idle (Core.ClaimIdle).

import (
	"fmt"
	"sync"
	"time"
)

// sessionUsage is what a session knows of its use. Session embeds it as usage.
type sessionUsage struct {
	mu       sync.Mutex // guards the fields below and every change of Session.hostsAttached
	busy     int        // uses in flight (Use)
	lastUsed time.Time  // when the session last had no use in flight and no host attached, or was opened
	claimed  bool       // ClaimIdle chose it: its close is under way, new uses are refused
}

// markOpened records the session as used now: it has just become open (Open, a restore). Its idle time is
// counted from here, not from its creation (a handshake may be long, a restored session old).
func (s *Session) markOpened(now time.Time) {
	s.usage.mu.Lock()
	s.usage.lastUsed = now
	s.usage.mu.Unlock()
}

// idleLocked tells whether nothing uses the session now. The caller holds s.usage.mu.
func (s *Session) idleLocked() bool {
	return s.usage.busy == 0 && s.hostsAttached.Load() == 0
}

// releasedLocked records the end of a use or of a host's attachment at now: the session's idle time starts
// when the last one ends. The caller holds s.usage.mu.
func (s *Session) releasedLocked(now time.Time) {
	if s.idleLocked() {
		s.usage.lastUsed = now
	}
}

// errClaimedIdle is what Use and AttachHost fail with on a session the idle reaper claimed (ClaimIdle): to a
// new user it is gone already, as it will be once its close ends.
var errClaimedIdle = fmt.Errorf("%w: it is being closed as idle", ErrSessionNotFound)

// Use marks the session in use until the returned release, which is idempotent: the idle reaper
// (ClaimIdle) leaves a session in use alone, and its idle time starts when the last use (or attached host)
// ends. It fails, wrapping ErrSessionNotFound, once the reaper has claimed the session.
func (s *Session) Use() (release func(), err error) {
	s.usage.mu.Lock()
	defer s.usage.mu.Unlock()
	if s.usage.claimed {
		return nil, errClaimedIdle
	}
	s.usage.busy++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.usage.mu.Lock()
			s.usage.busy--
			s.releasedLocked(time.Now())
			s.usage.mu.Unlock()
		})
	}, nil
}

// AttachHost records that a host that may answer the session's server requests is attached — a Connect
// stream attached to the session, a WatchEvents watcher of it — until the returned release, which is
// idempotent. The session owns the count: a roots request the host must answer is answered at once from the
// server's configured roots when no host is attached and the call that raised it does not stream its
// requests (Dispatcher.WatchCall), instead of waiting for PendingPolicy.RootsTimeout. An attached host is a
// use (Use): the idle reaper leaves the session alone until it leaves. It fails, wrapping
// ErrSessionNotFound, once the reaper has claimed the session.
func (s *Session) AttachHost() (release func(), err error) {
	s.usage.mu.Lock()
	defer s.usage.mu.Unlock()
	if s.usage.claimed {
		return nil, errClaimedIdle
	}
	s.hostsAttached.Add(1)
	var once sync.Once
	return func() {
		once.Do(func() {
			s.usage.mu.Lock()
			s.hostsAttached.Add(-1)
			s.releasedLocked(time.Now())
			s.usage.mu.Unlock()
		})
	}, nil
}

// claimIfIdle claims the session for the idle reaper when nothing has used it for timeout at now, and tells
// whether it did. A claimed session is not claimed again.
func (s *Session) claimIfIdle(now time.Time, timeout time.Duration) bool {
	s.usage.mu.Lock()
	defer s.usage.mu.Unlock()
	if s.usage.claimed || !s.idleLocked() || now.Sub(s.usage.lastUsed) < timeout {
		return false
	}
	s.usage.claimed = true
	return true
}

// ClaimIdle returns the open sessions nothing has used (no use in flight, no host attached) for timeout at
// now, and claims them: from here Use and AttachHost refuse them, and the caller closes them (the service's
// idle reaper, on its own clock). Sessions that are still opening are not considered.
func (c *Core) ClaimIdle(now time.Time, timeout time.Duration) []*Session {
	c.mu.Lock()
	open := c.sessionsLocked(true)
	c.mu.Unlock()
	var idle []*Session
	for _, s := range open {
		if s.claimIfIdle(now, timeout) {
			idle = append(idle, s)
		}
	}
	return idle
}
