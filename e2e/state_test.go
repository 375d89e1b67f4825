package e2e

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/internal/state"
	bolt "go.etcd.io/bbolt"
)

// runBridge runs the binary with args until it exits (at most 30s) and returns its exit status and stderr.
func runBridge(t *testing.T, env []string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, append([]string{"--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("running mcp-bridge: %v", err)
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}

// newStateFile makes a state file with one record, the way the bridge does (key generated beside it).
func newStateFile(t *testing.T, path string) {
	t.Helper()
	s, err := state.Open(context.Background(), state.Config{File: path, Memory: false}, discardLogger())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(context.Background(), state.KindSession, "s-1", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestStateBadStore: a state file the bridge cannot use stops it at start with exit status 2 and one line
// on stderr naming the file and what is wrong; --state-reset starts over, keeping the old file aside.
func TestStateBadStore(t *testing.T) {
	const resetHint = ": move it aside, or start over with --state-reset (the file is kept as <file>.bad-<time>)"
	keyA, keyB := strings.Repeat("ab", 32), strings.Repeat("cd", 32)
	tests := []struct {
		name    string
		prepare func(t *testing.T, path string) (env, args []string)
		want    string // the line, FILE standing for the state file's path
		noReset bool   // --state-reset does not help (the file is in use, or cannot be written)
	}{
		{
			name: "corrupt",
			prepare: func(t *testing.T, path string) ([]string, []string) {
				if err := os.WriteFile(path, []byte(strings.Repeat("not a database\n", 500)), 0o600); err != nil {
					t.Fatal(err)
				}
				return nil, nil
			},
			want: "state file FILE is corrupt (not a state file)" + resetHint,
		},
		{
			name: "newer version",
			prepare: func(t *testing.T, path string) ([]string, []string) {
				newStateFile(t, path)
				db, err := bolt.Open(path, 0o600, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				if err := db.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("meta")).Put([]byte("format"), []byte("9")) }); err != nil {
					t.Fatal(err)
				}
				return nil, nil
			},
			want: "state file FILE was written by a newer mcp-bridge (format 9; this one reads up to 1): run that version, or start over with --state-reset (the file is kept as <file>.bad-<time>)",
		},
		{
			name: "unwritable",
			prepare: func(t *testing.T, path string) ([]string, []string) {
				if err := os.WriteFile(filepath.Dir(path)+"/blocker", nil, 0o600); err != nil {
					t.Fatal(err)
				}
				return nil, []string{"--state-file", filepath.Dir(path) + "/blocker/state.db"}
			},
			want:    "state file DIR/blocker/state.db cannot be written (not a directory)",
			noReset: true,
		},
		{
			name: "locked by another bridge",
			prepare: func(t *testing.T, path string) ([]string, []string) {
				start(t, bridgeConfig{defaults: true, flags: []string{"--state-file", path}})
				return nil, nil
			},
			want:    "state file FILE is locked by another process (another mcp-bridge, e.g. `make run`?): stop it, or give this bridge a file of its own with --state-file or state.file (`make run STATE=other.db`)",
			noReset: true,
		},
		{
			name: "wrong key",
			prepare: func(t *testing.T, path string) ([]string, []string) {
				conf := filepath.Join(filepath.Dir(path), "bridge.yaml")
				if err := os.WriteFile(conf, []byte("state:\n  file: state.db\n  keyEnv: MCPB_E2E_STATE_KEY\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				s, err := state.Open(context.Background(), state.Config{File: path, Key: []byte(keyA), KeySource: "test"}, discardLogger())
				if err != nil {
					t.Fatal(err)
				}
				s.Close()
				return []string{"MCPB_E2E_STATE_KEY=" + keyB}, []string{"--config", conf}
			},
			want: "state file FILE does not open with the key from $MCPB_E2E_STATE_KEY (sealed with another key): give its key, or start over with --state-reset (the file is kept as <file>.bad-<time>)",
		},
		{
			name: "key file lost",
			prepare: func(t *testing.T, path string) ([]string, []string) {
				newStateFile(t, path)
				if err := os.Remove(state.KeyFile(path)); err != nil {
					t.Fatal(err)
				}
				return nil, nil
			},
			want: "state file FILE exists but its key file FILE.key is missing: restore the key, or start over with --state-reset (the file is kept as <file>.bad-<time>)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state.db")
			env, args := tt.prepare(t, path)
			if args == nil {
				args = []string{"--state-file", path}
			}
			code, stderr := runBridge(t, env, args...)
			if code != 2 {
				t.Errorf("exit status %d, want 2", code)
			}
			want := "mcp-bridge: " + strings.ReplaceAll(strings.ReplaceAll(tt.want, "FILE", path), "DIR", dir) + "\n"
			if stderr != want {
				t.Errorf("stderr:\n got %q\nwant %q", stderr, want)
			}
			if tt.noReset {
				return
			}
			before, _ := os.ReadFile(path)
			b := start(t, bridgeConfig{defaults: true, env: env, flags: append(args, "--state-reset")})
			b.logs.waitFor(t, func(rec map[string]any) bool {
				return rec["msg"] == "state kept in a file: sessions, pending requests and answers survive a restart"
			})
			b.stop()
			aside, _ := filepath.Glob(path + ".bad-*")
			if len(aside) != 1 {
				t.Fatalf("files moved aside: %v, want one", aside)
			}
			if got, _ := os.ReadFile(aside[0]); string(got) != string(before) {
				t.Error("the file moved aside is not the old file")
			}
			// And the new file opens without the flag.
			b = start(t, bridgeConfig{defaults: true, env: env, flags: args})
			b.stop()
		})
	}
}

// TestStateDefaults: without a state file the bridge says, in one line, that a restart loses sessions;
// with one and no key, it generates the key beside the file (0600) and says so, and reads it at the next
// start.
func TestStateDefaults(t *testing.T) {
	b := start(t, bridgeConfig{defaults: true})
	b.logs.waitFor(t, func(rec map[string]any) bool {
		msg, _ := rec["msg"].(string)
		return strings.HasPrefix(msg, "state kept in memory: a restart loses every session")
	})
	b.stop()

	path := filepath.Join(t.TempDir(), "run", "state.db")
	b = start(t, bridgeConfig{defaults: true, flags: []string{"--state-file", path}})
	b.logs.waitFor(t, func(rec map[string]any) bool { return rec["key_file"] == path+".key" })
	b.stop()
	fi, err := os.Stat(path + ".key")
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v; want mode 0600", fi, err)
	}
	key, _ := os.ReadFile(path + ".key")
	b = start(t, bridgeConfig{defaults: true, flags: []string{"--state-file", path}})
	b.stop()
	if again, _ := os.ReadFile(path + ".key"); string(again) != string(key) {
		t.Error("the key file changed at the second start")
	}
	for _, l := range b.logs.all() {
		if strings.Contains(l, "generated a sealing key") {
			t.Errorf("the second start generated a key again: %s", l)
		}
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestStateFullDisk: the state file's file system fills up while the bridge runs. The bridge keeps serving
// (sessions still open), logs the failure once, reports the store in mcp_bridge_state_store_healthy, and
// recovers once there is room again. Root only: the disk is a tiny tmpfs.
func TestStateFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		// A real full disk needs a tiny file system of its own, which only root can mount; make test and CI
		// run as root, so it runs there.
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", dir).CombinedOutput(); err != nil {
		// Root in a container without CAP_SYS_ADMIN cannot mount: nothing to test the disk with.
		t.Skipf("mount tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() }) // after the bridge's own cleanup stops it
	b := start(t, bridgeConfig{defaults: true, flags: []string{"--state-file", filepath.Join(dir, "state.db")}})
	healthy := func() float64 {
		v, ok := metric(scrape(t, b.http), "mcp_bridge_state_store_healthy", nil)
		if !ok {
			t.Fatal("no mcp_bridge_state_store_healthy in /metrics")
		}
		return v
	}
	if h := healthy(); h != 1 {
		t.Fatalf("healthy = %v at start, want 1", h)
	}
	// Each session carries 16 KB of roots, so that its record needs new pages of the file (a small record
	// fits in pages bbolt freed earlier, and never meets the full disk).
	var roots []*pb.Root
	for i := range 16 {
		roots = append(roots, &pb.Root{Uri: fmt.Sprintf("file:///srv/%d/%s", i, strings.Repeat("x", 1000)), Name: fmt.Sprint(i)})
	}
	open := func(n int) {
		t.Helper()
		for range n {
			if _, err := b.client.CreateSession(testCtx(t), &pb.CreateSessionRequest{Server: "demo", Roots: roots}); err != nil {
				t.Fatalf("CreateSession: %v", err)
			}
		}
	}
	open(1)
	filler := filepath.Join(dir, "filler")
	_ = os.WriteFile(filler, make([]byte, 1<<20), 0o600) // fails with ENOSPC once the tmpfs is full
	open(6)
	if h := healthy(); h != 0 {
		t.Errorf("healthy = %v on a full disk, want 0", h)
	}
	// /readyz stays 200 (the bridge serves) and says the store is failing.
	code, body := b.rest("").do("GET", "/readyz", "")
	if st, _ := body["state"].(map[string]any); code != 200 || st["healthy"] != false || !strings.Contains(fmt.Sprint(st["error"]), "no space left on device") {
		t.Errorf("/readyz on a full disk = %d %v", code, body)
	}
	failures := 0
	for _, l := range b.logs.all() {
		if strings.Contains(l, "state store: a write failed") {
			failures++
		}
	}
	if failures != 1 {
		t.Errorf("%d log lines of failed writes, want 1", failures)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	open(3)
	b.logs.waitFor(t, func(rec map[string]any) bool { return rec["msg"] == "state store: writes succeed again" })
	if h := healthy(); h != 1 {
		t.Errorf("healthy = %v after room was freed, want 1", h)
	}
	if _, body := b.rest("").do("GET", "/readyz", ""); fmt.Sprint(body["state"]) != "map[healthy:true]" {
		t.Errorf("/readyz after room was freed: state %v", body["state"])
	}
}
