package demoserver

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// The two protocol eras the demo server must serve with the same handlers.
const (
	legacyEra    = "2025-11-25" // initialize handshake, server→client requests
	statelessEra = "2026-07-28" // server/discover, _meta on every request, MRTR
)

var eras = []string{legacyEra, statelessEra}

// testTimeout bounds every test's context, so that a hang fails instead of stalling the suite.
const testTimeout = 20 * time.Second

// connect starts a fresh demo server, connects a client with opts at the given protocol version
// over in-memory transports, and closes both at the end of the test.
func connect(t *testing.T, version string, opts *mcp.ClientOptions) (*mcp.ClientSession, *demo) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	server, d := newServer(nil)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatalf("server connect: %v", err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v0.0.1"}, opts)
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("client connect: %v", err)
	}
	if got := cs.InitializeResult().ProtocolVersion; got != version {
		t.Fatalf("negotiated protocol version %q, want %q", got, version)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	return cs, d
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(testContext(t), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool(%s): %v", name, err)
	}
	return res
}

// text returns the concatenated text content of a result.
func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// structured decodes a result's structured content (a json.RawMessage or a decoded map on the
// client side) into a generic map.
func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	data, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatalf("marshal structured content: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("structured content %s is not an object: %v", data, err)
	}
	return m
}

func forEachEra(t *testing.T, f func(t *testing.T, version string)) {
	for _, v := range eras {
		t.Run(v, func(t *testing.T) { f(t, v) })
	}
}

func TestListTools(t *testing.T) {
	forEachEra(t, func(t *testing.T, version string) {
		cs, _ := connect(t, version, nil)
		res, err := cs.ListTools(testContext(t), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		withOutput := map[string]bool{}
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
			withOutput[tool.Name] = tool.OutputSchema != nil
		}
		slices.Sort(names)
		want := []string{"add", "echo", "elicit", "elicit_url", "fail", "increment", "list_roots", "log", "long_operation", "sample", "structured"}
		if diff := cmp.Diff(want, names); diff != "" {
			t.Errorf("tools (-want +got):\n%s", diff)
		}
		for _, name := range []string{"add", "structured", "increment"} {
			if !withOutput[name] {
				t.Errorf("tool %s has no output schema", name)
			}
		}
	})
}

func TestEchoAddFail(t *testing.T) {
	forEachEra(t, func(t *testing.T, version string) {
		cs, _ := connect(t, version, nil)

		if res := callTool(t, cs, "echo", map[string]any{"text": "hello"}); text(res) != "hello" || res.IsError {
			t.Errorf("echo = %q (isError %v), want hello", text(res), res.IsError)
		}

		res := callTool(t, cs, "add", map[string]any{"a": 2, "b": 3.5})
		if res.IsError {
			t.Fatalf("add failed: %s", text(res))
		}
		if got := text(res); got != "2 + 3.5 = 5.5" {
			t.Errorf("add text = %q", got)
		}
		if diff := cmp.Diff(map[string]any{"sum": 5.5}, structured(t, res)); diff != "" {
			t.Errorf("add structured content (-want +got):\n%s", diff)
		}

		res = callTool(t, cs, "fail", map[string]any{"message": "boom"})
		if !res.IsError || text(res) != "boom" {
			t.Errorf("fail = %q (isError %v), want boom with isError", text(res), res.IsError)
		}
		res = callTool(t, cs, "fail", nil)
		if !res.IsError || text(res) != "this tool always fails" {
			t.Errorf("fail without message = %q (isError %v)", text(res), res.IsError)
		}

		// Arguments that do not match the input schema are a tool error, not a protocol error.
		res = callTool(t, cs, "add", map[string]any{"a": "two"})
		if !res.IsError {
			t.Errorf("add with a string argument succeeded: %s", text(res))
		}
	})
}

