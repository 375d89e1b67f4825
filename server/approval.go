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

// newApprovalFeed is the feed of the approval requests one identity may decide, for one receiver (key as in
// outcomeFor); with notify, its watch is a pull one (watchRequests).
func (s *Service) newApprovalFeed(who mcpcore.Identity, key string, notify func()) *watchedFeed {
	d := s.core.Dispatcher()
	return &watchedFeed{
		requestFeed: requestFeed{svc: s, what: "approval requests", outcome: outcomeFor(key), seen: map[string]bool{},
			pending: func() []*mcpcore.PendingRequest { return d.ListApprovals(who) }},
		watch: watchRequests(d, mcpcore.ApprovalFilter(who), approvalBuffer, notify),
	}
}

// watchApprovalEvents is WatchEvents on session "approvals": the approval requests the caller may decide
// (those pending first, unless include_pending is false) and their ends, until the client goes away or
// shutdown.
func (s *Service) watchApprovalEvents(req *pb.WatchEventsRequest, stream grpc.ServerStreamingServer[pb.WatchEventsResponse]) error {
	feed := s.newApprovalFeed(identity(stream.Context()), "", nil)
	defer feed.close()
	return s.serveWatchedFeed(feed, req, stream)
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
