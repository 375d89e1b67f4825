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
	"slices"
	"strconv"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/internal/untrusted"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// approvalAPI shows approval requests to their approvers (ListPendingRequests, WatchEvents and Connect take
// them from here), takes their decisions and serves ListApprovalHistory. Service embeds it.
type approvalAPI struct{ s *Service }

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
func (ap *approvalAPI) newApprovalFeed(who mcpcore.Identity, key string, notify func()) *watchedFeed {
	s := ap.s
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
func (ap *approvalAPI) watchApprovalEvents(req *pb.WatchEventsRequest, stream grpc.ServerStreamingServer[pb.WatchEventsResponse]) error {
	s := ap.s
	feed := s.newApprovalFeed(identity(stream.Context()), "", nil)
	defer feed.close()
	return s.serveFeed(feed, req, stream)
}

// approvalToProto converts an approval request's payload. Its arguments are the bridge's own canonical
// JSON, not the server's: a failure to convert them is the bridge's error (INTERNAL), never
// UPSTREAM_BAD_MESSAGE.
func approvalToProto(a *mcpcore.ApprovalRequest) (*pb.ApprovalRequest, error) {
	var args map[string]any
	if err := json.Unmarshal(a.Arguments, &args); err != nil {
		return nil, ownDataError("approval request", err)
	}
	st, err := structpb.NewStruct(args)
	if err != nil {
		return nil, ownDataError("approval request", err)
	}
	return &pb.ApprovalRequest{
		Caller: a.Caller, ServerName: a.Server, Tool: a.Tool, Arguments: st,
		CanonicalArguments: string(a.Arguments), ArgumentsSha256: a.Digest, Rule: a.Rule,
		Approvers: approversToProto(a.Approvers),
	}, nil
}

func approversToProto(a mcpcore.Approvers) *pb.Approvers {
	return &pb.Approvers{Principals: a.Principals, Groups: a.Groups, AllowSelf: a.AllowSelf}
}

// --- untrusted text (docs/adr/0091) ---

// warningsToProto converts findings; prefix is prepended to their paths ("approval." for an approval
// request's, whose paths are relative to the ApprovalRequest).
func warningsToProto(prefix string, fs []untrusted.Finding) []*pb.TextWarning {
	if len(fs) == 0 {
		return nil
	}
	out := make([]*pb.TextWarning, len(fs))
	for i, f := range fs {
		out[i] = &pb.TextWarning{Path: prefix + f.Path, Kind: textWarningKinds[f.Kind], CodePoints: f.CodePointStrings(), InKey: f.InKey, Detail: f.Detail}
	}
	return out
}

var textWarningKinds = map[untrusted.Kind]pb.TextWarningKind{
	untrusted.BidiControl:  pb.TextWarningKind_TEXT_WARNING_KIND_BIDI_CONTROL,
	untrusted.Invisible:    pb.TextWarningKind_TEXT_WARNING_KIND_INVISIBLE,
	untrusted.Control:      pb.TextWarningKind_TEXT_WARNING_KIND_CONTROL,
	untrusted.MixedScript:  pb.TextWarningKind_TEXT_WARNING_KIND_MIXED_SCRIPT,
	untrusted.KeyCollision: pb.TextWarningKind_TEXT_WARNING_KIND_KEY_COLLISION,
}

// inspectServerRequest fills a converted request's warnings — the untrusted-text findings of everything it
// shows a person, with paths into its JSON form — and the destination of a URL it asks a person to open.
func inspectServerRequest(r *mcpcore.PendingRequest, out *pb.ServerRequest) {
	var rep untrusted.Report
	rep.String("originName", r.OriginName)
	var payload proto.Message
	field := ""
	switch x := out.GetPayload().(type) {
	case *pb.ServerRequest_Approval:
		out.Warnings = append(warningsToProto("", rep.Findings), warningsToProto("approval.", r.Approval.Warnings)...)
		return
	case *pb.ServerRequest_Sampling:
		payload, field = x.Sampling, "sampling"
	case *pb.ServerRequest_Elicitation:
		payload, field = x.Elicitation, "elicitation"
		if u := x.Elicitation.GetUrl(); u != "" {
			if d, err := untrusted.CheckURL(u); err == nil {
				out.UrlDestination = destinationToProto(d)
			}
		}
	case *pb.ServerRequest_Authorization:
		if d, err := untrusted.CheckURL(x.Authorization.GetAuthorizationUrl()); err == nil {
			out.UrlDestination = destinationToProto(d)
		}
	}
	if payload != nil && !plainMessage(payload.ProtoReflect(), 0) {
		inspectMessage(&rep, field, payload.ProtoReflect(), 0)
	}
	// Fields are walked in no fixed order: sort by path (stable: a string's kinds stay in order).
	slices.SortStableFunc(rep.Findings, func(a, b untrusted.Finding) int { return strings.Compare(a.Path, b.Path) })
	out.Warnings = warningsToProto("", rep.Findings)
}

// maxInspectDepth bounds the nesting of messages inspectMessage walks (Struct values have the inspector's own).
const maxInspectDepth = 64

// inspectMessage adds the findings of every string of m, with paths of its JSON form (JSON field names; a
// google.protobuf.Struct, Value or ListValue as the JSON it stands for). Bytes, numbers and enums are not
// text a person reads as such and are skipped. It walks the message instead of marshaling it: a request is
// converted for every receiver.
func inspectMessage(rep *untrusted.Report, path string, m protoreflect.Message, depth int) {
	if depth > maxInspectDepth || rep.Truncated {
		return
	}
	switch v := m.Interface().(type) {
	case *structpb.Struct:
		rep.Value(path, v.AsMap())
		return
	case *structpb.Value:
		rep.Value(path, v.AsInterface())
		return
	case *structpb.ListValue:
		rep.Value(path, v.AsSlice())
		return
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		p := path + "." + fd.JSONName()
		switch {
		case fd.IsList():
			l := v.List()
			for i := range l.Len() {
				inspectValue(rep, p+"["+strconv.Itoa(i)+"]", fd, l.Get(i), depth)
			}
		case fd.IsMap():
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				key := k.String()
				kp := p + untrusted.PathElement(key)
				rep.Key(kp, key)
				inspectValue(rep, kp, fd.MapValue(), mv, depth)
				return true
			})
		default:
			inspectValue(rep, p, fd, v, depth)
		}
		return !rep.Truncated
	})
}

