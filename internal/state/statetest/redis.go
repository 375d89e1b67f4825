package statetest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Redis is a real redis-server (Debian's package) started by a test on a free loopback port with its data
// in a temporary directory, stopped when the test ends. Tests that need it skip with a message when
// redis-server is not installed, unless MCPBRIDGE_REQUIRE_PEERS=1 (then they fail): scripts/test-scale.sh
// and scripts/test-redis.sh install it.
type Redis struct {
	// Addr is the loopback address it listens on.
	Addr string
	// Password is the AUTH password it requires ("" for none).
	Password string

	t    testing.TB
	exe  string
	dir  string
	args []string

	mu   sync.Mutex // guards cmd and done
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited and its output is read
}

// RedisConfig says how to start the server.
type RedisConfig struct {
	// Password, when set, is required with AUTH (requirepass).
	Password string
	// NoPersistence starts it without the append-only file: a restart loses everything (the "Redis that
	// lost its data" case). By default every write is appended and fsynced each second (appendonly yes).
	NoPersistence bool
}

// StartRedis starts redis-server for the test.
func StartRedis(t testing.TB, cfg RedisConfig) *Redis {
	t.Helper()
	if testing.Short() {
		// make test-unit (-short) is offline and takes seconds by contract; make test-go runs these.
		t.Skip("skipping in -short: starts a redis-server")
	}
	exe, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("MCPBRIDGE_REQUIRE_PEERS") == "1" {
			t.Fatal("redis-server is not installed (apt-get install -y redis-server; scripts/test-scale.sh does it)")
		}
		t.Skip("skipping: redis-server is not installed (apt-get install -y redis-server, or run scripts/test-scale.sh)")
	}
	r := &Redis{t: t, exe: exe, dir: t.TempDir(), Password: cfg.Password}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.Addr = ln.Addr().String()
	ln.Close()
	_, port, _ := net.SplitHostPort(r.Addr)
	r.args = []string{"--port", port, "--bind", "127.0.0.1", "--dir", r.dir, "--save", "", "--daemonize", "no",
		"--protected-mode", "no", "--logfile", "", "--loglevel", "warning"}
	if cfg.NoPersistence {
		r.args = append(r.args, "--appendonly", "no")
	} else {
		r.args = append(r.args, "--appendonly", "yes", "--appendfsync", "everysec")
	}
	if cfg.Password != "" {
		r.args = append(r.args, "--requirepass", cfg.Password)
	}
	r.Start()
	t.Cleanup(r.Kill)
	return r
}

// Start starts the server again after Stop or Kill (with the same port and data directory) and returns
// once it accepts connections.
func (r *Redis) Start() {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd != nil {
		return
	}
	cmd := exec.Command(r.exe, r.args...)
	cmd.Dir = r.dir
	out, err := cmd.StdoutPipe()
	if err != nil {
		r.t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { // ends when redis-server exits and closes its output
		defer close(done)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if line := sc.Text(); strings.TrimSpace(line) != "" {
				r.t.Log("redis-server: " + line)
			}
		}
		_ = cmd.Wait()
	}()
	r.cmd, r.done = cmd, done
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", r.Addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-done:
			r.cmd = nil
			r.t.Fatalf("redis-server exited at start: %v", cmd.ProcessState)
		default:
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("redis-server did not listen on %s within 30s", r.Addr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop shuts the server down gracefully (SIGTERM: the append-only file is flushed) and waits for it.
func (r *Redis) Stop() { r.signal(syscall.SIGTERM) }

// Kill kills the server at once (SIGKILL) and waits for it.
func (r *Redis) Kill() { r.signal(syscall.SIGKILL) }

func (r *Redis) signal(sig syscall.Signal) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cmd == nil {
		return
	}
	_ = r.cmd.Process.Signal(sig)
	<-r.done
	r.cmd = nil
}

// Wipe deletes the data directory's files while the server is stopped: the next Start begins empty.
func (r *Redis) Wipe() {
	r.t.Helper()
	entries, err := os.ReadDir(r.dir)
	if err != nil {
		r.t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(r.dir, e.Name())); err != nil {
			r.t.Fatal(err)
		}
	}
}

// String describes the server for logs.
func (r *Redis) String() string { return fmt.Sprintf("redis-server on %s", r.Addr) }
