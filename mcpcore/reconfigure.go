package mcpcore

import (
	"container/list"
	"context"
	"maps"
	"reflect"
	"slices"
	"time"
)

// serverRemovedReason is the state reason of the sessions of a removed server.
const serverRemovedReason = "server removed from the configuration"

// retirePoll is how often a retiring session looks whether its calls in flight have ended.
const retirePoll = 20 * time.Millisecond

// callsInFlight counts the session's host calls in flight.
func (s *Session) callsInFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.calls)
}

// DefaultRetireTimeout bounds how long a removed server's sessions wait for their pending requests.
const DefaultRetireTimeout = 30 * time.Second

// table is the configured servers in force: every Open, policy check and listing reads it, once per use.
func (c *Core) table() map[string]ServerConfig { return *c.servers.Load() }

// tunables are the limits a Reconfiguration replaces that are read once per use.
type tunables struct {
	openTimeout       time.Duration
	descriptorReserve int
	approvalHistory   ApprovalHistoryLimits
}

// tuned returns the tunables in force.
func (c *Core) tuned() *tunables { return c.tuning.Load() }

// setPolicy replaces the store's bounds: over the new budget, the oldest outcomes are evicted; with a
// shorter TTL, nothing is kept past now plus the new TTL (the order of expiry stays the order of the lists).
func (k *keptResults) setPolicy(p KeptResultsPolicy) {
	p = p.withDefaults()
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return
	}
	k.policy = p
	for k.bytes > p.MaxBytes && k.live.Len() > 0 {
		old := k.live.Front().Value.(*keptEntry)
		k.removeLocked(old.key)
		k.markLocked(old.key, old.expires, old.digest)
		k.evicted.Add(1)
	}
	latest := k.now().Add(p.TTL)
	for _, l := range []*list.List{&k.live, &k.marks} {
		for e := l.Front(); e != nil; e = e.Next() {
			if ke := e.Value.(*keptEntry); ke.expires.After(latest) {
				ke.expires = latest
			}
		}
	}
	if k.timer != nil && k.timer.Stop() {
		k.timer = nil // stopped before it ran: armed again for the (maybe earlier) first expiry
	}
	k.armLocked()
}

// Reconfiguration is a new configuration of the core's servers and session limits (docs/adr/0095).
type Reconfiguration struct {
	// Servers replaces the configured servers as a whole.
	Servers map[string]ServerConfig
	// MaxSessions, MaxSessionsPerOwner and MaxPendingPerSession replace the limits of the same names
	// (0: the default).
	MaxSessions, MaxSessionsPerOwner, MaxPendingPerSession int
	// OpenTimeout and DescriptorReserve replace Limits' (0: the default), from the next session opened.
	OpenTimeout       time.Duration
	DescriptorReserve int
	// ApprovalHistory replaces Options.ApprovalHistory: from the next approval that ends (a smaller bound
	// drops the oldest records then), and at once for what ListApprovalHistory shows (its age).
	ApprovalHistory ApprovalHistoryLimits
	// KeptResults replaces Options.KeptResults at once: a smaller budget evicts the oldest outcomes, a
	// shorter TTL brings the expiry of what is kept forward. The other limits (MaxMessageBytes, the event
	// buffer) are fixed for the core's life.
	KeptResults KeptResultsPolicy
	// MaxStdioProcesses replaces Limits.MaxStdioProcesses (0: the default) from the next process started: a
	// lower limit refuses new stdio sessions until enough running processes have ended, and ends none.
	MaxStdioProcesses int
	// RetireTimeout bounds the wait of a removed server's sessions for their pending requests (0: DefaultRetireTimeout).
	RetireTimeout time.Duration
}

// ReconfigureReport says what Reconfigure changed.
type ReconfigureReport struct {
	Added, Removed, Changed []string // server names, sorted
	// Retiring counts the sessions of removed servers that end once their pending requests are answered.
	Retiring int
}

