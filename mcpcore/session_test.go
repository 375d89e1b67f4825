package mcpcore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// eras are the two protocol eras every in-process test runs against: pinned to the last handshake version,
// and negotiated (2026-07-28, stateless, MRTR).
var eras = []struct {
	name, pin, want string
}{
	{"2025-11-25", "2025-11-25", "2025-11-25"},
	{"2026-07-28", "", "2026-07-28"},
}

// tlog is a slog handler output that goes to the test log until the test ends.
type tlog struct {
	t    *testing.T
	mu   sync.Mutex
	done bool
	buf  bytes.Buffer // everything logged, for assertions
}

func (w *tlog) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(b)
	if !w.done && testing.Verbose() {
		w.t.Log(strings.TrimRight(string(b), "\n"))
	}
	return len(b), nil
}

func (w *tlog) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// newTestCore returns a core whose servers are all in the map; "mem" is the in-process SDK server.
func newTestCore(t *testing.T, servers map[string]ServerConfig, edit func(*Options)) (*Core, *tlog) {
	t.Helper()
	logs := &tlog{t: t}
	opts := Options{
		Logger:  slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Servers: servers,
	}
	if edit != nil {
		edit(&opts)
	}
	c := New(opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := c.Close(ctx); err != nil {
			t.Errorf("Core.Close: %v", err)
		}
		logs.mu.Lock()
		logs.done = true
		logs.mu.Unlock()
	})
	return c, logs
}

// memCore returns a core with one in-process server "mem" (a new SDK server session per connection).
func memCore(t *testing.T, hooks *serverHooks, edit func(*Options)) *Core {
	t.Helper()
	srv := newTestServer(nil, hooks)
	c, _ := newTestCore(t, map[string]ServerConfig{"mem": {Transport: transportTest}}, edit)
	c.testDial = func(ServerConfig) (mcp.Transport, error) {
		ct, st := mcp.NewInMemoryTransports()
		if _, err := srv.Connect(context.Background(), st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}
	return c
}

var allCaps = HostCapabilities{Sampling: true, ElicitationForm: true, ElicitationURL: true, Roots: true, RootsListChanged: true}

func open(t *testing.T, c *Core, server, pin string, caps HostCapabilities) *Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := c.Open(ctx, OpenParams{Owner: "alice", Server: server, ProtocolVersion: pin, Capabilities: caps})
	if err != nil {
		t.Fatalf("Open(%s): %v", server, err)
	}
	return s
}

func tctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func textOf(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func callText(t *testing.T, s *Session, name string, args map[string]any, opts CallOptions) string {
	t.Helper()
	res, err := s.CallTool(tctx(t), &mcp.CallToolParams{Name: name, Arguments: args}, opts)
	if err != nil {
		t.Fatalf("CallTool(%s): %v", name, err)
	}
	return textOf(res)
}

// host answers the session's pending requests with answer, from the session's events, as a host would.
// It returns the requests it saw, in order, once stop is called.
func host(t *testing.T, c *Core, s *Session, answer func(*PendingRequest) Answer) (stop func() []*PendingRequest) {
	t.Helper()
	sub := s.Subscribe(0)
	var (
		mu   sync.Mutex
		seen []*PendingRequest
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		for ev := range sub.C() {
			if ev.Kind != EventRequestCreated {
				continue
			}
			mu.Lock()
			seen = append(seen, ev.Request)
			mu.Unlock()
			if err := c.Dispatcher().Respond(context.Background(), s.Owner(), ev.Request.ID, answer(ev.Request)); err != nil {
				t.Errorf("Respond(%s): %v", ev.Request.Kind, err)
			}
		}
	}()
	var once sync.Once
	stop = func() []*PendingRequest {
		once.Do(func() { sub.Close(); <-done })
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
	t.Cleanup(func() { stop() })
	return stop
}

// standardAnswer answers every kind.
func standardAnswer(p *PendingRequest) Answer {
	switch p.Kind {
	case KindSampling:
		return Answer{Sampling: &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "test-model", Content: []mcp.Content{&mcp.TextContent{Text: "4"}}}}
	case KindElicitation:
		if p.Elicitation.Mode == "url" {
			return Answer{Elicitation: &mcp.ElicitResult{Action: "accept"}}
		}
		return Answer{Elicitation: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}}
	default:
		return Answer{Roots: &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: "file:///work", Name: "work"}}}}
	}
}

// waitEvent waits for the first event matching ok.
func waitEvent(t *testing.T, sub *Subscription, ok func(Event) bool) Event {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case ev, open := <-sub.C():
			if !open {
				t.Fatal("event stream closed while waiting")
			}
			if ok(*ev) {
				return *ev
			}
		case <-timeout:
			t.Fatal("timed out waiting for an event")
		}
	}
}

