package mcpcore

// Servers for the session tests: an MCP server built with the official Go SDK (run in-process over an
// in-memory transport or Streamable HTTP, or as a subprocess: the test binary re-executed with
// MCPCORE_TEST_SERVER=sdk), and a scripted raw JSON-RPC stdio server (MCPCORE_TEST_SERVER=raw) for what an
// SDK server never sends: oversized and malformed frames, tasks, requests for undeclared capabilities.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-bridge/mcp-bridge/internal/stdiotransport"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	switch os.Getenv("MCPCORE_TEST_SERVER") {
	case "sdk":
		var versions []string
		if v := os.Getenv("MCPCORE_TEST_VERSIONS"); v != "" {
			versions = strings.Split(v, ",")
		}
		srv := newTestServer(versions, nil)
		if err := srv.Run(context.Background(), stdiotransport.New()); err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	case "raw":
		runRawServer()
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// serverHooks let an in-process test observe the server.
type serverHooks struct {
	started      chan string   // "slow" sends its name when it starts
	cancelled    chan string   // a tool whose context was cancelled sends its name
	cancelElicit chan struct{} // closed by the test: "elicit-cancelled" cancels its elicitation
	finish       chan struct{} // closed by the test: "elicit-cancelled" returns
}

var objectSchema = map[string]any{"type": "object"}

