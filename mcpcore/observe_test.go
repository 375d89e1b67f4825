package mcpcore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// recorder is an Observer that keeps what it was told.
type recorder struct {
	mu       sync.Mutex
	states   []string
	ended    []string
	ops      []Operation
	started  []RequestKind
	finished []string
	dropped  int
}

func (r *recorder) SessionStateChanged(server string, from, to SessionState) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.states = append(r.states, fmt.Sprintf("%s:%d>%s", server, from, to))
}
func (r *recorder) SessionEnded(server string, tr TransportKind, version, errorType string, _ time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ended = append(r.ended, fmt.Sprintf("%s:%s:%s:%q", server, tr, version, errorType))
}
func (r *recorder) OperationDone(op Operation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops = append(r.ops, op)
}
func (r *recorder) ServerRequestStarted(k RequestKind) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started = append(r.started, k)
}
func (r *recorder) ServerRequestEnded(k RequestKind, o Outcome, _ time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.finished = append(r.finished, k.String()+":"+o.String())
}
func (r *recorder) Reconnected(string, TransportKind, bool) {}
func (r *recorder) EventDropped() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dropped++
}
func (r *recorder) MessageTransferred(TransportKind, bool, int) {}

// op returns the last operation of method on target.
func (r *recorder) op(method, target string) (Operation, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.ops) - 1; i >= 0; i-- { // the last one
		if o := r.ops[i]; o.Method == method && o.Target == target {
			return o, true
		}
	}
	return Operation{}, false
}

// hostSpan is the context of a host's call whose span is remote (it came in gRPC metadata).
func hostSpan(t *testing.T) (context.Context, trace.SpanContext) {
	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled, Remote: true})
	return trace.ContextWithRemoteSpanContext(tctx(t), sc), sc
}

func metaTraceparent(t *testing.T, s *Session, ctx context.Context) string {
	t.Helper()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "meta"}, CallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	if err := json.Unmarshal([]byte(textOf(res)), &meta); err != nil {
		t.Fatalf("meta: %v (%s)", err, textOf(res))
	}
	tp, _ := meta["traceparent"].(string)
	return tp
}