// plainMessage reports whether every string (and map key) of m is plain ASCII — the common case, checked
// without building a path or converting a Struct.
func plainMessage(m protoreflect.Message, depth int) bool {
	if depth > maxInspectDepth {
		return false
	}
	plain := true
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len() && plain; i++ {
				plain = plainValue(fd, l.Get(i), depth)
			}
		case fd.IsMap():
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				plain = untrusted.Plain(k.String()) && plainValue(fd.MapValue(), mv, depth)
				return plain
			})
		default:
			plain = plainValue(fd, v, depth)
		}
		return plain
	})
	return plain
}

func plainValue(fd protoreflect.FieldDescriptor, v protoreflect.Value, depth int) bool {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return untrusted.Plain(v.String())
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return plainMessage(v.Message(), depth+1)
	}
	return true
}

func inspectValue(rep *untrusted.Report, path string, fd protoreflect.FieldDescriptor, v protoreflect.Value, depth int) {
	switch fd.Kind() {
	case protoreflect.StringKind:
		rep.String(path, v.String())
	case protoreflect.MessageKind, protoreflect.GroupKind:
		inspectMessage(rep, path, v.Message(), depth+1)
	}
}

func destinationToProto(d untrusted.Destination) *pb.UrlDestination {
	return &pb.UrlDestination{Scheme: d.Scheme, Host: d.Host, RegistrableDomain: d.RegistrableDomain, Loopback: d.Loopback}
}

// findingsAttr is the audit attribute of an approval's warnings (the same the approvers were shown).
func findingsAttr(fs []untrusted.Finding) slog.Attr {
	ws := make([]map[string]any, len(fs))
	for i, f := range fs {
		w := map[string]any{"path": "approval." + f.Path, "kind": f.Kind.String(), "code_points": f.CodePointStrings()}
		if f.InKey {
			w["in_key"] = true
		}
		if f.Detail != "" {
			w["detail"] = f.Detail
		}
		ws[i] = w
	}
	return slog.Any("warnings", ws)
}

// --- the caller's side ---

// approvalPendingToProto is what the caller of a call waiting for approval is told.
func approvalPendingToProto(r *mcpcore.PendingRequest) *pb.ApprovalPending {
	a := r.Approval
	return &pb.ApprovalPending{
		RequestId: r.ID, ServerName: a.Server, Tool: a.Tool, Rule: a.Rule, Approvers: approversToProto(a.Approvers),
		ExpireTime: timestamp(r.Deadline), CreateTime: timestamp(r.Created), ArgumentsSha256: a.Digest,
		Warnings: warningsToProto("approval.", a.Warnings),
	}
}

