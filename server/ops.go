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

// upstreamOps serves the RPCs that pass one request to the session's server: lists, resources, prompts,
// completion, log level, ping, roots (tool calls are toolCalls', calls.go). Service embeds it.
type upstreamOps struct{ s *Service }

// The encoded responses of list results (listconvert.go), one memo per list RPC.
var (
	toolLists     = newResponseMemo[mcp.ListToolsResult, *pb.ListToolsResponse]()
	promptLists   = newResponseMemo[mcp.ListPromptsResult, *pb.ListPromptsResponse]()
	resourceLists = newResponseMemo[mcp.ListResourcesResult, *pb.ListResourcesResponse]()
	templateLists = newResponseMemo[mcp.ListResourceTemplatesResult, *pb.ListResourceTemplatesResponse]()
)

// ListTools lists one page of the server's tools; page tokens are MCP cursors.
func (o *upstreamOps) ListTools(ctx context.Context, req *pb.ListToolsRequest) (*pb.ListToolsResponse, error) {
	s := o.s
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
func (o *upstreamOps) upstreamBad(sess *mcpcore.Session, err error) error {
	return toStatus(sess.BadMessage(err))
}

// ListResources lists one page of the server's resources.
func (o *upstreamOps) ListResources(ctx context.Context, req *pb.ListResourcesRequest) (*pb.ListResourcesResponse, error) {
	s := o.s
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
func (o *upstreamOps) ListResourceTemplates(ctx context.Context, req *pb.ListResourceTemplatesRequest) (*pb.ListResourceTemplatesResponse, error) {
	s := o.s
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
func (o *upstreamOps) ReadResource(ctx context.Context, req *pb.ReadResourceRequest) (*pb.ReadResourceResponse, error) {
	s := o.s
	sess, release, err := s.useFor(ctx, req.GetSessionId(), "uri", req.GetUri())
	if err != nil {
		return nil, err
	}
	defer release()
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
func (o *upstreamOps) SubscribeResource(ctx context.Context, req *pb.SubscribeResourceRequest) (*pb.SubscribeResourceResponse, error) {
	s := o.s
	sess, release, err := s.useFor(ctx, req.GetSessionId(), "uri", req.GetUri())
	if err != nil {
		return nil, err
	}
	defer release()
	if err := sess.SubscribeResource(ctx, req.GetUri()); err != nil {
		return nil, resourceStatus(err, req.GetUri())
	}
	return &pb.SubscribeResourceResponse{}, nil
}

// UnsubscribeResource ends a resource subscription.
func (o *upstreamOps) UnsubscribeResource(ctx context.Context, req *pb.UnsubscribeResourceRequest) (*pb.UnsubscribeResourceResponse, error) {
	s := o.s
	sess, release, err := s.useFor(ctx, req.GetSessionId(), "uri", req.GetUri())
	if err != nil {
		return nil, err
	}
	defer release()
	if err := sess.UnsubscribeResource(ctx, req.GetUri()); err != nil {
		return nil, resourceStatus(err, req.GetUri())
	}
	return &pb.UnsubscribeResourceResponse{}, nil
}

// ListPrompts lists one page of the server's prompts.
func (o *upstreamOps) ListPrompts(ctx context.Context, req *pb.ListPromptsRequest) (*pb.ListPromptsResponse, error) {
	s := o.s
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
func (o *upstreamOps) GetPrompt(ctx context.Context, req *pb.GetPromptRequest) (*pb.GetPromptResponse, error) {
	s := o.s
	sess, release, err := s.useFor(ctx, req.GetSessionId(), "name", req.GetName())
	if err != nil {
		return nil, err
	}
	defer release()
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
func (o *upstreamOps) Complete(ctx context.Context, req *pb.CompleteRequest) (*pb.CompleteResponse, error) {
	s := o.s
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
func (o *upstreamOps) SetLogLevel(ctx context.Context, req *pb.SetLogLevelRequest) (*pb.SetLogLevelResponse, error) {
	s := o.s
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
func (o *upstreamOps) Ping(ctx context.Context, req *pb.PingRequest) (*pb.PingResponse, error) {
	s := o.s
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
func (o *upstreamOps) SetRoots(ctx context.Context, req *pb.SetRootsRequest) (*pb.SetRootsResponse, error) {
	s := o.s
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
