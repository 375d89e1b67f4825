package mcpcore_test

// Tests against real MCP servers written by others (DESIGN.md, "Testing against real peers"):
//
//   - @modelcontextprotocol/server-everything from npm, over stdio and over Streamable HTTP;
//   - tools/python-peer/server.py, built with the official Python SDK, over stdio, at 2025-11-25 (server
//     requests pushed) and at the negotiated version (2026-07-28: server requests inside input_required
//     results).
//
// The test plays the host: it answers what the servers ask of the client through the Dispatcher, as the
// gRPC service will. internal/testpeers finds the peers (`make node-tools`, tools/python-peer/install.sh);
// a missing peer skips the test, or fails it when MCPBRIDGE_REQUIRE_PEERS=1.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-bridge/mcp-bridge/internal/testpeers"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

const peerOwner = "peer-test-host"

// peerRoots are the roots the test host exposes.
var peerRoots = []*mcp.Root{{URI: "file:///tmp/mcp-bridge-peer-test", Name: "peer-test"}}

// peerHost is a test host for one session: roots requests are answered at once (servers may ask for roots
// outside any call, e.g. server-everything right after initialization); sampling and elicitation requests
// are handed to the test through next, which answers them itself.
type peerHost struct {
	t    *testing.T
	core *mcpcore.Core
	sess *mcpcore.Session

	requests chan *mcpcore.PendingRequest // sampling and elicitation, for the test to answer
	done     chan struct{}                // closed when serve returns

	mu    sync.Mutex                // guards seen and roots
	seen  map[string]bool           // ids routed: a request can be both listed and announced
	roots []*mcpcore.PendingRequest // roots requests answered
}

// openPeer opens a session to cfg with every host capability declared and starts the host.
// protocolVersion pins the version; empty negotiates. Everything is closed when the test ends.
func openPeer(t *testing.T, cfg mcpcore.ServerConfig, protocolVersion string) *peerHost {
	t.Helper()
	logs := &testLogWriter{t: t}
	core := mcpcore.New(mcpcore.Options{
		Logger:  slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Servers: map[string]mcpcore.ServerConfig{cfg.Name: cfg},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sess, err := core.Open(ctx, mcpcore.OpenParams{
		Owner:  peerOwner,
		Server: cfg.Name,
		Capabilities: mcpcore.HostCapabilities{
			Sampling:         true,
			ElicitationForm:  true,
			ElicitationURL:   true,
			Roots:            true,
			RootsListChanged: true,
		},
		// No roots list: the core asks the host on every roots/list, so roots go through the Dispatcher too.
		ProtocolVersion: protocolVersion,
	})
	if err != nil {
		closeCore(t, core)
		logs.stop()
		t.Fatalf("Open(%s): %v", cfg.Name, err)
	}
	h := &peerHost{
		t:        t,
		core:     core,
		sess:     sess,
		requests: make(chan *mcpcore.PendingRequest, 16),
		done:     make(chan struct{}),
		seen:     map[string]bool{},
	}
	sub := sess.Subscribe(0)
	// serve ends when the session's event stream closes, i.e. when the core closes it in Cleanup.
	go h.serve(sub)
	// Requests raised before the subscription existed are still pending.
	for _, p := range core.Dispatcher().List(peerOwner, sess.ID()) {
		h.route(p)
	}
	t.Cleanup(func() {
		closeCore(t, core)
		select {
		case <-h.done:
		case <-time.After(10 * time.Second):
			t.Error("the session's event stream did not close after core.Close")
		}
		logs.stop()
	})
	info := sess.Info()
	t.Logf("session %s: protocol %s, server %s %s", sess.ID(), info.ProtocolVersion, info.ServerInfo.Name, info.ServerInfo.Version)
	return h
}

func closeCore(t *testing.T, core *mcpcore.Core) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := core.Close(ctx); err != nil {
		t.Errorf("core.Close: %v", err)
	}
}

func (h *peerHost) serve(sub *mcpcore.Subscription) {
	defer close(h.done)
	defer sub.Close()
	for ev := range sub.C() {
		if ev.Kind == mcpcore.EventRequestCreated {
			h.route(ev.Request)
		}
	}
}

func (h *peerHost) route(p *mcpcore.PendingRequest) {
	h.mu.Lock()
	dup := h.seen[p.ID]
	h.seen[p.ID] = true
	if !dup && p.Kind == mcpcore.KindRoots {
		h.roots = append(h.roots, p)
	}
	h.mu.Unlock()
	if dup {
		return
	}
	if p.Kind != mcpcore.KindRoots {
		select {
		case h.requests <- p:
		default: // never block the event stream; the test would not read this one anyway
			h.t.Errorf("unexpected server request %s (%v) while %d others wait for the test", p.ID, p.Kind, cap(h.requests))
		}
		return
	}
	err := h.core.Dispatcher().Respond(context.Background(), peerOwner, p.ID,
		mcpcore.Answer{Roots: &mcp.ListRootsResult{Roots: peerRoots}})
	if err != nil && !errors.Is(err, mcpcore.ErrRequestEnded) {
		h.t.Errorf("answering roots request %s: %v", p.ID, err)
	}
}

// next returns the next sampling or elicitation request, failing the test after 30s.
func (h *peerHost) next(t *testing.T) *mcpcore.PendingRequest {
	t.Helper()
	select {
	case p := <-h.requests:
		return p
	case <-time.After(30 * time.Second):
		t.Fatal("no server request reached the host within 30s")
		return nil
	}
}

func (h *peerHost) respond(t *testing.T, p *mcpcore.PendingRequest, a mcpcore.Answer) {
	t.Helper()
	if err := h.core.Dispatcher().Respond(context.Background(), peerOwner, p.ID, a); err != nil {
		t.Fatalf("Respond(%s): %v", p.ID, err)
	}
}

// rootsRequests returns the roots requests the host answered.
func (h *peerHost) rootsRequests() []*mcpcore.PendingRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.roots)
}

