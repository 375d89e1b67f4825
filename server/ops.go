package server

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// reservedMetaPrefix marks _meta keys the bridge sets itself; hosts may not send them.
const reservedMetaPrefix = "io.modelcontextprotocol/"

// hostMeta converts a host's _meta, refusing keys reserved to the bridge.
func hostMeta(s *structpb.Struct) (map[string]any, error) {
	var vs []mcpcore.FieldViolation
	for k := range s.GetFields() {
		if strings.HasPrefix(k, reservedMetaPrefix) || k == "progressToken" {
			vs = append(vs, mcpcore.FieldViolation{Field: "_meta." + k, Description: "reserved to the bridge"})
		}
	}
	if len(vs) > 0 {
		return nil, &mcpcore.InvalidError{Err: errInvalidInput, Violations: vs}
	}
	return mapFromStruct(s, "_meta")
}

// The encoded responses of list results (listconvert.go), one memo per list RPC.
var (
	toolLists     = newResponseMemo[mcp.ListToolsResult, *pb.ListToolsResponse]()
	promptLists   = newResponseMemo[mcp.ListPromptsResult, *pb.ListPromptsResponse]()
	resourceLists = newResponseMemo[mcp.ListResourcesResult, *pb.ListResourcesResponse]()
	templateLists = newResponseMemo[mcp.ListResourceTemplatesResult, *pb.ListResourceTemplatesResponse]()
)

// ListTools lists one page of the server's tools; page tokens are MCP cursors.
func (s *Service) ListTools(ctx context.Context, req *pb.ListToolsRequest) (*pb.ListToolsResponse, error) {
	var policy *mcpcore.Policy                 // the session's server's: which tools need approval (approval.go)
	ctx, release := mcpcore.HoldLargeList(ctx) // a large list waits for the one converting (docs/adr/0107)
	defer release()
	return listPage(s, ctx, req.GetSessionId(), toolLists,
		func(sess *mcpcore.Session) (*mcp.ListToolsResult, error) {
			policy = sess.Server().Policy
			return sess.ListTools(ctx, &mcp.ListToolsParams{Cursor: req.GetPageToken()}, mcpcore.CallOptions{})
		},
		func(r *mcp.ListToolsResult) (*pb.ListToolsResponse, error) {
			return toolListResponse(r.Tools, r.NextCursor, func(name string) *pb.ToolApproval { return toolApproval(policy, name) })
		})
}

// listPage is one List* RPC: the session, one page of the server's list, its response. The server's error
// is the call's status; an item that cannot be converted is the server's bad result. The response is the
// encoded one of memo (listconvert.go): a list the core answers from its cache again is not converted or
// marshaled again.
func listPage[R any, P proto.Message](s *Service, ctx context.Context, sessionID string, memo *responseMemo[R, P],
	list func(*mcpcore.Session) (*R, error), build func(*R) (P, error)) (P, error) {
	var zero P
	sess, release, err := s.use(ctx, sessionID)
	if err != nil {
		return zero, err
	}
	defer release()
	r, err := list(sess)
	if err != nil {
		return zero, toStatus(err)
	}
	if r == nil {
		return zero, s.upstreamBad(sess, badMessage("list result", errors.New("null")))
	}
	p, err := memo.respond(r, func() (P, error) { return build(r) })
	if err != nil {
		return zero, s.upstreamBad(sess, err)
	}
	return p, nil
}

