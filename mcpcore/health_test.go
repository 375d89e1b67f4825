package mcpcore

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

func TestSessionReplica(t *testing.T) {
	for _, tt := range []struct {
		id, want string
		ok       bool
	}{
		{"s-r1.ABCDEFGHIJKLMNOPQRSTUVWXYZ", "r1", true},
		{"s-mcp-bridge-0.ABC", "mcp-bridge-0", true},
		{"s-ABCDEFGHIJKLMNOPQRSTUVWXYZ", "", false},
		{"s-.ABC", "", false},
		{"x-r1.ABC", "", false},
		{"", "", false},
	} {
		got, ok := SessionReplica(tt.id)
		if got != tt.want || ok != tt.ok {
			t.Errorf("SessionReplica(%q) = %q, %v; want %q, %v", tt.id, got, ok, tt.want, tt.ok)
		}
	}
	c := New(Options{Replica: "r7"})
	id := c.newSessionID()
	if r, ok := SessionReplica(id); !ok || r != "r7" {
		t.Errorf("a session id of replica r7 = %q, names %q", id, r)
	}
	if id := New(Options{}).newSessionID(); len(id) != 28 {
		t.Errorf("a session id without a replica = %q, want s- and 26 characters", id)
	}
}

func TestServerHealthStatus(t *testing.T) {
	now := time.Now()
	for _, tt := range []struct {
		name string
		h    ServerHealth
		want HealthStatus
	}{
		{"never tried", ServerHealth{}, HealthUnknown},
		{"a session ready", ServerHealth{Ready: 1, Reconnecting: 2, LastOpen: now, LastOpenErr: ErrUnavailable}, HealthServing},
		{"all reconnecting", ServerHealth{Reconnecting: 2, LastOpen: now}, HealthNotServing},
		{"last open worked", ServerHealth{LastOpen: now}, HealthServing},
		{"last open unreachable", ServerHealth{LastOpen: now, LastOpenErr: fmt.Errorf("%w: connection refused", ErrUnavailable)}, HealthNotServing},
		{"last open hit a limit", ServerHealth{LastOpen: now, LastOpenErr: ErrTooManySessions}, HealthUnknown},
		{"last open cancelled", ServerHealth{LastOpen: now, LastOpenErr: errors.New("context canceled")}, HealthUnknown},
	} {
		if got := tt.h.Status(); got != tt.want {
			t.Errorf("%s: Status = %v, want %v", tt.name, got, tt.want)
		}
	}
}
