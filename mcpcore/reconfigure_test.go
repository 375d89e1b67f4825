package mcpcore

import (
	"context"
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A reconfiguration applies a new policy to the next call of a live session, adds and removes servers, ends a
// removed server's sessions with ErrServerRemoved, leaves an unchanged server's sessions alone, and changes
// the session limits.
func TestReconfigure(t *testing.T) {
	c := policyCore(t, Policy{})
	strict := open(t, c, "strict", "", allCaps)
	owned := open(t, c, "owned", "", allCaps)
	mem := open(t, c, "mem", "", allCaps)
	if got := callText(t, strict, "echo", map[string]any{"text": "x"}, CallOptions{}); got == "" {
		t.Fatal("echo before")
	}
	servers := maps.Clone(c.table())
	strictCfg := servers["strict"]
	strictCfg.Policy = &Policy{Tools: Filter{Deny: []string{"echo"}}}
	servers["strict"] = strictCfg
	delete(servers, "owned")
	servers["new"] = ServerConfig{Transport: transportTest}
	rep := c.Reconfigure(Reconfiguration{Servers: servers, MaxSessions: 100, MaxSessionsPerOwner: 3})
	if len(rep.Added) != 1 || rep.Added[0] != "new" || len(rep.Removed) != 1 || rep.Removed[0] != "owned" || len(rep.Changed) != 0 || rep.Retiring != 1 {
		t.Fatalf("report = %+v", rep)
	}
	// The policy applies from the next call of the live session.
	if _, err := strict.CallTool(tctx(t), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}, CallOptions{}); !errors.Is(err, ErrPermissionDenied) {
		t.Errorf("echo after the policy change = %v, want ErrPermissionDenied", err)
	}
	// The removed server's session ends with its own error once nothing is pending.
	<-owned.closeDone
	if _, err := owned.CallTool(tctx(t), &mcp.CallToolParams{Name: "echo"}, CallOptions{}); !errors.Is(err, ErrServerRemoved) {
		t.Errorf("a call on the removed server's session = %v, want ErrServerRemoved", err)
	}
	if st, reason := owned.State(); st != StateClosed || reason != serverRemovedReason {
		t.Errorf("the removed server's session = %v %q", st, reason)
	}
	// The unchanged server's session is untouched.
	if got := callText(t, mem, "echo", map[string]any{"text": "y"}, CallOptions{}); got == "" {
		t.Error("the unchanged server's session")
	}
	if _, err := c.Open(tctx(t), OpenParams{Server: "owned", Owner: "alice"}); !errors.Is(err, ErrServerNotFound) {
		t.Errorf("Open(owned) after its removal = %v", err)
	}
	if s := open(t, c, "new", "", allCaps); s == nil {
		t.Error("Open(new)")
	}
	// The new per-owner limit counts the sessions already open (strict, mem, new).
	if _, err := c.Open(tctx(t), OpenParams{Owner: "alice", Server: "mem"}); !errors.Is(err, ErrTooManySessions) {
		t.Errorf("a 4th session with maxSessionsPerOwner 3 = %v, want ErrTooManySessions", err)
	}
}

// A changed server's sessions keep their definition; new sessions get the new one.
func TestReconfigureChangedServer(t *testing.T) {
	c := policyCore(t, Policy{})
	old := open(t, c, "strict", "", allCaps)
	servers := maps.Clone(c.table())
	cfg := servers["strict"]
	cfg.RequestTimeout = 12345
	servers["strict"] = cfg
	if rep := c.Reconfigure(Reconfiguration{Servers: servers}); len(rep.Changed) != 1 || rep.Changed[0] != "strict" {
		t.Fatalf("report = %+v", rep)
	}
	if old.server.RequestTimeout == 12345 {
		t.Error("the live session took the new definition")
	}
	if s := open(t, c, "strict", "", allCaps); s.server.RequestTimeout != 12345 {
		t.Errorf("a new session's definition: request timeout %v", s.server.RequestTimeout)
	}
}

// A removed server's session ends after its pending requests are answered, or at the bound.
func TestReconfigureRemovedServerWaitsForPending(t *testing.T) {
	for _, tc := range []struct {
		name   string
		bound  time.Duration
		answer bool
	}{{"answered", time.Hour, true}, {"bounded", time.Millisecond, false}} {
		t.Run(tc.name, func(t *testing.T) {
			c := policyCore(t, Policy{})
			s := open(t, c, "owned", "2025-11-25", allCaps)
			sub := s.Subscribe(64)
			defer sub.Close()
			called := make(chan error, 1)
			go func() { // ends when the call does: answered, or cut by the session's close
				_, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"kinds": []any{"sampling"}}}, CallOptions{})
				called <- err
			}()
			ev := waitEvent(t, sub, func(ev Event) bool { return ev.Kind == EventRequestCreated })
			servers := maps.Clone(c.table())
			delete(servers, "owned")
			if rep := c.Reconfigure(Reconfiguration{Servers: servers, RetireTimeout: tc.bound}); rep.Retiring != 1 {
				t.Fatalf("report = %+v", rep)
			}
			if tc.answer {
				select {
				case <-s.closeDone:
					t.Fatal("the session closed with a request pending")
				default:
				}
				if err := c.Dispatcher().Respond(context.Background(), s.Owner(), ev.Request.ID, standardAnswer(ev.Request)); err != nil {
					t.Fatal(err)
				}
				if err := <-called; err != nil {
					t.Errorf("the call whose request was answered: %v", err)
				}
			}
			<-s.closeDone
			if _, reason := s.State(); reason != serverRemovedReason {
				t.Errorf("reason = %q", reason)
			}
			if !tc.answer {
				if err := <-called; err == nil {
					t.Error("the call survived its session's close")
				}
			}
		})
	}
}

// A new kept results policy applies at once: a smaller budget evicts the oldest outcomes (leaving their
// marks), a shorter TTL brings the expiry of what is kept forward.
func TestKeptResultsSetPolicy(t *testing.T) {
	k := newKeptResults(KeptResultsPolicy{MaxBytes: 64 << 10, TTL: time.Hour})
	defer k.close()
	now := time.Now()
	k.mu.Lock()
	k.now = func() time.Time { return now }
	k.mu.Unlock()
	for _, key := range []string{"s/a", "s/b", "s/c"} {
		if err := k.add(key, &keptOutcome{result: textResult(4000)}); err != nil {
			t.Fatal(err)
		}
	}
	k.setPolicy(KeptResultsPolicy{MaxBytes: 9000, TTL: time.Minute})
	if st := k.stats(); st.Bytes > 9000 || st.Outcomes != 2 || st.Evicted != 1 {
		t.Fatalf("stats after a smaller budget = %+v, want 2 kept within 9000 bytes and 1 evicted", st)
	}
	if _, evicted, ok := k.get("s/a"); !ok || !evicted {
		t.Errorf("the oldest outcome after a smaller budget: evicted=%v known=%v, want its mark", evicted, ok)
	}
	k.mu.Lock()
	for _, key := range []string{"s/a", "s/b", "s/c"} {
		if e := k.m[key]; e.expires.After(now.Add(time.Minute)) {
			t.Errorf("%s expires %v after a TTL of a minute", key, e.expires.Sub(now))
		}
	}
	k.mu.Unlock()
}
