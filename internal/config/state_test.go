package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestState(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "state.key"), []byte(strings.Repeat("ab", 32)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MCPB_TEST_STATE_KEY", strings.Repeat("cd", 32))
	for _, tc := range []struct {
		name, content string
		check         func(t *testing.T, s State)
	}{
		{"absent", "", func(t *testing.T, s State) {
			if s.File != "" || s.Memory || !s.Sync() || s.Key != "" {
				t.Errorf("state = %+v, want memory by default", s)
			}
		}},
		{"memory", "state:\n  memory: true\n", func(t *testing.T, s State) {
			if !s.Memory || s.File != "" {
				t.Errorf("state = %+v", s)
			}
		}},
		{"file with generated key", "state:\n  file: run/state.db\n", func(t *testing.T, s State) {
			if s.File != filepath.Join(dir, "run", "state.db") || s.Key != "" || !s.Sync() {
				t.Errorf("state = %+v", s)
			}
			if got, want := s.KeySource(), filepath.Join(dir, "run", "state.db.key"); got != want {
				t.Errorf("KeySource = %q, want %q", got, want)
			}
		}},
		{"key file", "state:\n  file: /var/lib/mcp-bridge/state.db\n  keyFile: state.key\n  fsync: false\n", func(t *testing.T, s State) {
			if s.File != "/var/lib/mcp-bridge/state.db" || s.Key.Reveal() != strings.Repeat("ab", 32) || s.Sync() {
				t.Errorf("state = %+v", s)
			}
			if got, want := s.KeySource(), filepath.Join(dir, "state.key"); got != want {
				t.Errorf("KeySource = %q, want %q", got, want)
			}
		}},
		{"key env", "state:\n  file: s.db\n  keyEnv: MCPB_TEST_STATE_KEY\n", func(t *testing.T, s State) {
			if s.Key.Reveal() != strings.Repeat("cd", 32) || s.KeySource() != "$MCPB_TEST_STATE_KEY" {
				t.Errorf("state = %+v, source %q", s, s.KeySource())
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse(filepath.Join(dir, "c.yaml"), []byte(tc.content))
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c.State)
		})
	}
}

func TestStateErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "short.key"), []byte("abcd\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MCPB_TEST_BAD_KEY", "swordfish")
	for _, tc := range []struct{ name, content, want string }{
		{"file and memory", "state:\n  file: s.db\n  memory: true\n", "c.yaml:3:3: state.memory: memory: true keeps nothing, but state.file is set; keep one"},
		{"fsync with memory", "state:\n  memory: true\n  fsync: true\n", "c.yaml:3:3: state.fsync: there is nothing to sync with memory: true"},
		{"both keys", "state:\n  file: s.db\n  keyFile: k\n  keyEnv: K\n", "c.yaml:4:3: state.keyEnv: set keyFile or keyEnv, not both"},
		{"key without file", "state:\n  keyEnv: K\n", "c.yaml:1:1: state: a state key without state.file"},
		{"key file missing", "state:\n  file: s.db\n  keyFile: nope.key\n", "nope.key: cannot read state.keyFile: no such file"},
		{"key too short", "state:\n  file: s.db\n  keyFile: short.key\n", "c.yaml:3:3: state.keyFile: " + filepath.Join(dir, "short.key") + ": key must be 32 bytes: 64 hex digits or base64"},
		{"key env unset", "state:\n  file: s.db\n  keyEnv: MCPB_TEST_NEVER_SET\n", "c.yaml:3:3: state.keyEnv: environment variable MCPB_TEST_NEVER_SET is not set"},
		{"key env not a key", "state:\n  file: s.db\n  keyEnv: MCPB_TEST_BAD_KEY\n", "c.yaml:3:3: state.keyEnv: $MCPB_TEST_BAD_KEY: key must be 32 bytes: 64 hex digits or base64"},
		{"unknown key", "state:\n  path: s.db\n", "state.path"},
		{"reset is a flag", "state:\n  reset: true\n", "state.reset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(filepath.Join(dir, "c.yaml"), []byte(tc.content))
			if err == nil {
				t.Fatal("Parse succeeded, want an error")
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "swordfish") {
				t.Errorf("error %q shows the key", err)
			}
		})
	}
}
