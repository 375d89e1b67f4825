package mcpcore

import (
	"errors"
	"time"
)

// ServerHealth is what the core knows of one configured server's reachability, from its sessions and from
// the last attempt to open one. It is a snapshot; Core.ServerHealth computes it on each call.
type ServerHealth struct {
	// Name is the configured server's name.
	Name string
	// Ready, Connecting and Reconnecting count the server's open sessions by state.
	Ready, Connecting, Reconnecting int
	// LastOpen is when a session to the server was last opened or failed to open; zero if never.
	LastOpen time.Time
	// LastOpenErr is why the last open failed; nil if it succeeded (or there was none).
	LastOpenErr error
}

// Status sums a ServerHealth up:
//   - HealthServing: a session to the server is ready, or, with none open, the last open succeeded;
//   - HealthNotServing: sessions exist but none is ready (all connecting or reconnecting), or, with none
//     open, the last open failed because the server could not be reached (ErrUnavailable);
//   - HealthUnknown: no session is open and none was tried yet, or the last open failed for a reason that
//     says nothing of the server (a limit, a cancelled caller).
func (h ServerHealth) Status() HealthStatus {
	switch {
	case h.Ready > 0:
		return HealthServing
	case h.Connecting+h.Reconnecting > 0:
		return HealthNotServing
	case h.LastOpen.IsZero():
		return HealthUnknown
	case h.LastOpenErr == nil:
		return HealthServing
	case errors.Is(h.LastOpenErr, ErrUnavailable):
		return HealthNotServing
	default:
		return HealthUnknown
	}
}

// HealthStatus is a server's summed-up health (ServerHealth.Status).
type HealthStatus int

const (
	HealthUnknown HealthStatus = iota
	HealthServing
	HealthNotServing
)

func (s HealthStatus) String() string {
	switch s {
	case HealthServing:
		return "serving"
	case HealthNotServing:
		return "not_serving"
	default:
		return "unknown"
	}
}

// openOutcome is the last Open of one server.
type openOutcome struct {
	at  time.Time
	err error
}

// noteOpen records the outcome of opening a session to server (configured or ad hoc: only configured
// servers are reported by ServerHealth).
func (c *Core) noteOpen(server string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.table()[server]; !ok {
		return
	}
	if c.opened == nil {
		c.opened = map[string]openOutcome{}
	}
	c.opened[server] = openOutcome{at: time.Now(), err: err}
}

// ServerHealth returns the health of every configured server, sorted by name. Safe for concurrent use.
func (c *Core) ServerHealth() []ServerHealth {
	servers := c.Servers()
	c.mu.Lock()
	sessions := c.sessionsLocked(true)
	out := make([]ServerHealth, len(servers))
	index := make(map[string]int, len(servers))
	for i, s := range servers {
		out[i] = ServerHealth{Name: s.Name, LastOpen: c.opened[s.Name].at, LastOpenErr: c.opened[s.Name].err}
		index[s.Name] = i
	}
	c.mu.Unlock()
	for _, s := range sessions { // State takes the session's lock: not under c.mu
		i, ok := index[s.server.Name]
		if !ok {
			continue
		}
		switch st, _ := s.State(); st {
		case StateReady:
			out[i].Ready++
		case StateConnecting:
			out[i].Connecting++
		case StateReconnecting:
			out[i].Reconnecting++
		}
	}
	return out
}

// Accepting reports whether the core opens new sessions: false once Drain or Close was called.
func (c *Core) Accepting() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.closed
}

// Replica is Options.Replica: the name of this bridge among the replicas of a shared service.
func (c *Core) Replica() string { return c.opts.Replica }