// TestObserverAndSpans: the Observer is told of the session's states, of each upstream request with its
// error type, and of each server request; the core's spans chain host call → upstream request → server
// request, the server receives the upstream request's span in _meta, and the pending request carries its
// own span's context for the host.
func TestObserverAndSpans(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			rec := &recorder{}
			spans := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
			c := memCore(t, nil, func(o *Options) { o.Observer, o.TracerProvider = rec, tp })
			s := open(t, c, "mem", era.pin, allCaps)
			ctx, hs := hostSpan(t)

			// Before the server listed its tools, a call is recorded as _OTHER; after, by its name.
			callText(t, s, "echo", map[string]any{"text": "before the list"}, CallOptions{})
			if o, ok := rec.op("tools/call", OtherValue); !ok || o.ErrorType != "" {
				t.Errorf("echo before tools/list = %+v (found %v), want target _OTHER", o, ok)
			}
			for cursor := ""; ; { // every page
				r, err := s.ListTools(tctx(t), &mcp.ListToolsParams{Cursor: cursor}, CallOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if cursor = r.NextCursor; cursor == "" {
					break
				}
			}
			callText(t, s, "echo", map[string]any{"text": "x"}, CallOptions{})
			callText(t, s, "fail", nil, CallOptions{})
			if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "nope"}, CallOptions{}); err == nil {
				t.Fatal("unknown tool: no error")
			}
			tp1 := metaTraceparent(t, s, ctx)
			var pendingTC map[string]string
			stop := host(t, c, s, func(p *PendingRequest) Answer {
				pendingTC = p.TraceContext
				return standardAnswer(p)
			})
			if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"kinds": []any{"sampling"}}}, CallOptions{}); err != nil {
				t.Fatal(err)
			}
			stop()
			if err := s.Close(tctx(t)); err != nil {
				t.Fatal(err)
			}

			// The Observer.
			if o, ok := rec.op("tools/call", "echo"); !ok || o.ErrorType != "" || o.ProtocolVersion != era.want || o.Server != "mem" || o.Duration <= 0 {
				t.Errorf("echo operation = %+v (found %v)", o, ok)
			}
			if o, _ := rec.op("tools/call", "fail"); o.ErrorType != "tool_error" {
				t.Errorf("fail operation error type = %q, want tool_error", o.ErrorType)
			}
			if _, ok := rec.op("tools/call", "nope"); ok {
				t.Error("the unknown tool's name reached the Observer")
			}
			if o, _ := rec.op("tools/call", OtherValue); o.ErrorType == "" || o.ErrorType == OtherValue {
				t.Errorf("unknown tool operation error type = %q, want the JSON-RPC code", o.ErrorType)
			}
			rec.mu.Lock()
			if got, want := strings.Join(rec.states, " "), "mem:0>connecting mem:1>ready mem:2>closed"; got != want {
				t.Errorf("states = %s, want %s", got, want)
			}
			if got, want := strings.Join(rec.ended, " "), fmt.Sprintf(`mem:test:%s:""`, era.want); got != want {
				t.Errorf("ended = %s, want %s", got, want)
			}
			if fmt.Sprint(rec.started) != "[sampling]" || fmt.Sprint(rec.finished) != "[sampling:answered]" {
				t.Errorf("server requests started %v, ended %v", rec.started, rec.finished)
			}
			rec.mu.Unlock()

			// The spans.
			byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
			for _, sp := range spans.Ended() {
				byID[sp.SpanContext().SpanID()] = sp
			}
			parts := strings.Split(tp1, "-")
			if len(parts) != 4 || parts[1] != hs.TraceID().String() {
				t.Fatalf("server's _meta.traceparent = %q, want the host's trace", tp1)
			}
			sid, _ := trace.SpanIDFromHex(parts[2])
			up, ok := byID[sid]
			if !ok || up.Name() != "tools/call meta" || up.SpanKind() != trace.SpanKindClient || up.Parent().SpanID() != hs.SpanID() {
				t.Fatalf("the server's parent span = %v (found %v), want tools/call meta under the host's span", up, ok)
			}
			var nope sdktrace.ReadOnlySpan
			for _, sp := range byID {
				if strings.Contains(sp.Name(), "nope") {
					t.Errorf("span named by the host's unknown tool: %q", sp.Name())
				}
				for _, a := range sp.Attributes() {
					if a.Key == "gen_ai.tool.name" && a.Value.AsString() == OtherValue && sp.Status().Code.String() == "Error" {
						nope = sp
					}
				}
			}
			if nope == nil || nope.Name() != "tools/call" {
				t.Errorf("unknown tool's span = %v, want tools/call with gen_ai.tool.name _OTHER and status Error", nope)
			}
			if era.want < "2026-07-28" {
				return // a push over this transport names no call: its span has no parent to check
			}
			tc := strings.Split(pendingTC["traceparent"], "-")
			if len(tc) != 4 || tc[1] != hs.TraceID().String() {
				t.Fatalf("PendingRequest.TraceContext = %v", pendingTC)
			}
			ssid, _ := trace.SpanIDFromHex(tc[2])
			ss, ok := byID[ssid]
			if !ok || ss.Name() != "sampling/createMessage" {
				t.Fatalf("sampling span = %v (found %v)", ss, ok)
			}
			parent, ok := byID[ss.Parent().SpanID()]
			if !ok || parent.Name() != "tools/call ask" {
				t.Errorf("parent of the sampling span = %v, want tools/call ask", parent)
			}
			if len(ss.Links()) != 1 || ss.Links()[0].SpanContext.SpanID() != hs.SpanID() {
				t.Errorf("sampling span links = %v, want the host's call", ss.Links())
			}
		})
	}
}

// TestTracingOffPassesContext: without a TracerProvider the core makes no spans, but the host's context
// still reaches the server and comes back on the pending request.
func TestTracingOffPassesContext(t *testing.T) {
	c := memCore(t, nil, nil)
	s := open(t, c, "mem", "", allCaps)
	ctx, hs := hostSpan(t)
	want := "00-" + hs.TraceID().String() + "-" + hs.SpanID().String() + "-01"
	if got := metaTraceparent(t, s, ctx); got != want {
		t.Errorf("server's _meta.traceparent = %q, want %q", got, want)
	}
	if got := metaTraceparent(t, s, tctx(t)); got != "" {
		t.Errorf("without a host span the server got traceparent %q", got)
	}
	var tc map[string]string
	stop := host(t, c, s, func(p *PendingRequest) Answer {
		tc = p.TraceContext
		return standardAnswer(p)
	})
	if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"kinds": []any{"roots"}}}, CallOptions{}); err != nil {
		t.Fatal(err)
	}
	stop()
	if tc["traceparent"] != want {
		t.Errorf("PendingRequest.TraceContext = %v, want traceparent %s", tc, want)
	}
}

