package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// The audit log (Options.Audit): one record, message "audit", per session created (or refused) and
// deleted, tool called and server request answered. Every record says who (principal), through which
// RPC and transport (grpc, unix, rest), and with which outcome (a gRPC code name such as OK or
// PERMISSION_DENIED, and the ErrorInfo reason when it failed). Payloads — tool arguments, hosts' answers
// — are recorded only with Options.AuditPayloads.

// Audit events.
const (
	auditSessionCreated = "session.created"
	auditSessionDeleted = "session.deleted"
	auditToolCalled     = "tool.called"
	auditRequestAnswer  = "server_request.answered"
	// An approver decided (or cancelled, which denies) an approval request (approval.go).
	auditApprovalDecided = "approval.decided"
)

// audit writes one record for the call of ctx; err is the call's outcome.
func (s *Service) audit(ctx context.Context, event string, err error, attrs ...slog.Attr) {
	s.auditMu.RLock() // SetAudit waits for the record: it is written wholly to the log in force
	defer s.auditMu.RUnlock()
	sink := s.auditing()
	if sink.log == nil {
		return
	}
	rpc, transport := "", "internal" // the bridge's own doing (the idle reaper)
	if m, ok := grpc.Method(ctx); ok {
		rpc, transport = strings.TrimPrefix(m, servicePrefix), s.callerOf(ctx).Transport
	}
	base := []slog.Attr{
		slog.String("event", event),
		slog.String("principal", Principal(ctx)),
		slog.String("rpc", rpc),
		slog.String("transport", transport),
	}
	st := status.Convert(toStatus(err))
	base = append(base, slog.String("outcome", codeName(st.Code())))
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			base = append(base, slog.String("reason", info.GetReason()))
		}
	}
	sink.log.LogAttrs(context.Background(), slog.LevelInfo, "audit", append(base, attrs...)...)
}

// codeName is a gRPC code's canonical name: PERMISSION_DENIED for codes.PermissionDenied.
func codeName(c codes.Code) string {
	if name, ok := code.Code_name[int32(c)]; ok {
		return name
	}
	return c.String()
}

// callToolAudited is the one way the service calls a tool (CallTool, StreamCallTool): the core enforces
// the server's policy, and the call is audited.
func (s *Service) callToolAudited(ctx context.Context, sess *mcpcore.Session, tc toolCall) (*mcp.CallToolResult, *mcpcore.Task, error) {
	start := time.Now()
	res, task, err := sess.CallToolOrTask(ctx, tc.params, tc.opts)
	if sink := s.auditing(); sink.log != nil {
		attrs := []slog.Attr{
			slog.String("session", sess.ID()),
			slog.String("server", sess.Server().Name),
			slog.String("tool", tc.params.Name),
			slog.String("call_id", tc.opts.CallID),
			slog.Duration("duration", time.Since(start)),
		}
		if res != nil {
			attrs = append(attrs, slog.Bool("is_error", res.IsError))
		}
		if task != nil {
			attrs = append(attrs, slog.String("task_id", task.ID))
		}
		if sink.payloads {
			args, _ := json.Marshal(tc.params.Arguments)
			attrs = append(attrs, slog.Any("arguments", json.RawMessage(args)))
		}
		s.audit(ctx, auditToolCalled, err, attrs...)
	}
	return res, task, err
}

// auditAnswer records a host's answer to a server request (RespondToRequest, Connect's replies).
func (s *Service) auditAnswer(ctx context.Context, pr *mcpcore.PendingRequest, id string, ans *pb.HostAnswer, err error) {
	sink := s.auditing()
	if sink.log == nil {
		return
	}
	attrs := []slog.Attr{slog.String("request_id", id)}
	if pr != nil {
		attrs = append(attrs, slog.String("session", pr.SessionID), slog.String("kind", pr.Kind.String()))
	}
	switch ans.GetAnswer().(type) {
	case *pb.HostAnswer_Error:
		attrs = append(attrs, slog.String("answer", "error"))
	case nil:
	default:
		attrs = append(attrs, slog.String("answer", "result"))
	}
	if sink.payloads && ans != nil {
		if raw, merr := protojson.Marshal(ans); merr == nil {
			attrs = append(attrs, slog.Any("payload", json.RawMessage(raw)))
		}
	}
	s.audit(ctx, auditRequestAnswer, err, attrs...)
	if pr != nil && pr.Kind == mcpcore.KindApproval {
		s.auditApproval(ctx, pr, ans, err)
	}
}

// auditCreate records a CreateSession, refused ones included (a server the principal may not use is
// NOT_FOUND here too).
func (s *Service) auditCreate(ctx context.Context, server string, resp *pb.CreateSessionResponse, err error) {
	attrs := []slog.Attr{slog.String("server", server)}
	if sess := resp.GetSession(); sess != nil {
		attrs = append(attrs, slog.String("session", sess.GetSessionId()), slog.String("protocol_version", sess.GetProtocolVersion()))
	}
	s.audit(ctx, auditSessionCreated, err, attrs...)
}
