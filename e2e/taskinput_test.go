package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/internal/testpeers"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
)

// A 2025-11-25 task that needs input reaches the host (MCP basic/utilities/tasks, "Input Required
// Status"): server-everything's simulate-research-query with ambiguous=true moves its task to
// input_required and queues an elicitation that it delivers only on a tasks/result stream. When GetTask
// finds the task input_required the bridge sends tasks/result; the elicitation becomes a pending request
// tied to the task (task_id, origin tasks/result), shown on the events stream and by ListPendingRequests;
// the host's answer reaches the server, and the task completes with the clarification in its report.
func TestTaskInputRequiredEverything(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start func(t *testing.T) *bridge
	}{
		// Over stdio the elicitation names the task in its related-task _meta; over Streamable HTTP it comes
		// on the tasks/result call's own response stream.
		{"stdio", startEverything},
		{"streamable-http", func(t *testing.T) *bridge {
			return start(t, bridgeConfig{extraServers: fmt.Sprintf("  everything:\n    url: %q\n", testpeers.EverythingHTTP(t))})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) { taskInputRequired(t, tc.start(t)) })
	}
}

func taskInputRequired(t *testing.T, b *bridge) {
	ctx := testCtx(t)
	r := b.rest("")
	cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "everything",
		HostCapabilities: &pb.HostCapabilities{Elicitation: &pb.ElicitationCapability{Form: true}}})
	if err != nil {
		t.Fatal(err)
	}
	sid := cs.GetSession().GetSessionId()
	ev := r.events(sid)

	res, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: sid, Name: "simulate-research-query",
		Arguments: args(t, map[string]any{"topic": "python", "ambiguous": true}), Task: &pb.TaskOptions{Ttl: durationpb.New(time.Minute)}})
	if err != nil {
		t.Fatal(err)
	}
	taskID := res.GetResult().GetTask().GetTaskId()
	if taskID == "" {
		t.Fatalf("CallTool = %v, want a task", res)
	}

	// Poll as the spec has requestors do, at the server's suggested interval, until the task needs input.
	poll := func(want pb.TaskStatus) *pb.GetTaskResponse {
		t.Helper()
		for {
			got, err := b.client.GetTask(ctx, &pb.GetTaskRequest{SessionId: sid, TaskId: taskID})
			if err != nil {
				t.Fatalf("GetTask: %v", err)
			}
			st := got.GetTask().GetStatus()
			if st == want {
				return got
			}
			if st == pb.TaskStatus_TASK_STATUS_COMPLETED || st == pb.TaskStatus_TASK_STATUS_FAILED || st == pb.TaskStatus_TASK_STATUS_CANCELLED {
				t.Fatalf("task status %v (%s), want %v", st, got.GetTask().GetStatusMessage(), want)
			}
			select {
			case <-time.After(max(got.GetTask().GetPollInterval().AsDuration(), 50*time.Millisecond)):
			case <-ctx.Done():
				t.Fatalf("task never reached %v: %v", want, ctx.Err())
			}
		}
	}
	poll(pb.TaskStatus_TASK_STATUS_INPUT_REQUIRED)

	req := ev.next(func(e *pb.Event) bool { return e.GetServerRequest().GetElicitation() != nil }).GetServerRequest()
	if req.GetTaskId() != taskID || req.GetOriginMethod() != "tasks/result" || req.GetOriginName() != taskID {
		t.Errorf("elicitation request task_id %q origin %s %q, want task %q from tasks/result", req.GetTaskId(), req.GetOriginMethod(), req.GetOriginName(), taskID)
	}
	if !strings.Contains(req.GetElicitation().GetMessage(), "python") {
		t.Errorf("elicitation message = %q", req.GetElicitation().GetMessage())
	}
	list, err := b.client.ListPendingRequests(ctx, &pb.ListPendingRequestsRequest{SessionId: sid})
	if err != nil {
		t.Fatal(err)
	}
	if rs := list.GetRequests(); len(rs) != 1 || rs[0].GetRequestId() != req.GetRequestId() || rs[0].GetTaskId() != taskID {
		t.Errorf("pending requests = %v, want the task's elicitation", rs)
	}
	content, err := structpb.NewStruct(map[string]any{"interpretation": "snake"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.RespondToRequest(ctx, &pb.RespondToRequestRequest{SessionId: sid, RequestId: req.GetRequestId(),
		Answer: &pb.HostAnswer{Answer: &pb.HostAnswer_Elicitation{Elicitation: &pb.ElicitResult{Action: pb.ElicitAction_ELICIT_ACTION_ACCEPT, Content: content}}}}); err != nil {
		t.Fatalf("RespondToRequest: %v", err)
	}

	done := poll(pb.TaskStatus_TASK_STATUS_COMPLETED)
	if got := textOf(done.GetResult()); !strings.Contains(got, "Clarification**: snake") {
		t.Errorf("task result does not carry the host's answer: %s", got)
	}
}
