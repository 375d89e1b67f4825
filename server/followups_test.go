package server

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/types/known/durationpb"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// finalReason waits for the session's event stream to end and returns the reason of its last event.
func finalReason(t *testing.T, sub *mcpcore.Subscription) string {
	t.Helper()
	var last mcpcore.Event
	for ev := range sub.C() {
		last = *ev
	}
	if last.Kind != mcpcore.EventStateChanged || last.State != mcpcore.StateClosed {
		t.Fatalf("last event %+v, want the closed state", last)
	}
	return last.Reason
}

func TestCloseReasons(t *testing.T) {
	t.Run("idle", func(t *testing.T) {
		b := newBridge(t, bridgeConfig{opts: Options{IdleTimeout: 100 * time.Millisecond}})
		ctx := testCtx(t, "")
		sess, err := b.core.Session(b.create(ctx, serverLegacy).GetSessionId())
		if err != nil {
			t.Fatal(err)
		}
		sub := sess.Subscribe(0)
		defer sub.Close()
		if r := finalReason(t, sub); r != "idle timeout" {
			t.Errorf("reason %q, want \"idle timeout\"", r)
		}
	})
	t.Run("deleted", func(t *testing.T) {
		b := newBridge(t, bridgeConfig{})
		ctx := testCtx(t, "")
		id := b.create(ctx, serverLegacy).GetSessionId()
		sess, err := b.core.Session(id)
		if err != nil {
			t.Fatal(err)
		}
		sub := sess.Subscribe(0)
		defer sub.Close()
		if _, err := b.client.DeleteSession(ctx, &pb.DeleteSessionRequest{SessionId: id}); err != nil {
			t.Fatal(err)
		}
		if r := finalReason(t, sub); r != "deleted by the host" {
			t.Errorf("reason %q, want \"deleted by the host\"", r)
		}
	})
	t.Run("shutdown", func(t *testing.T) {
		b := newBridge(t, bridgeConfig{})
		ctx := testCtx(t, "")
		sess, err := b.core.Session(b.create(ctx, serverLegacy).GetSessionId())
		if err != nil {
			t.Fatal(err)
		}
		sub := sess.Subscribe(0)
		defer sub.Close()
		cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := b.svc.Close(cctx); err != nil {
			t.Fatal(err)
		}
		if r := finalReason(t, sub); r != "bridge shutting down" {
			t.Errorf("reason %q, want \"bridge shutting down\"", r)
		}
	})
}

// The service reports the core's roots, whoever set them.
func TestSessionRootsFromCore(t *testing.T) {
	b := newBridge(t, bridgeConfig{})
	ctx := testCtx(t, "")
	sess, err := b.core.Open(ctx, mcpcore.OpenParams{Owner: LocalPrincipal, Server: serverLegacy,
		Capabilities: mcpcore.HostCapabilities{Roots: true}, Roots: []*mcp.Root{{URI: "file:///from-core"}}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := b.client.GetSession(ctx, &pb.GetSessionRequest{SessionId: sess.ID()})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.GetSession().GetRoots(); len(got) != 1 || got[0].GetUri() != "file:///from-core" {
		t.Errorf("roots %v, want file:///from-core", got)
	}
	if err := sess.SetRoots(ctx, []*mcp.Root{{URI: "file:///set"}}); err != nil {
		t.Fatal(err)
	}
	r, err = b.client.GetSession(ctx, &pb.GetSessionRequest{SessionId: sess.ID()})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.GetSession().GetRoots(); len(got) != 1 || got[0].GetUri() != "file:///set" {
		t.Errorf("roots after SetRoots %v, want file:///set", got)
	}
}

// A server request whose call ends before it is answered ends CALL_ENDED when it is the call's for
// certain (MRTR); a legacy push over stdio belongs to the session, and ends when the server cancels it.
func TestCallEndedOutcome(t *testing.T) {
	for _, server := range []string{serverLegacy, serverModern} {
		t.Run(server, func(t *testing.T) {
			b := newBridge(t, bridgeConfig{})
			ctx := testCtx(t, "")
			id := b.create(ctx, server).GetSessionId()
			h := b.connect(ctx)
			h.Attach(id)
			cctx, cancel := context.WithCancel(ctx)
			call := b.callAsync(cctx, &pb.CallToolRequest{SessionId: id, Name: "elicit"})
			req := h.NextRequest()
			cancel()
			await(t, call)
			want := pb.RequestOutcome_REQUEST_OUTCOME_CALL_ENDED
			if req.GetDelivery() == pb.Delivery_DELIVERY_LEGACY_PUSH {
				want = pb.RequestOutcome_REQUEST_OUTCOME_CANCELLED_BY_SERVER
			}
			if got := h.NextEnded(req.GetRequestId()).GetOutcome(); got != want {
				t.Errorf("outcome %v, want %v", got, want)
			}
		})
	}
}

func TestTasksCapabilityFromRaw(t *testing.T) {
	raw := []byte(`{"tools":{},"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}}`)
	p, err := serverCapsToProto(&mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}}, mcpcore.ParseTasksCapability(raw))
	if err != nil {
		t.Fatal(err)
	}
	if tc := p.GetTasks(); tc == nil || !tc.GetList() || !tc.GetCancel() || !tc.GetToolCall() {
		t.Errorf("tasks = %v, want list, cancel and tool_call", tc)
	}
	p, err = serverCapsToProto(&mcp.ServerCapabilities{}, mcpcore.ParseTasksCapability([]byte(`{"tasks":{"cancel":{}}}`)))
	if err != nil {
		t.Fatal(err)
	}
	if tc := p.GetTasks(); tc == nil || tc.GetList() || !tc.GetCancel() || tc.GetToolCall() {
		t.Errorf("tasks = %v, want cancel only", tc)
	}
	if p, _ := serverCapsToProto(&mcp.ServerCapabilities{}, mcpcore.ParseTasksCapability([]byte(`{"tools":{}}`))); p.GetTasks() != nil {
		t.Errorf("tasks without a tasks capability: %v", p.GetTasks())
	}
}

// A task without a ttl lets the server decide (the proto's "unset lets the server decide").
func TestTaskTTLUnsetLetsServerDecide(t *testing.T) {
	tc, err := prepareToolCall("t", nil, nil, &pb.TaskOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !tc.opts.Task || tc.opts.TaskTTL != 0 {
		t.Errorf("opts = Task %v TaskTTL %v; want a task without a TTL", tc.opts.Task, tc.opts.TaskTTL)
	}
	tc, err = prepareToolCall("t", nil, nil, &pb.TaskOptions{Ttl: durationpb.New(time.Minute)})
	if err != nil || tc.opts.TaskTTL != time.Minute {
		t.Errorf("ttl 1m: %v, %v", tc.opts.TaskTTL, err)
	}
	if tc, _ := prepareToolCall("t", nil, nil, nil); tc.opts.Task || tc.opts.TaskTTL != 0 {
		t.Error("a call without task options asks for a task")
	}
}
