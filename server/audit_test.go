package server

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// syncBuffer is a bytes.Buffer safe for the audit log's writes and the test's reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
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

// CancelCall and CancelTask are audited: who cancelled which call or task of which session, and the outcome.
func TestCancelsAreAudited(t *testing.T) {
	audit := &syncBuffer{}
	b := newBridge(t, bridgeConfig{opts: Options{Audit: slog.New(slog.NewJSONHandler(audit, nil))}})
	ctx := testCtx(t, "")
	id := b.create(ctx, serverLegacy).GetSessionId()
	h := b.connect(ctx)
	h.attach(id)
	call := b.callAsync(ctx, &pb.CallToolRequest{SessionId: id, Name: "elicit", CallId: "c-1"})
	h.nextRequest() // the call is in flight, waiting for the host
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
