// Package statetest is the conformance suite every state engine passes: the memory engine, the embedded
// file engine, the sealed wrapper and (issue 22) Redis run the same cases, so the rest of the bridge never
// needs to know which engine it has.
package statetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcp-bridge/mcp-bridge/internal/state"
)

// Run runs the conformance suite. newStore returns a new, empty store for one subtest; the suite closes
// it.
func Run(t *testing.T, newStore func(t *testing.T) state.Store) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			defer func() { _ = s.Close() }()
			tc.run(t, s)
		})
	}
	t.Run("close", func(t *testing.T) {
		s := newStore(t)
		ctx := context.Background()
		mustPut(t, s, state.KindSession, "a", "1")
		if err := s.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("second Close: %v, want nil (Close is idempotent)", err)
		}
		if err := s.Put(ctx, state.KindSession, "b", []byte("2")); !errors.Is(err, state.ErrClosed) {
			t.Errorf("Put after Close: %v, want ErrClosed", err)
		}
		if _, err := s.Get(ctx, state.KindSession, "a"); !errors.Is(err, state.ErrClosed) {
			t.Errorf("Get after Close: %v, want ErrClosed", err)
		}
		if err := s.Delete(ctx, state.KindSession, "a"); !errors.Is(err, state.ErrClosed) {
			t.Errorf("Delete after Close: %v, want ErrClosed", err)
		}
		if err := s.List(ctx, state.KindSession, func(string, []byte) error { return nil }); !errors.Is(err, state.ErrClosed) {
			t.Errorf("List after Close: %v, want ErrClosed", err)
		}
	})
}

// RunDurable runs Run and then the cases of a durable engine: what Put wrote (and Delete removed) is
// found so after reopen closes the store and opens it again. newStore returns a new, empty store;
// reopen closes s and returns the same store opened anew.
func RunDurable(t *testing.T, newStore func(t *testing.T) state.Store, reopen func(t *testing.T, s state.Store) state.Store) {
	t.Helper()
	Run(t, newStore)
	t.Run("reopen", func(t *testing.T) {
		s := newStore(t)
		ctx := context.Background()
		for _, k := range state.Kinds {
			mustPut(t, s, k, "kept", "v-"+string(k))
			mustPut(t, s, k, "gone", "x")
		}
		mustPut(t, s, state.KindSession, "kept", "v2")
		for _, k := range state.Kinds {
			if err := s.Delete(ctx, k, "gone"); err != nil {
				t.Fatalf("Delete: %v", err)
			}
		}
		s = reopen(t, s)
		defer func() { _ = s.Close() }()
		for _, k := range state.Kinds {
			want := map[string]string{"kept": "v-" + string(k)}
			if k == state.KindSession {
				want["kept"] = "v2"
			}
			if diff := cmp.Diff(want, list(t, s, k)); diff != "" {
				t.Errorf("%s after reopen (-want +got):\n%s", k, diff)
			}
		}
	})
}

type testCase struct {
	name string
	run  func(t *testing.T, s state.Store)
}