// callResult is the outcome of a tool call made in the background while the host answers.
type callResult struct {
	res *mcp.CallToolResult
	err error
}

// callAsync calls a tool in a goroutine (it blocks until the host answers the server's request); the
// result arrives on the returned channel, which the test must drain.
func (h *peerHost) callAsync(name string, args map[string]any, opts mcpcore.CallOptions) <-chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		res, err := h.sess.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args}, opts)
		ch <- callResult{res, err}
	}()
	return ch
}

func (h *peerHost) call(t *testing.T, name string, args map[string]any, opts mcpcore.CallOptions) *mcp.CallToolResult {
	t.Helper()
	return wait(t, h.callAsync(name, args, opts))
}

func wait(t *testing.T, ch <-chan callResult) *mcp.CallToolResult {
	t.Helper()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("CallTool: %v", r.err)
		}
		if r.res.IsError {
			t.Fatalf("CallTool: error result: %s", textOf(r.res.Content))
		}
		return r.res
	case <-time.After(70 * time.Second):
		t.Fatal("CallTool did not return within 70s")
		return nil
	}
}

func textOf(cs []mcp.Content) string {
	var parts []string
	for _, c := range cs {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// wantDelivery is the delivery a server request must have at the session's protocol version.
// certainOrigin reports whether the session's server requests can be tied to their call for certain:
// MRTR input requests always are, pushes only over Streamable HTTP (the call's response stream).
func (h *peerHost) certainOrigin() bool {
	return h.wantDelivery() == mcpcore.DeliveryMRTR || h.sess.Server().Transport == mcpcore.TransportStreamableHTTP
}

func (h *peerHost) wantDelivery() mcpcore.Delivery {
	if h.sess.Info().ProtocolVersion >= "2026-07-28" {
		return mcpcore.DeliveryMRTR
	}
	return mcpcore.DeliveryPush
}

func everythingStdio(t *testing.T) mcpcore.ServerConfig {
	cmd := testpeers.EverythingStdio(t)
	return mcpcore.ServerConfig{Name: "everything", Transport: mcpcore.TransportStdio, Command: cmd.Path, Args: cmd.Args}
}

func everythingHTTP(t *testing.T) mcpcore.ServerConfig {
	return mcpcore.ServerConfig{Name: "everything", Transport: mcpcore.TransportStreamableHTTP, URL: testpeers.EverythingHTTP(t)}
}

func TestPeerEverything(t *testing.T) {
	t.Parallel()
	for _, tr := range []struct {
		name   string
		config func(*testing.T) mcpcore.ServerConfig
	}{
		{"stdio", everythingStdio},
		{"streamable-http", everythingHTTP},
	} {
		t.Run(tr.name, func(t *testing.T) {
			t.Parallel()
			h := openPeer(t, tr.config(t), "")
			if got := h.sess.Info().ServerInfo.Name; got != "mcp-servers/everything" {
				t.Errorf("server name = %q, want mcp-servers/everything", got)
			}
			// The subtests share the session and run in order.
			t.Run("get-structured-content", func(t *testing.T) { everythingStructured(t, h) })
			t.Run("trigger-sampling-request", func(t *testing.T) { everythingSampling(t, h) })
			t.Run("trigger-elicitation-request", func(t *testing.T) { everythingElicitation(t, h) })
			t.Run("get-roots-list", func(t *testing.T) { everythingRoots(t, h) })
			t.Run("trigger-long-running-operation", func(t *testing.T) { everythingProgress(t, h) })
		})
	}
}

func everythingStructured(t *testing.T, h *peerHost) {
	res := h.call(t, "get-structured-content", map[string]any{"location": "Chicago"}, mcpcore.CallOptions{})
	want := map[string]any{"temperature": float64(36), "conditions": "Light rain / drizzle", "humidity": float64(82)}
	if diff := cmp.Diff(want, res.StructuredContent); diff != "" {
		t.Errorf("structuredContent (-want +got):\n%s", diff)
	}
}

func everythingSampling(t *testing.T, h *peerHost) {
	done := h.callAsync("trigger-sampling-request", map[string]any{"prompt": "say hello", "maxTokens": 20},
		mcpcore.CallOptions{CallID: "call-sampling"})
	p := h.next(t)
	if p.Kind != mcpcore.KindSampling || p.Sampling == nil {
		t.Fatalf("request kind = %v, want sampling", p.Kind)
	}
	// A push is tied to its call only when it came on the call's response stream (Streamable HTTP); over
	// stdio it names no request of the client and belongs to the session.
	if h.certainOrigin() {
		if p.OriginCallID != "call-sampling" || p.OriginMethod != "tools/call" || p.OriginName != "trigger-sampling-request" {
			t.Errorf("origin = %q %q %q, want call-sampling tools/call trigger-sampling-request", p.OriginCallID, p.OriginMethod, p.OriginName)
		}
	} else if p.OriginCallID != "" {
		t.Errorf("origin = %q over stdio, want none (no certainty)", p.OriginCallID)
	}
	if p.Delivery != h.wantDelivery() {
		t.Errorf("delivery = %v, want %v", p.Delivery, h.wantDelivery())
	}
	if p.Sampling.MaxTokens != 20 || len(p.Sampling.Messages) != 1 {
		t.Fatalf("sampling params: maxTokens %d, %d messages; want 20, 1", p.Sampling.MaxTokens, len(p.Sampling.Messages))
	}
	if got := textOf(p.Sampling.Messages[0].Content); !strings.Contains(got, "say hello") {
		t.Errorf("sampling message = %q, want it to contain the prompt", got)
	}
	h.respond(t, p, mcpcore.Answer{Sampling: &mcp.CreateMessageWithToolsResult{
		Model:   "peer-test-model",
		Role:    "assistant",
		Content: []mcp.Content{&mcp.TextContent{Text: "hello from the host"}},
	}})
	res := wait(t, done)
	if got := textOf(res.Content); !strings.Contains(got, "peer-test-model") || !strings.Contains(got, "hello from the host") {
		t.Errorf("tool result = %q, want the host's model and text in it", got)
	}
}

func everythingElicitation(t *testing.T, h *peerHost) {
	done := h.callAsync("trigger-elicitation-request", nil, mcpcore.CallOptions{})
	p := h.next(t)
	if p.Kind != mcpcore.KindElicitation || p.Elicitation == nil {
		t.Fatalf("request kind = %v, want elicitation", p.Kind)
	}
	if p.Delivery != h.wantDelivery() {
		t.Errorf("delivery = %v, want %v", p.Delivery, h.wantDelivery())
	}
	// A wrong answer is refused with the field that is wrong, and the request stays pending.
	err := h.core.Dispatcher().Respond(context.Background(), peerOwner, p.ID, mcpcore.Answer{
		Elicitation: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "integer": 1000}},
	})
	var invalid *mcpcore.InvalidError
	if !errors.As(err, &invalid) || !errors.Is(err, mcpcore.ErrInvalidAnswer) {
		t.Fatalf("Respond with an out-of-range integer = %v, want an InvalidError", err)
	}
	if len(invalid.Violations) == 0 || invalid.Violations[0].Field != "content.integer" {
		t.Errorf("violations = %+v, want content.integer", invalid.Violations)
	}
	h.respond(t, p, mcpcore.Answer{Elicitation: &mcp.ElicitResult{Action: "accept", Content: map[string]any{
		"name":                       "Ada Lovelace",
		"check":                      true,
		"email":                      "ada@example.com",
		"integer":                    7,
		"untitledMultipleSelectEnum": []any{"Piano"},
	}}})
	res := wait(t, done)
	got := textOf(res.Content)
	for _, want := range []string{"User provided the requested information", "Name: Ada Lovelace", "Agreed to terms: true", "Favorite Integer: 7"} {
		if !strings.Contains(got, want) {
			t.Errorf("tool result does not contain %q:\n%s", want, got)
		}
	}
}

