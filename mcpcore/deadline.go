package mcpcore

import (
	"sync"
	"time"
)

// requestDeadline enforces ServerConfig.RequestTimeout on one host call: a timer of idle length that
// every sign of life from the server (progress, a new request sent for the call) starts anew, within a
// budget of total. It is paused while the call waits for a host to answer one of the server's requests —
// the server is then waiting for the bridge, not the other way round — and the paused time is not
// charged to the budget. When it fires it calls expire once (which cancels the call's context).
//
// Its methods are safe for concurrent use; stop releases the timer. It owns no goroutine: the timer's
// callback runs on a goroutine of the runtime that ends when expire returns.
type requestDeadline struct {
	idle   time.Duration
	expire func(total bool)
	// held reports, when the timer fires, whether the server may be waiting for a host on the call's
	// behalf without the bridge knowing for certain (a pushed request of no known call is pending): the
	// deadline then starts anew instead of expiring, and the stretch is not charged.
	held func() bool

	mu      sync.Mutex // guards the fields below
	timer   *time.Timer
	budget  time.Duration // what is left of the total bound
	since   time.Time     // when the running stretch began (zero while paused)
	paused  int
	stopped bool
}

func newRequestDeadline(idle, total time.Duration, held func() bool, expire func(total bool)) *requestDeadline {
	if held == nil {
		held = func() bool { return false }
	}
	d := &requestDeadline{idle: idle, budget: total, expire: expire, held: held, since: time.Now()}
	d.timer = time.AfterFunc(min(idle, total), d.fire)
	return d
}

// fire runs on the timer's goroutine.
func (d *requestDeadline) fire() {
	d.mu.Lock()
	if d.stopped || d.paused > 0 {
		d.mu.Unlock()
		return
	}
	if time.Since(d.since) < min(d.idle, d.budget) {
		// A stale firing: the clock was restarted (alive, resume) after this timer had already fired and
		// before its callback took mu. A timer never fires early, so a real expiry always passes this.
		d.mu.Unlock()
		return
	}
	if d.held() {
		d.since = time.Now()
		d.timer.Reset(min(d.idle, d.budget))
		d.mu.Unlock()
		return
	}
	d.stopped = true
	total := d.budget-time.Since(d.since) <= d.idle/100
	d.mu.Unlock()
	d.expire(total)
}

// alive restarts the idle timer (the server showed progress).
func (d *requestDeadline) alive() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped || d.paused > 0 {
		return
	}
	d.chargeLocked()
	d.timer.Reset(min(d.idle, d.budget))
}

// pause stops the clock until the matching resume.
func (d *requestDeadline) pause() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.paused++; d.paused == 1 && !d.stopped {
		d.chargeLocked()
		d.since = time.Time{}
		d.timer.Stop()
	}
}

// resume restarts the clock with a full idle period when the last pause ends.
func (d *requestDeadline) resume() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.paused--; d.paused == 0 && !d.stopped {
		d.since = time.Now()
		d.timer.Reset(min(d.idle, d.budget))
	}
}

// chargeLocked moves the running stretch's time from the budget.
func (d *requestDeadline) chargeLocked() {
	if !d.since.IsZero() {
		now := time.Now()
		d.budget -= now.Sub(d.since)
		d.since = now
	}
	d.budget = max(d.budget, 0)
}

func (d *requestDeadline) stop() {
	d.mu.Lock()
	d.stopped = true
	d.mu.Unlock()
	d.timer.Stop()
}