func TestStructured(t *testing.T) {
	forEachEra(t, func(t *testing.T, version string) {
		cs, _ := connect(t, version, nil)
		res := callTool(t, cs, "structured", map[string]any{"city": "Lisbon"})
		if res.IsError {
			t.Fatalf("structured failed: %s", text(res))
		}
		got := structured(t, res)
		if got["city"] != "Lisbon" {
			t.Errorf("city = %v", got["city"])
		}
		for _, key := range []string{"temperatureC", "conditions", "humidityPct", "forecast"} {
			if _, ok := got[key]; !ok {
				t.Errorf("structured content lacks %q: %v", key, got)
			}
		}
		// The text content is the JSON of the structured content, for clients that ignore it.
		var fromText map[string]any
		if err := json.Unmarshal([]byte(text(res)), &fromText); err != nil {
			t.Fatalf("text content is not JSON: %v", err)
		}
		if diff := cmp.Diff(got, fromText); diff != "" {
			t.Errorf("text content differs from structured content (-structured +text):\n%s", diff)
		}
		again := structured(t, callTool(t, cs, "structured", map[string]any{"city": "lisbon "}))
		again["city"] = "Lisbon"
		if diff := cmp.Diff(got, again); diff != "" {
			t.Errorf("report is not deterministic (-first +second):\n%s", diff)
		}
		if res := callTool(t, cs, "structured", map[string]any{"city": " "}); !res.IsError {
			t.Errorf("structured with a blank city succeeded")
		}
	})
}

func TestLongOperationProgress(t *testing.T) {
	forEachEra(t, func(t *testing.T, version string) {
		progress := make(chan *mcp.ProgressNotificationParams, 10)
		cs, _ := connect(t, version, &mcp.ClientOptions{
			ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
				progress <- req.Params
			},
		})
		params := &mcp.CallToolParams{Name: "long_operation", Arguments: map[string]any{"durationSeconds": 0.03, "steps": 3}}
		params.SetProgressToken("tok-1")
		res, err := cs.CallTool(testContext(t), params)
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError {
			t.Fatalf("long_operation failed: %s", text(res))
		}
		for i := 1; i <= 3; i++ {
			select {
			case p := <-progress:
				if p.ProgressToken != "tok-1" || p.Progress != float64(i) || p.Total != 3 {
					t.Errorf("progress %d = %+v", i, p)
				}
			case <-testContext(t).Done():
				t.Fatalf("progress notification %d never arrived", i)
			}
		}
	})
}

func TestLongOperationWithoutTokenAndBadInput(t *testing.T) {
	cs, _ := connect(t, legacyEra, nil)
	if res := callTool(t, cs, "long_operation", map[string]any{"durationSeconds": 0.01, "steps": 2}); res.IsError {
		t.Errorf("long_operation without a progress token failed: %s", text(res))
	}
	for _, args := range []map[string]any{
		{"durationSeconds": -1},
		{"durationSeconds": 100000},
		{"steps": -2},
		{"steps": 5000},
	} {
		if res := callTool(t, cs, "long_operation", args); !res.IsError {
			t.Errorf("long_operation(%v) succeeded, want a tool error", args)
		}
	}
}

func TestLongOperationCancel(t *testing.T) {
	forEachEra(t, func(t *testing.T, version string) {
		progress := make(chan struct{}, 100)
		cs, d := connect(t, version, &mcp.ClientOptions{
			ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
				progress <- struct{}{}
			},
		})
		cancelled := make(chan int, 1)
		d.onCancel = func(step int) { cancelled <- step }

		ctx, cancel := context.WithCancel(testContext(t))
		defer cancel()
		errc := make(chan error, 1)
		go func() {
			params := &mcp.CallToolParams{Name: "long_operation", Arguments: map[string]any{"durationSeconds": 60, "steps": 600}}
			params.SetProgressToken(7)
			_, err := cs.CallTool(ctx, params)
			errc <- err
		}()
		select {
		case <-progress:
		case <-testContext(t).Done():
			t.Fatal("no progress before cancelling")
		}
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Errorf("CallTool after cancel: %v, want context.Canceled", err)
		}
		select {
		case step := <-cancelled:
			if step >= 600 {
				t.Errorf("cancelled at step %d, want early", step)
			}
		case <-testContext(t).Done():
			t.Fatal("the server never observed the cancellation")
		}
	})
}