func everythingRoots(t *testing.T, h *peerHost) {
	res := h.call(t, "get-roots-list", nil, mcpcore.CallOptions{})
	got := textOf(res.Content)
	if !strings.Contains(got, peerRoots[0].URI) {
		t.Errorf("get-roots-list = %q, want the host's root %s", got, peerRoots[0].URI)
	}
	// server-everything asks for roots right after initialization (a push outside any call) and caches them.
	if len(h.rootsRequests()) == 0 {
		t.Error("the host answered no roots/list request")
	}
}

func everythingProgress(t *testing.T, h *peerHost) {
	var (
		mu       sync.Mutex
		progress []mcpcore.Progress
	)
	res := h.call(t, "trigger-long-running-operation", map[string]any{"duration": 0.3, "steps": 3}, mcpcore.CallOptions{
		CallID: "call-progress",
		OnProgress: func(p mcpcore.Progress) {
			mu.Lock()
			defer mu.Unlock()
			progress = append(progress, p)
		},
	})
	if got := textOf(res.Content); !strings.Contains(got, "Long running operation completed") {
		t.Errorf("result = %q", got)
	}
	mu.Lock()
	defer mu.Unlock()
	var got []string
	for _, p := range progress {
		if p.CallID != "call-progress" {
			t.Errorf("progress for call %q, want call-progress", p.CallID)
		}
		got = append(got, fmt.Sprintf("%g/%g", p.Progress, p.Total))
	}
	if diff := cmp.Diff([]string{"1/3", "2/3", "3/3"}, got); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
}

