package state

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// TestFileFormat checks what is in a new file: the format version and the records bucket, mode 0600.
func TestFileFormat(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "dir", "state.db")
	s, err := OpenFile(path, FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(context.Background(), KindSession, "s-1", []byte("x")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, want 0600", fi.Mode().Perm())
	}
	if di, _ := os.Stat(filepath.Dir(path)); di.Mode().Perm() != 0o700 {
		t.Errorf("directory mode %v, want 0700", di.Mode().Perm())
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_ = db.View(func(tx *bolt.Tx) error {
		if v := string(tx.Bucket(bucketMeta).Get(keyFormat)); v != "1" {
			t.Errorf("format = %q, want 1", v)
		}
		if v := string(tx.Bucket(bucketRecords).Bucket([]byte(KindSession)).Get([]byte("s-1"))); v != "x" {
			t.Errorf("record = %q, want x", v)
		}
		return nil
	})
}

// writeBolt writes a bbolt file at path with fn's changes.
func writeBolt(t *testing.T, path string, fn func(tx *bolt.Tx) error) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// newStateFile writes a state file with a few records at path.
func newStateFile(t testing.TB, path string) {
	t.Helper()
	s, err := OpenFile(path, FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range Kinds {
		if err := s.Put(context.Background(), k, "key", []byte(strings.Repeat("v", 5000))); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// BadFiles are the state files OpenFile refuses, each with its one line (FILE stands for the path). The
// e2e test runs the same cases against the binary.
var badFiles = []struct {
	name    string
	make    func(t *testing.T, path string)
	problem error
	line    string
}{
	{
		name:    "not a database",
		make:    func(t *testing.T, path string) { mustWrite(t, path, strings.Repeat("not a database\n", 1000)) },
		problem: ErrCorrupt,
		line:    "state file FILE is corrupt (not a state file): move it aside, or start over with --state-reset (the file is kept as <file>.bad-<time>)",
	},
	{
		name:    "short file",
		make:    func(t *testing.T, path string) { mustWrite(t, path, "x") },
		problem: ErrCorrupt,
		line:    "state file FILE is corrupt (not a state file): move it aside, or start over with --state-reset (the file is kept as <file>.bad-<time>)",
	},
	{
		name: "another program's bbolt file",
		make: func(t *testing.T, path string) {
			writeBolt(t, path, func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("theirs")); return err })
		},
		problem: ErrCorrupt,
		line:    "state file FILE is corrupt (not an mcp-bridge state file: no format version): move it aside, or start over with --state-reset (the file is kept as <file>.bad-<time>)",
	},
	{
		name: "damaged meta page",
		make: func(t *testing.T, path string) {
			newStateFile(t, path)
			damage(t, path, 16, 4096*2)
		},
		problem: ErrCorrupt,
		line:    "state file FILE is corrupt (not a state file): move it aside, or start over with --state-reset (the file is kept as <file>.bad-<time>)",
	},
	{
		name: "damaged data pages",
		make: func(t *testing.T, path string) {
			newStateFile(t, path)
			fi, _ := os.Stat(path)
			damage(t, path, 4096*2, fi.Size())
		},
		problem: ErrCorrupt,
	},
	{
		name: "newer format",
		make: func(t *testing.T, path string) {
			newStateFile(t, path)
			writeBolt(t, path, func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(keyFormat, []byte("7")) })
		},
		problem: ErrTooNew,
		line:    "state file FILE was written by a newer mcp-bridge (format 7; this one reads up to 1): run that version, or start over with --state-reset (the file is kept as <file>.bad-<time>)",
	},
	{
		name: "directory is a file",
		make: func(t *testing.T, path string) {
			mustWrite(t, filepath.Dir(path), "")
		},
		problem: ErrUnwritable,
		line:    "state file FILE cannot be written (not a directory)",
	},
	{
		name: "read-only file system",
		make: func(t *testing.T, path string) {
			newStateFile(t, path)
			mount(t, filepath.Dir(path), "ro,remount,bind")
		},
		problem: ErrUnwritable,
		line:    "state file FILE cannot be written (read-only file system)",
	},
}

// quiet is a logger that drops everything.
var quiet = slog.New(slog.DiscardHandler)

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// damage overwrites bytes [from, to) of the file with a pattern.
func damage(t *testing.T, path string, from, to int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte(strings.Repeat("\xde\xad\xbe\xef", int(to-from)/4)), from); err != nil {
		t.Fatal(err)
	}
}

