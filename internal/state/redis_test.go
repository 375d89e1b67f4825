package state_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-bridge/mcp-bridge/internal/state"
	"github.com/mcp-bridge/mcp-bridge/internal/state/statetest"
)

// redisPrefixes gives every subtest its own key prefix on the one redis-server of a test.
var redisPrefixes atomic.Int64

func openRedis(t *testing.T, r *statetest.Redis, prefix string) *state.RedisStore {
	t.Helper()
	s, err := state.OpenRedis(context.Background(), state.RedisOptions{Address: r.Addr, Password: r.Password, KeyPrefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRedis(t *testing.T) {
	r := statetest.StartRedis(t, statetest.RedisConfig{Password: "s3cret-pass"})
	statetest.RunDurable(t,
		func(t *testing.T) state.Store {
			return openRedis(t, r, "t"+strings.Repeat("x", int(redisPrefixes.Add(1)))+":")
		},
		func(t *testing.T, s state.Store) state.Store {
			// Reopen: a new connection pool, and the server itself restarted from its append-only file.
			prefix := state.RedisPrefix(s)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			r.Stop()
			r.Start()
			return openRedis(t, r, prefix)
		})
}

func TestRedisSealed(t *testing.T) {
	r := statetest.StartRedis(t, statetest.RedisConfig{})
	key, _ := state.ParseKey(state.NewKey())
	statetest.Run(t, func(t *testing.T) state.Store {
		s, err := state.Sealed(context.Background(), openRedis(t, r, "sealed"+strings.Repeat("x", int(redisPrefixes.Add(1)))+":"), key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestRedisAuth(t *testing.T) {
	const pass = "the-password-never-shown"
	r := statetest.StartRedis(t, statetest.RedisConfig{Password: pass})
	_, err := state.OpenRedis(context.Background(), state.RedisOptions{Address: r.Addr, Password: "wrong-" + pass})
	if err == nil {
		t.Fatal("OpenRedis with a wrong password succeeded")
	}
	if strings.Contains(err.Error(), pass) {
		t.Errorf("the error shows the password: %v", err)
	}
	if !strings.Contains(err.Error(), "authentication failed") {
		t.Errorf("error = %v, want it to say authentication failed", err)
	}
	r.Kill()
	_, err = state.OpenRedis(context.Background(), state.RedisOptions{Address: r.Addr, Password: pass})
	if !errors.Is(err, state.ErrUnreachable) {
		t.Errorf("OpenRedis of a stopped server = %v, want ErrUnreachable", err)
	}
}

func TestOpenRedis(t *testing.T) {
	r := statetest.StartRedis(t, statetest.RedisConfig{})
	ctx := context.Background()
	key := state.NewKey()
	cfg := state.Config{Redis: &state.RedisOptions{Address: r.Addr, KeyPrefix: "open:"}, Key: key, KeySource: "$KEY"}
	s, err := state.Open(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if state.RedisEngine(s) == nil {
		t.Error("RedisEngine of a store in Redis is nil")
	}
	if err := s.Put(ctx, state.KindSession, "s-1", []byte("personal data")); err != nil {
		t.Fatal(err)
	}
	// At rest the record is sealed: the raw engine sees no clear text.
	raw, err := state.RedisEngine(s).Get(ctx, state.KindSession, "s-1")
	if err != nil || strings.Contains(string(raw), "personal") {
		t.Errorf("raw record = %q, %v; want it sealed", raw, err)
	}
	s.Close()
	// Another replica with the same key reads it; one with another key is refused at open.
	s2, err := state.Open(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := s2.Get(ctx, state.KindSession, "s-1"); err != nil || string(v) != "personal data" {
		t.Errorf("Get on a second replica = %q, %v", v, err)
	}
	s2.Close()
	cfg.Key = state.NewKey()
	if _, err := state.Open(ctx, cfg, nil); err == nil || !strings.Contains(err.Error(), "does not open with the key from $KEY") {
		t.Errorf("Open with another key = %v", err)
	}
	cfg.Key = nil
	if _, err := state.Open(ctx, cfg, nil); err == nil {
		t.Error("Open of Redis without a key succeeded")
	}
	if state.RedisEngine(state.NewMemory()) != nil {
		t.Error("RedisEngine of a memory store is not nil")
	}
}

// Redis down at start: the replica starts, counts Redis as unreachable (no new sessions, no takeovers) and
// checks the key when Redis answers; a Redis sealed with another key keeps it unavailable.
func TestOpenRedisDownAtStart(t *testing.T) {
	r := statetest.StartRedis(t, statetest.RedisConfig{})
	ctx := context.Background()
	key := state.NewKey()
	cfg := state.Config{Redis: &state.RedisOptions{Address: r.Addr, KeyPrefix: "late:"}, Key: key, KeySource: "$KEY"}
	r.Stop()
	s, err := state.Open(ctx, cfg, nil)
	if err != nil {
		t.Fatalf("Open with Redis down: %v, want a store that waits for it", err)
	}
	defer s.Close()
	leases := state.NewLeases(state.RedisEngine(s), "r1", time.Minute, nil)
	if !leases.Down() {
		t.Fatal("Down is false before Redis ever answered")
	}
	leases.RenewNow(ctx, state.LeaseEvents{})
	if !leases.Down() {
		t.Fatal("Down is false while Redis is stopped")
	}
	r.Start()
	var reach []bool
	leases.RenewNow(ctx, state.LeaseEvents{Reachable: func(ok bool) { reach = append(reach, ok) }})
	if leases.Down() || len(reach) != 1 || !reach[0] {
		t.Fatalf("after Redis came back: down %v, events %v", leases.Down(), reach)
	}
	if err := s.Put(ctx, state.KindSession, "s-1", []byte("x")); err != nil {
		t.Fatal(err)
	}
	// Another replica with another key, started while Redis was down, never comes up.
	r.Stop()
	cfg.Key = state.NewKey()
	s2, err := state.Open(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	other := state.NewLeases(state.RedisEngine(s2), "r2", time.Minute, nil)
	r.Start()
	other.RenewNow(ctx, state.LeaseEvents{})
	if !other.Down() {
		t.Error("a replica whose key does not open Redis's state counts it as reachable")
	}
}
