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

// TestRekey: after a rotation the new key seals what is written, the old one still opens what it sealed; a
// ring that leaves the old key out is refused while a record needs it, and taken once none does; the
// canary follows the sealing key, so the store opens with the new key file.
func TestRekey(t *testing.T) {
	ctx := context.Background()
	oldKey, newKey := testKey, bytes.Repeat([]byte{0xcd}, 32)
	inner := state.NewMemory()
	s := state.Tracked(sealedMemory(t, inner, oldKey), nil, nil)
	if err := s.Put(ctx, state.KindSession, "before", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	if err := state.Rekey(ctx, s, [][]byte{newKey}); !errors.Is(err, state.ErrKeyStillNeeded) {
		t.Fatalf("Rekey leaving out the key of a record = %v, want ErrKeyStillNeeded", err)
	}
	if err := state.Rekey(ctx, s, [][]byte{newKey, oldKey}); err != nil {
		t.Fatalf("Rekey: %v", err)
	}
	if err := s.Put(ctx, state.KindSession, "after", []byte("v2")); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"before": "v1", "after": "v2"} {
		if v, err := s.Get(ctx, state.KindSession, key); err != nil || string(v) != want {
			t.Errorf("Get %s after the rotation = %q, %v; want %q", key, v, err, want)
		}
	}
	// The new key alone opens what was written after the rotation and the canary, not what was before.
	onlyNew, err := state.Sealed(ctx, inner, newKey)
	if err != nil {
		t.Fatalf("the store with the new key alone: %v", err)
	}
	if _, err := onlyNew.Get(ctx, state.KindSession, "after"); err != nil {
		t.Errorf("a record written after the rotation under the new key alone: %v", err)
	}
	if _, err := onlyNew.Get(ctx, state.KindSession, "before"); !errors.Is(err, state.ErrSealBroken) {
		t.Errorf("a record written before the rotation under the new key alone = %v, want ErrSealBroken", err)
	}
	if _, err := state.Sealed(ctx, inner, oldKey); !errors.Is(err, state.ErrWrongKey) {
		t.Errorf("the store with the old key alone after the rotation = %v, want ErrWrongKey", err)
	}
	// Once the record sealed under the old key is written again, the old key can go.
	if err := s.Put(ctx, state.KindSession, "before", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	if err := state.Rekey(ctx, s, [][]byte{newKey}); err != nil {
		t.Fatalf("Rekey once no record needs the old key: %v", err)
	}
}

func TestParseKeyRing(t *testing.T) {
	a, b := strings.Repeat("ab", 32), strings.Repeat("cd", 32)
	ring, err := state.ParseKeyRing([]byte("# rotated 2026-11-28\n" + b + "\n\n" + a + "\n"))
	if err != nil || len(ring) != 2 || ring[0][0] != 0xcd || ring[1][0] != 0xab {
		t.Fatalf("ParseKeyRing = %x, %v", ring, err)
	}
	if _, err := state.ParseKeyRing([]byte(a + "\nnot a key\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("ParseKeyRing of a bad second line = %v, want it named", err)
	}
}
