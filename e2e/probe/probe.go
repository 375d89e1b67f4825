// Package probe is an MCP server for mcp-bridge's tests: the built-in demo server plus tools that let a test
// observe, from outside the bridge, what reached the upstream server.
//
//   - block: waits until its request is cancelled (or for durationSeconds, default 60). It reports
//     "started <tag>" when it begins and "cancelled <tag>" when it sees the cancellation, as lines sent to
//     the TCP address in $MCPBRIDGE_PROBE_REPORT (if set), so a test can tell that a gRPC deadline became an
//     MCP cancellation upstream.
//   - pid: returns the server's process id, so a test can check that the process is gone after
//     DeleteSession.
//
// A test binary becomes the probe server when its TestMain calls MaybeRun first: with $MCPBRIDGE_PROBE=1 it
// serves over stdio and exits. The bridge is configured to run os.Args[0] with that variable.
package probe

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/mcp-bridge/mcp-bridge/internal/stdiotransport"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-bridge/mcp-bridge/internal/demoserver"
)

// Environment variables of the probe server.
const (
	EnvRun    = "MCPBRIDGE_PROBE"
	EnvReport = "MCPBRIDGE_PROBE_REPORT"
	// EnvNoLogging "1" serves NoLogging instead of the probe.
	EnvNoLogging = "MCPBRIDGE_PROBE_NO_LOGGING"
	// EnvHugeList "N" serves, instead of the probe, a plain JSON-RPC server (2025-11-25) whose tools/list
	// answers ToolList(N) in one line, without listChanged (the bridge caches nothing): the huge list of the
	// list-memory test over stdio.
	EnvHugeList = "MCPBRIDGE_PROBE_HUGE_LIST"
)

// MaybeRun serves the probe over stdio and exits the process when $MCPBRIDGE_PROBE is "1"; otherwise it
// returns at once.
func MaybeRun() {
	if os.Getenv(EnvRun) != "1" {
		return
	}
	if n, err := strconv.Atoi(os.Getenv(EnvHugeList)); err == nil {
		if err := serveHugeList(os.Stdin, os.Stdout, n); err != nil {
			fmt.Fprintln(os.Stderr, "probe:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	s := New()
	if os.Getenv(EnvNoLogging) == "1" {
		s = NoLogging()
	}
	if err := s.Run(context.Background(), stdiotransport.New()); err != nil {
		fmt.Fprintln(os.Stderr, "probe:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Env returns the environment that makes a test binary the probe server, reporting to report (may be
// empty).
func Env(report string) map[string]string {
	env := map[string]string{EnvRun: "1"}
	if report != "" {
		env[EnvReport] = report
	}
	return env
}

type blockIn struct {
	Tag             string  `json:"tag,omitempty" jsonschema:"a label repeated in the reports"`
	DurationSeconds float64 `json:"durationSeconds,omitempty" jsonschema:"how long to wait at most (default 60)"`
}

type pidOut struct {
	PID int `json:"pid"`
}

// New returns the probe server: the demo server with the probe's tools added.
func New() *mcp.Server {
	s := demoserver.New(nil)
	mcp.AddTool(s, &mcp.Tool{Name: "block", Description: "Waits until cancelled and reports it."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in blockIn) (*mcp.CallToolResult, any, error) {
			report("started " + in.Tag)
			d := 60 * time.Second
			if in.DurationSeconds > 0 {
				d = time.Duration(in.DurationSeconds * float64(time.Second))
			}
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-ctx.Done():
				report("cancelled " + in.Tag)
				return nil, nil, ctx.Err()
			case <-t.C:
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "not cancelled"}}}, nil, nil
			}
		})
	mcp.AddTool(s, &mcp.Tool{Name: "pid", Description: "Returns the server's process id."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, pidOut, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.Itoa(os.Getpid())}}}, pidOut{PID: os.Getpid()}, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "elicit_content", Description: "Asks for a form (name required; color and count with defaults) and returns the content it received as JSON."},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			if resp, ok := req.Params.InputResponses["form"]; ok {
				r, ok := resp.(*mcp.ElicitResult)
				if !ok {
					return nil, nil, fmt.Errorf("unexpected response %T", resp)
				}
				b, err := json.Marshal(map[string]any{"action": r.Action, "content": r.Content})
				if err != nil {
					return nil, nil, err
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, nil
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"form": &mcp.ElicitParams{Mode: "form", Message: "Your name?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{` +
					`"name":{"type":"string"},` +
					`"color":{"type":"string","enum":["red","blue"],"default":"blue"},` +
					`"count":{"type":"integer","default":3}},"required":["name","count"]}`)}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "elicit_pair", Description: "Asks two people's names in one multi round-trip round (2026-07-28) and returns both."},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			first, ok1 := req.Params.InputResponses["first"].(*mcp.ElicitResult)
			second, ok2 := req.Params.InputResponses["second"].(*mcp.ElicitResult)
			if ok1 && ok2 {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("first=%v second=%v", first.Content["name"], second.Content["name"])}}}, nil, nil
			}
			ask := func(who string) *mcp.ElicitParams {
				return &mcp.ElicitParams{Mode: "form", Message: "The " + who + " person's name?",
					RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)}
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"first": ask("first"), "second": ask("second")}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "elicit_rounds", Description: "Asks two people's names in two multi round-trip rounds (2026-07-28), the first name carried to the second round in requestState, and returns both."},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			ask := func(who string) *mcp.ElicitParams {
				return &mcp.ElicitParams{Mode: "form", Message: "The " + who + " person's name?",
					RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)}
			}
			if second, ok := req.Params.InputResponses["second"].(*mcp.ElicitResult); ok {
				first, ok := strings.CutPrefix(req.Params.RequestState, "first=")
				if !ok {
					return nil, nil, fmt.Errorf("round two without round one's state: %q", req.Params.RequestState)
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("first=%s second=%v", first, second.Content["name"])}}}, nil, nil
			}
			if first, ok := req.Params.InputResponses["first"].(*mcp.ElicitResult); ok {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"second": ask("second")}, RequestState: fmt.Sprintf("first=%v", first.Content["name"])}, nil, nil
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"first": ask("first")}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "trace_meta", Description: "Returns the W3C trace context keys of its request's _meta (traceparent, tracestate, baggage) as JSON."},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			got := map[string]any{}
			for _, k := range []string{"traceparent", "tracestate", "baggage"} {
				if v, ok := req.Params.Meta[k]; ok {
					got[k] = v
				}
			}
			b, err := json.Marshal(got)
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add_tool", Description: "Adds a tool of the given name that answers \"added\" (the server then announces tools/list_changed)."},
		func(_ context.Context, _ *mcp.CallToolRequest, in addToolIn) (*mcp.CallToolResult, any, error) {
			s.AddTool(&mcp.Tool{Name: in.Name, InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				report("called " + in.Name)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "added"}}}, nil
			})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "added " + in.Name}}}, nil, nil
		})
	return s
}

