package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/mcp-bridge/mcp-bridge/conformance/internal/scenario"
	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// hostCapabilities are what this host can answer: all of it, as conformance/client declares.
var hostCapabilities = &pb.HostCapabilities{
	Sampling:    &pb.SamplingCapability{},
	Elicitation: &pb.ElicitationCapability{Form: true, Url: true},
	Roots:       &pb.RootsCapability{ListChanged: true},
}

func roots() []*pb.Root {
	var out []*pb.Root
	for _, r := range scenario.Roots {
		out = append(out, &pb.Root{Uri: r.URI, Name: r.Name})
	}
	return out
}

// host answers the server requests a Connect stream delivers, the way a simple, always-agreeing host
// would. serve runs in one goroutine; attach may be called from another.
type host struct {
	stream grpc.BidiStreamingClient[pb.ConnectRequest, pb.ConnectResponse]
	logger *slog.Logger

	sendMu sync.Mutex // guards stream.Send: gRPC allows one sender at a time

	// Touched by serve only.
	answered map[string]bool // request ids already replied to (a request is delivered again on attach)
}

func (h *host) send(m *pb.ConnectRequest) error {
	h.sendMu.Lock()
	defer h.sendMu.Unlock()
	return h.stream.Send(m)
}

// attach attaches the stream to the session; its pending requests are delivered again right after.
func (h *host) attach(sessionID string) error {
	return h.send(&pb.ConnectRequest{Action: &pb.ConnectRequest_Attach{Attach: &pb.AttachSessions{SessionIds: []string{sessionID}}}})
}

// serve reads the stream until it ends — the bridge ends it, or ctx (the stream's context) is cancelled.
func (h *host) serve(ctx context.Context) {
	h.answered = map[string]bool{}
	for {
		m, err := h.stream.Recv()
		if err != nil {
			if !errors.Is(err, io.EOF) && status.Code(err) != codes.Canceled {
				h.logger.Warn("host stream ended", "err", err)
			}
			return
		}
		switch x := m.GetMessage().(type) {
		case *pb.ConnectResponse_Event:
			if r := x.Event.GetServerRequest(); r != nil {
				h.answer(ctx, r)
			}
		case *pb.ConnectResponse_ReplyAck:
			if !x.ReplyAck.GetAccepted() {
				// FAILED_PRECONDITION: the request ended first (e.g. the server cancelled it).
				h.logger.Warn("answer refused", "request", x.ReplyAck.GetRequestId(), "err", x.ReplyAck.GetError().GetMessage())
			}
		case *pb.ConnectResponse_Attached:
			for _, f := range x.Attached.GetFailures() {
				h.logger.Error("attach failed", "session", f.GetSessionId(), "err", f.GetStatus().GetMessage())
			}
		}
	}
}

func (h *host) answer(ctx context.Context, r *pb.ServerRequest) {
	if h.answered[r.GetRequestId()] {
		return
	}
	h.answered[r.GetRequestId()] = true
	a, err := answerFor(ctx, r)
	if err != nil {
		h.logger.Error("no answer", "request", r.GetRequestId(), "err", err)
		a = &pb.HostAnswer{Answer: &pb.HostAnswer_Error{Error: &pb.JsonRpcError{Code: -1, Message: err.Error()}}}
	}
	reply := &pb.ConnectRequest{Action: &pb.ConnectRequest_Reply{Reply: &pb.HostReply{RequestId: r.GetRequestId(), Answer: a}}}
	if err := h.send(reply); err != nil {
		h.logger.Warn("reply not sent", "request", r.GetRequestId(), "err", err)
		return
	}
	h.logger.Info("answered", "request", r.GetRequestId(), "delivery", r.GetDelivery(), "kind", fmt.Sprintf("%T", r.GetPayload()))
}

// answerFor is the canned answer (package scenario) to a server request, in the host API's terms.
func answerFor(ctx context.Context, r *pb.ServerRequest) (*pb.HostAnswer, error) {
	switch p := r.GetPayload().(type) {
	case *pb.ServerRequest_Sampling:
		s := scenario.SamplingAnswer()
		return &pb.HostAnswer{Answer: &pb.HostAnswer_Sampling{Sampling: &pb.CreateMessageResult{
			Role:       pb.Role_ROLE_ASSISTANT,
			Content:    []*pb.ContentBlock{{Content: &pb.ContentBlock_Text{Text: &pb.TextContent{Text: scenario.SamplingText}}}},
			Model:      s.Model,
			StopReason: s.StopReason,
		}}}, nil
	case *pb.ServerRequest_Elicitation:
		mode := "form"
		if p.Elicitation.GetMode() == pb.ElicitationMode_ELICITATION_MODE_URL {
			mode = "url"
		}
		var schema any
		if s := p.Elicitation.GetRequestedSchema(); s != nil {
			schema = s.AsMap()
		}
		e := scenario.ElicitAnswer(mode, schema)
		res := &pb.ElicitResult{Action: pb.ElicitAction_ELICIT_ACTION_ACCEPT}
		if e.Content != nil {
			c, err := structpb.NewStruct(e.Content)
			if err != nil {
				return nil, fmt.Errorf("elicitation content: %w", err)
			}
			res.Content = c
		}
		return &pb.HostAnswer{Answer: &pb.HostAnswer_Elicitation{Elicitation: res}}, nil
	case *pb.ServerRequest_Roots:
		return &pb.HostAnswer{Answer: &pb.HostAnswer_Roots{Roots: &pb.ListRootsResult{Roots: roots()}}}, nil
	case *pb.ServerRequest_Authorization:
		redirect, err := scenario.Authorize(ctx, p.Authorization.GetAuthorizationUrl())
		if err != nil {
			return nil, fmt.Errorf("authorization: %w", err)
		}
		return &pb.HostAnswer{Answer: &pb.HostAnswer_Authorization{Authorization: &pb.AuthorizationResponse{RedirectUrl: redirect}}}, nil
	}
	return nil, fmt.Errorf("the conformance host does not handle %T", r.GetPayload())
}