func TestOpenNegotiatesEra(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			c := memCore(t, nil, nil)
			s := open(t, c, "mem", era.pin, HostCapabilities{})
			info := s.Info()
			if info.ProtocolVersion != era.want || info.ServerInfo.Name != "test-server" || info.Instructions != "test instructions" || info.Capabilities.Tools == nil {
				t.Errorf("Info = %+v, want version %s from test-server with instructions and tools", info, era.want)
			}
			if st, _ := s.State(); st != StateReady {
				t.Errorf("state = %v, want ready", st)
			}
			if !strings.HasPrefix(s.ID(), "s-") || len(s.ID()) < 20 {
				t.Errorf("session id %q is not an unguessable s- id", s.ID())
			}
			if got, err := c.Session(s.ID()); got != s || err != nil {
				t.Errorf("Session(id) = %v, %v", got, err)
			}
			if got := c.Sessions("alice"); len(got) != 1 || got[0] != s {
				t.Errorf("Sessions(alice) = %v", got)
			}
			if got := c.Sessions("bob"); len(got) != 0 {
				t.Errorf("Sessions(bob) = %v", got)
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	c := memCore(t, nil, func(o *Options) { o.Limits.MaxSessionsPerOwner = 1 })
	ctx := tctx(t)
	if _, err := c.Open(ctx, OpenParams{Owner: "a", Server: "nope"}); !errors.Is(err, ErrServerNotFound) {
		t.Errorf("unknown server: %v, want ErrServerNotFound", err)
	}
	if _, err := c.Open(ctx, OpenParams{Owner: "a", AdHoc: &ServerConfig{Transport: TransportStdio, Command: "true"}}); !errors.Is(err, ErrUnconfiguredServer) {
		t.Errorf("ad hoc server: %v, want ErrUnconfiguredServer", err)
	}
	if _, err := c.Open(ctx, OpenParams{Owner: "a", Server: "mem"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Open(ctx, OpenParams{Owner: "a", Server: "mem"}); !errors.Is(err, ErrTooManySessions) {
		t.Errorf("second session of one owner: %v, want ErrTooManySessions", err)
	}
	if _, err := c.Open(ctx, OpenParams{Owner: "b", Server: "mem"}); err != nil {
		t.Errorf("another owner: %v", err)
	}
	if _, err := c.Session("s-nope"); !errors.Is(err, ErrSessionNotFound) {
		t.Errorf("Session(unknown) = %v", err)
	}
	c2 := memCore(t, nil, func(o *Options) { o.Limits.MaxSessions = 1 })
	if _, err := c2.Open(ctx, OpenParams{Owner: "a", Server: "mem"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c2.Open(ctx, OpenParams{Owner: "b", Server: "mem"}); !errors.Is(err, ErrTooManySessions) {
		t.Errorf("over MaxSessions: %v, want ErrTooManySessions", err)
	}
}

func TestServersSorted(t *testing.T) {
	c, _ := newTestCore(t, map[string]ServerConfig{"b": {Transport: TransportStdio, Command: "x"}, "a": {Transport: TransportStreamableHTTP, URL: "http://x"}}, nil)
	var names []string
	for _, s := range c.Servers() {
		names = append(names, s.Name)
	}
	if diff := cmp.Diff([]string{"a", "b"}, names); diff != "" {
		t.Errorf("Servers() names (-want +got):\n%s", diff)
	}
}

func TestOperations(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			c := memCore(t, nil, nil)
			s := open(t, c, "mem", era.pin, allCaps)
			ctx := tctx(t)

			// tools: pagination (page size 4), structured content, isError.
			var names []string
			params := &mcp.ListToolsParams{}
			for page := 0; ; page++ {
				res, err := s.ListTools(ctx, params, CallOptions{})
				if err != nil {
					t.Fatalf("ListTools: %v", err)
				}
				for _, tool := range res.Tools {
					names = append(names, tool.Name)
				}
				if res.NextCursor == "" {
					break
				}
				if page > 10 {
					t.Fatal("no end of pages")
				}
				params = &mcp.ListToolsParams{Cursor: res.NextCursor}
			}
			if len(names) < 10 {
				t.Errorf("ListTools over pages found %d tools: %v", len(names), names)
			}
			res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}, CallOptions{})
			if err != nil || textOf(res) != "hi" || res.IsError {
				t.Fatalf("CallTool(echo) = %v, %v", res, err)
			}
			if diff := cmp.Diff(map[string]any{"echo": "hi"}, res.StructuredContent); diff != "" {
				t.Errorf("structured content (-want +got):\n%s", diff)
			}
			res, err = s.CallTool(ctx, &mcp.CallToolParams{Name: "fail"}, CallOptions{})
			if err != nil || !res.IsError {
				t.Errorf("CallTool(fail) = %v, %v; want an isError result", res, err)
			}
			_, err = s.CallTool(ctx, &mcp.CallToolParams{Name: "no-such-tool"}, CallOptions{})
			if _, ok := UpstreamCode(err); !ok {
				t.Errorf("unknown tool: %v, want an upstream JSON-RPC error", err)
			}
			_, err = s.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: []int{1}}, CallOptions{})
			var inv *InvalidError
			if !errors.As(err, &inv) {
				t.Errorf("array arguments: %v, want *InvalidError", err)
			}

			// resources
			rl, err := s.ListResources(ctx, nil, CallOptions{})
			if err != nil || len(rl.Resources) != 2 {
				t.Errorf("ListResources = %v, %v", rl, err)
			}
			tl, err := s.ListResourceTemplates(ctx, nil, CallOptions{})
			if err != nil || len(tl.ResourceTemplates) != 1 {
				t.Errorf("ListResourceTemplates = %v, %v", tl, err)
			}
			rr, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://greeting"}, CallOptions{})
			if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "hello" {
				t.Errorf("ReadResource = %v, %v", rr, err)
			}

			// prompts and completion
			pl, err := s.ListPrompts(ctx, nil, CallOptions{})
			if err != nil || len(pl.Prompts) != 2 {
				t.Errorf("ListPrompts = %v, %v", pl, err)
			}
			gp, err := s.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "Grace"}}, CallOptions{})
			if err != nil || len(gp.Messages) != 1 || gp.Messages[0].Content.(*mcp.TextContent).Text != "Hello, Grace" {
				t.Errorf("GetPrompt = %v, %v", gp, err)
			}
			cr, err := s.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "greet"}, Argument: mcp.CompleteParamsArgument{Name: "name", Value: "G"}}, CallOptions{})
			if err != nil || len(cr.Completion.Values) != 2 || cr.Completion.Values[0] != "G-alpha" {
				t.Errorf("Complete = %v, %v", cr, err)
			}

			// ping: the handshake era pings; 2026-07-28 removed ping, and Ping is a server/discover round trip.
			if err := s.Ping(ctx); err != nil {
				t.Errorf("Ping on %s: %v", era.want, err)
			}
		})
	}
}

