package main

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/mcp-bridge/mcp-bridge/conformance/internal/scenario"
	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// bridgeSession is a bridge session as the scenarios drive it: each method is one host API call. The
// results carry what the scenarios read (names, input schemas, isError and text, URIs, prompt arguments).
type bridgeSession struct {
	client pb.BridgeServiceClient
	id     string
}

func (s *bridgeSession) ListTools(ctx context.Context, cursor string) (*mcp.ListToolsResult, error) {
	res, err := s.client.ListTools(ctx, &pb.ListToolsRequest{SessionId: s.id, PageToken: cursor})
	if err != nil {
		return nil, notOffered(err)
	}
	out := &mcp.ListToolsResult{NextCursor: res.GetNextPageToken()}
	for _, t := range res.GetTools() {
		out.Tools = append(out.Tools, &mcp.Tool{Name: t.GetName(), InputSchema: t.GetInputSchema().AsMap()})
	}
	return out, nil
}

func (s *bridgeSession) CallTool(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, error) {
	a, err := structpb.NewStruct(args)
	if err != nil {
		return nil, fmt.Errorf("arguments: %w", err)
	}
	res, err := s.client.CallTool(ctx, &pb.CallToolRequest{SessionId: s.id, Name: name, Arguments: a})
	if err != nil {
		return nil, err
	}
	out := &mcp.CallToolResult{IsError: res.GetResult().GetIsError()}
	for _, c := range res.GetResult().GetContent() {
		if t := c.GetText(); t != nil {
			out.Content = append(out.Content, &mcp.TextContent{Text: t.GetText()})
		}
	}
	return out, nil
}

func (s *bridgeSession) ListResources(ctx context.Context) (*mcp.ListResourcesResult, error) {
	res, err := s.client.ListResources(ctx, &pb.ListResourcesRequest{SessionId: s.id})
	if err != nil {
		return nil, notOffered(err)
	}
	out := &mcp.ListResourcesResult{}
	for _, r := range res.GetResources() {
		out.Resources = append(out.Resources, &mcp.Resource{URI: r.GetUri(), Name: r.GetName()})
	}
	return out, nil
}

func (s *bridgeSession) ReadResource(ctx context.Context, uri string) error {
	_, err := s.client.ReadResource(ctx, &pb.ReadResourceRequest{SessionId: s.id, Uri: uri})
	return err
}

func (s *bridgeSession) ListPrompts(ctx context.Context) (*mcp.ListPromptsResult, error) {
	res, err := s.client.ListPrompts(ctx, &pb.ListPromptsRequest{SessionId: s.id})
	if err != nil {
		return nil, notOffered(err)
	}
	out := &mcp.ListPromptsResult{}
	for _, p := range res.GetPrompts() {
		mp := &mcp.Prompt{Name: p.GetName()}
		for _, a := range p.GetArguments() {
			mp.Arguments = append(mp.Arguments, &mcp.PromptArgument{Name: a.GetName(), Required: a.GetRequired()})
		}
		out.Prompts = append(out.Prompts, mp)
	}
	return out, nil
}

func (s *bridgeSession) GetPrompt(ctx context.Context, name string, args map[string]string) error {
	_, err := s.client.GetPrompt(ctx, &pb.GetPromptRequest{SessionId: s.id, Name: name, Arguments: args})
	return err
}

// reasonCapabilityMissing is the ErrorInfo reason of the bridge's refusal to ask a server for what it did
// not declare (server.ReasonCapabilityMissing; not imported, so this program depends on the API only).
const reasonCapabilityMissing = "CAPABILITY_NOT_NEGOTIATED"

// notOffered marks the bridge's FAILED_PRECONDITION CAPABILITY_NOT_NEGOTIATED as scenario.ErrNotOffered.
func notOffered(err error) error {
	st := status.Convert(err)
	if st.Code() != codes.FailedPrecondition {
		return err
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetReason() == reasonCapabilityMissing {
			return fmt.Errorf("%w: %w", scenario.ErrNotOffered, err)
		}
	}
	return err
}