func TestSample(t *testing.T) {
	forEachEra(t, func(t *testing.T, version string) {
		var got *mcp.CreateMessageParams
		cs, _ := connect(t, version, &mcp.ClientOptions{
			CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				got = req.Params
				return &mcp.CreateMessageResult{
					Model:      "test-model",
					Role:       "assistant",
					StopReason: "endTurn",
					Content:    &mcp.TextContent{Text: "Paris"},
				}, nil
			},
		})
		res := callTool(t, cs, "sample", map[string]any{"prompt": "Capital of France?", "maxTokens": 20})
		if res.IsError {
			t.Fatalf("sample failed: %s", text(res))
		}
		if text(res) != "Paris" {
			t.Errorf("sample text = %q, want Paris", text(res))
		}
		if diff := cmp.Diff(map[string]any{"model": "test-model", "stopReason": "endTurn"}, structured(t, res)); diff != "" {
			t.Errorf("sample structured content (-want +got):\n%s", diff)
		}
		if got == nil || got.MaxTokens != 20 || len(got.Messages) != 1 {
			t.Fatalf("sampling request = %+v", got)
		}
		if tc, ok := got.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != "Capital of France?" {
			t.Errorf("sampling message = %+v", got.Messages[0].Content)
		}
	})
}

func TestSampleWithoutCapability(t *testing.T) {
	forEachEra(t, func(t *testing.T, version string) {
		cs, _ := connect(t, version, nil)
		res := callTool(t, cs, "sample", map[string]any{"prompt": "hi"})
		if !res.IsError || !strings.Contains(text(res), "sampling") {
			t.Errorf("sample without capability = %q (isError %v)", text(res), res.IsError)
		}
	})
}

func TestElicit(t *testing.T) {
	tests := []struct {
		name     string
		reply    *mcp.ElicitResult
		wantText string
		want     map[string]any
	}{
		{
			name:     "accept",
			reply:    &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "age": 36}},
			wantText: "accepted: name=Ada age=36",
			want:     map[string]any{"action": "accept", "content": map[string]any{"name": "Ada", "age": 36.0}},
		},
		{
			name:     "accept without optional age",
			reply:    &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Grace"}},
			wantText: "accepted: name=Grace",
			want:     map[string]any{"action": "accept", "content": map[string]any{"name": "Grace"}},
		},
		{
			name:     "decline",
			reply:    &mcp.ElicitResult{Action: "decline"},
			wantText: "declined",
			want:     map[string]any{"action": "decline"},
		},
		{
			name:     "cancel",
			reply:    &mcp.ElicitResult{Action: "cancel"},
			wantText: "cancelled",
			want:     map[string]any{"action": "cancel"},
		},
	}
	forEachEra(t, func(t *testing.T, version string) {
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var got *mcp.ElicitParams
				cs, _ := connect(t, version, &mcp.ClientOptions{
					ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
						got = req.Params
						return tt.reply, nil
					},
				})
				res := callTool(t, cs, "elicit", map[string]any{"message": "Who are you?"})
				if res.IsError {
					t.Fatalf("elicit failed: %s", text(res))
				}
				if text(res) != tt.wantText {
					t.Errorf("elicit text = %q, want %q", text(res), tt.wantText)
				}
				if diff := cmp.Diff(tt.want, structured(t, res)); diff != "" {
					t.Errorf("elicit structured content (-want +got):\n%s", diff)
				}
				if got == nil || got.Message != "Who are you?" || got.Mode != "form" {
					t.Fatalf("elicitation request = %+v", got)
				}
				schema, _ := json.Marshal(got.RequestedSchema)
				if !strings.Contains(string(schema), `"age"`) || !strings.Contains(string(schema), `"required":["name"]`) {
					t.Errorf("requested schema = %s", schema)
				}
			})
		}
	})
}

func TestElicitWithoutCapability(t *testing.T) {
	forEachEra(t, func(t *testing.T, version string) {
		cs, _ := connect(t, version, nil)
		for _, tool := range []string{"elicit", "elicit_url"} {
			if res := callTool(t, cs, tool, nil); !res.IsError || !strings.Contains(text(res), "elicitation") {
				t.Errorf("%s without capability = %q (isError %v)", tool, text(res), res.IsError)
			}
		}
	})
}

