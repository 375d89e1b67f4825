package e2e

import (
	"bytes"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// cpuTicks is the CPU time (user + system) the process has used, in clock ticks (/proc/PID/stat).
func cpuTicks(t testing.TB, pid int) int64 {
	t.Helper()
	b := procFile(t, pid, "stat")
	// The command name, in parentheses, may hold spaces: the fields are counted after its ")".
	fields := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	utime, err1 := strconv.ParseInt(fields[11], 10, 64) // field 14 of proc(5)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		t.Fatalf("/proc/%d/stat: %q", pid, b)
	}
	return utime + stime
}

// clockTicks is the kernel's clock ticks per second (getconf CLK_TCK; 100 on Linux unless told otherwise).
func clockTicks() float64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if v, perr := strconv.ParseFloat(strings.TrimSpace(string(out)), 64); err == nil && perr == nil && v > 0 {
		return v
	}
	return 100
}

// sseFloodServer is a 2025-11-25 Streamable HTTP server (a rawServer with a session) whose standalone GET
// stream sends events as fast as the connection takes them, for ever: comments, empty events and log
// notifications. getOpened is closed when the first GET stream opens.
type sseFloodServer struct {
	*rawServer
	getOpened chan struct{}
	once      sync.Once
}

func newSSEFloodServer(t *testing.T) *sseFloodServer {
	fs := &sseFloodServer{getOpened: make(chan struct{})}
	var chunk bytes.Buffer
	for chunk.Len() < 64<<10 {
		chunk.WriteString(": keep reading\n\ndata:\n\n\n")
		chunk.WriteString(`data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"flood"}}` + "\n\n")
	}
	flood := chunk.Bytes()
	fs.rawServer = serveRaw(t, &rawServer{
		sessionID: "flood-1",
		answer: func(method string, id json_) string {
			switch method {
			case "initialize":
				return rpcResult(id, `{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"logging":{}},"serverInfo":{"name":"sse-flood","version":"1"}}`)
			case "tools/list":
				return rpcResult(id, `{"tools":[]}`)
			}
			return rpcResult(id, `{}`)
		},
		get: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			fs.once.Do(func() { close(fs.getOpened) })
			for r.Context().Err() == nil {
				if _, err := w.Write(flood); err != nil {
					return
				}
			}
		},
	})
	return fs
}

// Issue 31, item 5: a server whose standalone GET stream (2025-11-25 Streamable HTTP) sends an endless flood
// of comments, empty events and notifications costs the bridge a bounded share of a core for as long as it
// lasts — the stream is read at a bounded rate — and another session keeps answering. The bound is a
// correctness bound on the CPU the process used over the window, not a timing of any call. Before: more than
// a core, for the session's life.
func TestHostileStandaloneSSEFlood(t *testing.T) {
	up := newSSEFloodServer(t)
	b := start(t, bridgeConfig{extraServers: up.config("flood")})
	ctx := testCtx(t)
	pid := b.cmd.Process.Pid
	innocent, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: serverLegacy})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "flood"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-up.getOpened:
	case <-ctx.Done():
		t.Fatal("the bridge never opened the standalone GET stream")
	}
	// The measurement window: the CPU the bridge used over it, while the flood runs and the innocent session
	// is called (a few calls; their cost is part of what is measured, and small).
	const window = 3 * time.Second
	before, start := cpuTicks(t, pid), time.Now()
	calls := 0
	pacing := time.NewTicker(100 * time.Millisecond) // a few calls over the window, not a stream of them
	defer pacing.Stop()
	for deadline := time.After(window); ; {
		select {
		case <-deadline:
		case <-pacing.C:
			res, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: innocent.GetSession().GetSessionId(), Name: "echo", Arguments: args(t, map[string]any{"text": "innocent"})})
			if err != nil || !strings.Contains(textOf(res.GetResult()), "innocent") {
				t.Fatalf("the innocent session during the flood: %v, %v", res, err)
			}
			calls++
			continue
		}
		break
	}
	share := float64(cpuTicks(t, pid)-before) / clockTicks() / time.Since(start).Seconds()
	t.Logf("the bridge used %.0f%% of a core over %v of an endless standalone SSE flood; %d innocent calls answered", share*100, window, calls)
	if share > 0.5 {
		t.Errorf("the bridge used %.0f%% of a core reading one server's standalone SSE flood, want < 50%%", share*100)
	}
}
