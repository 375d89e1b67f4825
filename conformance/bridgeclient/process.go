package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// bridgeProcess is one running mcp-bridge binary. Its two goroutines are owned by it: the log reader ends
// when the process closes its stderr (it exits), the waiter when the process has exited and been reaped.
// stop ends both.
type bridgeProcess struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process has exited and been reaped
	grpc   string        // the gRPC listener's address, host:port
}

// Bounded waits of stop: after SIGTERM the bridge drains and closes its upstream sessions; after SIGKILL
// only the reaping is left.
const (
	termWait = 4 * time.Second
	killWait = 2 * time.Second
)

// startBridge runs bin with the configuration file cfg on loopback ports the kernel picks and returns once
// the bridge reported its addresses (the JSON log line "mcp-bridge serving"), the process exited, or ctx
// ended; in the last two cases the process is gone when it returns. The bridge's log lines go to logs.
// extraEnv is added to the bridge's environment. The caller must call stop.
func startBridge(ctx context.Context, bin, cfg string, extraEnv []string, logs io.Writer) (*bridgeProcess, error) {
	cmd := exec.Command(bin, "--config", cfg, "--log-format", "json", "--log-level", "debug",
		"--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0")
	cmd.Env = append(os.Environ(), extraEnv...)
	cmd.SysProcAttr = dieWithParent()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start mcp-bridge: %w", err)
	}
	p := &bridgeProcess{cmd: cmd, exited: make(chan struct{})}
	ready := make(chan string, 1)
	eof := make(chan struct{})
	go func() { // ends when the process closes stderr, i.e. exits
		defer close(eof)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Bytes()
			fmt.Fprintf(logs, "mcp-bridge: %s\n", line)
			var rec struct {
				Msg  string `json:"msg"`
				GRPC string `json:"grpc"`
			}
			if json.Unmarshal(line, &rec) == nil && rec.Msg == "mcp-bridge serving" {
				select {
				case ready <- rec.GRPC:
				default:
				}
			}
		}
		_, _ = io.Copy(io.Discard, stderr) // a line over the buffer: keep draining so the bridge never blocks
	}()
	go func() { // ends when the process has exited; Wait only after stderr is read to its end (os/exec)
		<-eof
		_ = cmd.Wait()
		close(p.exited)
	}()
	select {
	case addr := <-ready:
		p.grpc = addr
		return p, nil
	case <-p.exited:
		return nil, fmt.Errorf("mcp-bridge exited before serving: %v", cmd.ProcessState)
	case <-ctx.Done():
		_ = p.stop() // the error that matters is the one below
		return nil, fmt.Errorf("mcp-bridge did not report its addresses: %w", ctx.Err())
	}
}

// stop ends the bridge: SIGTERM, then SIGKILL if it has not exited within termWait. It returns once the
// process is reaped, or after killWait more; it is safe to call more than once.
func (p *bridgeProcess) stop() error {
	select {
	case <-p.exited:
		return p.exitErr()
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return p.exitErr()
	case <-time.After(termWait):
	}
	_ = p.cmd.Process.Kill()
	select {
	case <-p.exited:
		return errors.New("mcp-bridge did not exit within " + termWait.String() + " of SIGTERM; killed")
	case <-time.After(killWait):
		return errors.New("mcp-bridge did not exit after SIGKILL")
	}
}

func (p *bridgeProcess) exitErr() error {
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		return fmt.Errorf("mcp-bridge exited with status %d", code)
	}
	return nil
}
