package mcpcore

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Shutdown waits for stdio servers (MCP 2025-11-25 basic/lifecycle "Shutdown"; no timings are specified).
// Variables so tests can shorten them.
var (
	stdioExitWait = 3 * time.Second // after closing stdin, before SIGTERM
	stdioTermWait = 3 * time.Second // after SIGTERM, before SIGKILL
	// stderrDrainWait bounds how long the stderr pump may go on after the server's process group is gone:
	// a process outside the group (one that called setsid) may hold stderr open forever.
	stderrDrainWait = time.Second
)

// Bounds on a stdio server's stderr in the logs.
const (
	stderrMaxLine    = 4 << 10 // longer lines are truncated
	stderrRate       = 50      // lines per second, sustained
	stderrBurst      = 200     // lines logged at once before the rate applies
	stdoutReadBuffer = 64 << 10
)

// inheritedEnv are the only variables of the bridge's environment a stdio server inherits.
var inheritedEnv = []string{"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER", "LOGNAME", "SHELL", "TZ"}

// stdioTransport launches a stdio server for one generation of a session. The core uses its own
// transport instead of the SDK's CommandTransport to put the server in its own process group (so no
// grandchild outlives it), to bound and log its stderr, to bound the server's frames without breaking the
// connection on one bad line, and to count bad frames.
type stdioTransport struct {
	s   *Session
	g   *generation
	tap *wireTap
}

func (t *stdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	p, err := startProcess(t.s)
	if err != nil {
		return nil, err
	}
	t.g.proc.Store(p)
	c := &stdioConn{p: p, tap: t.tap, max: t.s.core.limits.MaxMessageBytes, closed: make(chan struct{}),
		br: bufio.NewReaderSize(p.stdout, stdoutReadBuffer)}
	return c, nil
}

// process is a running stdio server, leader of its own process group. It owns two goroutines: reap, and
// the stderr pump, which reap joins; exited is closed only once both have ended.
type process struct {
	cmd        *exec.Cmd
	pgid       int
	stdin      *os.File
	stdout     *os.File
	stderr     *os.File // read end of the server's stderr; owned by reap, which closes it
	logger     *slog.Logger
	stderrDone chan struct{} // closed when the stderr pump has returned
	exited     chan struct{} // closed when the leader has exited and been reaped, and the stderr pump has ended
	err        error         // the leader's exit status; valid after exited
	token      func()        // releases the core's process slot
}

func startProcess(s *Session) (*process, error) {
	c := s.core
	if ok, limit := c.procs.acquire(); !ok {
		return nil, fmt.Errorf("%w: %d stdio server processes are running, the limit (limits.maxStdioProcesses)", ErrTooManySessions, limit)
	}
	release := sync.OnceFunc(c.procs.release)
	cfg := s.server
	cmd := exec.Command(cfg.Command, cfg.Args...)
	cmd.Dir = cfg.Dir
	cmd.Env = serverEnv(cfg.Env)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// Pipes are *os.File on our side, so exec starts no copying goroutines and Wait never closes what we
	// are still reading.
	inR, inW, err := os.Pipe()
	if err != nil {
		release()
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW)
		release()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll(inR, inW, outR, outW)
		release()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		closeAll(inR, inW, outR, outW, errR, errW)
		release()
		return nil, fmt.Errorf("starting %q: %w", cfg.Command, err)
	}
	closeAll(inR, outW, errW) // the child holds these now
	p := &process{cmd: cmd, pgid: cmd.Process.Pid, stdin: inW, stdout: outR, stderr: errR, logger: s.logger,
		stderrDone: make(chan struct{}), exited: make(chan struct{}), token: release}
	s.logger.Info("started stdio server", "pid", p.pgid, "command", cfg.Command)
	go func() { // joined by reap; ends at EOF on stderr, or when reap closes stderr
		defer close(p.stderrDone)
		pumpStderr(s, errR, p.pgid)
	}()
	go p.reap() // ends after the leader exited and the stderr pump ended; its end is exited
	return p, nil
}

func closeAll(fs ...*os.File) {
	for _, f := range fs {
		_ = f.Close()
	}
}

// serverEnv is the minimal inherited environment plus the configured variables.
func serverEnv(extra map[string]string) []string {
	var env []string
	for _, k := range inheritedEnv {
		if v, ok := os.LookupEnv(k); ok {
			if _, override := extra[k]; !override {
				env = append(env, k+"="+v)
			}
		}
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+extra[k])
	}
	return env
}

// reap waits for the leader, then kills what is left of its process group (a server that exited has no
// business leaving children behind), then joins the stderr pump. The pump normally ends at once: with the
// group gone nobody holds stderr open. A process outside the group (one that called setsid) may still
// hold it, so after stderrDrainWait reap closes the read end, which ends the pump's read. Everything the
// group wrote before it died is logged (or counted as dropped) before exited is closed.
func (p *process) reap() {
	p.err = p.cmd.Wait()
	_ = syscall.Kill(-p.pgid, syscall.SIGKILL)
	t := time.NewTimer(stderrDrainWait)
	select {
	case <-p.stderrDone:
	case <-t.C:
		p.logger.Warn("stdio server's stderr is still open after its process group ended; closing it", "pid", p.pgid)
		_ = p.stderr.Close() // unblocks the pump's read with os.ErrClosed
		<-p.stderrDone
	}
	t.Stop()
	_ = p.stderr.Close()
	p.token()
	close(p.exited)
}