var cases = []testCase{
	{"put then get", func(t *testing.T, s state.Store) {
		mustPut(t, s, state.KindSession, "s-1", "one")
		if got := mustGet(t, s, state.KindSession, "s-1"); got != "one" {
			t.Errorf("Get = %q, want %q", got, "one")
		}
	}},
	{"put replaces", func(t *testing.T, s state.Store) {
		mustPut(t, s, state.KindRequest, "r", "first")
		mustPut(t, s, state.KindRequest, "r", "second, longer than the first")
		mustPut(t, s, state.KindRequest, "r", "3")
		if got := mustGet(t, s, state.KindRequest, "r"); got != "3" {
			t.Errorf("Get = %q, want %q", got, "3")
		}
	}},
	{"missing record", func(t *testing.T, s state.Store) {
		ctx := context.Background()
		if _, err := s.Get(ctx, state.KindCall, "nope"); !errors.Is(err, state.ErrNotFound) {
			t.Errorf("Get of a missing record: %v, want ErrNotFound", err)
		}
		mustPut(t, s, state.KindCall, "other", "x")
		if _, err := s.Get(ctx, state.KindCall, "nope"); !errors.Is(err, state.ErrNotFound) {
			t.Errorf("Get of a missing record beside another: %v, want ErrNotFound", err)
		}
	}},
	{"delete", func(t *testing.T, s state.Store) {
		ctx := context.Background()
		mustPut(t, s, state.KindTask, "s/t", "x")
		if err := s.Delete(ctx, state.KindTask, "s/t"); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		if _, err := s.Get(ctx, state.KindTask, "s/t"); !errors.Is(err, state.ErrNotFound) {
			t.Errorf("Get after Delete: %v, want ErrNotFound", err)
		}
		if err := s.Delete(ctx, state.KindTask, "s/t"); err != nil {
			t.Errorf("Delete of a missing record: %v, want nil", err)
		}
		if err := s.Delete(ctx, state.KindGrant, "never-written"); err != nil {
			t.Errorf("Delete in a kind never written: %v, want nil", err)
		}
	}},
	{"kinds are separate key spaces", func(t *testing.T, s state.Store) {
		for _, k := range state.Kinds {
			mustPut(t, s, k, "same-key", string(k))
		}
		for _, k := range state.Kinds {
			if got := mustGet(t, s, k, "same-key"); got != string(k) {
				t.Errorf("Get(%s) = %q, want %q", k, got, k)
			}
			if diff := cmp.Diff(map[string]string{"same-key": string(k)}, list(t, s, k)); diff != "" {
				t.Errorf("List(%s) (-want +got):\n%s", k, diff)
			}
		}
	}},
	{"list", func(t *testing.T, s state.Store) {
		if got := list(t, s, state.KindSession); len(got) != 0 {
			t.Errorf("List of an empty kind = %v, want nothing", got)
		}
		want := map[string]string{}
		for i := range 300 {
			k, v := fmt.Sprintf("s-%03d", i), strings.Repeat("v", i)
			mustPut(t, s, state.KindSession, k, v)
			want[k] = v
		}
		mustPut(t, s, state.KindRequest, "not-a-session", "x")
		if diff := cmp.Diff(want, list(t, s, state.KindSession)); diff != "" {
			t.Errorf("List (-want +got):\n%s", diff)
		}
	}},
	{"list stops at fn's error", func(t *testing.T, s state.Store) {
		for i := range 10 {
			mustPut(t, s, state.KindCall, fmt.Sprint(i), "x")
		}
		stop := errors.New("stop")
		calls := 0
		err := s.List(context.Background(), state.KindCall, func(string, []byte) error {
			calls++
			if calls == 3 {
				return stop
			}
			return nil
		})
		if !errors.Is(err, stop) || calls != 3 {
			t.Errorf("List = %v after %d calls, want fn's error after 3", err, calls)
		}
	}},
	{"values are copied", func(t *testing.T, s state.Store) {
		ctx := context.Background()
		v := []byte("original")
		if err := s.Put(ctx, state.KindSession, "c", v); err != nil {
			t.Fatal(err)
		}
		copy(v, "XXXXXXXX")
		got, err := s.Get(ctx, state.KindSession, "c")
		if err != nil || string(got) != "original" {
			t.Fatalf("Get after changing Put's slice = %q, %v; want %q", got, err, "original")
		}
		copy(got, "YYYYYYYY")
		if got := mustGet(t, s, state.KindSession, "c"); got != "original" {
			t.Errorf("Get after changing Get's slice = %q, want %q", got, "original")
		}
	}},
	{"odd keys and values", func(t *testing.T, s state.Store) {
		records := map[string]string{
			"s-replica.abc/call-1":   "with a slash",
			"ünïcødé ✓":              "unicode key",
			"spaces and\ttabs":       "",
			strings.Repeat("k", 500): "long key",
			"binary":                 string([]byte{0, 1, 2, 255, 254, 0}),
			"large":                  strings.Repeat("0123456789abcdef", 1<<16), // 1 MiB
		}
		for k, v := range records {
			mustPut(t, s, state.KindCall, k, v)
		}
		if diff := cmp.Diff(records, list(t, s, state.KindCall)); diff != "" {
			t.Errorf("List (-want +got):\n%s", diff)
		}
		for k, v := range records {
			if got := mustGet(t, s, state.KindCall, k); got != v {
				t.Errorf("Get(%q): %d bytes, want %d", k, len(got), len(v))
			}
		}
	}},
	{"empty key or kind is an error", func(t *testing.T, s state.Store) {
		ctx := context.Background()
		if err := s.Put(ctx, state.KindSession, "", []byte("x")); err == nil {
			t.Error("Put with an empty key succeeded")
		}
		if err := s.Put(ctx, "", "k", []byte("x")); err == nil {
			t.Error("Put with an empty kind succeeded")
		}
	}},
	{"cancelled context", func(t *testing.T, s state.Store) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := s.Put(ctx, state.KindSession, "k", []byte("x")); !errors.Is(err, context.Canceled) {
			t.Errorf("Put with a cancelled context: %v, want context.Canceled", err)
		}
		if _, err := s.Get(context.Background(), state.KindSession, "k"); !errors.Is(err, state.ErrNotFound) {
			t.Errorf("Get after a cancelled Put: %v, want ErrNotFound", err)
		}
	}},
	{"concurrent use", func(t *testing.T, s state.Store) {
		ctx := context.Background()
		const workers, each = 8, 25
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			wg.Go(func() {
				for i := range each {
					key := fmt.Sprintf("w%d-%d", w, i)
					if err := s.Put(ctx, state.KindRequest, key, []byte(key)); err != nil {
						errs <- err
						return
					}
					got, err := s.Get(ctx, state.KindRequest, key)
					if err != nil || !bytes.Equal(got, []byte(key)) {
						errs <- fmt.Errorf("Get(%s) = %q, %v", key, got, err)
						return
					}
					if i%5 == 0 {
						if err := s.Delete(ctx, state.KindRequest, key); err != nil {
							errs <- err
							return
						}
					}
					if err := s.List(ctx, state.KindRequest, func(string, []byte) error { return nil }); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if got, want := len(list(t, s, state.KindRequest)), workers*(each-each/5); got != want {
			t.Errorf("%d records after concurrent use, want %d", got, want)
		}
	}},
}

func mustPut(t *testing.T, s state.Store, kind state.Kind, key, value string) {
	t.Helper()
	if err := s.Put(context.Background(), kind, key, []byte(value)); err != nil {
		t.Fatalf("Put(%s, %q): %v", kind, key, err)
	}
}

func mustGet(t *testing.T, s state.Store, kind state.Kind, key string) string {
	t.Helper()
	v, err := s.Get(context.Background(), kind, key)
	if err != nil {
		t.Fatalf("Get(%s, %q): %v", kind, key, err)
	}
	return string(v)
}

func list(t *testing.T, s state.Store, kind state.Kind) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := s.List(context.Background(), kind, func(k string, v []byte) error {
		if _, dup := got[k]; dup {
			return fmt.Errorf("key %q listed twice", k)
		}
		got[k] = string(v)
		return nil
	})
	if err != nil {
		t.Fatalf("List(%s): %v", kind, err)
	}
	return got
}