func TestElicitURL(t *testing.T) {
	forEachEra(t, func(t *testing.T, version string) {
		var got *mcp.ElicitParams
		completed := make(chan string, 1)
		cs, _ := connect(t, version, &mcp.ClientOptions{
			Capabilities: &mcp.ClientCapabilities{
				Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}},
			},
			ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				got = req.Params
				return &mcp.ElicitResult{Action: "accept"}, nil
			},
			ElicitationCompleteHandler: func(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
				completed <- req.Params.ElicitationID
			},
		})
		res := callTool(t, cs, "elicit_url", map[string]any{"url": "https://example.com/x"})
		if res.IsError {
			t.Fatalf("elicit_url failed: %s", text(res))
		}
		if got == nil || got.Mode != "url" || got.URL != "https://example.com/x" || got.ElicitationID == "" {
			t.Fatalf("elicitation request = %+v", got)
		}
		if text(res) != "url elicitation: accept" {
			t.Errorf("elicit_url text = %q", text(res))
		}
		select {
		case id := <-completed:
			if id != got.ElicitationID {
				t.Errorf("completion for %q, want %q", id, got.ElicitationID)
			}
		case <-testContext(t).Done():
			t.Fatal("no notifications/elicitation/complete")
		}
	})
}

func TestListRootsEmpty(t *testing.T) {
	forEachEra(t, func(t *testing.T, version string) {
		// The SDK client declares roots by default; with none added the list is empty.
		cs, _ := connect(t, version, nil)
		res := callTool(t, cs, "list_roots", nil)
		if res.IsError || text(res) != "0 root(s)" {
			t.Errorf("list_roots = %q (isError %v)", text(res), res.IsError)
		}
	})
}

func TestListRootsWithRoots(t *testing.T) {
	forEachEra(t, func(t *testing.T, version string) {
		ctx := testContext(t)
		server, _ := newServer(nil)
		ct, st := mcp.NewInMemoryTransports()
		ss, err := server.Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v0.0.1"}, nil)
		client.AddRoots(&mcp.Root{URI: "file:///work", Name: "work"}, &mcp.Root{URI: "file:///tmp"})
		cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cs.Close(); _ = ss.Wait() }()
		res := callTool(t, cs, "list_roots", nil)
		if res.IsError {
			t.Fatalf("list_roots failed: %s", text(res))
		}
		if want := "2 root(s)\nwork: file:///work\nfile:///tmp"; text(res) != want && text(res) != "2 root(s)\nfile:///tmp\nwork: file:///work" {
			t.Errorf("list_roots text = %q, want %q", text(res), want)
		}
		roots, _ := structured(t, res)["roots"].([]any)
		if len(roots) != 2 {
			t.Errorf("structured roots = %v", roots)
		}
	})
}

func TestListRootsWithoutCapability(t *testing.T) {
	forEachEra(t, func(t *testing.T, version string) {
		cs, _ := connect(t, version, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
		res := callTool(t, cs, "list_roots", nil)
		if !res.IsError || !strings.Contains(text(res), "roots") {
			t.Errorf("list_roots without capability = %q (isError %v)", text(res), res.IsError)
		}
	})
}

func TestLog(t *testing.T) {
	forEachEra(t, func(t *testing.T, version string) {
		logs := make(chan *mcp.LoggingMessageParams, 20)
		cs, _ := connect(t, version, &mcp.ClientOptions{
			LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
				logs <- req.Params
			},
		})
		ctx := testContext(t)
		params := &mcp.CallToolParams{Name: "log", Arguments: map[string]any{"message": "m"}}
		if version == legacyEra {
			if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "warning"}); err != nil {
				t.Fatal(err)
			}
		} else {
			// On 2026-07-28 the level travels in each request's _meta.
			params.Meta = mcp.Meta{mcp.MetaKeyLogLevel: "warning"}
		}
		if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
			t.Fatalf("log: %v %v", err, res)
		}
		var levels []mcp.LoggingLevel
		for range 5 {
			select {
			case p := <-logs:
				levels = append(levels, p.Level)
			case <-ctx.Done():
				t.Fatalf("got log levels %v, want 5 messages", levels)
			}
		}
		slices.Sort(levels)
		want := []mcp.LoggingLevel{"alert", "critical", "emergency", "error", "warning"}
		if diff := cmp.Diff(want, levels); diff != "" {
			t.Errorf("log levels (-want +got):\n%s", diff)
		}
		select {
		case p := <-logs:
			t.Errorf("unexpected log message below the level: %+v", p)
		default:
		}
	})
}