func TestNotificationsBecomeEvents(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			c := memCore(t, nil, nil)
			s := open(t, c, "mem", era.pin, HostCapabilities{})
			sub := s.Subscribe(64)
			defer sub.Close()
			ctx := tctx(t)

			// Log messages: logging/setLevel on the handshake era, _meta logLevel on 2026-07-28.
			if err := s.SetLogLevel(ctx, "info"); err != nil {
				t.Fatalf("SetLogLevel: %v", err)
			}
			var onLog atomic.Int32
			callText(t, s, "log", nil, CallOptions{OnLog: func(*mcp.LoggingMessageParams) { onLog.Add(1) }})
			ev := waitEvent(t, sub, func(e Event) bool { return e.Kind == EventLog })
			if ev.Log.Data != "hello log" || ev.Log.Level != "warning" {
				t.Errorf("log event = %+v", ev.Log)
			}
			if onLog.Load() != 1 {
				t.Errorf("OnLog called %d times, want 1", onLog.Load())
			}

			// tools/list_changed (on 2026-07-28 through the subscriptions/listen stream the SDK opens). Before
			// the resource subscription: the Go SDK server (v1.8.0) drops a session's list-changed
			// subscription when any other subscriptions/listen stream of the session ends.
			callText(t, s, "add-tool", nil, CallOptions{})
			waitEvent(t, sub, func(e Event) bool { return e.Kind == EventToolsListChanged })

			// Resource updates after a subscription (resources/subscribe or subscriptions/listen).
			if err := s.SubscribeResource(ctx, "test://greeting"); err != nil {
				t.Fatalf("SubscribeResource: %v", err)
			}
			callText(t, s, "touch", nil, CallOptions{})
			ev = waitEvent(t, sub, func(e Event) bool { return e.Kind == EventResourceUpdated })
			if ev.URI != "test://greeting" {
				t.Errorf("resource updated event URI = %q", ev.URI)
			}
			if err := s.UnsubscribeResource(ctx, "test://greeting"); err != nil {
				t.Errorf("UnsubscribeResource: %v", err)
			}

			// Events are in order: Seq increases by one.
			var last uint64
			s2 := s.Subscribe(0)
			defer s2.Close()
			callText(t, s, "progress", map[string]any{"steps": 5}, CallOptions{OnProgress: func(Progress) {}})
			for range 5 {
				ev := waitEvent(t, s2, func(e Event) bool { return e.Kind == EventProgress })
				if last != 0 && ev.Seq <= last {
					t.Errorf("event seq %d after %d", ev.Seq, last)
				}
				last = ev.Seq
			}
		})
	}
}

func TestProgressIsRoutedToItsCall(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			c := memCore(t, nil, nil)
			s := open(t, c, "mem", era.pin, HostCapabilities{})
			var wg sync.WaitGroup
			got := make([][]Progress, 4)
			for i := range got {
				wg.Go(func() {
					id := fmt.Sprintf("call-%d", i)
					callText(t, s, "progress", map[string]any{"steps": 3 + i}, CallOptions{CallID: id, OnProgress: func(p Progress) {
						got[i] = append(got[i], p)
					}})
				})
			}
			wg.Wait()
			for i, ps := range got {
				if len(ps) != 3+i {
					t.Errorf("call %d got %d progress notifications, want %d", i, len(ps), 3+i)
				}
				for j, p := range ps {
					if p.CallID != fmt.Sprintf("call-%d", i) || p.Progress != float64(j+1) || p.Total != float64(3+i) {
						t.Errorf("call %d progress %d = %+v", i, j, p)
					}
				}
			}
		})
	}
}

func TestServerRequests(t *testing.T) {
	cases := []struct {
		kinds []any
		want  string
		check func(*testing.T, *PendingRequest)
	}{
		{[]any{"sampling"}, "s=sampling:test-model:4", func(t *testing.T, p *PendingRequest) {
			if p.Kind != KindSampling || p.Sampling == nil || p.Sampling.MaxTokens != 10 {
				t.Errorf("sampling request = %+v", p)
			}
		}},
		{[]any{"elicitation"}, `e=elicit:accept:{"name":"Ada"}`, func(t *testing.T, p *PendingRequest) {
			if p.Kind != KindElicitation || p.Elicitation == nil || p.Elicitation.Message != "your name?" {
				t.Errorf("elicitation request = %+v", p)
			}
		}},
		{[]any{"url"}, `u=elicit:accept:null`, func(t *testing.T, p *PendingRequest) {
			if p.Elicitation == nil || p.Elicitation.Mode != "url" || p.Elicitation.URL == "" {
				t.Errorf("URL elicitation request = %+v", p)
			}
		}},
		{[]any{"roots"}, "r=roots:file:///work", func(t *testing.T, p *PendingRequest) {
			if p.Kind != KindRoots || p.Roots == nil {
				t.Errorf("roots request = %+v", p)
			}
		}},
		{[]any{"sampling", "elicitation", "roots"}, `e=elicit:accept:{"name":"Ada"};r=roots:file:///work;s=sampling:test-model:4`, nil},
	}
	for _, era := range eras {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s/%v", era.name, tc.kinds), func(t *testing.T) {
				c := memCore(t, nil, nil)
				s := open(t, c, "mem", era.pin, allCaps)
				stop := host(t, c, s, standardAnswer)
				watch := c.Dispatcher().WatchCall(s.ID(), "call-ask", 16) // what a streaming call shows
				defer watch.Close()
				got := callText(t, s, "ask", map[string]any{"kinds": tc.kinds}, CallOptions{CallID: "call-ask"})
				if era.want == "2025-11-25" {
					// The server's compatibility middleware answers with the pushed results and no state.
					got = strings.ReplaceAll(got, "state-1", "")
				}
				if got != tc.want {
					t.Errorf("result = %q, want %q", got, tc.want)
				}
				seen := stop()
				if len(seen) != len(tc.kinds) {
					t.Fatalf("saw %d pending requests, want %d", len(seen), len(tc.kinds))
				}
				wantDelivery := DeliveryPush
				if era.want >= "2026-07-28" {
					wantDelivery = DeliveryMRTR
				}
				// An MRTR input request is the call's for certain; a push over this transport (as over stdio)
				// names no request of the client: it is the session's, and still shown to the streaming call.
				wantOrigin, wantMethod, wantName := "call-ask", "tools/call", "ask"
				if wantDelivery == DeliveryPush {
					wantOrigin, wantMethod, wantName = "", "", ""
				}
				for _, p := range seen {
					if p.Delivery != wantDelivery || p.OriginCallID != wantOrigin || p.OriginMethod != wantMethod || p.OriginName != wantName || p.SessionID != s.ID() || p.Owner != "alice" {
						t.Errorf("pending request %+v: want delivery %v from %q", p, wantDelivery, wantOrigin)
					}
					if (wantDelivery == DeliveryMRTR) != (p.InputKey != "") {
						t.Errorf("InputKey = %q with delivery %v", p.InputKey, p.Delivery)
					}
					if _, leaked := metaOf(p)[metaRef]; leaked {
						t.Errorf("the core's private _meta key reached the host: %+v", p)
					}
					if tc.check != nil {
						tc.check(t, p)
					}
				}
				told := 0
				for drained := false; !drained; {
					select {
					case ev := <-watch.C():
						if ev.Kind == EventRequestCreated {
							told++
						}
					default:
						drained = true
					}
				}
				if told != len(tc.kinds) {
					t.Errorf("the call's watch was told of %d requests, want %d", told, len(tc.kinds))
				}
			})
		}
	}
}