func (p *process) exitStatus() string {
	select {
	case <-p.exited:
		if p.err == nil {
			return "exit status 0"
		}
		return p.err.Error()
	default:
		return "running"
	}
}

// kill sends SIGKILL to the whole process group.
func (p *process) kill() { _ = syscall.Kill(-p.pgid, syscall.SIGKILL) }

func (p *process) waitExit(ctx context.Context) {
	select {
	case <-p.exited:
	case <-ctx.Done():
	}
}

// shutdown follows the spec's order: close stdin, wait, SIGTERM, wait, SIGKILL (to the process group).
func (p *process) shutdown() {
	_ = p.stdin.Close()
	if p.waitFor(stdioExitWait) {
		return
	}
	p.logger.Info("stdio server did not exit after stdin closed; sending SIGTERM", "pid", p.pgid)
	_ = syscall.Kill(-p.pgid, syscall.SIGTERM)
	if p.waitFor(stdioTermWait) {
		return
	}
	p.logger.Warn("stdio server did not exit after SIGTERM; sending SIGKILL", "pid", p.pgid)
	p.kill()
	<-p.exited
}

func (p *process) waitFor(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// pumpStderr logs a stdio server's stderr line by line, truncating long lines and dropping lines beyond a
// token-bucket rate (counted; the count is logged when logging resumes). stderr is not an error channel
// (MCP 2025-11-25 transports: clients SHOULD NOT assume it indicates an error), so lines log at Info.
// It returns at EOF or on a read error (reap closed r); it does not close r, reap does.
func pumpStderr(s *Session, r *os.File, pid int) {
	br := bufio.NewReaderSize(r, stderrMaxLine)
	tokens, last := float64(stderrBurst), time.Now()
	var dropped uint64
	for {
		line, _, _, err := readBoundedLine(br, stderrMaxLine, stderrMaxLine)
		if len(line) > 0 {
			now := time.Now()
			tokens = min(float64(stderrBurst), tokens+now.Sub(last).Seconds()*stderrRate)
			last = now
			if tokens >= 1 {
				tokens--
				if dropped > 0 {
					s.logger.Warn("server stderr lines dropped", "pid", pid, "lines", dropped)
					dropped = 0
				}
				s.logger.Info("server stderr", "pid", pid, "line", strings.TrimRight(string(bytes.ToValidUTF8(line, []byte("?"))), "\r\n"))
			} else {
				dropped++
				s.core.stats.stderrDropped.Add(1)
			}
		}
		if err != nil {
			if dropped > 0 {
				s.logger.Warn("server stderr lines dropped", "pid", pid, "lines", dropped)
			}
			return
		}
	}
}

// stdioFrame is one message (or the terminal error) read from a stdio server.
// stdioConn is the newline-delimited JSON-RPC connection to a stdio server (MCP transports, stdio).
//
// It starts no goroutine: the SDK's read loop reads stdout itself, through Read. The pipe is in the runtime's
// poller, so Close unblocks a Read waiting on it, and a frame goes from the pipe to the SDK without a handoff
// between goroutines (one per message, and one goroutine per session, fewer than a reader goroutine would
// cost).
type stdioConn struct {
	p      *process
	tap    *wireTap
	max    int
	closed chan struct{}

	readMu  sync.Mutex    // Read is called by the SDK's one read loop; the mutex makes that a guarantee
	br      *bufio.Reader // guarded by readMu
	readErr error         // guarded by readMu: the error that ended the stream, returned once its last frame was

	writeMu   sync.Mutex // serializes writes to stdin
	closeOnce sync.Once
}

// holdLargeList takes the large-list slot for the tools/list call a long line answers, named by the line's
// first bytes, before the rest is read (largelist.go).
func (c *stdioConn) holdLargeList(prefix []byte) { c.tap.holdLargeListFor(prefix, nil) }

// reply writes a response to the server from Read (used to refuse a bad server request).
func (c *stdioConn) reply(msg jsonrpc.Message) {
	_ = c.Write(context.Background(), msg)
}

// readFrame reads one line of at most max bytes (not counting the newline). For a longer line it returns
// the line's first 4 KiB with oversized set, having discarded the rest. size is the line's full length;
// blank lines have size 0.
func readFrame(br *bufio.Reader, max int, long func(prefix []byte)) (line []byte, size int, oversized bool, err error) {
	line, size, oversized, err = readBoundedLineHook(br, max+2, 4<<10, LargeListBytes, long) // room for "\r\n"
	if !oversized {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			size = 0
		}
	}
	return line, size, oversized, err
}

