package state

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzOpenFile: whatever bytes the state file holds, OpenFile returns a store or a *FileError — never a
// panic, never a store that fails to read what it opened.
func FuzzOpenFile(f *testing.F) {
	dir := f.TempDir()
	seed := filepath.Join(dir, "seed.db")
	newStateFile(f, seed)
	valid, err := os.ReadFile(seed)
	if err != nil || len(valid) == 0 {
		f.Fatalf("seed file: %v", err)
	}
	f.Add(valid, 0, byte(0))
	f.Add(valid, 4096+16, byte(0xff))
	f.Add(valid, 2*4096+40, byte(0x01))
	f.Add([]byte("not a database"), 0, byte(0))
	f.Fuzz(func(t *testing.T, data []byte, at int, b byte) {
		data = bytes.Clone(data)
		if len(data) > 0 {
			if at < 0 {
				at = -at
			}
			data[at%len(data)] ^= b
		}
		path := filepath.Join(t.TempDir(), "state.db")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := OpenFile(path, FileOptions{})
		if err != nil {
			var fe *FileError
			if !errors.As(err, &fe) || fe.Path != path {
				t.Fatalf("OpenFile: %v (%T), want a *FileError naming the file", err, err)
			}
			return
		}
		defer func() { _ = s.Close() }()
		for _, k := range Kinds {
			_ = s.List(context.Background(), k, func(string, []byte) error { return nil })
		}
	})
}

// FuzzSealedOpen: a stored value that was not sealed under the key for its record never opens, and never
// panics.
func FuzzSealedOpen(f *testing.F) {
	inner := NewMemory()
	s, err := Sealed(context.Background(), inner, bytes.Repeat([]byte{7}, KeySize))
	if err != nil {
		f.Fatal(err)
	}
	if err := s.Put(context.Background(), KindCall, "k", []byte("value")); err != nil {
		f.Fatal(err)
	}
	sealedValue, _ := inner.Get(context.Background(), KindCall, "k")
	f.Add(sealedValue)
	f.Add([]byte{1})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, stored []byte) {
		if err := inner.Put(context.Background(), KindCall, "other", stored); err != nil {
			t.Fatal(err)
		}
		if v, err := s.Get(context.Background(), KindCall, "other"); err == nil {
			t.Fatalf("a value never sealed for calls/other opened: %q", v)
		} else if !errors.Is(err, ErrSealBroken) {
			t.Fatalf("Get: %v, want ErrSealBroken", err)
		}
	})
}

// FuzzParseKey: ParseKey returns 32 bytes or an error, whatever it is given.
func FuzzParseKey(f *testing.F) {
	f.Add([]byte("abababababababababababababababababababababababababababababababab"))
	f.Add([]byte("q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s="))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, raw []byte) {
		k, err := ParseKey(raw)
		if err == nil && len(k) != KeySize {
			t.Fatalf("ParseKey(%q) = %d bytes", raw, len(k))
		}
	})
}
