package server

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// syncBuffer is a bytes.Buffer safe for the audit log's writes and the test's reads.
// Each write pokes wrote (capacity 1), for a test that waits for a record.
type syncBuffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	wrote chan struct{}
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{wrote: make(chan struct{}, 1)} }

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	select {
	case w.wrote <- struct{}{}:
	default:
	}
	return w.b.Write(p)
}

// await waits for the first record of event that match says is the one, and returns it.
func (w *syncBuffer) await(ctx context.Context, t *testing.T, event string, match func(map[string]any) bool) map[string]any {
	t.Helper()
	for {
		for _, r := range w.records(t, event) {
			if match(r) {
				return r
			}
		}
		select {
		case <-w.wrote:
		case <-ctx.Done():
			t.Fatalf("no %s record: %v", event, ctx.Err())
		}
	}
}

// records returns the audit records of event written so far.
func (w *syncBuffer) records(t *testing.T, event string) []map[string]any {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []map[string]any
	for line := range strings.Lines(w.b.String()) {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		if rec["event"] == event {
			out = append(out, rec)
		}
	}
	return out
}

// auditedSession is a bridge whose audit log the test reads, a session of it, and a host attached to it.
func auditedSession(t *testing.T) (*bridge, *syncBuffer, context.Context, string, *hostConn) {
	t.Helper()
	audit := newSyncBuffer()
	b := newBridge(t, bridgeConfig{opts: Options{Audit: slog.New(slog.NewJSONHandler(audit, nil))}})
	ctx := testCtx(t, "")
	id := b.create(ctx, serverLegacy).GetSessionId()
	h := b.connect(ctx)
	h.Attach(id)
	return b, audit, ctx, id, h
}

// CancelCall and CancelTask are audited: who cancelled which call or task of which session, and the outcome.
func TestCancelsAreAudited(t *testing.T) {
	b, audit, ctx, id, h := auditedSession(t)
	call := b.callAsync(ctx, &pb.CallToolRequest{SessionId: id, Name: "elicit", CallId: "c-1"})
	h.NextRequest() // the call is in flight, waiting for the host
	if _, err := b.client.CancelCall(ctx, &pb.CancelCallRequest{SessionId: id, CallId: "c-1"}); err != nil {
		t.Fatal(err)
	}
	await(t, call)
	_, err := b.client.CancelCall(ctx, &pb.CancelCallRequest{SessionId: id, CallId: "c-none"})
	wantCode(t, err, codes.NotFound)
	recs := audit.records(t, auditCallCancelled)
	if len(recs) != 2 {
		t.Fatalf("call.cancelled records = %v, want 2", recs)
	}
	for i, want := range []struct{ callID, outcome string }{{"c-1", "OK"}, {"c-none", "NOT_FOUND"}} {
		r := recs[i]
		if r["session"] != id || r["call_id"] != want.callID || r["outcome"] != want.outcome || r["rpc"] != "CancelCall" || r["principal"] == "" {
			t.Errorf("record %d = %v, want session %s, call_id %s, outcome %s, rpc CancelCall", i, r, id, want.callID, want.outcome)
		}
	}

	_, err = b.client.CancelTask(ctx, &pb.CancelTaskRequest{SessionId: id, TaskId: "t-none"})
	if err == nil {
		t.Fatal("CancelTask of a task that does not exist succeeded")
	}
	recs = audit.records(t, auditTaskCancelled)
	if len(recs) != 1 || recs[0]["session"] != id || recs[0]["task_id"] != "t-none" || recs[0]["outcome"] == "OK" || recs[0]["rpc"] != "CancelTask" {
		t.Errorf("task.cancelled records = %v, want one for t-none of session %s, not OK", recs, id)
	}
}

// A detached call is audited when it ends, with its outcome, not when its host leaves (ADRs 0105, 0108): the
// CallTool RPC ends, the host's Connect stream then answers the call's elicitation, the call completes, and
// its one tool.called record says OK.
func TestDetachedCallAuditedWhereItEnds(t *testing.T) {
	b, audit, ctx, id, h := auditedSession(t)
	hostCtx, leave := context.WithCancel(ctx)
	call := b.callAsync(hostCtx, &pb.CallToolRequest{SessionId: id, Name: "elicit", CallId: "d-1", Detach: true})
	r := h.NextRequest() // the call is in flight, waiting for an answer
	leave()
	wantCode(t, await(t, call).Err, codes.Canceled)
	accept := &pb.HostAnswer{Answer: &pb.HostAnswer_Elicitation{Elicitation: &pb.ElicitResult{Action: pb.ElicitAction_ELICIT_ACTION_ACCEPT, Content: mustStruct(t, map[string]any{"name": "Ada", "age": 36})}}}
	if ack := h.Reply(r.GetRequestId(), accept); !ack.GetAccepted() {
		t.Fatalf("answer refused: %v", ack)
	}
	rec := audit.await(ctx, t, auditToolCalled, func(r map[string]any) bool { return r["call_id"] == "d-1" })
	if rec["outcome"] != "OK" || rec["is_error"] != false || rec["session"] != id || rec["rpc"] != "CallTool" || rec["principal"] == "" {
		t.Errorf("tool.called record = %v, want the call's own outcome OK, is_error false, rpc CallTool", rec)
	}
}
