package mcpcore

// The core's one registry of sessions (docs/adr/0109-one-registry-of-sessions.md): every session the core
// serves is in Core.sessions, by id, with where it is in its life there. Open counts a session against the
// limits from the moment it is registered (phaseOpening) and lists it once it is Ready (phaseOpen); the end of
// its Close unregisters it. The counts the limits need (sessions, sessions per owner) are read from the
// registry, not kept beside it, and a session's own facts — its pending requests' count, its call-id records —
// live on the Session, so that nothing keyed by a session's id outlives its entry here.

import (
	"fmt"
	"time"
)

// sessionPhase is where a registered session is in its life in the registry. A closing session stays in its
// phase: it is told from an open one by its own state (Session.State, closedError), and the end of its Close
// unregisters it (remove).
type sessionPhase uint8

const (
	// phaseOpening: Open (or a restore) registered it and it is not Ready yet. It counts against the limits and
	// its events are routed (sessionLog), but Session, Sessions and Close do not see it: Open ends it itself.
	phaseOpening sessionPhase = iota
	// phaseOpen: Ready and handed to its host (or restored); Session and Sessions find it, Close closes it.
	phaseOpen
)

// registered is a session in the registry and its phase.
type registered struct {
	s     *Session
	phase sessionPhase
}

// registerLocked counts s, being opened, against the limits and registers it as opening. The caller holds
// c.mu.
func (c *Core) registerLocked(s *Session) error {
	if c.closed {
		return ErrSessionClosed
	}
	if len(c.sessions) >= c.maxSessions {
		return fmt.Errorf("%w: the bridge holds %d sessions, its limit (limits.maxSessions)", ErrTooManySessions, c.maxSessions)
	}
	if c.ownedLocked(s.owner) >= c.maxPerOwner {
		return fmt.Errorf("%w: the principal holds %d sessions, its limit (limits.maxSessionsPerPrincipal)", ErrTooManySessions, c.maxPerOwner)
	}
	c.sessions[s.id] = registered{s: s, phase: phaseOpening}
	return nil
}

// openedLocked registers s as open (Open made it Ready, or a restore) and starts its idle time
// (Session.markOpened). The caller holds c.mu.
func (c *Core) openedLocked(s *Session) {
	c.sessions[s.id] = registered{s: s, phase: phaseOpen}
	s.markOpened(time.Now())
}

// register is registerLocked taking c.mu.
func (c *Core) register(s *Session) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.registerLocked(s)
}

// ownedLocked is how many registered sessions (opening or open) owner holds. The caller holds c.mu.
func (c *Core) ownedLocked(owner string) int {
	n := 0
	for _, r := range c.sessions {
		if r.s.owner == owner {
			n++
		}
	}
	return n
}

// unregister drops s from the registry if it is still there (an Open that failed). It is idempotent and
// leaves another session under the same id alone.
func (c *Core) unregister(s *Session) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sessions[s.id].s == s {
		delete(c.sessions, s.id)
	}
}

// openLocked is the open session with the given id, or nil. The caller holds c.mu.
func (c *Core) openLocked(id string) *Session {
	if r, ok := c.sessions[id]; ok && r.phase == phaseOpen {
		return r.s
	}
	return nil
}

// openSession is openLocked taking c.mu.
func (c *Core) openSession(id string) *Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.openLocked(id)
}

// liveSession is the registered session (opening or open) with the given id, or nil: where an event of the
// session is routed.
func (c *Core) liveSession(id string) *Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessions[id].s
}

// sessionsLocked returns the registered sessions, only the open ones when openOnly. The caller holds c.mu.
func (c *Core) sessionsLocked(openOnly bool) []*Session {
	out := make([]*Session, 0, len(c.sessions))
	for _, r := range c.sessions {
		if !openOnly || r.phase == phaseOpen {
			out = append(out, r.s)
		}
	}
	return out
}

// remove unregisters a session whose Close has finished; an open one is kept among the closed sessions for
// Options.ClosedRetention.
func (c *Core) remove(s *Session) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r := c.sessions[s.id]; r.s == s {
		delete(c.sessions, s.id)
		if r.phase == phaseOpen {
			c.closedS.add(s.id, s, time.Now())
		}
	}
	c.lists.dropSession(s.id)
}