func metaOf(p *PendingRequest) map[string]any {
	switch {
	case p.Sampling != nil:
		return p.Sampling.Meta
	case p.Elicitation != nil:
		return p.Elicitation.Meta
	case p.Roots != nil:
		return p.Roots.Meta
	}
	return nil
}

func TestMRTROnPromptsAndResources(t *testing.T) {
	c := memCore(t, nil, nil)
	s := open(t, c, "mem", "", allCaps)
	host(t, c, s, standardAnswer)
	ctx := tctx(t)
	gp, err := s.GetPrompt(ctx, &mcp.GetPromptParams{Name: "confirm"}, CallOptions{})
	if err != nil || len(gp.Messages) != 1 || !strings.Contains(gp.Messages[0].Content.(*mcp.TextContent).Text, "e=elicit:accept") {
		t.Errorf("GetPrompt(confirm) = %v, %v", gp, err)
	}
	rr, err := s.ReadResource(ctx, &mcp.ReadResourceParams{URI: "test://needs-roots"}, CallOptions{})
	if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "r=roots:file:///work" {
		t.Errorf("ReadResource(needs-roots) = %v, %v", rr, err)
	}
}

func TestHostErrorAnswer(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			c := memCore(t, nil, nil)
			s := open(t, c, "mem", era.pin, allCaps)
			host(t, c, s, func(*PendingRequest) Answer { return Answer{Error: &RPCError{Code: -1, Message: "user rejected"}} })
			res, err := s.CallTool(tctx(t), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"kinds": []any{"sampling"}}}, CallOptions{})
			// Handshake era: the server sees the -1 error (its tool fails); 2026-07-28: the call fails with it.
			if err == nil && !strings.Contains(fmt.Sprint(res), "user rejected") && !res.IsError {
				t.Errorf("CallTool = %v, %v; want the host's rejection to surface", textOf(res), err)
			}
		})
	}
}

func TestRootsFromHostList(t *testing.T) {
	c := memCore(t, nil, nil)
	ctx := tctx(t)
	s, err := c.Open(ctx, OpenParams{Owner: "alice", Server: "mem", ProtocolVersion: "2025-11-25", Capabilities: allCaps, Roots: []*mcp.Root{{URI: "file:///given"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := callText(t, s, "ask", map[string]any{"kinds": []any{"roots"}}, CallOptions{}); got != "r=roots:file:///given" {
		t.Errorf("roots answered from the host's list: %q", got)
	}
	if err := s.SetRoots(ctx, []*mcp.Root{{URI: "file:///a"}, {URI: "file:///b"}}); err != nil {
		t.Fatalf("SetRoots: %v", err)
	}
	if got := callText(t, s, "ask", map[string]any{"kinds": []any{"roots"}}, CallOptions{}); got != "r=roots:file:///a,file:///b" {
		t.Errorf("roots after SetRoots: %q", got)
	}
}

func TestUndeclaredCapabilityIsMethodNotFound(t *testing.T) {
	c := memCore(t, nil, nil)
	s := open(t, c, "mem", "2025-11-25", HostCapabilities{Sampling: true})
	got := callText(t, s, "roots-direct", nil, CallOptions{})
	if !strings.Contains(got, "-32601") && !strings.Contains(strings.ToLower(got), "method not found") {
		t.Errorf("roots/list to a host without roots: %q, want -32601 method not found", got)
	}
	if n := len(c.Dispatcher().List("", s.ID())); n != 0 {
		t.Errorf("%d pending requests reached the host", n)
	}
}

func TestCancellationBothWays(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name+"/client", func(t *testing.T) {
			hooks := &serverHooks{started: make(chan string, 1), cancelled: make(chan string, 1)}
			c := memCore(t, hooks, nil)
			s := open(t, c, "mem", era.pin, HostCapabilities{})
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)
			go func() {
				_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "slow"}, CallOptions{})
				errc <- err
			}()
			<-hooks.started // the tool runs: cancel the call
			cancel()
			if err := <-errc; !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled call returned %v, want context.Canceled", err)
			}
			select {
			case <-hooks.cancelled:
			case <-time.After(10 * time.Second):
				t.Fatal("the server did not observe the cancellation")
			}
		})
	}
	t.Run("server", func(t *testing.T) {
		hooks := &serverHooks{cancelElicit: make(chan struct{}), finish: make(chan struct{})}
		c := memCore(t, hooks, nil)
		s := open(t, c, "mem", "2025-11-25", allCaps)
		sub := s.Subscribe(0)
		defer sub.Close()
		done := make(chan string, 1)
		go func() { done <- callText(t, s, "elicit-cancelled", nil, CallOptions{}) }()
		ev := waitEvent(t, sub, func(e Event) bool { return e.Kind == EventRequestCreated })
		close(hooks.cancelElicit)
		ended, err := c.Dispatcher().Wait(tctx(t), ev.Request.ID)
		if err != nil || ended.Outcome != OutcomeCancelledByServer {
			t.Errorf("Wait = %+v, %v; want cancelled by server", ended, err)
		}
		cev := waitEvent(t, sub, func(e Event) bool { return e.Kind == EventCancelled })
		if cev.CancelledRequestID != ev.Request.ID {
			t.Errorf("EventCancelled names %q, want %q", cev.CancelledRequestID, ev.Request.ID)
		}
		close(hooks.finish)
		<-done
		err = c.Dispatcher().Respond(context.Background(), "alice", ev.Request.ID, Answer{Elicitation: &mcp.ElicitResult{Action: "decline"}})
		if !errors.Is(err, ErrRequestEnded) {
			t.Errorf("late answer: %v, want ErrRequestEnded", err)
		}
	})
}

