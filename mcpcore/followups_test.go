package mcpcore

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// lastEvent drains sub and returns its last event.
func lastEvent(t *testing.T, sub *Subscription) Event {
	t.Helper()
	var last Event
	for ev := range sub.C() {
		last = *ev
	}
	return last
}

func TestCloseWithReason(t *testing.T) {
	c := memCore(t, nil, nil)
	s := open(t, c, "mem", "2025-11-25", HostCapabilities{})
	sub := s.Subscribe(0)
	if err := s.CloseWithReason(tctx(t), "idle timeout"); err != nil {
		t.Fatal(err)
	}
	if last := lastEvent(t, sub); last.State != StateClosed || last.Reason != "idle timeout" {
		t.Errorf("final event %v %q, want closed with \"idle timeout\"", last.State, last.Reason)
	}
	if st, reason := s.State(); st != StateClosed || reason != "idle timeout" {
		t.Errorf("State = %v %q", st, reason)
	}
	// The first reason stands.
	if err := s.Close(tctx(t)); err != nil {
		t.Fatal(err)
	}
	if _, reason := s.State(); reason != "idle timeout" {
		t.Errorf("reason after a second Close: %q", reason)
	}

	s2 := open(t, c, "mem", "2025-11-25", HostCapabilities{})
	sub2 := s2.Subscribe(0)
	if err := c.Close(tctx(t)); err != nil {
		t.Fatal(err)
	}
	if last := lastEvent(t, sub2); last.State != StateClosed || last.Reason != "bridge shutting down" {
		t.Errorf("Core.Close: final event %v %q, want closed with \"bridge shutting down\"", last.State, last.Reason)
	}
}

func TestSessionRoots(t *testing.T) {
	configured := []*mcp.Root{{URI: "file:///configured"}}
	c := memCore(t, nil, func(o *Options) {
		cfg := o.Servers["mem"]
		cfg.Roots = configured
		o.Servers["mem"] = cfg
	})
	s := open(t, c, "mem", "2025-11-25", allCaps)
	if got := s.Roots(); len(got) != 1 || got[0].URI != "file:///configured" {
		t.Errorf("Roots without a host list = %v, want the configured roots", got)
	}
	ctx := tctx(t)
	h, err := c.Open(ctx, OpenParams{Owner: "alice", Server: "mem", ProtocolVersion: "2025-11-25", Capabilities: allCaps, Roots: []*mcp.Root{{URI: "file:///given"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Roots(); len(got) != 1 || got[0].URI != "file:///given" {
		t.Errorf("Roots = %v, want the host's", got)
	}
	if err := h.SetRoots(ctx, []*mcp.Root{{URI: "file:///a"}, {URI: "file:///b"}}); err != nil {
		t.Fatal(err)
	}
	got := h.Roots()
	if len(got) != 2 || got[0].URI != "file:///a" || got[1].URI != "file:///b" {
		t.Errorf("Roots after SetRoots = %v", got)
	}
	got[0] = &mcp.Root{URI: "file:///changed"}
	if h.Roots()[0].URI != "file:///a" {
		t.Error("Roots returned the session's own slice")
	}
}

// A pending request whose originating call ends before it is answered ends OutcomeCallEnded (MRTR on
// 2026-07-28). A push over a transport that does not tie it to the call (in-memory, as stdio) ends when
// the server cancels it, which a server does when its tool's call is cancelled.
func TestCallEndedOutcome(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			c := memCore(t, nil, nil)
			s := open(t, c, "mem", era.pin, allCaps)
			sub := s.Subscribe(0)
			defer sub.Close()
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"kinds": []any{"elicitation"}}}, CallOptions{})
				done <- err
			}()
			ev := waitEvent(t, sub, func(e Event) bool { return e.Kind == EventRequestCreated })
			cancel()
			ended, err := c.Dispatcher().Wait(tctx(t), ev.Request.ID)
			want := OutcomeCallEnded
			if era.want == "2025-11-25" {
				want = OutcomeCancelledByServer
			}
			if err != nil || ended.Outcome != want {
				t.Errorf("Wait = %+v, %v; want %v", ended, err, want)
			}
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Errorf("call returned %v, want context.Canceled", err)
			}
		})
	}
}

