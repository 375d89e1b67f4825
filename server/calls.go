package server

// Tool calls: CallTool (StreamCallTool is stream.go's), CancelCall, and the tasks a call may become
// (GetTask, CancelTask).

import (
	"context"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/types/known/structpb"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// toolCalls serves the tool calls: CallTool, StreamCallTool (stream.go), CancelCall, GetTask, CancelTask;
// every call goes through callToolAudited (audit.go). Service embeds it.
type toolCalls struct {
	s *Service
}

type toolCall struct {
	params *mcp.CallToolParams
	opts   mcpcore.CallOptions
}

// prepareToolCall converts a CallTool or StreamCallTool request.
func prepareToolCall(name string, args, meta *structpb.Struct, task *pb.TaskOptions) (toolCall, error) {
	if name == "" {
		return toolCall{}, invalidArgument(required("name"))
	}
	rawArgs, err := jsonFromStruct(args, "arguments")
	if err != nil {
		return toolCall{}, toStatus(err)
	}
	m, err := hostMeta(meta)
	if err != nil {
		return toolCall{}, toStatus(err)
	}
	tc := toolCall{params: &mcp.CallToolParams{Name: name}, opts: mcpcore.CallOptions{Meta: m}}
	if rawArgs != nil {
		tc.params.Arguments = rawArgs
	}
	if task != nil {
		tc.opts.Task = true // without a ttl the server decides how long it keeps the task
		if d := task.GetTtl(); d != nil {
			if err := d.CheckValid(); err != nil || d.AsDuration() <= 0 {
				return toolCall{}, invalidArgument(mcpcore.FieldViolation{Field: "task.ttl", Description: "must be a positive duration"})
			}
			tc.opts.TaskTTL = d.AsDuration()
		}
	}
	return tc, nil
}

// callResultToProto converts CallToolOrTask's outcome.
func callResultToProto(res *mcp.CallToolResult, task *mcpcore.Task) (*pb.CallToolResult, error) {
	if task != nil {
		return &pb.CallToolResult{Task: taskToProto(task)}, nil
	}
	return callToolResultToProto(res)
}

// detach marks tc detached (ADR 0105) and returns what the call then holds until it ends, not until its RPC
// returns: the session's use (release) and the rate limiter's admission. callToolAudited's end hook, which
// the core calls in every case, gives them back.
func detach(ctx context.Context, tc *toolCall, release func()) (held func()) {
	tc.opts.Detach = true
	admitted := holdAdmission(ctx)
	return func() {
		release()
		admitted()
	}
}

// CancelCall cancels a call in flight in the session, detached or not (ADR 0105).
func (c *toolCalls) CancelCall(ctx context.Context, req *pb.CancelCallRequest) (*pb.CancelCallResponse, error) {
	s := c.s
	sess, release, err := c.s.useFor(ctx, req.GetSessionId(), "call_id", req.GetCallId())
	if err != nil {
		return nil, err
	}
	defer release()
	err = sess.CancelCall(req.GetCallId())
	s.audit(ctx, auditCallCancelled, err, slog.String("session", sess.ID()), slog.String("server", sess.Server().Name), slog.String("call_id", req.GetCallId()))
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.CancelCallResponse{}, nil
}

// CallTool calls a tool. The gRPC deadline and cancellation reach the server as an MCP cancellation,
// because the call runs under the RPC's context — unless it is detached (ADR 0105): then only its deadline,
// CancelCall and its session's end do. A tool's failure is a result with is_error.
func (c *toolCalls) CallTool(ctx context.Context, req *pb.CallToolRequest) (*pb.CallToolResponse, error) {
	s := c.s
	sess, release, err := s.use(ctx, req.GetSessionId())
	if err != nil {
		return nil, err
	}
	var held func() // a detached call's: its end, not the RPC's return, gives the session's use back
	defer func() {
		if held == nil {
			release()
		}
	}()
	tc, err := prepareToolCall(req.GetName(), req.GetArguments(), req.GetMeta(), req.GetTask())
	if err != nil {
		return nil, err
	}
	callID := callIDOf(req.GetCallId())
	tc.opts.CallID, tc.opts.Resume = callID, req.GetResume()
	tc.opts.MintedID = req.GetCallId() == "" // no host can resume it: its outcome is not kept
	if req.GetDetach() {
		held = detach(ctx, &tc, release)
	}
	res, task, err := s.callToolAudited(ctx, sess, tc, held)
	if err != nil {
		return nil, toStatus(err)
	}
	out, err := callResultToProto(res, task)
	if err != nil {
		return nil, s.upstreamBad(sess, err)
	}
	return &pb.CallToolResponse{Result: out, CallId: callID}, nil
}

// GetTask polls a task the server runs.
func (c *toolCalls) GetTask(ctx context.Context, req *pb.GetTaskRequest) (*pb.GetTaskResponse, error) {
	s := c.s
	sess, release, err := c.s.useFor(ctx, req.GetSessionId(), "task_id", req.GetTaskId())
	if err != nil {
		return nil, err
	}
	defer release()
	t, err := sess.GetTask(ctx, req.GetTaskId(), mcpcore.CallOptions{})
	if err != nil {
		return nil, toStatus(err)
	}
	out := &pb.GetTaskResponse{Task: taskToProto(t)}
	if t.Result != nil {
		if out.Result, err = callToolResultToProto(t.Result); err != nil {
			return nil, s.upstreamBad(sess, err)
		}
	}
	if t.Error != nil {
		e := &pb.JsonRpcError{Code: int32(max(min(t.Error.Code, 1<<31-1), -1<<31)), Message: t.Error.Message}
		if len(t.Error.Data) > 0 {
			if e.Data, err = valueFromJSON(t.Error.Data); err != nil {
				return nil, s.upstreamBad(sess, badMessage("task error data", err))
			}
		}
		out.Error = e
	}
	return out, nil
}

// CancelTask asks the server to cancel a task and reports the task's state afterwards.
func (c *toolCalls) CancelTask(ctx context.Context, req *pb.CancelTaskRequest) (*pb.CancelTaskResponse, error) {
	s := c.s
	sess, release, err := c.s.useFor(ctx, req.GetSessionId(), "task_id", req.GetTaskId())
	if err != nil {
		return nil, err
	}
	defer release()
	err = sess.CancelTask(ctx, req.GetTaskId(), mcpcore.CallOptions{})
	if err != nil {
		err = s.cancelTaskError(ctx, sess, req.GetTaskId(), err)
	}
	s.audit(ctx, auditTaskCancelled, err, slog.String("session", sess.ID()), slog.String("server", sess.Server().Name), slog.String("task_id", req.GetTaskId()))
	if err != nil {
		return nil, err
	}
	t, err := sess.GetTask(ctx, req.GetTaskId(), mcpcore.CallOptions{})
	if err != nil {
		// The cancellation went through; the state is just unknown.
		return &pb.CancelTaskResponse{Task: &pb.Task{TaskId: req.GetTaskId()}}, nil
	}
	return &pb.CancelTaskResponse{Task: taskToProto(t)}, nil
}

// cancelTaskError is the status of a failed tasks/cancel. Servers refuse to cancel a task in a terminal
// status with a JSON-RPC error (the spec's -32602 invalid params), which would be INVALID_ARGUMENT; when
// tasks/get then shows the task ended (completed, failed or cancelled), the refusal is FAILED_PRECONDITION
// as the API documents, with the upstream error's details kept.
func (c *toolCalls) cancelTaskError(ctx context.Context, sess *mcpcore.Session, taskID string, err error) error {
	if !isInvalidArgument(err) {
		return toStatus(err)
	}
	t, gerr := sess.GetTask(ctx, taskID, mcpcore.CallOptions{})
	if gerr != nil {
		return toStatus(err)
	}
	switch t.Status {
	case "completed", "failed", "cancelled":
	default:
		return toStatus(err)
	}
	return taskEndedStatus(err, taskID, t.Status)
}