// toolApproval marks a tool whose calls need approval under the session's policy, for ListTools.
func toolApproval(p *mcpcore.Policy, tool string) *pb.ToolApproval {
	rule := p.ApprovalRule(tool)
	if rule == "" {
		return nil
	}
	exp := p.Approval.Expiry
	if exp <= 0 {
		exp = mcpcore.DefaultApprovalExpiry
	}
	a := p.Approval.Approvers
	return &pb.ToolApproval{Rule: rule, Principals: a.Principals, Groups: a.Groups, AllowSelf: a.AllowSelf, Expiry: durationpb.New(exp)}
}

// --- the history ---

// maxHistoryPage caps ListApprovalHistory's page size.
const maxHistoryPage = 1000

// ListApprovalHistory lists the approval requests that ended which the caller may see — as an approver or
// as the caller — newest first, from the core's bounded history.
func (ap *approvalAPI) ListApprovalHistory(ctx context.Context, req *pb.ListApprovalHistoryRequest) (*pb.ListApprovalHistoryResponse, error) {
	s := ap.s
	size := int(req.GetPageSize())
	switch {
	case size < 0:
		return nil, invalidArgument(mcpcore.FieldViolation{Field: "page_size", Description: "must not be negative"})
	case size == 0:
		size = 100
	case size > maxHistoryPage:
		size = maxHistoryPage
	}
	start := 0
	if t := req.GetPageToken(); t != "" {
		n, err := strconv.Atoi(t)
		if err != nil || n < 0 {
			return nil, invalidArgument(mcpcore.FieldViolation{Field: "page_token", Description: "not a token ListApprovalHistory returned"})
		}
		start = n
	}
	recs := s.core.ApprovalHistory(identity(ctx))
	out := &pb.ListApprovalHistoryResponse{}
	if start >= len(recs) {
		return out, nil
	}
	end := min(start+size, len(recs))
	for _, r := range recs[start:end] {
		out.Records = append(out.Records, approvalRecordToProto(r))
	}
	if end < len(recs) {
		out.NextPageToken = strconv.Itoa(end)
	}
	return out, nil
}

var approvalOutcomes = map[mcpcore.ApprovalOutcome]pb.ApprovalOutcome{
	mcpcore.ApprovalApproved:      pb.ApprovalOutcome_APPROVAL_OUTCOME_APPROVED,
	mcpcore.ApprovalDenied:        pb.ApprovalOutcome_APPROVAL_OUTCOME_DENIED,
	mcpcore.ApprovalExpired:       pb.ApprovalOutcome_APPROVAL_OUTCOME_EXPIRED,
	mcpcore.ApprovalWithdrawn:     pb.ApprovalOutcome_APPROVAL_OUTCOME_WITHDRAWN,
	mcpcore.ApprovalSessionClosed: pb.ApprovalOutcome_APPROVAL_OUTCOME_SESSION_CLOSED,
}

func approvalRecordToProto(r mcpcore.ApprovalRecord) *pb.ApprovalRecord {
	a := r.Request
	return &pb.ApprovalRecord{
		RequestId: r.RequestID, SessionId: r.SessionID, CallId: r.CallID, Caller: a.Caller, ServerName: a.Server, Tool: a.Tool,
		Rule: a.Rule, ArgumentsSha256: a.Digest, Outcome: approvalOutcomes[r.Outcome], DecidedBy: r.DecidedBy, Reason: r.Reason,
		CreateTime: timestamp(r.Created), EndTime: timestamp(r.Ended), ExpireTime: timestamp(r.Expires),
		Warnings: warningsToProto("approval.", a.Warnings),
	}
}

// auditApproval records an approver's decision: who asked, who decided, when, on which call and arguments.
func (ap *approvalAPI) auditApproval(ctx context.Context, pr *mcpcore.PendingRequest, ans *pb.HostAnswer, err error) {
	s := ap.s
	sink := s.auditing()
	if sink.log == nil || pr == nil || pr.Approval == nil {
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
	if len(pr.Approval.Warnings) > 0 {
		attrs = append(attrs, findingsAttr(pr.Approval.Warnings))
	}
	if sink.payloads {
		attrs = append(attrs, slog.Any("arguments", pr.Approval.Arguments))
	}
	s.audit(ctx, auditApprovalDecided, err, attrs...)
}
