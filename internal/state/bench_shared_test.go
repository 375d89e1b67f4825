package state_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-bridge/mcp-bridge/internal/state"
	"github.com/mcp-bridge/mcp-bridge/internal/state/statetest"
)

// The shared state's costs for make bench (scripts/bench-shared-state.sh): what one MRTR hop writes, on the
// embedded file store and on Redis in the same run, and the store's part of a takeover. They need a
// redis-server (skipped without one, as the other Redis tests).

// mrtrHop writes what one MRTR hop of a session writes (mcpcore/durable.go): the round's record, the input
// request, the round again with the request's id, the accepted answer, then — the retry done — the request
// and the round deleted. Records are about 2 KB (an elicitation with its schema, the server's
// requestState).
func mrtrHop(ctx context.Context, s state.Store, session string, i int, value []byte) error {
	call, req := fmt.Sprintf("%s/call-%d", session, i), fmt.Sprintf("req-%s-%d", session, i)
	for _, w := range []struct {
		kind state.Kind
		key  string
	}{{state.KindCall, call}, {state.KindRequest, req}, {state.KindCall, call}, {state.KindRequest, req}} {
		if err := s.Put(ctx, w.kind, w.key, value); err != nil {
			return err
		}
	}
	if err := s.Delete(ctx, state.KindRequest, req); err != nil {
		return err
	}
	return s.Delete(ctx, state.KindCall, call)
}

func BenchmarkBenchStoreMRTRHop(b *testing.B) {
	value := []byte(strings.Repeat("x", 2048))
	key, _ := state.ParseKey(state.NewKey())
	sealed := func(b *testing.B, s state.Store) state.Store {
		ss, err := state.Sealed(context.Background(), s, key)
		if err != nil {
			b.Fatal(err)
		}
		return ss
	}
	b.Run("file-sealed", func(b *testing.B) {
		fs, err := state.OpenFile(filepath.Join(b.TempDir(), "state.db"), state.FileOptions{})
		if err != nil {
			b.Fatal(err)
		}
		s := sealed(b, fs)
		defer s.Close()
		ctx := context.Background()
		i := 0
		for b.Loop() {
			if err := mrtrHop(ctx, s, "s-r1.bench", i, value); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	r := statetest.StartRedis(b, statetest.RedisConfig{})
	b.Run("redis-sealed-fenced", func(b *testing.B) {
		rs := openRedisB(b, r, "bench-hop:")
		s := sealed(b, rs)
		defer s.Close()
		ctx := context.Background()
		f, err := state.NewLeases(rs, "r1", time.Minute, nil).Acquire(ctx, "s-r1.bench")
		if err != nil {
			b.Fatal(err)
		}
		fctx := state.WithFence(ctx, f)
		i := 0
		for b.Loop() {
			if err := mrtrHop(fctx, s, "s-r1.bench", i, value); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

// BenchmarkBenchStoreTakeover is the store's part of taking a session over from a replica that drained:
// the old owner releases the lease, the new one acquires it and reads what Adopt reads — the session's
// record and the calls and requests kept (a store holding 1,000 sessions, each with an MRTR round and its
// request). The rest of a takeover (the lease's expiry after a crash, the upstream's reconnection) is
// measured by make test-scale.
func BenchmarkBenchStoreTakeover(b *testing.B) {
	r := statetest.StartRedis(b, statetest.RedisConfig{})
	key, _ := state.ParseKey(state.NewKey())
	rs := openRedisB(b, r, "bench-takeover:")
	s, err := state.Sealed(context.Background(), rs, key)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	value := []byte(strings.Repeat("x", 2048))
	for i := range 1000 {
		sid := fmt.Sprintf("s-r1.%04d", i)
		for _, w := range []struct {
			kind state.Kind
			key  string
		}{{state.KindSession, sid}, {state.KindCall, sid + "/call-1"}, {state.KindRequest, "req-" + sid}} {
			if err := s.Put(ctx, w.kind, w.key, value); err != nil {
				b.Fatal(err)
			}
		}
	}
	a := state.NewLeases(rs, "r1", time.Minute, nil)
	c := state.NewLeases(rs, "r2", time.Minute, nil)
	from, to := a, c
	if _, err := from.Acquire(ctx, "s-r1.0500"); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := from.Release(ctx, "s-r1.0500"); err != nil {
			b.Fatal(err)
		}
		if _, err := to.Acquire(ctx, "s-r1.0500"); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Get(ctx, state.KindSession, "s-r1.0500"); err != nil {
			b.Fatal(err)
		}
		for _, k := range []state.Kind{state.KindCall, state.KindRequest} {
			if err := s.List(ctx, k, func(string, []byte) error { return nil }); err != nil {
				b.Fatal(err)
			}
		}
		from, to = to, from
	}
}

func openRedisB(b *testing.B, r *statetest.Redis, prefix string) *state.RedisStore {
	b.Helper()
	s, err := state.OpenRedis(context.Background(), state.RedisOptions{Address: r.Addr, KeyPrefix: prefix})
	if err != nil {
		b.Fatal(err)
	}
	return s
}
