package mcpcore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// stableAfter is how long a connection must have lived for the supervisor to reset its backoff.
const stableAfter = 30 * time.Second

// sessionSupervisor keeps a session connected: it owns the session's connections once the first one is up
// (Session.start), reconnects when one ends, and closes the session when supervision gives up. The session
// holds it as Session.supervisor; its goroutine is the session's supervisor goroutine (Session.superDone).
type sessionSupervisor struct {
	s *Session
}

// supervise owns the session's connections (see the state machine in session.go): it waits for the live one to
// end and, unless the session is closing, closes it and reconnects with backoff (exponential, with
// jitter, bounded by the server's RestartPolicy; at once when the HTTP server lost the session). It exits
// when the session closes — having closed the live connection — or when supervision gives up (the
// session then closes itself).
func (sv *sessionSupervisor) supervise(g *generation) {
	s := sv.s
	defer close(s.superDone)
	pol := s.server.Restart
	streak := 0 // reconnections of short-lived connections, for the backoff
	for {
		g.watch()
		select {
		case <-g.ended:
		case <-s.ctx.Done():
		}
		if s.ctx.Err() == nil && s.core.keeping() && s.server.Transport != TransportStdio {
			// Kept for a restart: no reconnection while the bridge drains; the session waits for its close.
			<-s.ctx.Done()
		}
		if s.ctx.Err() != nil {
			// A session kept for the next process keeps its HTTP session on the server: no DELETE.
			g.close(!g.dead.Load() && !(s.core.keeping() && s.server.Transport != TransportStdio))
			return
		}
		reason := g.endReason()
		if p := g.proc.Load(); p != nil && p.waitFor(exitReasonWait) {
			reason = "server process exited: " + p.exitStatus() // says more than the EOF on its stdout
		}
		lost := g.lost.Load()
		if lost {
			reason = "server lost the session; re-initializing"
		}
		s.setState(StateReconnecting, reason, nil)
		g.close(false)
		s.refs.drop(g.tap)
		if pol.MaxRestarts <= 0 {
			s.supervisor.giveUp(reason+"; restarts are disabled", reason)
			return
		}
		if time.Since(g.start) >= stableAfter {
			streak = 0
		}
		delay := backoff(pol, streak)
		if lost {
			delay = 0
		}
		ng, err := s.supervisor.reconnect(pol, delay, streak)
		if err != nil {
			if s.ctx.Err() == nil {
				s.supervisor.giveUp(err.Error(), reason)
			}
			return
		}
		if lost {
			s.core.stats.reinitialized.Add(1)
		} else {
			s.core.stats.restarts.Add(1)
		}
		s.core.obs.Reconnected(s.server.Name, s.server.Transport, lost)
		g = ng
		streak++
		s.install(ng, "reconnected")
		s.resubscribe(ng)
	}
}

// reconnect tries to connect after delay, and again with backoff after each failure, at most
// pol.MaxRestarts times in a row. Each failure is published (the reason of the Reconnecting state), so
// that calls waiting for the session fail with ErrUnavailable instead of waiting for the next attempt.
// It returns an error when it gives up or the session closes.
func (sv *sessionSupervisor) reconnect(pol RestartPolicy, delay time.Duration, streak int) (*generation, error) {
	s := sv.s
	for failures := 1; ; failures++ {
		if delay > 0 {
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-s.ctx.Done():
				t.Stop()
				return nil, s.ctx.Err()
			}
		}
		ctx, cancel := context.WithTimeout(s.ctx, handshakeTimeout)
		ng, err := s.connect(ctx)
		cancel()
		if s.ctx.Err() != nil {
			if ng != nil {
				_ = ng.cs.Close()
				ng.cancel()
			}
			return nil, s.ctx.Err()
		}
		if err == nil {
			return ng, nil
		}
		s.logger.Warn("reconnect failed", "attempt", failures, "error", err)
		if failures >= pol.MaxRestarts {
			return nil, fmt.Errorf("gave up after %d failed reconnections: %v", failures, err)
		}
		s.mu.Lock()
		s.reconnectErr = err
		s.mu.Unlock()
		s.setState(StateReconnecting, fmt.Sprintf("reconnect attempt %d failed: %v", failures, err), nil)
		delay = backoff(pol, streak+failures)
	}
}

// backoff is InitialBackoff·2^n capped at MaxBackoff, with jitter: a uniform value in [d/2, d].
func backoff(pol RestartPolicy, n int) time.Duration {
	d := pol.InitialBackoff
	for i := 0; i < n && d < pol.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, pol.MaxBackoff)
	return d/2 + rand.N(d/2+1)
}

// giveUp closes the session from the supervisor: Close waits for the supervisor, so it runs in its own
// goroutine, which ends when Close has finished. Calls fail with ErrUnavailable and the reason.
func (sv *sessionSupervisor) giveUp(reason, lastEnd string) {
	s := sv.s
	reason, lastEnd = s.red.redact(reason), s.red.redact(lastEnd)
	s.logger.Error("session failed", "reason", reason, "connection", lastEnd)
	go func() {
		_ = s.closeWith(context.Background(), reason, fmt.Errorf("%w: session closed: %s", ErrUnavailable, reason))
	}()
}
