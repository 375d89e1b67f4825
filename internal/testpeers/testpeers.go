// Package testpeers finds and starts the real MCP servers, written by others, that mcp-bridge's tests talk
// to: @modelcontextprotocol/server-everything from npm (stdio and Streamable HTTP) and a server built with the
// official Python SDK (tools/python-peer/server.py, stdio).
//
// Peers are installed by the build, not by tests: `make node-tools` puts the npm packages into
// .tools/node/node_modules and tools/python-peer/install.sh makes the virtual environment .tools/pyvenv.
// Tests find them there, or where these variables say:
//
//	MCPBRIDGE_NODE           node binary (default: node on PATH)
//	MCPBRIDGE_NODE_MODULES   a node_modules directory holding @modelcontextprotocol/server-everything
//	                         (default: <repo>/.tools/node/node_modules)
//	MCPBRIDGE_PYTHON         a Python interpreter that can import the mcp package
//	                         (default: <repo>/.tools/pyvenv/bin/python)
//	MCPBRIDGE_REQUIRE_PEERS  "1": a missing peer fails the test instead of skipping it (make test sets it)
//
// A helper that cannot find its peer calls Missing, which skips the test with the reason and the fix, or
// fails it when MCPBRIDGE_REQUIRE_PEERS=1, so CI never goes green by skipping.
package testpeers

import (
	"bufio"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Environment variables read by this package.
const (
	EnvRequire     = "MCPBRIDGE_REQUIRE_PEERS"
	EnvNode        = "MCPBRIDGE_NODE"
	EnvNodeModules = "MCPBRIDGE_NODE_MODULES"
	EnvPython      = "MCPBRIDGE_PYTHON"
)

// Command is how to launch a stdio peer. It is what a stdio ServerConfig needs, without depending on
// mcpcore, so that any package's tests can use it.
type Command struct {
	Path string
	Args []string
	// Dir is the working directory; empty means the caller's.
	Dir string
}

// Required reports whether a missing peer must fail the test (MCPBRIDGE_REQUIRE_PEERS=1).
func Required() bool { return os.Getenv(EnvRequire) == "1" }

// Missing ends the test because a peer is not available: Skip with the reason, or Fatal when peers are
// required. It does not return.
func Missing(tb testing.TB, format string, args ...any) {
	tb.Helper()
	msg := "peer not available: " + fmt.Sprintf(format, args...)
	if Required() {
		tb.Fatalf("%s (%s=1)", msg, EnvRequire)
	}
	tb.Skip(msg)
}

// RepoRoot is the directory of the module's go.mod, found by walking up from the working directory (go
// test runs each package in its own directory).
func RepoRoot(tb testing.TB) string {
	tb.Helper()
	root, err := repoRoot()
	if err != nil {
		tb.Fatalf("testpeers: %v", err)
	}
	return root
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// skipShort skips a test that needs a peer process in -short mode (make test-unit: Go only, offline).
func skipShort(tb testing.TB) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("needs a peer process; -short runs without them (make test-go runs them)")
	}
}

// Node returns the node binary, or calls Missing. It skips in -short mode.
func Node(tb testing.TB) string {
	tb.Helper()
	skipShort(tb)
	if p := os.Getenv(EnvNode); p != "" {
		if _, err := os.Stat(p); err != nil {
			Missing(tb, "%s=%s: %v", EnvNode, p, err)
		}
		return p
	}
	p, err := exec.LookPath("node")
	if err != nil {
		Missing(tb, "node is not on PATH (install Node.js >= 20, or set %s)", EnvNode)
	}
	return p
}

// NodeModules returns the node_modules directory that holds the npm peers.
func NodeModules(tb testing.TB) string {
	tb.Helper()
	if d := os.Getenv(EnvNodeModules); d != "" {
		return d
	}
	return filepath.Join(RepoRoot(tb), ".tools", "node", "node_modules")
}

// everythingEntry is the server-everything launcher, which takes the transport as its first argument
// ("stdio" or "streamableHttp").
func everythingEntry(tb testing.TB) string {
	tb.Helper()
	entry := filepath.Join(NodeModules(tb), "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(entry); err != nil {
		Missing(tb, "@modelcontextprotocol/server-everything is not installed at %s (run `make node-tools`, or set %s)",
			entry, EnvNodeModules)
	}
	return entry
}

// EverythingStdio returns the command that runs @modelcontextprotocol/server-everything over stdio.
func EverythingStdio(tb testing.TB) Command {
	tb.Helper()
	node := Node(tb)
	return Command{Path: node, Args: []string{everythingEntry(tb), "stdio"}}
}

//go:embed loopback-listen.cjs
var loopbackListen []byte

// readyPrefix starts the line loopback-listen.cjs prints on stderr once the server listens.
const readyPrefix = "MCPBRIDGE_LISTENING "

