package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
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
// deleted, tool called, call or task cancelled, and server request answered. Every record says who
// (principal), through which RPC and transport (grpc, unix, rest), and with which outcome (a gRPC code name
// such as OK or PERMISSION_DENIED, and the ErrorInfo reason when it failed). Payloads — tool arguments,
// hosts' answers — are recorded only with Options.AuditPayloads.

// Audit events.
const (
	auditSessionCreated = "session.created"
	auditSessionDeleted = "session.deleted"
	auditToolCalled     = "tool.called"
	auditRequestAnswer  = "server_request.answered"
	// An approver decided (or cancelled, which denies) an approval request (approval.go).
	auditApprovalDecided = "approval.decided"
	// A host cancelled a call in flight (CancelCall) or asked the server to cancel a task (CancelTask).
	auditCallCancelled = "call.cancelled"
	auditTaskCancelled = "task.cancelled"
)

// auditLog writes the audit records to the log in force. Service embeds it.
type auditLog struct {
	s *Service
	// auditCur is the audit log as SetAudit set it (nil: Options'); auditMu is held shared while a record
	// is written, exclusively by SetAudit.
	auditCur atomic.Pointer[auditSink]
	auditMu  sync.RWMutex
}

// auditSink is where the audit records go (log nil: nowhere) and whether they carry payloads.
type auditSink struct {
	log      *slog.Logger
	payloads bool
}

// SetAudit replaces the audit log (Options.Audit, Options.AuditPayloads): records from now on go to log
// (nil: off). It returns once no record is being written to the log it replaces, so the caller may close
// that one's file without losing a record.
func (al *auditLog) SetAudit(log *slog.Logger, payloads bool) {
	s := al.s
	s.auditMu.Lock()
	defer s.auditMu.Unlock()
	s.auditCur.Store(&auditSink{log: log, payloads: payloads})
}

// auditing is the audit log in force.
func (al *auditLog) auditing() auditSink {
	s := al.s
	if p := s.auditCur.Load(); p != nil {
		return *p
	}
	return auditSink{log: s.opts.Audit, payloads: s.opts.AuditPayloads}
}

// audit writes one record for the call of ctx; err is the call's outcome.
func (al *auditLog) audit(ctx context.Context, event string, err error, attrs ...slog.Attr) {
	s := al.s
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
// the server's policy, and the call is audited where it ends — in its end hook (mcpcore.CallOptions.OnEnd),
// which the core calls once with the call's outcome. A call ends with its RPC, but a detached one (ADR 0105)
// may run on after its host left, on the goroutine its session owns: the RPC then returns the host's context
// error, and the record is written by that goroutine when the call ends, with the call's own outcome. The
// service keeps no goroutine of its own for it; Close's core.Close waits for it (and so for its record).
// held, for a detached call, is what it holds until it ends (detach, calls.go): the same hook gives it back,
// after the record. The hook is the call's only one: it is built here, nowhere else.
func (c *toolCalls) callToolAudited(ctx context.Context, sess *mcpcore.Session, tc toolCall, held func()) (*mcp.CallToolResult, *mcpcore.Task, error) {
	start := time.Now()
	tc.opts.OnEnd = func(o mcpcore.CallOutcome) {
		c.auditCall(ctx, sess, tc, start, o.Result, o.Task, o.Err)
		if held != nil {
			held()
		}
	}
	return sess.CallToolOrTask(ctx, tc.params, tc.opts)
}

// auditCall writes the tool.called record of a call that ended with res, task and err.
func (c *toolCalls) auditCall(ctx context.Context, sess *mcpcore.Session, tc toolCall, start time.Time, res *mcp.CallToolResult, task *mcpcore.Task, err error) {
	s := c.s
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
}

// auditAnswer records a host's answer to a server request (RespondToRequest, Connect's replies).
func (al *auditLog) auditAnswer(ctx context.Context, pr *mcpcore.PendingRequest, id string, ans *pb.HostAnswer, err error) {
	s := al.s
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
func (al *auditLog) auditCreate(ctx context.Context, server string, resp *pb.CreateSessionResponse, err error) {
	s := al.s
	attrs := []slog.Attr{slog.String("server", server)}
	if sess := resp.GetSession(); sess != nil {
		attrs = append(attrs, slog.String("session", sess.GetSessionId()), slog.String("protocol_version", sess.GetProtocolVersion()))
	}
	s.audit(ctx, auditSessionCreated, err, attrs...)
}