// convertAll converts every item of a server's result; the first item that cannot be converted fails it all.
func convertAll[T, P any](items []T, convert func(T) (P, error)) ([]P, error) {
	out := make([]P, 0, len(items))
	for _, it := range items {
		p, err := convert(it)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// upstreamBad reports a server's result the service could not convert on the core's one path for bad
// upstream data (mcpcore.Session.BadMessage: counted and logged) and returns its status.
func (s *Service) upstreamBad(sess *mcpcore.Session, err error) error {
	return toStatus(sess.BadMessage(err))
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

// detachCall marks tc detached (ADR 0105): the session's use and the rate limiter's admission are released
// when the call ends, not when the RPC does (the core calls OnDetachedEnd in every case). It returns what
// the handler defers instead of useRelease.
func detachCall(ctx context.Context, tc *toolCall, useRelease func()) func() {
	admitted := holdAdmission(ctx)
	tc.opts.Detach = true
	tc.opts.OnDetachedEnd = func() {
		useRelease()
		admitted()
	}
	return func() {}
}

// CancelCall cancels a call in flight in the session, detached or not (ADR 0105).
func (s *Service) CancelCall(ctx context.Context, req *pb.CancelCallRequest) (*pb.CancelCallResponse, error) {
	sess, release, err := s.use(ctx, req.GetSessionId())
	if err != nil {
		return nil, err
	}
	defer release()
	if req.GetCallId() == "" {
		return nil, invalidArgument(required("call_id"))
	}
	if err := sess.CancelCall(req.GetCallId()); err != nil {
		return nil, toStatus(err)
	}
	return &pb.CancelCallResponse{}, nil
}

// CallTool calls a tool. The gRPC deadline and cancellation reach the server as an MCP cancellation,
// because the call runs under the RPC's context — unless it is detached (ADR 0105): then only its deadline,
// CancelCall and its session's end do. A tool's failure is a result with is_error.
func (s *Service) CallTool(ctx context.Context, req *pb.CallToolRequest) (*pb.CallToolResponse, error) {
	sess, release, err := s.use(ctx, req.GetSessionId())
	if err != nil {
		return nil, err
	}
	defer func() { release() }()
	tc, err := prepareToolCall(req.GetName(), req.GetArguments(), req.GetMeta(), req.GetTask())
	if err != nil {
		return nil, err
	}
	callID := callIDOf(req.GetCallId())
	tc.opts.CallID, tc.opts.Resume = callID, req.GetResume()
	tc.opts.MintedID = req.GetCallId() == "" // no host can resume it: its outcome is not kept
	if req.GetDetach() {
		release = detachCall(ctx, &tc, release)
	}
	res, task, err := s.callToolAudited(ctx, sess, tc)
	if err != nil {
		return nil, toStatus(err)
	}
	out, err := callResultToProto(res, task)
	if err != nil {
		return nil, s.upstreamBad(sess, err)
	}
	return &pb.CallToolResponse{Result: out, CallId: callID}, nil
}

// ListResources lists one page of the server's resources.
func (s *Service) ListResources(ctx context.Context, req *pb.ListResourcesRequest) (*pb.ListResourcesResponse, error) {
	return listPage(s, ctx, req.GetSessionId(), resourceLists,
		func(sess *mcpcore.Session) (*mcp.ListResourcesResult, error) {
			return sess.ListResources(ctx, &mcp.ListResourcesParams{Cursor: req.GetPageToken()}, mcpcore.CallOptions{})
		},
		func(r *mcp.ListResourcesResult) (*pb.ListResourcesResponse, error) {
			items, err := convertAll(r.Resources, resourceToProto)
			return &pb.ListResourcesResponse{Resources: items, NextPageToken: r.NextCursor}, err
		})
}

// ListResourceTemplates lists one page of the server's resource templates.
func (s *Service) ListResourceTemplates(ctx context.Context, req *pb.ListResourceTemplatesRequest) (*pb.ListResourceTemplatesResponse, error) {
	return listPage(s, ctx, req.GetSessionId(), templateLists,
		func(sess *mcpcore.Session) (*mcp.ListResourceTemplatesResult, error) {
			return sess.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: req.GetPageToken()}, mcpcore.CallOptions{})
		},
		func(r *mcp.ListResourceTemplatesResult) (*pb.ListResourceTemplatesResponse, error) {
			items, err := convertAll(r.ResourceTemplates, resourceTemplateToProto)
			return &pb.ListResourceTemplatesResponse{ResourceTemplates: items, NextPageToken: r.NextCursor}, err
		})
}

// ReadResource reads a resource; a resource the server does not have is NOT_FOUND.
func (s *Service) ReadResource(ctx context.Context, req *pb.ReadResourceRequest) (*pb.ReadResourceResponse, error) {
	sess, release, err := s.use(ctx, req.GetSessionId())
	if err != nil {
		return nil, err
	}
	defer release()
	if req.GetUri() == "" {
		return nil, invalidArgument(required("uri"))
	}
	m, err := hostMeta(req.GetMeta())
	if err != nil {
		return nil, toStatus(err)
	}
	callID := callIDOf(req.GetCallId())
	r, err := sess.ReadResource(ctx, &mcp.ReadResourceParams{URI: req.GetUri()}, mcpcore.CallOptions{CallID: callID, Meta: m})
	if err != nil {
		return nil, resourceStatus(err, req.GetUri())
	}
	contents, err := convertAll(r.Contents, resourceContentsToProto)
	if err != nil {
		return nil, s.upstreamBad(sess, err)
	}
	out := &pb.ReadResourceResponse{Contents: contents}
	if out.Meta, err = metaToProto(r.Meta); err != nil {
		return nil, s.upstreamBad(sess, err)
	}
	return out, nil
}

// SubscribeResource subscribes to a resource's updates (resource_updated events).
func (s *Service) SubscribeResource(ctx context.Context, req *pb.SubscribeResourceRequest) (*pb.SubscribeResourceResponse, error) {
	sess, release, err := s.use(ctx, req.GetSessionId())
	if err != nil {
		return nil, err
	}
	defer release()
	if req.GetUri() == "" {
		return nil, invalidArgument(required("uri"))
	}
	if err := sess.SubscribeResource(ctx, req.GetUri()); err != nil {
		return nil, resourceStatus(err, req.GetUri())
	}
	return &pb.SubscribeResourceResponse{}, nil
}

// UnsubscribeResource ends a resource subscription.
func (s *Service) UnsubscribeResource(ctx context.Context, req *pb.UnsubscribeResourceRequest) (*pb.UnsubscribeResourceResponse, error) {
	sess, release, err := s.use(ctx, req.GetSessionId())
	if err != nil {
		return nil, err
	}
	defer release()
	if req.GetUri() == "" {
		return nil, invalidArgument(required("uri"))
	}
	if err := sess.UnsubscribeResource(ctx, req.GetUri()); err != nil {
		return nil, resourceStatus(err, req.GetUri())
	}
	return &pb.UnsubscribeResourceResponse{}, nil
}

// ListPrompts lists one page of the server's prompts.
func (s *Service) ListPrompts(ctx context.Context, req *pb.ListPromptsRequest) (*pb.ListPromptsResponse, error) {
	return listPage(s, ctx, req.GetSessionId(), promptLists,
		func(sess *mcpcore.Session) (*mcp.ListPromptsResult, error) {
			return sess.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: req.GetPageToken()}, mcpcore.CallOptions{})
		},
		func(r *mcp.ListPromptsResult) (*pb.ListPromptsResponse, error) {
			items, err := convertAll(r.Prompts, promptToProto)
			return &pb.ListPromptsResponse{Prompts: items, NextPageToken: r.NextCursor}, err
		})
}

