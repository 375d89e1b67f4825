package mcpcore

import (
	"errors"
	"log/slog"
	"testing"
	"time"
)

// The idle reaper's facts are the session's (docs/adr/0115): ClaimIdle claims an open session nothing has
// used for the timeout — counted from when it became open, then from when its last use or attached host
// ended — and never one in use, one a host is attached to, or one still opening; a claimed session refuses
// new uses and hosts, and is not claimed twice.
func TestClaimIdleReadsTheSessionsUsage(t *testing.T) {
	c := New(Options{Logger: slog.New(slog.DiscardHandler)})
	cfg := ServerConfig{Name: "x", Transport: TransportStreamableHTTP, URL: "http://127.0.0.1:1/mcp"}
	open := func(id string) *Session {
		s := newSession(c, id, OpenParams{Owner: "alice"}, cfg)
		if err := c.register(s); err != nil {
			t.Fatal(err)
		}
		c.mu.Lock()
		c.openedLocked(s)
		c.mu.Unlock()
		return s
	}
	const timeout = time.Hour
	start := time.Now()
	used, hosted, idle := open("s-used"), open("s-hosted"), open("s-idle")
	opening := newSession(c, "s-opening", OpenParams{Owner: "alice"}, cfg)
	opening.created = start.Add(-10 * timeout) // old, but its idle time starts when it is open
	if err := c.register(opening); err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, s := range []*Session{used, hosted, idle, opening} {
			c.unregister(s)
			s.cancel()
		}
	}()

	if got := c.ClaimIdle(start.Add(timeout/2), timeout); len(got) != 0 {
		t.Fatalf("claimed %d sessions opened less than the timeout ago", len(got))
	}
	release, err := used.Use()
	if err != nil {
		t.Fatal(err)
	}
	detach, err := hosted.AttachHost()
	if err != nil {
		t.Fatal(err)
	}
	later := start.Add(2 * timeout)
	got := c.ClaimIdle(later, timeout)
	if len(got) != 1 || got[0] != idle {
		t.Fatalf("claimed %v, want only the unused open session %s", ids(got), idle.id)
	}
	if got := c.ClaimIdle(later, timeout); len(got) != 0 {
		t.Errorf("claimed %v again", ids(got))
	}
	if _, err := idle.Use(); !errors.Is(err, ErrSessionNotFound) {
		t.Errorf("Use of a claimed session: %v, want ErrSessionNotFound", err)
	}
	if _, err := idle.AttachHost(); !errors.Is(err, ErrSessionNotFound) {
		t.Errorf("AttachHost of a claimed session: %v, want ErrSessionNotFound", err)
	}
	if n := idle.HostsAttached(); n != 0 {
		t.Errorf("a refused host counted: %d attached", n)
	}

	release()
	release() // idempotent
	detach()
	detach()
	if n := hosted.HostsAttached(); n != 0 {
		t.Errorf("%d hosts attached after the only one left", n)
	}
	ended := time.Now() // the idle time of both starts at their release
	if got := c.ClaimIdle(ended.Add(timeout/2), timeout); len(got) != 0 {
		t.Errorf("claimed %v less than the timeout after their last use", ids(got))
	}
	if got := c.ClaimIdle(ended.Add(timeout), timeout); len(got) != 2 {
		t.Errorf("claimed %v a timeout after their last use, want s-used and s-hosted", ids(got))
	}
}

func ids(ss []*Session) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.id
	}
	return out
}