// mount mounts dir on itself with options (root only; the test is skipped otherwise) until the test ends.
func mount(t *testing.T, dir, options string) {
	t.Helper()
	if os.Geteuid() != 0 {
		// A read-only or full file system under the state file needs a mount, which only root can make;
		// make test and CI run as root.
		t.Skip("mounting needs root")
	}
	if out, err := exec.Command("mount", "--bind", dir, dir).CombinedOutput(); err != nil {
		t.Skipf("mount --bind: %v: %s", err, out) // root without CAP_SYS_ADMIN (a container): cannot mount
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
	if out, err := exec.Command("mount", "-o", options, dir).CombinedOutput(); err != nil {
		t.Skipf("mount -o %s: %v: %s", options, err, out) // as above
	}
}

func TestOpenFileBad(t *testing.T) {
	for _, tc := range badFiles {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "dir", "state.db")
			tc.make(t, path)
			s, err := OpenFile(path, FileOptions{})
			if err == nil {
				s.Close()
				t.Fatal("OpenFile succeeded")
			}
			var fe *FileError
			if !errors.As(err, &fe) || !errors.Is(err, tc.problem) {
				t.Fatalf("OpenFile: %v (%T), want a *FileError of %v", err, err, tc.problem)
			}
			line := err.Error()
			t.Log(line)
			if want := strings.ReplaceAll(tc.line, "FILE", path); tc.line != "" && line != want {
				t.Errorf("error:\n got %s\nwant %s", line, want)
			}
			if strings.ContainsAny(line, "\r\n") || !strings.Contains(line, "state file "+path+" ") {
				t.Errorf("error %q is not one line naming the file", line)
			}
		})
	}
}

func TestOpenFileLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := OpenFile(path, FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, reset := range []bool{false, true} {
		start := time.Now()
		_, err = OpenFile(path, FileOptions{LockTimeout: 200 * time.Millisecond, Reset: reset})
		if want := "state file " + path + " is locked by another process (another mcp-bridge, e.g. `make run`?): stop it, or give this bridge a file of its own with --state-file or state.file (`make run STATE=other.db`)"; err == nil || err.Error() != want || !errors.Is(err, ErrLocked) {
			t.Errorf("second OpenFile (reset %v): %v, want %q", reset, err, want)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("second OpenFile took %v", took)
		}
	}
	// The first store is untouched and still works; once closed, the file opens again.
	if err := s.Put(context.Background(), KindSession, "a", []byte("1")); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2, err := OpenFile(path, FileOptions{})
	if err != nil {
		t.Fatalf("OpenFile after Close: %v", err)
	}
	s2.Close()
}

func TestOpenFileReset(t *testing.T) {
	for _, tc := range badFiles {
		if tc.problem == ErrUnwritable {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "dir", "state.db")
			tc.make(t, path)
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			s, err := OpenFile(path, FileOptions{Reset: true, Logger: quiet})
			if err != nil {
				t.Fatalf("OpenFile with Reset: %v", err)
			}
			defer s.Close()
			n := 0
			for _, k := range Kinds {
				_ = s.List(context.Background(), k, func(string, []byte) error { n++; return nil })
			}
			if n != 0 {
				t.Errorf("%d records after a reset, want none", n)
			}
			aside, _ := filepath.Glob(path + ".bad-*")
			if len(aside) != 1 {
				t.Fatalf("files moved aside: %v, want one", aside)
			}
			if got, _ := os.ReadFile(aside[0]); string(got) != string(before) {
				t.Errorf("the file moved aside differs from the old file")
			}
		})
	}
	t.Run("no file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "state.db")
		s, err := OpenFile(path, FileOptions{Reset: true, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
		if aside, _ := filepath.Glob(path + ".bad-*"); len(aside) != 0 {
			t.Errorf("moved aside: %v, want nothing", aside)
		}
	})
}

// TestFileFull fills a file capped in size: writes fail with an error naming the file and the record, and
// succeed again once there is room.
func TestFileFull(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := OpenFile(path, FileOptions{maxSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	big := []byte(strings.Repeat("x", 100<<10))
	var full error
	for i := range 20 {
		if full = s.Put(ctx, KindCall, string(rune('a'+i)), big); full != nil {
			break
		}
	}
	if full == nil || !strings.HasPrefix(full.Error(), "state file "+path+": writing calls/") {
		t.Fatalf("Put on a full file: %v, want an error naming the file and the record", full)
	}
	if err := s.Delete(ctx, KindCall, "a"); err != nil {
		t.Fatalf("Delete on a full file: %v", err)
	}
	if err := s.Put(ctx, KindCall, "small", []byte("x")); err != nil {
		t.Errorf("Put after freeing room: %v", err)
	}
}