// GetPrompt renders a prompt.
func (s *Service) GetPrompt(ctx context.Context, req *pb.GetPromptRequest) (*pb.GetPromptResponse, error) {
	sess, release, err := s.use(ctx, req.GetSessionId())
	if err != nil {
		return nil, err
	}
	defer release()
	if req.GetName() == "" {
		return nil, invalidArgument(required("name"))
	}
	m, err := hostMeta(req.GetMeta())
	if err != nil {
		return nil, toStatus(err)
	}
	callID := callIDOf(req.GetCallId())
	r, err := sess.GetPrompt(ctx, &mcp.GetPromptParams{Name: req.GetName(), Arguments: req.GetArguments()}, mcpcore.CallOptions{CallID: callID, Meta: m})
	if err != nil {
		return nil, toStatus(err)
	}
	out, err := getPromptResultToProto(r)
	if err != nil {
		return nil, s.upstreamBad(sess, err)
	}
	return out, nil
}

// Complete asks for argument completions.
func (s *Service) Complete(ctx context.Context, req *pb.CompleteRequest) (*pb.CompleteResponse, error) {
	sess, release, err := s.use(ctx, req.GetSessionId())
	if err != nil {
		return nil, err
	}
	defer release()
	p := &mcp.CompleteParams{Argument: mcp.CompleteParamsArgument{Name: req.GetArgumentName(), Value: req.GetArgumentValue()}}
	var vs []mcpcore.FieldViolation
	switch r := req.GetRef().(type) {
	case *pb.CompleteRequest_PromptName:
		if r.PromptName == "" {
			vs = append(vs, required("prompt_name"))
		}
		p.Ref = &mcp.CompleteReference{Type: "ref/prompt", Name: r.PromptName}
	case *pb.CompleteRequest_ResourceTemplateUri:
		if r.ResourceTemplateUri == "" {
			vs = append(vs, required("resource_template_uri"))
		}
		p.Ref = &mcp.CompleteReference{Type: "ref/resource", URI: r.ResourceTemplateUri}
	default:
		vs = append(vs, mcpcore.FieldViolation{Field: "ref", Description: "one of prompt_name or resource_template_uri is required"})
	}
	if req.GetArgumentName() == "" {
		vs = append(vs, required("argument_name"))
	}
	if len(vs) > 0 {
		return nil, invalidArgument(vs...)
	}
	if len(req.GetContextArguments()) > 0 {
		p.Context = &mcp.CompleteContext{Arguments: req.GetContextArguments()}
	}
	r, err := sess.Complete(ctx, p, mcpcore.CallOptions{})
	if err != nil {
		return nil, toStatus(err)
	}
	out := &pb.CompleteResponse{Values: r.Completion.Values, HasMore: r.Completion.HasMore}
	if out.Values == nil {
		out.Values = []string{}
	}
	if r.Completion.Total > 0 {
		t := int32(min(r.Completion.Total, 1<<31-1))
		out.Total = &t
	}
	return out, nil
}

