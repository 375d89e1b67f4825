package mcpcore

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// liveGoroutines counts the goroutines whose stack contains fn.
func liveGoroutines(fn string) int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, fn) {
			count++
		}
	}
	return count
}

// TestCloseJoinsStderrPump: Session.Close returns only after the server's stderr pump has ended, even when
// a process outside the server's process group (here a grandchild that called setsid) still holds the
// server's stderr open: the pump is bounded by stderrDrainWait after the server exited.
func TestCloseJoinsStderrPump(t *testing.T) {
	defer func(d time.Duration) { stderrDrainWait = d }(stderrDrainWait)
	stderrDrainWait = 200 * time.Millisecond

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "grandchild.pid")
	// The shell starts a grandchild in its own session (so the process-group kill misses it) that inherits
	// stderr and keeps it open, writes its pid, then becomes the Go SDK test server.
	script := `setsid sleep 300 </dev/null >/dev/null & echo $! >"$GRANDCHILD_PID"; exec "$0" -test.run='^$'`
	cfg := ServerConfig{Transport: TransportStdio, Command: "/bin/sh", Args: []string{"-c", script, exe},
		Env: map[string]string{"MCPCORE_TEST_SERVER": "sdk", "GRANDCHILD_PID": pidFile}}
	c, _ := newTestCore(t, map[string]ServerConfig{"sub": cfg}, nil)
	s := open(t, c, "sub", "2025-11-25", HostCapabilities{})
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	grandchild, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatalf("grandchild pid %q: %v", raw, err)
	}
	t.Cleanup(func() { _ = syscall.Kill(grandchild, syscall.SIGKILL) })
	callText(t, s, "stderr", nil, CallOptions{})

	if err := s.Close(tctx(t)); err != nil {
		t.Fatal(err)
	}
	if !alive(grandchild) {
		t.Fatal("the grandchild holding stderr is gone; the test proves nothing")
	}
	if n := liveGoroutines("pumpStderr"); n != 0 {
		t.Errorf("%d stderr pumps still running after Session.Close", n)
	}
	if c.Stats().StderrLinesDropped == 0 {
		t.Error("500 stderr lines at once were not rate-bounded")
	}
}

// TestCloseJoinsStderrPumpPlain: without a grandchild, the pump has ended (and counted every line) when
// Close returns.
func TestCloseJoinsStderrPumpPlain(t *testing.T) {
	c, _ := newTestCore(t, map[string]ServerConfig{"sub": selfServer(t, "sdk", nil)}, nil)
	s := open(t, c, "sub", "2025-11-25", HostCapabilities{})
	callText(t, s, "stderr", nil, CallOptions{})
	if err := s.Close(tctx(t)); err != nil {
		t.Fatal(err)
	}
	if n := liveGoroutines("pumpStderr"); n != 0 {
		t.Errorf("%d stderr pumps still running after Session.Close", n)
	}
	if c.Stats().StderrLinesDropped == 0 {
		t.Error("500 stderr lines at once were not rate-bounded")
	}
}
