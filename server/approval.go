package server

// Approvals (docs/adr/0080-approvals.md): tool calls the server's policy says need approval wait as pending
// requests of kind APPROVAL (mcpcore/approval.go). They belong to the caller's session but are shown to, and
// decided by, the policy's approvers only — other principals than the session's owner. The service delivers
// them, from the dispatcher's one feed, to every Connect stream of an approver, to WatchEvents and
// ListPendingRequests on the reserved session id "approvals", and takes decisions through RespondToRequest
// (session "approvals" or "-") and Connect replies, like any answer.

import (
	"context"
	"encoding/json"
	"log/slog"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// approvalsSession is the session id that stands for the approval requests the caller may decide.
const approvalsSession = "approvals"

// approvalBuffer bounds the approval events queued for one receiver; one that falls behind re-reads the
// pending approvals (the watch's Gap).
const approvalBuffer = 16

type groupsKey struct{}

// WithGroups returns ctx carrying the groups of the caller's identity (from the identity provider's groups
// claim); the auth interceptors use it, and tests may too.
func WithGroups(ctx context.Context, groups []string) context.Context {
	return context.WithValue(ctx, groupsKey{}, groups)
}

// Groups returns the groups WithGroups put into ctx.
func Groups(ctx context.Context) []string {
	g, _ := ctx.Value(groupsKey{}).([]string)
	return g
}

// identity is who the caller of ctx is, for the dispatcher's visibility rule.
func identity(ctx context.Context) mcpcore.Identity {
	return mcpcore.Identity{Principal: Principal(ctx), Groups: Groups(ctx)}
}

// approvalFeed is the requestFeed of the approval requests one identity may decide, for one receiver (key as
// in outcomeFor).
type approvalFeed struct {
	requestFeed
	watch *mcpcore.RequestWatch
}

func (s *Service) newApprovalFeed(who mcpcore.Identity, key string) *approvalFeed {
	d := s.core.Dispatcher()
	return &approvalFeed{
		requestFeed: requestFeed{svc: s, what: "approval requests", outcome: outcomeFor(key), seen: map[string]bool{},
			pending: func() []*mcpcore.PendingRequest { return d.ListApprovals(who) }},
		watch: d.Watch(mcpcore.ApprovalFilter(who), approvalBuffer),
	}
}

func (f *approvalFeed) close() { f.watch.Close() }

// next converts an event of the watch; ok is false for ends of requests this receiver never delivered.
func (f *approvalFeed) next(ev *mcpcore.Event) (*pb.Event, bool) {
	if ev.Kind == mcpcore.EventRequestEnded && !f.seen[ev.Ended.RequestID] {
		return nil, false
	}
	return f.convert(*ev)
}

// watchApprovalEvents is WatchEvents on session "approvals": the approval requests the caller may decide
// (those pending first, unless include_pending is false) and their ends, until the client goes away or
// shutdown.
func (s *Service) watchApprovalEvents(req *pb.WatchEventsRequest, stream grpc.ServerStreamingServer[pb.WatchEventsResponse]) error {
	ctx := stream.Context()
	feed := s.newApprovalFeed(identity(ctx), "")
	defer feed.close()
	if err := feed.startWatch(req, stream); err != nil {
		return err
	}
	send := func(pe *pb.Event) error { return stream.Send(&pb.WatchEventsResponse{Event: pe}) }
	for {
		select {
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		case <-s.streamsEnd:
			return statusShuttingDown()
		case <-feed.watch.Gap():
			for _, pe := range feed.undeliveredAndEnded() {
				if err := send(pe); err != nil {
					return err
				}
			}
		case ev := <-feed.watch.C():
			if pe, ok := feed.next(ev); ok {
				if err := send(pe); err != nil {
					return err
				}
			}
		}
	}
}

// approvalToProto converts an approval request's payload.
func approvalToProto(a *mcpcore.ApprovalRequest) (*pb.ApprovalRequest, error) {
	var args map[string]any
	if err := json.Unmarshal(a.Arguments, &args); err != nil {
		return nil, badMessage("approval request", err)
	}
	st, err := structpb.NewStruct(args)
	if err != nil {
		return nil, badMessage("approval request", err)
	}
	return &pb.ApprovalRequest{
		Caller: a.Caller, ServerName: a.Server, Tool: a.Tool, Arguments: st,
		CanonicalArguments: string(a.Arguments), ArgumentsSha256: a.Digest, Rule: a.Rule,
	}, nil
}

// auditApproval records an approver's decision: who asked, who decided, when, on which call and arguments.
func (s *Service) auditApproval(ctx context.Context, pr *mcpcore.PendingRequest, ans *pb.HostAnswer, err error) {
	if s.opts.Audit == nil || pr == nil || pr.Approval == nil {
		return
	}
	decision, reason := "deny", ""
	switch a := ans.GetAnswer().(type) {
	case *pb.HostAnswer_Approval:
		if a.Approval.GetApprove() {
			decision = "approve"
		}
		reason = a.Approval.GetReason()
	case *pb.HostAnswer_Error:
		reason = a.Error.GetMessage()
	}
	attrs := []slog.Attr{
		slog.String("request_id", pr.ID),
		slog.String("session", pr.SessionID),
		slog.String("call_id", pr.OriginCallID),
		slog.String("server", pr.Approval.Server),
		slog.String("tool", pr.Approval.Tool),
		slog.String("caller", pr.Approval.Caller),
		slog.String("decided_by", Principal(ctx)),
		slog.String("decision", decision),
		slog.String("reason", reason),
		slog.String("arguments_sha256", pr.Approval.Digest),
		slog.String("rule", pr.Approval.Rule),
		slog.Time("requested_at", pr.Created),
		slog.Time("expires_at", pr.Deadline),
	}
	if s.opts.AuditPayloads {
		attrs = append(attrs, slog.Any("arguments", pr.Approval.Arguments))
	}
	s.audit(ctx, auditApprovalDecided, err, attrs...)
}
