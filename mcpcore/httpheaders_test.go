package mcpcore

import (
	"errors"
	"testing"
)

// A task id with CR or LF on a 2026-07-28 Streamable HTTP session goes in the Mcp-Name header, where it
// cannot be carried: the bridge refuses it as the host's input (an *InvalidError naming the header) before
// anything is sent, and the session is untouched. Before: net/http's refusal reached the host as the
// server being unavailable, and only a match on net/http's error text kept the connection alive.
func TestInvalidHeaderIsTheHostsError(t *testing.T) {
	hs := newHeaderServer(t, "Region")
	s := headerCore(t, hs)
	for _, id := range []string{"t\r\nX-Injected: 1", "t\x01"} {
		_, err := s.GetTask(tctx(t), id, CallOptions{})
		var ie *InvalidError
		if !errors.As(err, &ie) || !errors.Is(err, errInvalidArguments) {
			t.Errorf("GetTask(%q): %v, want the host's invalid argument", id, err)
		}
	}
	if st, reason := s.State(); st != StateReady || s.Restarts() != 0 {
		t.Errorf("the session after: %v (%s), %d restarts; want READY, never restarted", st, reason, s.Restarts())
	}
	if got := callText(t, s, "route", map[string]any{"region": "eu"}, CallOptions{}); got != "routed" {
		t.Errorf("the next call: %q", got)
	}
}