// readBoundedLine is the one bounded line reader of the servers' byte streams (a stdio server's stdout and
// stderr, an SSE stream): it reads one line through br's buffer, keeping it whole while it is within limit
// bytes (the newline included) and only its first keep bytes past that (oversized; the rest is read and
// dropped, so a line of any length costs at most limit + keep). size is the line's full length.
func readBoundedLine(br *bufio.Reader, limit, keep int) (line []byte, size int, oversized bool, err error) {
	return readBoundedLineHook(br, limit, keep, 0, nil)
}

// readBoundedLineHook is readBoundedLine that calls long with what it kept of the line so far, once, when
// the line grows past at bytes, before the rest of it is read (a large list waits there for its slot:
// largelist.go).
func readBoundedLineHook(br *bufio.Reader, limit, keep, at int, long func(prefix []byte)) (line []byte, size int, oversized bool, err error) {
	for {
		frag, ferr := br.ReadSlice('\n')
		size += len(frag)
		if long != nil && size > at && errors.Is(ferr, bufio.ErrBufferFull) {
			long(append(line, frag...))
			long = nil
		}
		switch {
		case oversized:
		case len(line)+len(frag) > limit:
			oversized = true
			line = append(line, frag...)
			line = line[:min(len(line), keep)]
		default:
			line = append(line, frag...)
		}
		if errors.Is(ferr, bufio.ErrBufferFull) {
			continue
		}
		return line, size, oversized, ferr
	}
}

// Read returns the server's next message. Blank lines are skipped; a bad frame is counted, logged and, when
// its id can be read, answered or turned into a local error (wireTap.badFrame). At the end of stdout (the
// process exited, or Close closed it) the connection is marked lost and the error returned.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	c.readMu.Lock()
	defer c.readMu.Unlock()
	if ctx.Done() != nil { // the SDK's read loop context is never done; honour one that is
		stop := context.AfterFunc(ctx, func() { _ = c.p.stdout.SetReadDeadline(time.Unix(1, 0)) })
		defer stop()
	}
	for c.readErr == nil {
		line, size, oversized, err := readFrame(c.br, c.max, c.holdLargeList)
		c.readErr = err
		if size == 0 {
			continue
		}
		c.tap.observe(false, size)
		var msg jsonrpc.Message
		switch {
		case oversized:
			msg = c.tap.badFrame(line, size, true, nil, c.reply)
		default:
			if m, derr := jsonrpc.DecodeMessage(line); derr != nil {
				msg = c.tap.badFrame(line, size, false, derr, c.reply)
			} else if out, ok := c.tap.received(m, nil); ok {
				msg = out
			}
		}
		if msg != nil {
			return msg, nil
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	select {
	case <-c.closed:
		return nil, io.EOF
	default:
	}
	c.tap.g.markDead("server process closed its output")
	if errors.Is(c.readErr, os.ErrClosed) {
		return nil, io.EOF
	}
	return nil, c.readErr
}

func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	out := c.tap.sent(ctx, msg)
	data, err := jsonrpc.EncodeMessage(out)
	if err != nil {
		c.tap.sendFailed(msg)
		return fmt.Errorf("encoding message: %w", err)
	}
	data = append(data, '\n')
	c.writeMu.Lock()
	_, err = c.p.stdin.Write(data)
	c.writeMu.Unlock()
	if err != nil {
		c.tap.sendFailed(msg)
		c.tap.g.markDead("writing to the server failed")
		return fmt.Errorf("writing to the server: %w", err)
	}
	c.tap.observe(true, len(data))
	return nil
}

// Close shuts the server down in the spec's order and releases the pipes. It returns once the server's
// process group is gone and the process's goroutines (reap and the stderr pump) have ended; a Read waiting
// on stdout returns (the SDK's read loop owns that goroutine). It is idempotent; the SDK calls it once the
// connection is idle or broken.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.tap.g.markDead("connection closed")
		c.p.shutdown()         // returns after exited: reap and the stderr pump have ended
		_ = c.p.stdout.Close() // unblocks a Read waiting on it
	})
	return nil
}

func (c *stdioConn) SessionID() string { return "" }

// Bounds on the log lines about a server's bad frames (wireTap.badFrame): a server that writes garbage in
// a loop would otherwise write a WARN line per frame (782 MB of log in 20 s was measured). Every frame is
// still counted (Core.Stats, the upstream_malformed_messages_total metric).
const (
	badFrameLogBurst  = 20               // lines logged at once before the rate applies
	badFrameLogWindow = 10 * time.Second // then one line per window at most
)

// logThrottle is a token bucket for a kind of log line: burst lines at once, then one per window; the lines
// it holds back are counted, and the next line allowed carries that count.
type logThrottle struct {
	mu         sync.Mutex
	tokens     float64
	last       time.Time
	started    bool
	suppressed uint64
}

// allow reports whether a line may be logged now and, if so, how many were suppressed since the last one.
func (l *logThrottle) allow(burst int, window time.Duration) (ok bool, suppressed uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if !l.started {
		l.started, l.tokens, l.last = true, float64(burst), now
	}
	l.tokens = min(float64(burst), l.tokens+float64(now.Sub(l.last))/float64(window))
	l.last = now
	if l.tokens < 1 {
		l.suppressed++
		return false, 0
	}
	l.tokens--
	suppressed, l.suppressed = l.suppressed, 0
	return true, suppressed
}