func TestLogWithoutLevel(t *testing.T) {
	logs := make(chan *mcp.LoggingMessageParams, 20)
	cs, _ := connect(t, legacyEra, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) { logs <- req.Params },
	})
	callTool(t, cs, "log", nil)
	// A ping after the call orders the session: any log notification would have been read first.
	if err := cs.Ping(testContext(t), nil); err != nil {
		t.Fatal(err)
	}
	select {
	case p := <-logs:
		t.Errorf("log message without a level set: %+v", p)
	default:
	}
}

func TestResources(t *testing.T) {
	forEachEra(t, func(t *testing.T, version string) {
		cs, _ := connect(t, version, nil)
		ctx := testContext(t)

		list, err := cs.ListResources(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var uris []string
		for _, r := range list.Resources {
			uris = append(uris, r.URI)
		}
		slices.Sort(uris)
		if diff := cmp.Diff([]string{counterURI, readmeURI}, uris); diff != "" {
			t.Errorf("resources (-want +got):\n%s", diff)
		}

		templates, err := cs.ListResourceTemplates(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(templates.ResourceTemplates) != 1 || templates.ResourceTemplates[0].URITemplate != itemsTemplate {
			t.Errorf("templates = %+v", templates.ResourceTemplates)
		}

		readme, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: readmeURI})
		if err != nil {
			t.Fatal(err)
		}
		if len(readme.Contents) != 1 || !strings.Contains(readme.Contents[0].Text, "demo server") {
			t.Errorf("readme = %+v", readme.Contents)
		}

		it, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://items/beta"})
		if err != nil {
			t.Fatal(err)
		}
		if len(it.Contents) != 1 || it.Contents[0].MIMEType != "application/json" || !strings.Contains(it.Contents[0].Text, `"id":"beta"`) {
			t.Errorf("item = %+v", it.Contents)
		}

		_, err = cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "demo://items/omega"})
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != mcp.CodeResourceNotFound { //nolint:staticcheck // the code mcp.ResourceNotFoundError sends, which follows the SDK's godebug
			t.Errorf("reading a missing item: %v, want resource-not-found", err)
		}
	})
}

func TestCounterSubscription(t *testing.T) {
	forEachEra(t, func(t *testing.T, version string) {
		updated := make(chan string, 10)
		cs, _ := connect(t, version, &mcp.ClientOptions{
			ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
				updated <- req.Params.URI
			},
		})
		ctx := testContext(t)
		if err := cs.Subscribe(ctx, &mcp.SubscribeParams{URI: counterURI}); err != nil {
			t.Fatal(err)
		}
		res := callTool(t, cs, "increment", nil)
		if diff := cmp.Diff(map[string]any{"counter": 1.0}, structured(t, res)); diff != "" {
			t.Errorf("increment (-want +got):\n%s", diff)
		}
		select {
		case uri := <-updated:
			if uri != counterURI {
				t.Errorf("updated %q, want %q", uri, counterURI)
			}
		case <-ctx.Done():
			t.Fatal("no notifications/resources/updated")
		}
		read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: counterURI})
		if err != nil {
			t.Fatal(err)
		}
		if read.Contents[0].Text != "1" {
			t.Errorf("counter = %q, want 1", read.Contents[0].Text)
		}
		if err := cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: counterURI}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestSubscribeUnknownResource(t *testing.T) {
	cs, _ := connect(t, legacyEra, nil)
	if err := cs.Subscribe(testContext(t), &mcp.SubscribeParams{URI: "demo://nope"}); err == nil {
		t.Error("subscribing to an unknown resource succeeded")
	}
}

