package state

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestOpenMemory(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    Config
		logged bool
	}{
		{"default", Config{}, true},
		{"explicit", Config{Memory: true}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs logBuffer
			s, err := Open(context.Background(), tc.cfg, slog.New(slog.NewTextHandler(&logs, nil)))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Put(context.Background(), KindSession, "a", []byte("x")); err != nil {
				t.Fatal(err)
			}
			lines := logs.lines()
			if tc.logged && (len(lines) != 1 || !strings.Contains(lines[0], "a restart loses every session")) {
				t.Errorf("log = %q, want one line saying a restart loses sessions", lines)
			}
			if !tc.logged && len(lines) != 0 {
				t.Errorf("log = %q, want nothing", lines)
			}
		})
	}
}

// TestOpenGeneratedKey: a file without a key gets one generated beside it (mode 0600, logged), which the
// next start reads; values are sealed in the file.
func TestOpenGeneratedKey(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "run", "state.db")
	var logs logBuffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	s, err := Open(ctx, Config{File: path}, logger)
	if err != nil {
		t.Fatal(err)
	}
	secret := "the person typed: hunter2-hunter2"
	if err := s.Put(ctx, KindRequest, "r-1", []byte(secret)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	fi, err := os.Stat(KeyFile(path))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v; want mode 0600", fi, err)
	}
	if !strings.Contains(logs.buf.String(), "generated a sealing key") {
		t.Errorf("log does not tell of the generated key:\n%s", logs.buf.String())
	}
	raw, _ := os.ReadFile(path)
	if bytes.Contains(raw, []byte("hunter2")) {
		t.Error("the state file holds a value in clear")
	}
	key, _ := os.ReadFile(KeyFile(path))
	s, err = Open(ctx, Config{File: path}, logger)
	if err != nil {
		t.Fatalf("second Open: %v", err)
	}
	if v, err := s.Get(ctx, KindRequest, "r-1"); err != nil || string(v) != secret {
		t.Errorf("Get after reopen = %q, %v", v, err)
	}
	s.Close()
	if again, _ := os.ReadFile(KeyFile(path)); !bytes.Equal(again, key) {
		t.Error("the key file changed on the second start")
	}
}

func TestOpenBad(t *testing.T) {
	ctx := context.Background()
	keyA := []byte(strings.Repeat("ab", 32))
	keyB := []byte(strings.Repeat("cd", 32))
	for _, tc := range []struct {
		name    string
		prepare func(t *testing.T, path string) Config
		problem error
		line    string
	}{
		{
			name: "wrong key from the environment",
			prepare: func(t *testing.T, path string) Config {
				openClose(t, Config{File: path, Key: keyA, KeySource: "$STATE_KEY"})
				return Config{File: path, Key: keyB, KeySource: "$STATE_KEY"}
			},
			problem: ErrWrongKey,
			line:    "state file FILE does not open with the key from $STATE_KEY (sealed with another key): give its key, or start over with --state-reset (the file is kept as <file>.bad-<time>)",
		},
		{
			name: "wrong generated key",
			prepare: func(t *testing.T, path string) Config {
				openClose(t, Config{File: path})
				if err := os.WriteFile(KeyFile(path), keyB, 0o600); err != nil {
					t.Fatal(err)
				}
				return Config{File: path}
			},
			problem: ErrWrongKey,
			line:    "state file FILE does not open with the key from FILE.key (sealed with another key): give its key, or start over with --state-reset (the file is kept as <file>.bad-<time>)",
		},
		{
			name: "generated key gone",
			prepare: func(t *testing.T, path string) Config {
				openClose(t, Config{File: path})
				if err := os.Remove(KeyFile(path)); err != nil {
					t.Fatal(err)
				}
				return Config{File: path}
			},
			problem: ErrNoKey,
			line:    "state file FILE exists but its key file FILE.key is missing: restore the key, or start over with --state-reset (the file is kept as <file>.bad-<time>)",
		},
		{
			name: "corrupt file, no key file",
			prepare: func(t *testing.T, path string) Config {
				mustWrite(t, path, "garbage\n")
				return Config{File: path}
			},
			problem: ErrCorrupt,
			line:    "state file FILE is corrupt (not a state file): move it aside, or start over with --state-reset (the file is kept as <file>.bad-<time>)",
		},
		{
			name: "key that is no key",
			prepare: func(t *testing.T, path string) Config {
				return Config{File: path, Key: []byte("swordfish"), KeySource: "/etc/mcp-bridge/state.key"}
			},
			line: "state key from /etc/mcp-bridge/state.key: key must be 32 bytes: 64 hex digits or base64",
		},
		{
			name: "locked",
			prepare: func(t *testing.T, path string) Config {
				s, err := Open(ctx, Config{File: path}, quiet)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { s.Close() })
				return Config{File: path, LockTimeout: 100e6}
			},
			problem: ErrLocked,
			line:    "state file FILE is locked by another process (another mcp-bridge, e.g. `make run`?): stop it, or give this bridge a file of its own with --state-file or state.file (`make run STATE=other.db`)",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			cfg := tc.prepare(t, path)
			s, err := Open(ctx, cfg, quiet)
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			if want := strings.ReplaceAll(tc.line, "FILE", path); err.Error() != want {
				t.Errorf("error:\n got %s\nwant %s", err, want)
			}
			if tc.problem != nil && !errors.Is(err, tc.problem) {
				t.Errorf("error %v is not %v", err, tc.problem)
			}
			if tc.problem == ErrLocked {
				return
			}
			// Starting over opens an empty store and keeps the old file aside.
			cfg.Reset = true
			s, err = Open(ctx, cfg, quiet)
			if tc.problem == nil {
				if err == nil {
					s.Close()
					t.Error("Open with Reset succeeded with a bad key")
				}
				return
			}
			if err != nil {
				t.Fatalf("Open with Reset: %v", err)
			}
			defer s.Close()
			if _, err := s.Get(ctx, KindSession, "s-1"); !errors.Is(err, ErrNotFound) {
				t.Errorf("Get after a reset: %v, want ErrNotFound", err)
			}
			if aside, _ := filepath.Glob(path + ".bad-*"); len(aside) != 1 {
				t.Errorf("moved aside: %v, want one file", aside)
			}
		})
	}
}

// openClose opens the store cfg names, writes a record and closes it.
func openClose(t *testing.T, cfg Config) {
	t.Helper()
	s, err := Open(context.Background(), cfg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(context.Background(), KindSession, "s-1", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