// waitFor polls cond until it holds, failing after 10 s: for what another process does with nothing to wait
// on (a server process gone). In this process, wait on an event or a channel instead.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestCloseDrainsPendingRequests(t *testing.T) {
	c := memCore(t, nil, nil)
	s := open(t, c, "mem", "2025-11-25", allCaps)
	sub := s.Subscribe(0)
	done := make(chan error, 1)
	go func() {
		_, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"kinds": []any{"elicitation"}}}, CallOptions{})
		done <- err
	}()
	ev := waitEvent(t, sub, func(e Event) bool { return e.Kind == EventRequestCreated })
	if err := s.Close(tctx(t)); err != nil {
		t.Fatalf("Close: %v", err)
	}
	ended, err := c.Dispatcher().Wait(tctx(t), ev.Request.ID)
	if err != nil || ended.Outcome != OutcomeSessionClosed {
		t.Errorf("pending request ended %+v, %v; want session-closed", ended, err)
	}
	if err := <-done; err == nil {
		t.Log("the call finished with the drained answer before the session closed")
	}
	var last Event
	for ev := range sub.C() {
		last = *ev
	}
	if last.Kind != EventStateChanged || last.State != StateClosed {
		t.Errorf("last event = %+v, want state closed", last)
	}
	if got, err := c.Session(s.ID()); err != nil || got != s {
		t.Errorf("a closed session is kept for a while: Session = %v, %v", got, err)
	} else if st, _ := s.State(); st != StateClosed {
		t.Errorf("kept session in state %v", st)
	}
	if len(c.Sessions("")) != 0 {
		t.Error("a closed session is listed as open")
	}
	if _, err := s.ListTools(tctx(t), nil, CallOptions{}); !errors.Is(err, ErrSessionClosed) {
		t.Errorf("call on a closed session: %v, want ErrSessionClosed", err)
	}
	if err := s.Close(tctx(t)); err != nil {
		t.Errorf("second Close: %v", err)
	}
	c.Forget(s.ID())
	if _, err := c.Session(s.ID()); !errors.Is(err, ErrSessionNotFound) {
		t.Errorf("a forgotten session: %v, want ErrSessionNotFound", err)
	}
}

// --- subprocesses -------------------------------------------------------------------------------------

// selfServer is the test binary re-executed as a stdio server.
func selfServer(t *testing.T, mode string, env map[string]string) ServerConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e := map[string]string{"MCPCORE_TEST_SERVER": mode}
	for k, v := range env {
		e[k] = v
	}
	return ServerConfig{Transport: TransportStdio, Command: exe, Args: []string{"-test.run=^$"}, Env: e,
		Restart: RestartPolicy{MaxRestarts: DefaultMaxRestarts, InitialBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}}
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func TestStdioSubprocess(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			c, logs := newTestCore(t, map[string]ServerConfig{"sub": selfServer(t, "sdk", nil)}, nil)
			s := open(t, c, "sub", era.pin, allCaps)
			if v := s.Info().ProtocolVersion; v != era.want {
				t.Errorf("version %s, want %s", v, era.want)
			}
			host(t, c, s, standardAnswer)
			if got := callText(t, s, "ask", map[string]any{"kinds": []any{"sampling", "roots"}}, CallOptions{}); got != "r=roots:file:///work;s=sampling:test-model:4" {
				t.Errorf("ask over stdio = %q", got)
			}
			callText(t, s, "stderr", nil, CallOptions{})
			pid, _ := strconv.Atoi(callText(t, s, "pid", nil, CallOptions{}))
			if err := s.Close(tctx(t)); err != nil {
				t.Fatal(err)
			}
			if alive(pid) {
				t.Errorf("server process %d still alive after Close", pid)
			}
			if !strings.Contains(logs.String(), "stderr line 0") {
				t.Error("the server's stderr did not reach the log")
			}
			// Close joins the stderr pump (the process's reap waits for it), so the count is final here.
			if c.Stats().StderrLinesDropped == 0 {
				t.Error("500 stderr lines at once were not rate-bounded")
			}
		})
	}
}

func TestCrashedServerRestarts(t *testing.T) {
	c, _ := newTestCore(t, map[string]ServerConfig{"sub": selfServer(t, "sdk", nil)}, nil)
	s := open(t, c, "sub", "2025-11-25", HostCapabilities{})
	sub := s.Subscribe(0)
	defer sub.Close()
	pid1, _ := strconv.Atoi(callText(t, s, "pid", nil, CallOptions{}))
	_, err := s.CallTool(tctx(t), &mcp.CallToolParams{Name: "crash"}, CallOptions{})
	if !errors.Is(err, ErrUnavailable) {
		t.Errorf("call during the crash: %v, want ErrUnavailable", err)
	}
	waitEvent(t, sub, func(e Event) bool { return e.Kind == EventStateChanged && e.State == StateReconnecting })
	ev := waitEvent(t, sub, func(e Event) bool { return e.Kind == EventStateChanged && e.State == StateReady })
	if ev.Restarts != 1 {
		t.Errorf("restarts = %d, want 1", ev.Restarts)
	}
	pid2, _ := strconv.Atoi(callText(t, s, "pid", nil, CallOptions{}))
	if pid2 == pid1 || pid2 == 0 {
		t.Errorf("pid after restart %d (before %d)", pid2, pid1)
	}
	waitFor(t, func() bool { return !alive(pid1) })
	if c.Stats().Restarts != 1 {
		t.Errorf("Stats().Restarts = %d", c.Stats().Restarts)
	}
}

func TestRestartGivesUp(t *testing.T) {
	cfg := selfServer(t, "sdk", nil)
	cfg.Restart.MaxRestarts = -1
	c, _ := newTestCore(t, map[string]ServerConfig{"sub": cfg}, nil)
	s := open(t, c, "sub", "2025-11-25", HostCapabilities{})
	sub := s.Subscribe(0)
	_, _ = s.CallTool(tctx(t), &mcp.CallToolParams{Name: "crash"}, CallOptions{})
	ev := waitEvent(t, sub, func(e Event) bool { return e.Kind == EventStateChanged && e.State == StateClosed })
	if !strings.Contains(ev.Reason, "restarts are disabled") {
		t.Errorf("closed with reason %q", ev.Reason)
	}
	for range sub.C() {
	}
}