func TestPeerPythonSDK(t *testing.T) {
	t.Parallel()
	cmd := testpeers.PythonPeer(t)
	cfg := mcpcore.ServerConfig{Name: "python", Transport: mcpcore.TransportStdio, Command: cmd.Path, Args: cmd.Args}
	for _, era := range []struct {
		name, pin, want string
	}{
		{"2025-11-25", "2025-11-25", "2025-11-25"}, // server requests pushed
		{"negotiated", "", "2026-07-28"},           // server requests inside input_required results
	} {
		t.Run(era.name, func(t *testing.T) {
			t.Parallel()
			h := openPeer(t, cfg, era.pin)
			info := h.sess.Info()
			if info.ProtocolVersion != era.want {
				t.Fatalf("protocol version = %s, want %s", info.ProtocolVersion, era.want)
			}
			if info.ServerInfo.Name != "python-peer" || !strings.Contains(info.Instructions, "Test peer for mcp-bridge") {
				t.Errorf("server info %+v, instructions %q", info.ServerInfo, info.Instructions)
			}
			t.Run("echo", func(t *testing.T) {
				res := h.call(t, "echo", map[string]any{"text": "ping"}, mcpcore.CallOptions{})
				if got := textOf(res.Content); got != "ping" {
					t.Errorf("echo = %q, want ping", got)
				}
			})
			t.Run("sample", func(t *testing.T) { pythonSample(t, h) })
			t.Run("elicit", func(t *testing.T) { pythonElicit(t, h) })
			t.Run("roots", func(t *testing.T) { pythonRoots(t, h) })
			t.Run("progress", func(t *testing.T) { pythonProgress(t, h) })
			t.Run("resource", func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				res, err := h.sess.ReadResource(ctx, &mcp.ReadResourceParams{URI: "peer://greeting"}, mcpcore.CallOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Contents) != 1 || res.Contents[0].Text != "hello from the python peer" {
					t.Errorf("resource contents = %+v", res.Contents)
				}
			})
			t.Run("prompt", func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				res, err := h.sess.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "Grace"}}, mcpcore.CallOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if len(res.Messages) != 1 || textOf([]mcp.Content{res.Messages[0].Content}) != "Please greet Grace warmly." {
					t.Errorf("prompt messages = %+v", res.Messages)
				}
			})
		})
	}
}