func TestErrorType(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{nil, ""},
		{&UpstreamError{Method: "tools/call", Err: &jsonrpc.Error{Code: -32602, Message: "bad"}}, "-32602"},
		{&UpstreamError{Method: "resources/read", Err: &jsonrpc.Error{Code: -32002, Message: "no such resource"}}, "-32002"},
		{&UpstreamError{Method: "tools/call", Err: &jsonrpc.Error{Code: 1234567, Message: "a server's own code"}}, "_OTHER"},
		{&UpstreamError{Method: "tools/call", Err: &jsonrpc.Error{Code: -32099, Message: "reserved, undefined"}}, "_OTHER"},
		{fmt.Errorf("%w: x", ErrRequestTimeout), "timeout"},
		{fmt.Errorf("%w: req-1, and the server then failed the call: %w", ErrServerRequestTimedOut, &UpstreamError{Err: &jsonrpc.Error{Code: -1}}), "server_request_timeout"},
		{fmt.Errorf("%w: down", ErrUnavailable), "unavailable"},
		{fmt.Errorf("%w: x", ErrSessionClosed), "session_closed"},
		{context.Canceled, "cancelled"},
		{context.DeadlineExceeded, "deadline_exceeded"},
		{&InvalidError{Err: errInvalidArguments}, "invalid_argument"},
		{errors.New("something"), "_OTHER"},
	}
	for _, tc := range cases {
		if got := ErrorType(tc.err); got != tc.want {
			t.Errorf("ErrorType(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// TestErrorTypesFixed: ErrorType's values are a fixed set, whatever code a server sends.
func TestErrorTypesFixed(t *testing.T) {
	known := map[string]bool{"": true}
	for _, e := range ErrorTypes() {
		known[e] = true
	}
	for code := int64(-33000); code < -31000; code++ {
		if et := ErrorType(&UpstreamError{Err: &jsonrpc.Error{Code: code}}); !known[et] {
			t.Fatalf("ErrorType of code %d = %q, not in ErrorTypes()", code, et)
		}
	}
	// One label per error class (errorClasses) and per JSON-RPC code the specifications define: bounded.
	if n := len(ErrorTypes()); n > 64 {
		t.Errorf("%d error types", n)
	}
}

// TestListedNamesBounded: a name is a target only once its server listed it for that method, per server,
// and a server that lists more than MaxListedNames names has the rest recorded as _OTHER.
func TestListedNamesBounded(t *testing.T) {
	var l listedNames
	names := make([]string, MaxListedNames+10)
	for i := range names {
		names[i] = fmt.Sprintf("tool-%d", i)
	}
	if got := l.target("a", "tools/call", "tool-0"); got != OtherValue {
		t.Errorf("before any list: %q", got)
	}
	l.learn("a", "tools/call", len(names), func(i int) string { return names[i] })
	l.learn("a", "tools/call", 1, func(int) string { return "" }) // a nil item: no name
	long := strings.Repeat("x", maxListedNameBytes+1)
	l.learn("b", "tools/call", 1, func(int) string { return long })
	for _, c := range []struct{ server, method, name, want string }{
		{"a", "tools/call", "tool-0", "tool-0"},
		{"a", "tools/call", fmt.Sprintf("tool-%d", MaxListedNames-1), fmt.Sprintf("tool-%d", MaxListedNames-1)},
		{"a", "tools/call", fmt.Sprintf("tool-%d", MaxListedNames), OtherValue}, // over the bound
		{"a", "prompts/get", "tool-0", OtherValue},                              // listed as a tool, not a prompt
		{"b", "tools/call", "tool-0", OtherValue},                               // another server's
		{"a", "tools/call", "", OtherValue},
		{"b", "tools/call", long, OtherValue}, // longer than a tool name should be
	} {
		if got := l.target(c.server, c.method, c.name); got != c.want {
			t.Errorf("target(%s, %s, %q) = %q, want %q", c.server, c.method, c.name, got, c.want)
		}
	}
	if n := len(l.names); n != MaxListedNames {
		t.Errorf("%d names kept, want %d", n, MaxListedNames)
	}
}

// TestAdHocServersListNothing: the tools an ad-hoc server lists are not remembered (its name comes from a
// host, so remembering per server would not be bounded); its calls are _OTHER.
func TestAdHocServersListNothing(t *testing.T) {
	rec := &recorder{}
	c := memCore(t, nil, func(o *Options) { o.Observer, o.AllowUnconfigured = rec, true })
	s, err := c.Open(tctx(t), OpenParams{Owner: "alice", Server: "adhoc-1", AdHoc: &ServerConfig{Transport: transportTest}, Capabilities: allCaps})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ListTools(tctx(t), nil, CallOptions{}); err != nil {
		t.Fatal(err)
	}
	callText(t, s, "echo", map[string]any{"text": "x"}, CallOptions{})
	if _, ok := rec.op("tools/call", OtherValue); !ok {
		t.Errorf("the ad-hoc server's echo is not _OTHER: %+v", rec.ops)
	}
	c.listed.mu.RLock()
	defer c.listed.mu.RUnlock()
	if len(c.listed.names) != 0 {
		t.Errorf("%d names remembered for an ad-hoc server", len(c.listed.names))
	}
}