func TestStdioProcessLimit(t *testing.T) {
	c, _ := newTestCore(t, map[string]ServerConfig{"sub": selfServer(t, "sdk", nil)}, func(o *Options) { o.Limits.MaxStdioProcesses = 1 })
	open(t, c, "sub", "2025-11-25", HostCapabilities{})
	_, err := c.Open(tctx(t), OpenParams{Owner: "alice", Server: "sub"})
	if !errors.Is(err, ErrTooManySessions) {
		t.Errorf("second stdio server over the limit: %v, want ErrTooManySessions", err)
	}
}

func TestBadFramesFromServer(t *testing.T) {
	c, _ := newTestCore(t, map[string]ServerConfig{"raw": selfServer(t, "raw", nil)}, func(o *Options) { o.Limits.MaxMessageBytes = 64 << 10 })
	s := open(t, c, "raw", "", HostCapabilities{})
	if v := s.Info().ProtocolVersion; v != "2025-11-25" {
		t.Errorf("the raw server negotiated %s, want the fallback to 2025-11-25", v)
	}
	ctx := tctx(t)
	for _, name := range []string{"oversized", "malformed"} {
		_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name}, CallOptions{})
		if !errors.Is(err, ErrBadMessage) {
			t.Errorf("%s response: %v, want ErrBadMessage", name, err)
		}
		if _, ok := UpstreamCode(err); ok {
			t.Errorf("%s: a local error is reported as upstream", name)
		}
	}
	if got := callText(t, s, "garbage", nil, CallOptions{}); got != "after garbage" {
		t.Errorf("call after a garbage line = %q", got)
	}
	if got := callText(t, s, "echo", nil, CallOptions{}); got != "echo" {
		t.Errorf("session after bad frames: %q", got)
	}
	if st, _ := s.State(); st != StateReady {
		t.Errorf("state after bad frames: %v", st)
	}
	stats := c.Stats()
	if stats.OversizedMessages != 1 || stats.MalformedMessages != 2 {
		t.Errorf("stats = %+v, want 1 oversized and 2 malformed", stats)
	}
}

func TestUndeclaredCapabilityOverStdio(t *testing.T) {
	c, _ := newTestCore(t, map[string]ServerConfig{"raw": selfServer(t, "raw", nil)}, nil)
	s := open(t, c, "raw", "", HostCapabilities{})
	if got := callText(t, s, "ask-roots", nil, CallOptions{}); got != "roots error -32601" {
		t.Errorf("roots/list without the roots capability: %q, want -32601", got)
	}
	s2 := open(t, c, "raw", "", HostCapabilities{Roots: true})
	host(t, c, s2, standardAnswer)
	if got := callText(t, s2, "ask-roots", nil, CallOptions{CallID: "c1"}); !strings.Contains(got, "file:///work") {
		t.Errorf("roots/list with the capability: %q", got)
	}
}

func TestTasks(t *testing.T) {
	c, _ := newTestCore(t, map[string]ServerConfig{"raw": selfServer(t, "raw", nil)}, nil)
	s := open(t, c, "raw", "", HostCapabilities{Tasks: true})
	sub := s.Subscribe(0)
	defer sub.Close()
	ctx := tctx(t)
	res, task, err := s.CallToolOrTask(ctx, &mcp.CallToolParams{Name: "task"}, CallOptions{TaskTTL: time.Minute})
	if err != nil || res != nil || task == nil {
		t.Fatalf("CallToolOrTask = %v, %v, %v; want a task", res, task, err)
	}
	if task.ID != "task-1" || task.Status != "working" || task.TTL == nil || *task.TTL != time.Minute || task.PollInterval != 250*time.Millisecond {
		t.Errorf("task = %+v", task)
	}
	ev := waitEvent(t, sub, func(e Event) bool { return e.Kind == EventTaskStatus })
	if !strings.Contains(string(ev.Task), "task-1") {
		t.Errorf("task status event = %s", ev.Task)
	}
	_, err = s.CallTool(ctx, &mcp.CallToolParams{Name: "task"}, CallOptions{TaskTTL: time.Minute})
	var tce *TaskCreatedError
	if !errors.As(err, &tce) || !errors.Is(err, ErrTaskCreated) {
		t.Errorf("CallTool answered with a task: %v, want *TaskCreatedError", err)
	}
	got, err := s.GetTask(ctx, "task-1", CallOptions{})
	if err != nil || got.Status != "completed" || got.Result == nil || textOf(got.Result) != "task result" {
		t.Errorf("GetTask = %+v, %v; want completed with the tasks/result result", got, err)
	}
	if !strings.Contains(string(s.RawServerCapabilities()), `"tasks"`) {
		t.Errorf("RawServerCapabilities = %s, want the tasks capability", s.RawServerCapabilities())
	}
	if err := s.CancelTask(ctx, "task-1", CallOptions{}); err != nil {
		t.Errorf("CancelTask: %v", err)
	}
	if got := callText(t, s, "task", nil, CallOptions{}); got != "no task requested" {
		t.Errorf("a call without TaskTTL asked for a task: %q", got)
	}
}

func TestTaskTTLWithoutServerSupport(t *testing.T) {
	c := memCore(t, nil, nil)
	s := open(t, c, "mem", "2025-11-25", HostCapabilities{Tasks: true})
	res, task, err := s.CallToolOrTask(tctx(t), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "plain"}}, CallOptions{TaskTTL: time.Minute})
	if err != nil || task != nil || textOf(res) != "plain" {
		t.Errorf("CallToolOrTask on a server without tasks = %v, %v, %v; want a plain result", res, task, err)
	}
}