func pythonSample(t *testing.T, h *peerHost) {
	done := h.callAsync("sample", map[string]any{"prompt": "what is 2+2?"}, mcpcore.CallOptions{CallID: "call-sample"})
	p := h.next(t)
	wantOrigin := ""
	if h.certainOrigin() {
		wantOrigin = "call-sample"
	}
	if p.Kind != mcpcore.KindSampling || p.Delivery != h.wantDelivery() || p.OriginCallID != wantOrigin {
		t.Fatalf("request: kind %v, delivery %v, origin %q; want sampling, %v, %q", p.Kind, p.Delivery, p.OriginCallID, h.wantDelivery(), wantOrigin)
	}
	if p.Delivery == mcpcore.DeliveryMRTR && p.InputKey == "" {
		t.Error("an MRTR request without its inputRequests key")
	}
	if p.Sampling.MaxTokens != 64 || p.Sampling.SystemPrompt != "You are a test double." {
		t.Errorf("sampling params: maxTokens %d, systemPrompt %q", p.Sampling.MaxTokens, p.Sampling.SystemPrompt)
	}
	h.respond(t, p, mcpcore.Answer{Sampling: &mcp.CreateMessageWithToolsResult{
		Model: "peer-model", Role: "assistant", Content: []mcp.Content{&mcp.TextContent{Text: "4"}},
	}})
	if got := textOf(wait(t, done).Content); got != "model=peer-model text=4" {
		t.Errorf("sample = %q, want model=peer-model text=4", got)
	}
}

func pythonElicit(t *testing.T, h *peerHost) {
	for _, tc := range []struct {
		name   string
		answer *mcp.ElicitResult
		want   string
	}{
		{"accept", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada", "age": 36}}, "accepted: name=Ada age=36 subscribe=false"},
		{"decline", &mcp.ElicitResult{Action: "decline"}, "decline"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := h.callAsync("elicit_profile", nil, mcpcore.CallOptions{})
			p := h.next(t)
			if p.Kind != mcpcore.KindElicitation || p.Delivery != h.wantDelivery() {
				t.Fatalf("request: kind %v, delivery %v; want elicitation, %v", p.Kind, p.Delivery, h.wantDelivery())
			}
			if p.Elicitation.Message != "Please tell us about yourself" {
				t.Errorf("message = %q", p.Elicitation.Message)
			}
			h.respond(t, p, mcpcore.Answer{Elicitation: tc.answer})
			if got := textOf(wait(t, done).Content); got != tc.want {
				t.Errorf("elicit_profile = %q, want %q", got, tc.want)
			}
		})
	}
}

func pythonRoots(t *testing.T, h *peerHost) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := h.sess.CallTool(ctx, &mcp.CallToolParams{Name: "list_roots", Arguments: map[string]any{}},
		mcpcore.CallOptions{CallID: "call-roots"})
	if err != nil {
		t.Fatalf("CallTool(list_roots): %v", err)
	}
	if got := textOf(res.Content); got != peerRoots[0].URI {
		t.Errorf("list_roots = %q, want %s", got, peerRoots[0].URI)
	}
	roots := h.rootsRequests()
	if len(roots) == 0 {
		t.Fatal("the host answered no roots/list request")
	}
	last := roots[len(roots)-1]
	wantOrigin, wantName := "", ""
	if h.certainOrigin() {
		wantOrigin, wantName = "call-roots", "list_roots"
	}
	if last.Delivery != h.wantDelivery() || last.OriginCallID != wantOrigin || last.OriginName != wantName {
		t.Errorf("roots request: delivery %v, origin %q %q; want %v, %q %q",
			last.Delivery, last.OriginCallID, last.OriginName, h.wantDelivery(), wantOrigin, wantName)
	}
}

func pythonProgress(t *testing.T, h *peerHost) {
	var (
		mu  sync.Mutex
		got []string
	)
	res := h.call(t, "count", map[string]any{"steps": 3}, mcpcore.CallOptions{OnProgress: func(p mcpcore.Progress) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, fmt.Sprintf("%g/%g %s", p.Progress, p.Total, p.Message))
	}})
	if text := textOf(res.Content); text != "counted to 3" {
		t.Errorf("count = %q", text)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"1/3 step 1 of 3", "2/3 step 2 of 3", "3/3 step 3 of 3"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("progress (-want +got):\n%s", diff)
	}
}

// testLogWriter sends the core's logs to t.Log until the test ends.
type testLogWriter struct {
	t    *testing.T
	mu   sync.Mutex // guards done
	done bool
}

func (w *testLogWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimRight(string(b), "\n"))
	}
	return len(b), nil
}

func (w *testLogWriter) stop() {
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
}