// EverythingHTTP starts @modelcontextprotocol/server-everything in Streamable HTTP mode on a free loopback
// port and returns its MCP endpoint ("http://127.0.0.1:PORT/mcp"). It returns once the server listens; the
// process (and its process group) is killed when the test ends. The server's output goes to the test log.
//
// The server itself listens on process.env.PORT (default 3001) on every interface, so the package preloads
// loopback-listen.cjs, which makes the listen call bind 127.0.0.1 on a port the kernel picks and print it:
// no fixed port, no race for a port, nothing outside loopback.
func EverythingHTTP(tb testing.TB) string {
	tb.Helper()
	node := Node(tb)
	entry := everythingEntry(tb)
	preload := filepath.Join(tb.TempDir(), "loopback-listen.cjs")
	if err := os.WriteFile(preload, loopbackListen, 0o644); err != nil {
		tb.Fatalf("testpeers: %v", err)
	}
	addr := startAndWait(tb, "server-everything", exec.Command(node, "--require", preload, entry, "streamableHttp"))
	return "http://" + addr + "/mcp"
}

// startAndWait starts cmd in its own process group, copies its output to the test log, and waits for the
// readiness line on stderr (bounded by 30s); it returns the host:port the line names.
func startAndWait(tb testing.TB, name string, cmd *exec.Cmd) string {
	tb.Helper()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = append(os.Environ(), "PORT=0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		tb.Fatalf("testpeers: %v", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatalf("testpeers: %v", err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("testpeers: start %s: %v", name, err)
	}
	log := &testLog{tb: tb, prefix: name + ": "}
	var copying sync.WaitGroup
	// Both copiers end when the process's output pipes close, i.e. when it exits (killed in Cleanup).
	copying.Add(2)
	go func() { defer copying.Done(); log.copy(stdout) }()
	ready := make(chan string, 1)
	go func() {
		defer copying.Done()
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			if !sent && strings.HasPrefix(line, readyPrefix) {
				ready <- strings.TrimPrefix(line, readyPrefix)
				sent = true
				continue
			}
			log.line(line)
		}
		_, _ = io.Copy(io.Discard, stderr)
		close(ready)
	}()
	exited := make(chan error, 1)
	// Wait returns once the process has exited and the pipes are drained; it is reaped here, never twice.
	go func() { copying.Wait(); exited <- cmd.Wait() }()
	tb.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited //nolint:errcheck // killed: its exit status says nothing
		log.stop()
	})

	timer := time.NewTimer(30 * time.Second)
	defer timer.Stop()
	select {
	case addr, ok := <-ready:
		if !ok {
			tb.Fatalf("testpeers: %s exited before it listened (see its output above)", name)
		}
		host, port, found := strings.Cut(addr, " ")
		if _, err := strconv.Atoi(port); !found || err != nil {
			tb.Fatalf("testpeers: %s: bad readiness line %q", name, addr)
		}
		return host + ":" + port
	case <-timer.C:
		tb.Fatalf("testpeers: %s did not listen within 30s", name)
	}
	return ""
}

// testLog forwards a peer's output to t.Log until the test ends (t.Log after the end panics).
type testLog struct {
	tb     testing.TB
	prefix string
	mu     sync.Mutex // guards done and serialises Log calls
	done   bool
}

func (l *testLog) line(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done {
		l.tb.Log(l.prefix + s)
	}
}

func (l *testLog) copy(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		l.line(sc.Text())
	}
	_, _ = io.Copy(io.Discard, r)
}

func (l *testLog) stop() {
	l.mu.Lock()
	l.done = true
	l.mu.Unlock()
}

var (
	pythonOnce sync.Once
	pythonErr  error
	pythonPath string
)

// PythonPeer returns the command that runs tools/python-peer/server.py (official Python SDK) over stdio.
func PythonPeer(tb testing.TB) Command {
	tb.Helper()
	skipShort(tb)
	root := RepoRoot(tb)
	script := filepath.Join(root, "tools", "python-peer", "server.py")
	pythonOnce.Do(func() {
		pythonPath = os.Getenv(EnvPython)
		if pythonPath == "" {
			pythonPath = filepath.Join(root, ".tools", "pyvenv", "bin", "python")
		}
		if _, err := os.Stat(pythonPath); err != nil {
			pythonErr = fmt.Errorf("no Python interpreter at %s (run tools/python-peer/install.sh, or set %s)", pythonPath, EnvPython)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, pythonPath, "-c", "import mcp.server.mcpserver").CombinedOutput()
		if err != nil {
			pythonErr = fmt.Errorf("%s cannot import the mcp package (run tools/python-peer/install.sh): %v: %s",
				pythonPath, err, strings.TrimSpace(string(out)))
		}
	})
	if pythonErr != nil {
		Missing(tb, "%v", pythonErr)
	}
	return Command{Path: pythonPath, Args: []string{script}}
}