// Reconfigure swaps the configured servers and the session limits in one step. From the next call of every
// session, the policy of its server in the new configuration applies. Sessions of an unchanged server are
// untouched; those of a changed server keep their connection (opened on the old definition) until they end,
// and new sessions get the new definition. The sessions of a removed server end with ErrServerRemoved once
// their pending requests are answered or timed out (at most RetireTimeout); Close waits for them.
func (c *Core) Reconfigure(r Reconfiguration) ReconfigureReport {
	servers := maps.Clone(r.Servers)
	if servers == nil {
		servers = map[string]ServerConfig{}
	}
	old := c.table()
	var rep ReconfigureReport
	for name, cfg := range servers {
		prev, ok := old[name]
		switch {
		case !ok:
			rep.Added = append(rep.Added, name)
		case !sameDefinition(prev, cfg):
			rep.Changed = append(rep.Changed, name)
		}
	}
	for name := range old {
		if _, ok := servers[name]; !ok {
			rep.Removed = append(rep.Removed, name)
		}
	}
	slices.Sort(rep.Added)
	slices.Sort(rep.Removed)
	slices.Sort(rep.Changed)

	c.mu.Lock()
	c.servers.Store(&servers)
	c.maxSessions = cmp0(r.MaxSessions, DefaultMaxSessions)
	c.maxPerOwner = cmp0(r.MaxSessionsPerOwner, DefaultMaxSessionsPerOwner)
	var retire []*Session
	closed := c.closed
	for _, s := range c.sessionsLocked(true) {
		if !s.adHoc && slices.Contains(rep.Removed, s.server.Name) {
			retire = append(retire, s)
		}
	}
	if !closed { // counted under c.mu: Close sets closed under it before it waits for them
		c.retiring.Add(len(retire))
	}
	c.mu.Unlock()
	c.dispatcher.setMaxPerSession(cmp0(r.MaxPendingPerSession, DefaultMaxPendingPerSession))
	c.tuning.Store(&tunables{openTimeout: cmp0(r.OpenTimeout, DefaultOpenTimeout), descriptorReserve: r.DescriptorReserve, approvalHistory: r.ApprovalHistory})
	c.kept.setPolicy(r.KeptResults)
	c.procs.setLimit(cmp0(r.MaxStdioProcesses, DefaultMaxStdioProcesses))

	// Lists kept for a changed or removed server came from its old definition.
	for _, name := range append(slices.Clone(rep.Changed), rep.Removed...) {
		for _, m := range []string{"notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed"} {
			c.lists.listChanged(name, m)
		}
	}
	if closed {
		return rep
	}
	bound := r.RetireTimeout
	if bound <= 0 {
		bound = DefaultRetireTimeout
	}
	rep.Retiring = len(retire)
	for _, s := range retire {
		go func() { // owned by c.retiring: Close waits for it
			defer c.retiring.Done()
			c.retire(s, bound)
		}()
	}
	return rep
}

// retire ends a session of a removed server: it waits for the session's pending requests to be answered
// (by a host, or by their policy at their timeout) and its calls in flight to end, at most bound, then closes the session with
// ErrServerRemoved. Close ends the wait early (the session is then closed by Close itself).
func (c *Core) retire(s *Session, bound time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	go func() { // ends when ctx ends: at the bound, on return, or when Close stops the retiring
		select {
		case <-c.retireStop:
			cancel()
		case <-ctx.Done():
		}
	}()
	// The calls in flight end on their own once the requests they wait on are answered; a call ends no
	// signal of its own, so they are looked at again at a short interval.
	tick := time.NewTicker(retirePoll)
	defer tick.Stop()
wait:
	for {
		for _, req := range c.dispatcher.List("", s.id) {
			if _, err := c.dispatcher.Wait(ctx, req.ID); err != nil && ctx.Err() != nil {
				break wait
			}
		}
		if s.callsInFlight() == 0 && len(c.dispatcher.List("", s.id)) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			break wait
		case <-tick.C:
		}
	}
	select {
	case <-c.retireStop:
		return // Close closes the session
	default:
	}
	s.logger.Info("closing the session: its server was removed from the configuration")
	cctx, ccancel := context.WithTimeout(context.Background(), bound)
	defer ccancel()
	_ = s.closeWith(cctx, serverRemovedReason, ErrServerRemoved)
}

// stopRetiring ends the waits of retiring sessions and waits for their goroutines (Close).
func (c *Core) stopRetiring() {
	c.retireOnce.Do(func() { close(c.retireStop) })
	c.retiring.Wait()
}

// sameDefinition reports whether two definitions of a server reach it the same way. The policy is not
// part of it: a new policy applies to live sessions without a new connection.
func sameDefinition(a, b ServerConfig) bool {
	a.Policy, b.Policy = nil, nil
	a.OAuth, b.OAuth = nil, nil // rebuilt at every load; its configuration is compared by the caller's file
	return reflect.DeepEqual(a, b)
}

func cmp0[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// setMaxPerSession changes Limits.MaxPendingPerSession for the requests raised from now on.
func (d *Dispatcher) setMaxPerSession(n int) {
	d.mu.Lock()
	d.maxPerSession = n
	d.mu.Unlock()
}