func TestPrompt(t *testing.T) {
	forEachEra(t, func(t *testing.T, version string) {
		cs, _ := connect(t, version, nil)
		ctx := testContext(t)

		list, err := cs.ListPrompts(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Prompts) != 1 || list.Prompts[0].Name != "greet" || len(list.Prompts[0].Arguments) != 2 ||
			!list.Prompts[0].Arguments[0].Required || list.Prompts[0].Arguments[1].Required {
			t.Fatalf("prompts = %+v", list.Prompts)
		}

		tests := []struct {
			name    string
			args    map[string]string
			want    string
			wantErr bool
		}{
			{name: "default style", args: map[string]string{"name": "Ada"}, want: "Write a short casual greeting for Ada."},
			{name: "pirate", args: map[string]string{"name": "Ken", "style": "pirate"}, want: "Write a short pirate greeting for Ken."},
			{name: "missing name", args: map[string]string{"style": "formal"}, wantErr: true},
			{name: "unknown style", args: map[string]string{"name": "Rob", "style": "shouty"}, wantErr: true},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: tt.args})
				if tt.wantErr {
					var rpcErr *jsonrpc.Error
					if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
						t.Errorf("GetPrompt(%v) = %v, want invalid params", tt.args, err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Messages) != 1 {
					t.Fatalf("messages = %+v", res.Messages)
				}
				if tc, ok := res.Messages[0].Content.(*mcp.TextContent); !ok || tc.Text != tt.want {
					t.Errorf("message = %+v, want %q", res.Messages[0].Content, tt.want)
				}
			})
		}
	})
}

func TestComplete(t *testing.T) {
	tests := []struct {
		name string
		ref  *mcp.CompleteReference
		arg  mcp.CompleteParamsArgument
		want []string
	}{
		{"prompt name", &mcp.CompleteReference{Type: "ref/prompt", Name: "greet"}, mcp.CompleteParamsArgument{Name: "name", Value: "a"}, []string{"Ada", "Alan"}},
		{"prompt name empty", &mcp.CompleteReference{Type: "ref/prompt", Name: "greet"}, mcp.CompleteParamsArgument{Name: "name", Value: ""}, greetNames},
		{"prompt style", &mcp.CompleteReference{Type: "ref/prompt", Name: "greet"}, mcp.CompleteParamsArgument{Name: "style", Value: "F"}, []string{"formal"}},
		{"template id", &mcp.CompleteReference{Type: "ref/resource", URI: itemsTemplate}, mcp.CompleteParamsArgument{Name: "id", Value: "e"}, []string{"epsilon"}},
		{"no match", &mcp.CompleteReference{Type: "ref/resource", URI: itemsTemplate}, mcp.CompleteParamsArgument{Name: "id", Value: "zz"}, []string{}},
		{"unknown prompt", &mcp.CompleteReference{Type: "ref/prompt", Name: "other"}, mcp.CompleteParamsArgument{Name: "name", Value: "a"}, []string{}},
	}
	forEachEra(t, func(t *testing.T, version string) {
		cs, _ := connect(t, version, nil)
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				res, err := cs.Complete(testContext(t), &mcp.CompleteParams{Ref: tt.ref, Argument: tt.arg})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tt.want, res.Completion.Values); diff != "" {
					t.Errorf("completion (-want +got):\n%s", diff)
				}
			})
		}
	})
}

func TestServerInfo(t *testing.T) {
	forEachEra(t, func(t *testing.T, version string) {
		cs, _ := connect(t, version, nil)
		init := cs.InitializeResult()
		if init.ServerInfo == nil || init.ServerInfo.Name != Name || init.ServerInfo.Version != "dev" {
			t.Errorf("server info = %+v", init.ServerInfo)
		}
		caps := init.Capabilities
		if caps.Tools == nil || caps.Resources == nil || !caps.Resources.Subscribe || caps.Prompts == nil ||
			caps.Completions == nil || caps.Logging == nil {
			t.Errorf("capabilities = %+v", caps)
		}
		if !strings.Contains(init.Instructions, "long_operation") {
			t.Errorf("instructions = %q", init.Instructions)
		}
	})
}
