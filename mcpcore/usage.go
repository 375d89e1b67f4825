package mcpcore

// A session's usage, for the embedding service's idle reaper (docs/adr/0115-session-usage-on-the-session.md):
// its uses in flight (Use), the hosts attached to it (AttachHost), when it was last used, and whether the
// reaper has claimed it. The facts live on the session, so no map keyed by its id has to agree with the
// registry; the service keeps the clock and the policy (the timeout, the close reason, its audit) and asks
// the core which sessions are idle (Core.ClaimIdle).

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// sessionUsage is what a session knows of its use. Session embeds it, so Use, AttachHost and HostsAttached
// are the session's methods; it needs nothing else of the session.
type sessionUsage struct {
	mu       sync.Mutex // guards the fields below and every change of hostsAttached
	busy     int        // uses in flight (Use)
	lastUsed time.Time  // when the session last had no use in flight and no host attached, or was opened
	claimed  bool       // ClaimIdle chose it: its close is under way, new uses are refused
	// hostsAttached counts the hosts attached to the session (AttachHost); it changes under mu and is read
	// without it.
	hostsAttached atomic.Int32
}

// markOpened records the session as used now: it has just become open (Open, a restore). Its idle time is
// counted from here, not from its creation (a handshake may be long, a restored session old).
func (u *sessionUsage) markOpened(now time.Time) {
	u.mu.Lock()
	u.lastUsed = now
	u.mu.Unlock()
}

// idleLocked tells whether nothing uses the session now. The caller holds u.mu.
func (u *sessionUsage) idleLocked() bool {
	return u.busy == 0 && u.hostsAttached.Load() == 0
}

// releasedLocked records the end of a use or of a host's attachment at now: the session's idle time starts
// when the last one ends. The caller holds u.mu.
func (u *sessionUsage) releasedLocked(now time.Time) {
	if u.idleLocked() {
		u.lastUsed = now
	}
}

// errClaimedIdle is what Use and AttachHost fail with on a session the idle reaper claimed (ClaimIdle): to a
// new user it is gone already, as it will be once its close ends.
var errClaimedIdle = fmt.Errorf("%w: it is being closed as idle", ErrSessionNotFound)

// Use marks the session in use until the returned release, which is idempotent: the idle reaper
// (ClaimIdle) leaves a session in use alone, and its idle time starts when the last use (or attached host)
// ends. It fails, wrapping ErrSessionNotFound, once the reaper has claimed the session.
func (u *sessionUsage) Use() (release func(), err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.claimed {
		return nil, errClaimedIdle
	}
	u.busy++
	var once sync.Once
	return func() {
		once.Do(func() {
			u.mu.Lock()
			u.busy--
			u.releasedLocked(time.Now())
			u.mu.Unlock()
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
func (u *sessionUsage) AttachHost() (release func(), err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.claimed {
		return nil, errClaimedIdle
	}
	u.hostsAttached.Add(1)
	var once sync.Once
	return func() {
		once.Do(func() {
			u.mu.Lock()
			u.hostsAttached.Add(-1)
			u.releasedLocked(time.Now())
			u.mu.Unlock()
		})
	}, nil
}

// claimIfIdle claims the session for the idle reaper when nothing has used it for timeout at now, and tells
// whether it did. A claimed session is not claimed again.
func (u *sessionUsage) claimIfIdle(now time.Time, timeout time.Duration) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.claimed || !u.idleLocked() || now.Sub(u.lastUsed) < timeout {
		return false
	}
	u.claimed = true
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

// HostsAttached returns how many hosts are attached to the session now (AttachHost). The session is the one
// owner of that count: the idle reaper (Core.ClaimIdle) and the host-streams gauge (Core.HostsAttached) ask it.
func (u *sessionUsage) HostsAttached() int { return int(u.hostsAttached.Load()) }
