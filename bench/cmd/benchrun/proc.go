package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// --- /proc accounting (Linux) ---

const clockTick = 100 // USER_HZ; Linux reports utime/stime in 1/100 s on every mainstream build

// cpuTime is the user+system CPU time a process has used so far.
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+2:]) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / clockTick
}

// statusField returns a field of /proc/PID/status in bytes (kB fields) or as a count.
func statusField(pid int, name string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			f := strings.Fields(v)
			if len(f) == 0 {
				return -1
			}
			n, _ := strconv.ParseInt(f[0], 10, 64)
			if len(f) > 1 && f[1] == "kB" {
				n *= 1024
			}
			return n
		}
	}
	return -1
}

func rss(pid int) int64     { return statusField(pid, "VmRSS") }
func threads(pid int) int64 { return statusField(pid, "Threads") }

func fdCount(pid int) int {
	es, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return -1
	}
	return len(es)
}

// children lists the live child processes of pid (zombies excluded).
func children(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, t := range tasks {
		b, _ := os.ReadFile(t)
		for f := range strings.FieldsSeq(string(b)) {
			c, _ := strconv.Atoi(f)
			if st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c)); len(st) > 0 {
				if i := bytes.LastIndexByte(st, ')'); i > 0 && i+2 < len(st) && st[i+2] == 'Z' {
					continue
				}
			}
			out = append(out, c)
		}
	}
	sort.Ints(out)
	return out
}

// --- child processes of the harness ---

type proc struct {
	name   string
	cmd    *exec.Cmd
	stderr *tailBuffer
	done   chan struct{}
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

// stop sends SIGTERM and waits (bounded), then kills.
func (p *proc) stop() {
	if p == nil || p.cmd.Process == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// tailBuffer keeps the last 16 KiB written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 16<<10 {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-16<<10:]...)
	}
	t.mu.Unlock()
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

// startProc starts argv; stdout goes to onStdout's line callback (nil discards).
func startProc(name string, argv []string, env []string, onLine func(string)) (*proc, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	p := &proc{name: name, cmd: cmd, stderr: &tailBuffer{}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	var out io.ReadCloser
	if onLine != nil {
		var err error
		if out, err = cmd.StdoutPipe(); err != nil {
			return nil, err
		}
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	if out != nil {
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				onLine(sc.Text())
			}
		}()
	}
	go func() { _ = cmd.Wait(); close(p.done) }()
	return p, nil
}

// freePort returns a loopback address with a port nothing listens on right now.
func freePort() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// waitHTTP polls url with fresh connections until it answers 200 or timeout passes; it returns when it
// first answered.
func waitHTTP(ctx context.Context, url string, timeout time.Duration, every time.Duration) (time.Time, error) {
	cl := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Second}
	deadline := time.Now().Add(timeout)
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := cl.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Now(), nil
			}
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("%s not ready after %s (last error %v)", url, timeout, err)
		}
		time.Sleep(every)
	}
}