// SetLogLevel sets the level of log messages the server sends.
func (s *Service) SetLogLevel(ctx context.Context, req *pb.SetLogLevelRequest) (*pb.SetLogLevelResponse, error) {
	sess, release, err := s.use(ctx, req.GetSessionId())
	if err != nil {
		return nil, err
	}
	defer release()
	lvl, ok := logLevelFromProto(req.GetLevel())
	if !ok {
		return nil, invalidArgument(mcpcore.FieldViolation{Field: "level", Description: "required: one of LOGGING_LEVEL_DEBUG … LOGGING_LEVEL_EMERGENCY"})
	}
	if err := sess.SetLogLevel(ctx, lvl); err != nil {
		return nil, toStatus(err)
	}
	return &pb.SetLogLevelResponse{}, nil
}

// Ping checks that the server answers and measures the round trip.
func (s *Service) Ping(ctx context.Context, req *pb.PingRequest) (*pb.PingResponse, error) {
	sess, release, err := s.use(ctx, req.GetSessionId())
	if err != nil {
		return nil, err
	}
	defer release()
	start := time.Now()
	if err := sess.Ping(ctx); err != nil {
		return nil, toStatus(err)
	}
	return &pb.PingResponse{Latency: durationpb.New(time.Since(start))}, nil
}

// SetRoots replaces the session's roots.
func (s *Service) SetRoots(ctx context.Context, req *pb.SetRootsRequest) (*pb.SetRootsResponse, error) {
	sess, release, err := s.use(ctx, req.GetSessionId())
	if err != nil {
		return nil, err
	}
	defer release()
	roots, err := rootsFromProto(req.GetRoots(), "roots")
	if err != nil {
		return nil, toStatus(err)
	}
	if err := sess.SetRoots(ctx, roots); err != nil {
		return nil, toStatus(err)
	}
	out, err := rootsToProto(roots)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.SetRootsResponse{Roots: out}, nil
}

// GetTask polls a task the server runs.
func (s *Service) GetTask(ctx context.Context, req *pb.GetTaskRequest) (*pb.GetTaskResponse, error) {
	sess, release, err := s.use(ctx, req.GetSessionId())
	if err != nil {
		return nil, err
	}
	defer release()
	if req.GetTaskId() == "" {
		return nil, invalidArgument(required("task_id"))
	}
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
func (s *Service) CancelTask(ctx context.Context, req *pb.CancelTaskRequest) (*pb.CancelTaskResponse, error) {
	sess, release, err := s.use(ctx, req.GetSessionId())
	if err != nil {
		return nil, err
	}
	defer release()
	if req.GetTaskId() == "" {
		return nil, invalidArgument(required("task_id"))
	}
	if err := sess.CancelTask(ctx, req.GetTaskId(), mcpcore.CallOptions{}); err != nil {
		return nil, s.cancelTaskError(ctx, sess, req.GetTaskId(), err)
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
func (s *Service) cancelTaskError(ctx context.Context, sess *mcpcore.Session, taskID string, err error) error {
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
