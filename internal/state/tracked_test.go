package state

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// failing is a store whose writes fail while fail is set.
type failing struct {
	Store
	mu   sync.Mutex
	fail error
}

func (f *failing) set(err error) { f.mu.Lock(); f.fail = err; f.mu.Unlock() }

func (f *failing) Put(ctx context.Context, kind Kind, key string, value []byte) error {
	f.mu.Lock()
	err := f.fail
	f.mu.Unlock()
	if err != nil {
		return err
	}
	return f.Store.Put(ctx, kind, key, value)
}

// logBuffer is a logger and what it wrote.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}
func (l *logBuffer) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.FieldsFunc(l.buf.String(), func(r rune) bool { return r == '\n' })
}

func TestTracked(t *testing.T) {
	ctx := context.Background()
	inner := &failing{Store: NewMemory()}
	var logs logBuffer
	var changes []bool
	s := Tracked(inner, slog.New(slog.NewTextHandler(&logs, nil)), func(h bool) { changes = append(changes, h) })

	if err := s.Put(ctx, KindSession, "a", []byte("1")); err != nil || s.Health() != nil {
		t.Fatalf("healthy Put: %v, Health %v", err, s.Health())
	}
	disk := errors.New("write state.db: no space left on device")
	inner.set(disk)
	for range 5 {
		if err := s.Put(ctx, KindSession, "b", []byte("2")); !errors.Is(err, disk) {
			t.Fatalf("Put on a failing store: %v, want its error", err)
		}
	}
	h := s.Health()
	if !errors.Is(h, disk) || !strings.HasPrefix(h.Error(), "state store failing since ") || strings.Contains(h.Error(), "\n") {
		t.Errorf("Health = %v, want one line with the first failure", h)
	}
	// A cancelled write or a Delete that succeeds says nothing new; reads keep working.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_ = s.Put(cctx, KindSession, "c", nil)
	if v, err := s.Get(ctx, KindSession, "a"); err != nil || string(v) != "1" {
		t.Errorf("Get while degraded = %q, %v", v, err)
	}
	if got := len(logs.lines()); got != 1 {
		t.Errorf("%d log lines after 5 failed writes, want 1:\n%s", got, strings.Join(logs.lines(), "\n"))
	}
	// One write that succeeds between failures is not yet health: RecoverAfter in a row are.
	inner.set(nil)
	_ = s.Put(ctx, KindSession, "b", []byte("2"))
	inner.set(disk)
	_ = s.Put(ctx, KindSession, "b", []byte("2"))
	inner.set(nil)
	for i := range RecoverAfter {
		if s.Health() == nil {
			t.Fatalf("healthy after %d good writes, want %d", i, RecoverAfter)
		}
		if err := s.Put(ctx, KindSession, "b", []byte("2")); err != nil {
			t.Fatal(err)
		}
	}
	if s.Health() != nil {
		t.Fatalf("Health after %d good writes: %v", RecoverAfter, s.Health())
	}
	// A second degradation within LogEvery is told to onChange but logged at level debug.
	inner.set(disk)
	_ = s.Put(ctx, KindSession, "b", nil)
	inner.set(nil)
	for range RecoverAfter {
		_ = s.Delete(ctx, KindSession, "b")
	}
	if want := []bool{false, true, false, true}; !slicesEqual(changes, want) {
		t.Errorf("onChange calls %v, want %v", changes, want)
	}
	if got := len(logs.lines()); got != 3 {
		t.Errorf("%d log lines after two degradations, want 3 (error, recovery, recovery):\n%s", got, strings.Join(logs.lines(), "\n"))
	}
}