// TestDispatcherCallEndedCause runs in a synctest bubble so that the second submit is known to be waiting
// (synctest.Wait) when its context is cancelled, instead of being given 20 ms to get there.
func TestDispatcherCallEndedCause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := newDispatcher(nil, PendingPolicy{}, Limits{}, nil)
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(errCallEnded)
		_, o, err := d.submit(ctx, &PendingRequest{SessionID: "s", Kind: KindRoots}, nil)
		if err != nil || o != OutcomeCallEnded {
			t.Errorf("submit on an ended call = %v, %v; want %v", o, err, OutcomeCallEnded)
		}
		ctx2, cancel2 := context.WithCancelCause(context.Background())
		res := make(chan Outcome, 1)
		go func() {
			_, o, _ := d.submit(ctx2, &PendingRequest{SessionID: "s", Kind: KindRoots}, nil)
			res <- o
		}()
		synctest.Wait() // the request is submitted and its submit waits
		cancel2(errors.New("server cancelled"))
		if o := <-res; o != OutcomeCancelledByServer {
			t.Errorf("server cancellation = %v, want %v", o, OutcomeCancelledByServer)
		}
	})
}

// An input request without params (valid: the Python SDK sends {"method":"roots/list"}) is given empty
// params in the tap, so that go-sdk's InputRequestMap can decode the result.
func TestInputRequestWithoutParams(t *testing.T) {
	tap := &wireTap{outgoing: map[jsonrpc.ID]*outgoingCall{}}
	id, _ := jsonrpc.MakeID(float64(7))
	in := &jsonrpc.Response{ID: id, Result: json.RawMessage(`{"resultType":"input_required","content":[],"inputRequests":{"r":{"method":"roots/list"},"e":{"method":"elicitation/create","params":null},"s":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}},"requestState":"abc"}`)}
	out, ok := tap.received(in, nil)
	if !ok {
		t.Fatal("response dropped")
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(out.(*jsonrpc.Response).Result, &res); err != nil {
		t.Fatalf("decoding the tapped result: %v", err)
	}
	if len(res.InputRequests) != 3 || res.RequestState != "abc" {
		t.Fatalf("input requests %v, state %q", res.InputRequests, res.RequestState)
	}
	if _, ok := res.InputRequests["r"].(*mcp.ListRootsParams); !ok {
		t.Errorf("r = %T, want *mcp.ListRootsParams", res.InputRequests["r"])
	}
	if s, ok := res.InputRequests["s"].(*mcp.CreateMessageWithToolsParams); !ok || s.MaxTokens != 5 {
		t.Errorf("s = %#v, want the sampling params untouched", res.InputRequests["s"])
	}
	// A result that needs nothing is passed through as is.
	plain := &jsonrpc.Response{ID: id, Result: json.RawMessage(`{"content":[]}`)}
	if out, _ := tap.received(plain, nil); out != plain {
		t.Error("a plain result was rewritten")
	}
}

// On 2026-07-28 Ping is a server/discover round trip, over Streamable HTTP too (the Mcp-Method header
// follows the tap's renaming).
func TestPingIsDiscoverOnModern(t *testing.T) {
	c, _ := httpCore(t, true, nil)
	s := open(t, c, "http", "", allCaps)
	if v := s.Info().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("version %s", v)
	}
	if err := s.Ping(tctx(t)); err != nil {
		t.Errorf("Ping: %v", err)
	}
}

// CallOptions.Task asks for a task without a TTL (TaskMetadata {}): the server decides how long it keeps it.
func TestTaskWithoutTTL(t *testing.T) {
	c, _ := newTestCore(t, map[string]ServerConfig{"raw": selfServer(t, "raw", nil)}, nil)
	s := open(t, c, "raw", "", HostCapabilities{Tasks: true})
	for _, tc := range []struct {
		opts CallOptions
		want string
	}{
		{CallOptions{Task: true}, "task={}"},
		{CallOptions{TaskTTL: time.Minute}, `task={"ttl":60000}`},
		{CallOptions{Task: true, TaskTTL: time.Second}, `task={"ttl":1000}`},
		{CallOptions{}, "task="},
	} {
		if got := callText(t, s, "task-params", nil, tc.opts); got != tc.want {
			t.Errorf("%+v: server saw %q, want %q", tc.opts, got, tc.want)
		}
	}
}