func TestParseTaskShapes(t *testing.T) {
	tests := []struct {
		name   string
		result string
		want   Task
	}{
		{"2025-11-25 CreateTaskResult", `{"task":{"taskId":"a","status":"working","ttl":1000,"pollInterval":5}}`, Task{ID: "a", Status: "working", PollInterval: 5 * time.Millisecond}},
		{"2026-07-28 flat", `{"resultType":"task","taskId":"b","status":"completed","ttlMs":null,"pollIntervalMs":7,"result":{"content":[{"type":"text","text":"ok"}]}}`, Task{ID: "b", Status: "completed", PollInterval: 7 * time.Millisecond}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw, ok := taskFromResult([]byte(tc.result))
			if !ok {
				t.Fatal("not recognized as a task")
			}
			got, err := ParseTask(raw)
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != tc.want.ID || got.Status != tc.want.Status || got.PollInterval != tc.want.PollInterval {
				t.Errorf("task = %+v, want %+v", got, tc.want)
			}
		})
	}
	if _, ok := taskFromResult([]byte(`{"content":[]}`)); ok {
		t.Error("a plain result was taken for a task")
	}
}

// --- Streamable HTTP ----------------------------------------------------------------------------------

// forgetfulHandler serves the SDK's Streamable HTTP handler and can forget every session, as a restarted
// server would: requests for the old session then get 404.
type forgetfulHandler struct {
	srv     *mcp.Server
	mu      sync.Mutex
	h       http.Handler
	newH    func() http.Handler
	deletes atomic.Int32
}

func (f *forgetfulHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	h := f.h
	f.mu.Unlock()
	if r.Method == http.MethodDelete {
		f.deletes.Add(1)
	}
	h.ServeHTTP(w, r)
}

func (f *forgetfulHandler) forget() {
	f.mu.Lock()
	f.h = f.newH()
	f.mu.Unlock()
	for ss := range f.srv.Sessions() {
		_ = ss.Close()
	}
}

func httpCore(t *testing.T, stateless bool, hooks *serverHooks) (*Core, *forgetfulHandler) {
	t.Helper()
	srv := newTestServer(nil, hooks)
	f := &forgetfulHandler{srv: srv, newH: func() http.Handler {
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: stateless,
			// The SDK server observes a closed 2026-07-28 response stream (the client's cancellation) only
			// with this option.
			PropagateRequestCancellation: true})
	}}
	f.h = f.newH()
	ts := httptest.NewServer(f)
	t.Cleanup(ts.Close) // registered first, so it runs after the core's Close
	c, _ := newTestCore(t, map[string]ServerConfig{"http": {Transport: TransportStreamableHTTP, URL: ts.URL, Headers: map[string]string{"X-Api-Key": "secret"},
		Restart: RestartPolicy{MaxRestarts: DefaultMaxRestarts}}}, nil)
	return c, f
}

func TestStreamableHTTP(t *testing.T) {
	for _, tc := range []struct {
		name      string
		stateless bool
		pin, want string
	}{
		{"2025-11-25", false, "2025-11-25", "2025-11-25"},
		{"2026-07-28", true, "", "2026-07-28"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hooks := &serverHooks{started: make(chan string, 1), cancelled: make(chan string, 1)}
			c, _ := httpCore(t, tc.stateless, hooks)
			s := open(t, c, "http", tc.pin, allCaps)
			if v := s.Info().ProtocolVersion; v != tc.want {
				t.Fatalf("version %s, want %s", v, tc.want)
			}
			// Two concurrent calls raising server requests: each request is attributed to its own call
			// (on the handshake era it arrives on that call's POST response stream).
			release := make(chan struct{})
			host(t, c, s, func(p *PendingRequest) Answer {
				<-release
				return standardAnswer(p)
			})
			var seen sync.Map
			raised := make(chan struct{}, 2) // one send per call, at its first request
			var wg sync.WaitGroup
			for i := range 2 {
				wg.Go(func() {
					id := fmt.Sprintf("http-call-%d", i)
					watch := c.Dispatcher().WatchCall(s.ID(), id, 16)
					read := make(chan struct{})
					go func() { // ends when the watch is closed
						defer close(read)
						for ev := range watch.C() {
							if ev.Kind == EventRequestCreated {
								if _, had := seen.Swap(id, ev.Request.OriginCallID); !had {
									raised <- struct{}{}
								}
							}
						}
					}()
					got := callText(t, s, "ask", map[string]any{"kinds": []any{"elicitation"}}, CallOptions{CallID: id})
					watch.Close()
					<-read
					if !strings.Contains(got, "e=elicit:accept") {
						t.Errorf("call %d = %q", i, got)
					}
				})
			}
			wait := tctx(t)
			for range 2 { // both calls' requests raised: the host holds them until release
				select {
				case <-raised:
				case <-wait.Done():
					t.Fatal("the two calls' requests were not both raised")
				}
			}
			close(release)
			wg.Wait()
			seen.Range(func(k, v any) bool {
				if k != v {
					t.Errorf("request raised by %v was attributed to %q", k, v)
				}
				return true
			})
			// Progress and client cancellation (on 2026-07-28 HTTP: closing the response stream).
			var n atomic.Int32
			callText(t, s, "progress", nil, CallOptions{OnProgress: func(Progress) { n.Add(1) }})
			if n.Load() != 3 {
				t.Errorf("progress notifications: %d, want 3", n.Load())
			}
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)
			go func() {
				_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "slow"}, CallOptions{})
				errc <- err
			}()
			<-hooks.started
			cancel()
			if err := <-errc; !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled call: %v", err)
			}
			select {
			case <-hooks.cancelled:
			case <-time.After(10 * time.Second):
				t.Error("the HTTP server did not observe the cancellation")
			}
		})
	}
}

func TestHTTPSessionLossReinitializes(t *testing.T) {
	c, f := httpCore(t, false, nil)
	s := open(t, c, "http", "2025-11-25", HostCapabilities{})
	sub := s.Subscribe(0)
	defer sub.Close()
	ctx := tctx(t)
	if _, err := s.ListTools(ctx, nil, CallOptions{}); err != nil {
		t.Fatal(err)
	}
	f.forget()
	res, err := s.ListTools(ctx, nil, CallOptions{})
	if err != nil || len(res.Tools) == 0 {
		t.Fatalf("ListTools after the server lost the session = %v, %v; want a transparent retry", res, err)
	}
	waitEvent(t, sub, func(e Event) bool { return e.Kind == EventStateChanged && e.State == StateReconnecting })
	waitEvent(t, sub, func(e Event) bool { return e.Kind == EventStateChanged && e.State == StateReady })
	if got := c.Stats().Reinitialized; got != 1 {
		t.Errorf("Stats().Reinitialized = %d, want 1", got)
	}
	if got := callText(t, s, "echo", map[string]any{"text": "again"}, CallOptions{}); got != "again" {
		t.Errorf("call on the new session = %q", got)
	}
}