func slicesEqual(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestTrackedFullDisk fills a real (tiny tmpfs) file system under the file engine: writes fail, the store
// is degraded and logs once, reads go on, and once room is freed writes succeed again.
func TestTrackedFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		// A real full disk needs a tiny file system of its own, which only root can mount; make test and CI
		// run as root, so it runs there.
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", dir).CombinedOutput(); err != nil {
		// Root in a container without CAP_SYS_ADMIN cannot mount: nothing to test the disk with.
		t.Skipf("mount tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", dir).Run() })
	path := filepath.Join(dir, "state.db")
	f, err := OpenFile(path, FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var logs logBuffer
	degradations := 0
	s := Tracked(f, slog.New(slog.NewTextHandler(&logs, nil)), func(healthy bool) {
		if !healthy {
			degradations++
		}
	})
	defer s.Close()
	ctx := context.Background()
	filler := filepath.Join(dir, "filler")
	value := bytes.Repeat([]byte("x"), 16<<10)
	var failed error
	for i := 0; i < 200 && failed == nil; i++ {
		failed = s.Put(ctx, KindCall, "k"+string(rune('A'+i%50))+string(rune('a'+i/50)), value)
	}
	if failed == nil {
		// bbolt may have room left in its own pages: fill the file system from outside as well.
		_ = os.WriteFile(filler, bytes.Repeat([]byte("f"), 1<<20), 0o600)
		for i := 0; i < 200 && failed == nil; i++ {
			failed = s.Put(ctx, KindCall, "more"+string(rune('a'+i)), value)
		}
	}
	if failed == nil {
		t.Fatal("no write failed on a full file system")
	}
	t.Logf("write on a full disk: %v", failed)
	if !strings.Contains(failed.Error(), "state file "+path) {
		t.Errorf("error %q does not name the file", failed)
	}
	if s.Health() == nil {
		t.Fatal("Health is nil after a failed write")
	}
	_ = os.WriteFile(filler, bytes.Repeat([]byte("f"), 1<<20), 0o600) // whatever room is left
	for i := range 10 {
		_ = s.Put(ctx, KindCall, "again"+string(rune('a'+i)), value)
	}
	if _, err := s.Get(ctx, KindCall, "kAa"); err != nil {
		t.Errorf("Get on a full disk: %v", err)
	}
	// One error line per degradation, not per failed write.
	errorLines := 0
	for _, l := range logs.lines() {
		if strings.Contains(l, "level=ERROR") {
			errorLines++
		}
	}
	if errorLines != 1 || degradations != 1 {
		t.Errorf("%d error lines and %d degradations after many failed writes, want 1:\n%s", errorLines, degradations, strings.Join(logs.lines(), "\n"))
	}
	// Free room: the filler and some records (bbolt reuses their pages).
	_ = os.Remove(filler)
	for range RecoverAfter {
		if err := s.Put(ctx, KindCall, "small", []byte("x")); err != nil {
			t.Fatalf("Put after freeing room: %v", err)
		}
	}
	if s.Health() != nil {
		t.Errorf("Health after a write succeeded: %v", s.Health())
	}
	// The file still opens after all this.
	_ = s.Close()
	f2, err := OpenFile(path, FileOptions{})
	if err != nil {
		t.Fatalf("reopening after a full disk: %v", err)
	}
	if v, err := f2.Get(ctx, KindCall, "small"); err != nil || string(v) != "x" {
		t.Errorf("Get after reopen = %q, %v", v, err)
	}
	f2.Close()
}

func TestTrackedCountsWrites(t *testing.T) {
	ctx := context.Background()
	inner := &failing{Store: NewMemory()}
	s := Tracked(inner, slog.New(slog.DiscardHandler), nil)
	_ = s.Put(ctx, KindSession, "a", []byte("1"))
	_, _ = s.Get(ctx, KindSession, "a")
	_ = s.List(ctx, KindSession, func(string, []byte) error { return nil })
	_ = s.Delete(ctx, KindSession, "a")
	_ = s.Delete(ctx, KindSession, "missing")
	inner.set(errors.New("disk full"))
	_ = s.Put(ctx, KindSession, "b", []byte("2"))
	if got := s.Writes(); got != 4 {
		t.Fatalf("Writes = %d, want 4 (two puts, two deletes; reads are not writes)", got)
	}
}