type addToolIn struct {
	Name string `json:"name" jsonschema:"the new tool's name"`
}

// NoLogging returns a server that declares no logging capability, with one tool, echo.
func NoLogging() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "probe-no-logging", Version: "1.0.0"},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{}})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Returns its text."},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
		})
	return s
}

// report sends one line to the test, best effort.
func report(line string) {
	addr := os.Getenv(EnvReport)
	if addr == "" {
		return
	}
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return
	}
	defer c.Close()
	_, _ = fmt.Fprintln(c, line)
}

// Reports receives the probe's report lines on a local TCP listener.
type Reports struct {
	ln    net.Listener
	Lines chan string
	done  chan struct{}
}

// Listen starts receiving reports; Addr is what goes into $MCPBRIDGE_PROBE_REPORT. Close stops it.
func Listen() (*Reports, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &Reports{ln: ln, Lines: make(chan string, 64), done: make(chan struct{})}
	go r.accept() // ends when Close closes the listener
	return r, nil
}

// Addr is the listener's address.
func (r *Reports) Addr() string { return r.ln.Addr().String() }

// Close stops the listener and waits for the accept loop.
func (r *Reports) Close() {
	_ = r.ln.Close()
	<-r.done
}

func (r *Reports) accept() {
	defer close(r.done)
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		buf := make([]byte, 512)
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		n, _ := readLine(c, buf)
		_ = c.Close()
		select {
		case r.Lines <- string(buf[:n]):
		default:
		}
	}
}

func readLine(c net.Conn, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := c.Read(buf[n:])
		for i := n; i < n+m; i++ {
			if buf[i] == '\n' {
				return i, nil
			}
		}
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// ToolList is a tools/list result of n tools, each with a small object schema (about 160 bytes a tool): the
// huge list of the hostile e2e suite and the list benchmarks (docs/adr/0097).
func ToolList(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"tools":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"name":"tool-%06d","description":"tool number %d","inputSchema":{"type":"object","properties":{"a":{"type":"string","maxLength":%d}},"required":["a"]}}`, i, i, i%1000)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// serveHugeList answers, one line a message, initialize (2025-11-25), ping and tools/list (ToolList(n), built
// once) until in ends; other requests get -32601, notifications nothing.
func serveHugeList(in io.Reader, out io.Writer, n int) error {
	list := ToolList(n)
	r := bufio.NewReaderSize(in, 1<<16)
	w := bufio.NewWriterSize(out, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(line, &msg) != nil || len(msg.ID) == 0 || msg.Method == "" {
			continue // a notification, or a response to nothing the server asked
		}
		var result []byte
		switch msg.Method {
		case "initialize":
			result = []byte(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"huge","version":"1"}}`)
		case "ping":
			result = []byte(`{}`)
		case "tools/list":
			result = list
		default:
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`+"\n", msg.ID)
			if err := w.Flush(); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":`, msg.ID)
		_, _ = w.Write(result)
		_, _ = w.WriteString("}\n")
		if err := w.Flush(); err != nil {
			return err
		}
	}
}