// newTestServer builds the Go SDK test server. versions restricts the protocol versions it speaks.
func newTestServer(versions []string, hooks *serverHooks) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "test-server", Version: "1.0.0"}, &mcp.ServerOptions{
		SupportedProtocolVersions: versions,
		Instructions:              "test instructions",
		PageSize:                  4,
		CompletionHandler: func(_ context.Context, r *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{r.Params.Argument.Value + "-alpha", r.Params.Argument.Value + "-beta"}}}, nil
		},
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		Capabilities:       &mcp.ServerCapabilities{Logging: &mcp.LoggingCapabilities{}},
	})
	tool := func(name string, h mcp.ToolHandler) {
		srv.AddTool(&mcp.Tool{Name: name, InputSchema: objectSchema}, h)
	}
	args := func(r *mcp.CallToolRequest) map[string]any {
		m := map[string]any{}
		_ = json.Unmarshal(r.Params.Arguments, &m)
		return m
	}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	tool("echo", func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := args(r)
		res := text(fmt.Sprint(a["text"]))
		res.StructuredContent = map[string]any{"echo": a["text"]}
		return res, nil
	})
	tool("meta", func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		b, err := json.Marshal(r.Params.Meta)
		return text(string(b)), err
	})
	tool("fail", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res := text("it failed")
		res.IsError = true
		return res, nil
	})
	tool("big", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text(strings.Repeat("y", 200<<10)), nil
	})
	tool("pid", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text(fmt.Sprint(os.Getpid())), nil
	})
	tool("crash", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		os.Exit(3)
		return nil, nil
	})
	tool("stderr", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		for i := range 500 {
			fmt.Fprintf(os.Stderr, "stderr line %d\n", i)
		}
		return text("ok"), nil
	})
	tool("progress", func(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		tok := r.Params.GetProgressToken()
		steps := 3
		if v, ok := args(r)["steps"].(float64); ok {
			steps = int(v)
		}
		for i := 1; i <= steps; i++ {
			if tok != nil {
				_ = r.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: float64(steps), Message: fmt.Sprintf("step %d", i)})
			}
		}
		return text("done"), nil
	})
	tool("log", func(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		_ = r.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "warning", Logger: "test", Data: "hello log"})
		return text("logged"), nil
	})
	tool("slow", func(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if hooks != nil && hooks.started != nil {
			hooks.started <- "slow"
		}
		select {
		case <-ctx.Done():
			if hooks != nil {
				hooks.cancelled <- "slow"
			}
			return nil, ctx.Err()
		case <-time.After(time.Minute):
			return text("slept"), nil
		}
	})
	// ask returns input requests for the kinds in "kinds"; on the retry it reports the answers. On the
	// handshake era the SDK's server compatibility middleware turns the input requests into pushed
	// requests (sampling/createMessage, elicitation/create, roots/list) and re-invokes the handler.
	tool("ask", func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if r.Params.InputResponses == nil {
			reqs := mcp.InputRequestMap{}
			kinds, _ := args(r)["kinds"].([]any)
			for _, k := range kinds {
				switch k {
				case "sampling":
					reqs["s"] = &mcp.CreateMessageParams{MaxTokens: 10, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "2+2?"}}}}
				case "elicitation":
					reqs["e"] = &mcp.ElicitParams{Message: "your name?", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}}
				case "url":
					reqs["u"] = &mcp.ElicitParams{Mode: "url", Message: "log in", URL: "https://example.com/login", ElicitationID: "el-1"}
				case "roots":
					reqs["r"] = &mcp.ListRootsParams{}
				}
			}
			return &mcp.CallToolResult{InputRequests: reqs, RequestState: "state-1"}, nil
		}
		return text(describeResponses(r.Params.InputResponses, r.Params.RequestState)), nil
	})
	tool("elicit-cancelled", func(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ectx, cancel := context.WithCancel(ctx)
		go func() {
			select {
			case <-hooks.cancelElicit:
			case <-ctx.Done():
			}
			cancel()
		}()
		_, err := r.Session.Elicit(ectx, &mcp.ElicitParams{Message: "never mind"})
		select { // the SDK sends notifications/cancelled asynchronously: stay in the call until it is seen
		case <-hooks.finish:
		case <-ctx.Done():
		}
		return text(fmt.Sprintf("elicit: %v", err)), nil
	})
	tool("roots-direct", func(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := r.Session.ListRoots(ctx, nil)
		if err != nil {
			return text("error: " + err.Error()), nil
		}
		return text(fmt.Sprintf("%d roots", len(res.Roots))), nil
	})
	tool("add-tool", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		tool(fmt.Sprintf("added-%d", time.Now().UnixNano()), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("new"), nil })
		return text("added"), nil
	})
	tool("touch", func(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		_ = srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: "test://greeting"})
		return text("touched"), nil
	})
	srv.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}}}, func(_ context.Context, r *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Hello, " + r.Params.Arguments["name"]}}}}, nil
	})
	srv.AddPrompt(&mcp.Prompt{Name: "confirm"}, func(_ context.Context, r *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		if r.Params.InputResponses == nil {
			return &mcp.GetPromptResult{InputRequests: mcp.InputRequestMap{"e": &mcp.ElicitParams{Message: "sure?"}}}, nil
		}
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: describeResponses(r.Params.InputResponses, r.Params.RequestState)}}}}, nil
	})
	srv.AddResource(&mcp.Resource{URI: "test://greeting", Name: "greeting", MIMEType: "text/plain"}, func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, MIMEType: "text/plain", Text: "hello"}}}, nil
	})
	srv.AddResource(&mcp.Resource{URI: "test://needs-roots", Name: "needs-roots"}, func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		if r.Params.InputResponses == nil {
			return &mcp.ReadResourceResult{InputRequests: mcp.InputRequestMap{"r": &mcp.ListRootsParams{}}}, nil
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, Text: describeResponses(r.Params.InputResponses, r.Params.RequestState)}}}, nil
	})
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://items/{id}", Name: "item"}, func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, Text: "item"}}}, nil
	})
	return srv
}

// describeResponses renders MRTR input responses (or legacy answers) in a stable form for assertions.
func describeResponses(in mcp.InputResponseMap, state string) string {
	var parts []string
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range in {
			if !yield(k) {
				return
			}
		}
	}) {
		switch r := in[k].(type) {
		case *mcp.ElicitResult:
			c, _ := json.Marshal(r.Content)
			parts = append(parts, fmt.Sprintf("%s=elicit:%s:%s", k, r.Action, c))
		case *mcp.CreateMessageWithToolsResult:
			var t string
			for _, c := range r.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					t += tc.Text
				}
			}
			parts = append(parts, fmt.Sprintf("%s=sampling:%s:%s", k, r.Model, t))
		case *mcp.CreateMessageResult:
			t := ""
			if tc, ok := r.Content.(*mcp.TextContent); ok {
				t = tc.Text
			}
			parts = append(parts, fmt.Sprintf("%s=sampling:%s:%s", k, r.Model, t))
		case *mcp.ListRootsResult:
			var uris []string
			for _, root := range r.Roots {
				uris = append(uris, root.URI)
			}
			parts = append(parts, fmt.Sprintf("%s=roots:%s", k, strings.Join(uris, ",")))
		default:
			parts = append(parts, fmt.Sprintf("%s=%T", k, r))
		}
	}
	return strings.Join(parts, ";")
}