func TestLegacySSETransport(t *testing.T) {
	srv := newTestServer([]string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}, nil)
	ts := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	c, _ := newTestCore(t, map[string]ServerConfig{"sse": {Transport: TransportSSE, URL: ts.URL}}, nil)
	s := open(t, c, "sse", "", allCaps)
	if v := s.Info().ProtocolVersion; v >= "2026-07-28" {
		t.Errorf("negotiated %s with a handshake-only server", v)
	}
	host(t, c, s, standardAnswer)
	if got := callText(t, s, "ask", map[string]any{"kinds": []any{"elicitation"}}, CallOptions{}); !strings.Contains(got, "e=elicit:accept") {
		t.Errorf("elicitation over HTTP+SSE = %q", got)
	}
	if got := callText(t, s, "echo", map[string]any{"text": "sse"}, CallOptions{}); got != "sse" {
		t.Errorf("echo over HTTP+SSE = %q", got)
	}
}

func TestOversizedOverHTTP(t *testing.T) {
	for _, jsonResponse := range []bool{false, true} {
		t.Run(fmt.Sprintf("json=%v", jsonResponse), func(t *testing.T) {
			srv := newTestServer(nil, nil)
			ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{JSONResponse: jsonResponse}))
			t.Cleanup(ts.Close)
			c, _ := newTestCore(t, map[string]ServerConfig{"http": {Transport: TransportStreamableHTTP, URL: ts.URL}}, func(o *Options) { o.Limits.MaxMessageBytes = 64 << 10 })
			s := open(t, c, "http", "2025-11-25", HostCapabilities{})
			_, err := s.CallTool(tctx(t), &mcp.CallToolParams{Name: "big"}, CallOptions{})
			if !errors.Is(err, ErrBadMessage) {
				t.Errorf("oversized response: %v, want ErrBadMessage", err)
			}
			if got := callText(t, s, "echo", map[string]any{"text": "after"}, CallOptions{}); got != "after" {
				t.Errorf("session after an oversized response: %q", got)
			}
			if c.Stats().OversizedMessages != 1 {
				t.Errorf("Stats = %+v", c.Stats())
			}
		})
	}
}

func TestSlots(t *testing.T) {
	s := newSlots(2)
	for i := range 2 {
		if ok, _ := s.acquire(); !ok {
			t.Fatalf("acquire %d under a limit of 2 refused", i+1)
		}
	}
	if ok, limit := s.acquire(); ok || limit != 2 {
		t.Fatalf("a third acquire under a limit of 2 = %v (limit %d), want refused at 2", ok, limit)
	}
	s.setLimit(1) // lowered below the holders: they keep their slots, new ones wait for enough to end
	if ok, _ := s.acquire(); ok {
		t.Fatal("acquire with 2 held under a lowered limit of 1 admitted")
	}
	s.release()
	if ok, _ := s.acquire(); ok {
		t.Fatal("acquire with 1 held under a limit of 1 admitted")
	}
	s.release()
	if ok, _ := s.acquire(); !ok {
		t.Fatal("acquire with none held under a limit of 1 refused")
	}
	s.setLimit(3)
	for i := range 2 {
		if ok, _ := s.acquire(); !ok {
			t.Fatalf("acquire %d after raising the limit to 3 refused", i+2)
		}
	}
	if running, limit := s.counts(); running != 3 || limit != 3 {
		t.Errorf("counts = %d/%d, want 3/3", running, limit)
	}
}

// TestReconfigureStdioProcessLimit: Reconfigure resizes limits.maxStdioProcesses with processes running:
// raised, a new stdio session opens; lowered below the running ones, none is ended and a new one is
// refused until enough have ended.
func TestReconfigureStdioProcessLimit(t *testing.T) {
	c, _ := newTestCore(t, map[string]ServerConfig{"sub": selfServer(t, "sdk", nil)}, func(o *Options) { o.Limits.MaxStdioProcesses = 1 })
	first := open(t, c, "sub", "2025-11-25", HostCapabilities{})
	if _, err := c.Open(tctx(t), OpenParams{Owner: "alice", Server: "sub"}); !errors.Is(err, ErrTooManySessions) || !strings.Contains(err.Error(), "limits.maxStdioProcesses") {
		t.Fatalf("second stdio server over a limit of 1: %v, want ErrTooManySessions naming the key", err)
	}
	servers := c.table()
	c.Reconfigure(Reconfiguration{Servers: servers, MaxStdioProcesses: 2})
	second := open(t, c, "sub", "2025-11-25", HostCapabilities{})

	c.Reconfigure(Reconfiguration{Servers: servers, MaxStdioProcesses: 1})
	for _, s := range []*Session{first, second} {
		if got := callText(t, s, "echo", map[string]any{"text": "x"}, CallOptions{}); got != "x" {
			t.Errorf("a running session after the limit was lowered below it: %q, want x", got)
		}
	}
	if _, err := c.Open(tctx(t), OpenParams{Owner: "alice", Server: "sub"}); !errors.Is(err, ErrTooManySessions) {
		t.Fatalf("a new stdio server with 2 running under a lowered limit of 1: %v, want ErrTooManySessions", err)
	}
	if err := second.Close(tctx(t)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Open(tctx(t), OpenParams{Owner: "alice", Server: "sub"}); !errors.Is(err, ErrTooManySessions) {
		t.Fatalf("a new stdio server with 1 running under a limit of 1: %v, want ErrTooManySessions", err)
	}
	if err := first.Close(tctx(t)); err != nil {
		t.Fatal(err)
	}
	open(t, c, "sub", "2025-11-25", HostCapabilities{})
}
