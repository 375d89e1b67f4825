package state_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mcp-bridge/mcp-bridge/internal/state"
	"github.com/mcp-bridge/mcp-bridge/internal/state/statetest"
)

var testKey = bytes.Repeat([]byte{0xab}, 32)

func sealedMemory(t *testing.T, inner state.Store, key []byte) state.Store {
	t.Helper()
	s, err := state.Sealed(context.Background(), inner, key)
	if err != nil {
		t.Fatalf("Sealed: %v", err)
	}
	return s
}

func TestSealed(t *testing.T) {
	statetest.Run(t, func(t *testing.T) state.Store { return sealedMemory(t, state.NewMemory(), testKey) })
}

// TestSealedAtRest: the engine sees neither a value nor a part of one; the same value sealed twice differs.
func TestSealedAtRest(t *testing.T) {
	ctx := context.Background()
	inner := state.NewMemory()
	s := sealedMemory(t, inner, testKey)
	secret := "the person's answer: 4111 1111 1111 1111"
	for _, key := range []string{"a", "b"} {
		if err := s.Put(ctx, state.KindRequest, key, []byte(secret)); err != nil {
			t.Fatal(err)
		}
	}
	a, _ := inner.Get(ctx, state.KindRequest, "a")
	b, _ := inner.Get(ctx, state.KindRequest, "b")
	if bytes.Contains(a, []byte("4111")) || bytes.Contains(a, []byte("answer")) {
		t.Errorf("the engine holds the value in clear: %q", a)
	}
	if bytes.Equal(a, b) {
		t.Error("the same value sealed twice is the same bytes")
	}
	if len(a) != len(secret)+1+12+16 {
		t.Errorf("sealed value is %d bytes, want %d (version, nonce, tag)", len(a), len(secret)+1+12+16)
	}
}

func TestSealedBroken(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, inner state.Store)
	}{
		{"a flipped bit", func(t *testing.T, inner state.Store) {
			v, _ := inner.Get(ctx, state.KindCall, "s/1")
			v[len(v)/2] ^= 1
			_ = inner.Put(ctx, state.KindCall, "s/1", v)
		}},
		{"truncated", func(t *testing.T, inner state.Store) {
			v, _ := inner.Get(ctx, state.KindCall, "s/1")
			_ = inner.Put(ctx, state.KindCall, "s/1", v[:10])
		}},
		{"empty", func(t *testing.T, inner state.Store) { _ = inner.Put(ctx, state.KindCall, "s/1", nil) }},
		{"moved from another key", func(t *testing.T, inner state.Store) {
			v, _ := inner.Get(ctx, state.KindCall, "s/2")
			_ = inner.Put(ctx, state.KindCall, "s/1", v)
		}},
		{"moved from another kind", func(t *testing.T, inner state.Store) {
			v, _ := inner.Get(ctx, state.KindTask, "s/1")
			_ = inner.Put(ctx, state.KindCall, "s/1", v)
		}},
		{"another version", func(t *testing.T, inner state.Store) {
			v, _ := inner.Get(ctx, state.KindCall, "s/1")
			v[0] = 2
			_ = inner.Put(ctx, state.KindCall, "s/1", v)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inner := state.NewMemory()
			s := sealedMemory(t, inner, testKey)
			for _, r := range []struct {
				kind state.Kind
				key  string
			}{{state.KindCall, "s/1"}, {state.KindCall, "s/2"}, {state.KindTask, "s/1"}} {
				if err := s.Put(ctx, r.kind, r.key, []byte("value of "+string(r.kind)+" "+r.key)); err != nil {
					t.Fatal(err)
				}
			}
			tc.change(t, inner)
			_, err := s.Get(ctx, state.KindCall, "s/1")
			if !errors.Is(err, state.ErrSealBroken) || !strings.Contains(err.Error(), "calls/s/1") {
				t.Errorf("Get: %v, want ErrSealBroken naming calls/s/1", err)
			}
			err = s.List(ctx, state.KindCall, func(string, []byte) error { return nil })
			if !errors.Is(err, state.ErrSealBroken) {
				t.Errorf("List: %v, want ErrSealBroken", err)
			}
			if got, err := s.Get(ctx, state.KindTask, "s/1"); err != nil || string(got) != "value of tasks s/1" {
				t.Errorf("Get of an untouched record = %q, %v", got, err)
			}
		})
	}
}

func TestSealedWrongKey(t *testing.T) {
	ctx := context.Background()
	inner := state.NewMemory()
	s := sealedMemory(t, inner, testKey)
	if err := s.Put(ctx, state.KindSession, "s-1", []byte("x")); err != nil {
		t.Fatal(err)
	}
	other := bytes.Repeat([]byte{0xcd}, 32)
	if _, err := state.Sealed(ctx, inner, other); !errors.Is(err, state.ErrWrongKey) {
		t.Errorf("Sealed with another key: %v, want ErrWrongKey", err)
	}
	if _, err := state.Sealed(ctx, inner, testKey); err != nil {
		t.Errorf("Sealed again with the right key: %v", err)
	}
	if _, err := state.Sealed(ctx, inner, testKey[:16]); err == nil {
		t.Error("Sealed with a 16-byte key succeeded")
	}
}

func TestParseKey(t *testing.T) {
	want := bytes.Repeat([]byte{0xab}, 32)
	for _, tc := range []struct {
		name, in string
		ok       bool
	}{
		{"hex", strings.Repeat("ab", 32), true},
		{"hex upper with newline", strings.Repeat("AB", 32) + "\n", true},
		{"base64", "q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s=", true},
		{"base64 raw url", "q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s", true},
		{"raw bytes", string(want), true},
		{"short hex", strings.Repeat("ab", 15), false},
		{"empty", "", false},
		{"garbage", "not a key", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := state.ParseKey([]byte(tc.in))
			if tc.ok != (err == nil) || tc.ok && !bytes.Equal(k, want) {
				t.Errorf("ParseKey(%q) = %x, %v; want ok %v", tc.in, k, err, tc.ok)
			}
		})
	}
	k, err := state.ParseKey(state.NewKey())
	if err != nil || len(k) != 32 {
		t.Errorf("ParseKey(NewKey()) = %x, %v", k, err)
	}
}