// runRawServer is a scripted handshake-era stdio server. It answers initialize (2025-11-25), tools/list,
// and tools/call by tool name:
//
//	oversized  a 200 KiB response line
//	malformed  a truncated JSON response that still names the request id, then nothing
//	garbage    a line that is not JSON, then a proper response
//	task       a CreateTaskResult (params.task is required), and a notifications/tasks/status
//	ask-roots  a roots/list request to the client; the answer's error code or roots go into the result
//
// and tasks/get, tasks/result, tasks/cancel. Everything else gets -32601.
func runRawServer() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	send := func(v any) {
		b, _ := json.Marshal(v)
		out.Write(b)
		out.WriteByte('\n')
		out.Flush()
	}
	result := func(id json.RawMessage, r any) {
		send(map[string]any{"jsonrpc": "2.0", "id": id, "result": r})
	}
	textResult := func(s string) map[string]any {
		return map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}}
	}
	task := func(status string) map[string]any {
		return map[string]any{"taskId": "task-1", "status": status, "createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:01Z", "ttl": 60000, "pollInterval": 250}
	}
	var waitingRoots json.RawMessage // id of the tools/call waiting for the client's roots answer
	for in.Scan() {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string          `json:"name"`
				Task json.RawMessage `json:"task"`
			} `json:"params"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if json.Unmarshal(in.Bytes(), &msg) != nil {
			continue
		}
		switch {
		case msg.Method == "" && string(msg.ID) == `"srv-1"`: // the client's answer to our roots/list
			if msg.Error != nil {
				result(waitingRoots, textResult(fmt.Sprintf("roots error %d", msg.Error.Code)))
			} else {
				result(waitingRoots, textResult("roots "+string(msg.Result)))
			}
		case msg.Method == "initialize":
			result(msg.ID, map[string]any{
				"protocolVersion": "2025-11-25",
				"serverInfo":      map[string]any{"name": "raw-server", "version": "0.0.1"},
				"capabilities":    map[string]any{"tools": map[string]any{}, "tasks": map[string]any{"requests": map[string]any{"tools": map[string]any{"call": map[string]any{}}}}},
			})
		case msg.Method == "tools/list":
			result(msg.ID, map[string]any{"tools": []any{map[string]any{"name": "echo", "inputSchema": objectSchema}}})
		case msg.Method == "tools/call":
			switch msg.Params.Name {
			case "oversized":
				result(msg.ID, textResult(strings.Repeat("x", 200<<10)))
			case "malformed":
				fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"te`+"\n", msg.ID)
				out.Flush()
			case "garbage":
				fmt.Fprintln(out, "this is not json")
				out.Flush()
				result(msg.ID, textResult("after garbage"))
			case "task":
				if len(msg.Params.Task) == 0 {
					result(msg.ID, textResult("no task requested"))
					break
				}
				result(msg.ID, map[string]any{"task": task("working")})
				send(map[string]any{"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": task("working")})
			case "task-params":
				result(msg.ID, textResult("task="+string(msg.Params.Task)))
			case "ask-roots":
				waitingRoots = msg.ID
				send(map[string]any{"jsonrpc": "2.0", "id": "srv-1", "method": "roots/list"})
			default:
				result(msg.ID, textResult("echo"))
			}
		case msg.Method == "tasks/get":
			t := task("completed")
			result(msg.ID, t)
		case msg.Method == "tasks/result":
			result(msg.ID, textResult("task result"))
		case msg.Method == "tasks/cancel":
			result(msg.ID, task("cancelled"))
		case len(msg.ID) > 0 && msg.Method != "":
			send(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
		}
	}
}
