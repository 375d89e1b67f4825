package server

import (
	"context"
	"testing"

	"google.golang.org/grpc/metadata"
)

// A new generation of limits keeps the calls in flight: they count against the new concurrency limit; and
// limits turned off and on again take effect from the next call.
func TestLimiterSwitch(t *testing.T) {
	call := servicePrefix + "CallTool"
	sw := newLimiterSwitch(func(string) RateLimit { return RateLimit{ConcurrentCalls: 2} })
	release, err := sw.admit("alice", call)
	if err != nil {
		t.Fatal(err)
	}
	sw.set(func(string) RateLimit { return RateLimit{ConcurrentCalls: 1} })
	if _, err := sw.admit("alice", call); err == nil {
		t.Fatal("a second call with one in flight and a new limit of 1 was admitted")
	}
	release()
	r2, err := sw.admit("alice", call)
	if err != nil {
		t.Fatalf("after the call in flight ended: %v", err)
	}
	r2()
	sw.set(nil)
	for range 3 {
		if _, err := sw.admit("alice", call); err != nil {
			t.Fatalf("limits off: %v", err)
		}
	}
	sw.set(func(string) RateLimit { return RateLimit{CallsPerSecond: 1, Burst: 1} })
	if _, err := sw.admit("alice", call); err != nil {
		t.Fatal(err)
	}
	if _, err := sw.admit("alice", call); err == nil {
		t.Fatal("limits on again: a call over the rate was admitted")
	}
}

// Reconfigure swaps the bearer tokens for the next call.
func TestReconfigureTokens(t *testing.T) {
	s := &Service{}
	s.liveConfig = liveConfig{s: s, auth: newAuthSwitch(newAuthenticator(map[string]string{"old": "alice"})), limiter: newLimiterSwitch(nil)}
	ctxWith := func(tok string) context.Context {
		return metadata.NewIncomingContext(context.Background(), metadata.Pairs("authorization", "Bearer "+tok))
	}
	if p, _, err := s.auth.authenticateIdentity(ctxWith("old")); err != nil || p != "alice" {
		t.Fatalf("old token before = %q %v", p, err)
	}
	s.Reconfigure(LiveOptions{Tokens: map[string]string{"new": "alice"}, Servers: []ServerDescription{{Name: "x"}}})
	if _, _, err := s.auth.authenticateIdentity(ctxWith("old")); err == nil {
		t.Error("the old token is accepted after the rotation")
	}
	if p, _, err := s.auth.authenticateIdentity(ctxWith("new")); err != nil || p != "alice" {
		t.Errorf("new token = %q %v", p, err)
	}
	if d := s.serverDescriptions(); len(d) != 1 || d[0].Name != "x" {
		t.Errorf("descriptions = %v", d)
	}
}
