package mcpcore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The core's sentinel errors, all of them: callers branch on them with errors.Is, and the server package
// maps each to a gRPC status (server/errors.go) as Classify picks it (docs/adr/0102).

// Sentinel errors of sessions, requests and calls.
var (
	ErrSessionNotFound    = errors.New("session not found")
	ErrServerNotFound     = errors.New("server not configured")
	ErrRequestNotFound    = errors.New("pending request not found")
	ErrRequestEnded       = errors.New("pending request already ended") // tombstone: late or duplicate answer
	ErrWrongAnswerKind    = errors.New("answer does not match the request kind")
	ErrTooManySessions    = errors.New("too many sessions")
	ErrTooManyPending     = errors.New("too many pending requests")
	ErrSessionClosed      = errors.New("session closed")
	ErrUnavailable        = errors.New("upstream unavailable")
	ErrCapabilityMissing  = errors.New("capability not negotiated")
	ErrPermissionDenied   = errors.New("permission denied")
	ErrInvalidAnswer      = errors.New("invalid answer")
	ErrUnconfiguredServer = errors.New("unconfigured servers are not allowed")
	// ErrCommandNotFound: a stdio server's command cannot be run (not found on $PATH, not a file, not
	// executable). It wraps nothing; Core.CheckCommands reports it, as not serving (ErrUnavailable too).
	ErrCommandNotFound = errors.New("command not found")
	// ErrShuttingDown: the bridge is shutting down; the call or session was ended by the drain.
	ErrShuttingDown = errors.New("the bridge is shutting down")
	// ErrRequestTimeout: the server did not answer within the server's RequestTimeout (or
	// MaxRequestTimeout); the request was cancelled upstream. It wraps context.DeadlineExceeded.
	ErrRequestTimeout = errors.New("the server did not answer in time")
	// ErrServerRequestTimedOut: a request of the server's own (sampling, elicitation, roots) that the call
	// depended on was not answered by a host before its deadline; the policy default was applied and the
	// call failed because of it.
	ErrServerRequestTimedOut = errors.New("a server request was not answered before its deadline")
	// ErrCallInFlight: a call with the same call id is in flight in the session (call ids are the core's:
	// it mints them and refuses a duplicate).
	ErrCallInFlight = errors.New("call id in use")
	// ErrCallNotFound: CancelCall named no call in flight in the session.
	ErrCallNotFound = errors.New("call not found")
	// ErrCallOutcomeUnknown: a resumed call (CallOptions.Resume) whose first attempt may or may not have run
	// upstream — it was in flight when the bridge or the connection to it was lost — and whose tool is not
	// annotated idempotent, so it is not sent again.
	ErrCallOutcomeUnknown = errors.New("the call's outcome is unknown: it may or may not have run upstream")
	// ErrInputRefused: a host answered an input request of an MRTR call (2026-07-28) with an error, which
	// that era cannot carry upstream; the call fails with it.
	ErrInputRefused = errors.New("a host answered the server's request with an error")
)

// Errors of calls that needed approval (approval.go).
var (
	// ErrApprovalDenied: an approver denied the call; the error's text carries their reason.
	ErrApprovalDenied = errors.New("the call was denied by an approver")
	// ErrApprovalExpired: no approver decided before the approval request's expiry.
	ErrApprovalExpired = errors.New("the call was not approved before its approval expired")
	// ErrApprovalArgumentsChanged: the arguments about to be sent are not those approved (a retry of a
	// resumed call with other arguments or another tool, or a digest that no longer matches).
	ErrApprovalArgumentsChanged = errors.New("the arguments are not those approved")
)

var (
	// ErrCallIDUsed: a call without Resume names a call id the bridge knows (a completed call whose outcome
	// is kept or was evicted, or a call kept in the store across a restart): the tool is not run a second
	// time. Call again with Resume for that call's outcome, or with a new call id for a new call.
	ErrCallIDUsed = errors.New("call id already used")
	// ErrKeptOutcomeEvicted: a resumed call completed, but its kept outcome was evicted for the kept
	// results budget (KeptResultsPolicy.MaxBytes) before the host came back for it. The tool ran once; its
	// outcome is gone.
	ErrKeptOutcomeEvicted = errors.New("the call completed but its kept outcome was evicted")
)

// ErrAuthorization is wrapped by errors of the upstream authorization flow: the host declined or did not
// answer, the authorization server refused, or discovery or the token exchange failed. Operations that
// needed authorization fail with it (wrapped in ErrUnavailable when the session could not be opened).
var ErrAuthorization = errors.New("upstream authorization failed")

// ErrDescriptorLimit refuses a new session because the process is near its descriptor limit: the
// descriptors left are kept for live sessions, health checks and new host connections.
var ErrDescriptorLimit = errors.New("descriptor limit reached")

// ErrServerRemoved: the session's server was removed from the configuration (Core.Reconfigure); the session
// ended once its pending requests were answered or timed out.
var ErrServerRemoved = errors.New("the server was removed from the configuration")

// ErrTaskCreated is wrapped by *TaskCreatedError: CallTool was answered with a task.
var ErrTaskCreated = errors.New("the server created a task instead of returning a result")

// ErrSessionMoved: the session is served by another replica now (this one gave it up or lost its lease).
// Calls cut short by the move fail with it; retrying through the proxy reaches the new owner, and a call
// retried with the same call id resumes there.
var ErrSessionMoved = errors.New("the session moved to another replica")

// ErrNotHeld is the error of a write for a session this replica does not hold (any more): the write did
// not happen.
var ErrNotHeld = errors.New("state: write refused: this replica does not hold the session")

// ErrBadMessage is wrapped when the server sent something the core could not use: a frame over
// Limits.MaxMessageBytes, malformed JSON-RPC, or a result of the wrong shape. The frame is counted
// (Core.Stats) and logged; only the request it belonged to fails.
var ErrBadMessage = errors.New("bad message from the server")

// badMessages is a session's path for its server's unusable data (reportBad) and the throttle of its log
// lines about results the service could not use (BadMessage). Session embeds it, so BadMessage is the
// session's method.
type badMessages struct {
	s      *Session
	badLog logThrottle // the log lines about the server's unusable data past the frames (BadMessage)
}

// reportBad is the one path of the server's unusable data: a frame too large (oversized) or not valid
// JSON-RPC, a response nested too deeply, a response the SDK could not use, a result the service could
// not convert (BadMessage). Each is counted (Stats.OversizedMessages or Stats.MalformedMessages) and logged
// (the session's logger names the session and server), at most badFrameLogBurst lines at once and then one per
// badFrameLogWindow per throttle (a connection's frames, or the session's results).
func (b *badMessages) reportBad(throttle *logThrottle, oversized bool, problem string, args ...any) {
	s := b.s
	if oversized {
		s.core.stats.oversized.Add(1)
	} else {
		s.core.stats.malformed.Add(1)
	}
	if ok, suppressed := throttle.allow(badFrameLogBurst, badFrameLogWindow); ok {
		s.logger.Warn("dropped a bad message from the server", append([]any{"problem", problem}, append(args, "suppressed", suppressed)...)...)
	}
}

// BadMessage reports data of the session's server that the caller could not use (the service's
// conversion of a result) on the core's one path for bad upstream data (counted, logged: reportBad), and
// returns err wrapped in ErrBadMessage.
func (b *badMessages) BadMessage(err error) error {
	s := b.s
	s.reportBad(&b.badLog, false, "unusable result", "error", err)
	if errors.Is(err, ErrBadMessage) {
		return err
	}
	return fmt.Errorf("%w: %v", ErrBadMessage, err)
}

// UpstreamError is a JSON-RPC error response the server sent to a request of a host call. It is the only
// error type that carries an upstream's JSON-RPC code: the core's own errors (a deadline it enforced, a
// lost connection, a bad frame, the SDK's local errors such as "rejected by transport") are sentinels
// (ErrUnavailable, ErrRequestTimeout, ErrBadMessage, …), so a host is never told that the server said
// what the bridge decided.
type UpstreamError struct {
	Method string // the request's method, e.g. "tools/call"
	Err    *jsonrpc.Error
}

func (e *UpstreamError) Error() string { return e.Err.Message }

// Unwrap returns the *jsonrpc.Error.
func (e *UpstreamError) Unwrap() error { return e.Err }

// UpstreamCode returns the JSON-RPC error code when err is (or wraps) an *UpstreamError.
func UpstreamCode(err error) (int64, bool) {
	var ue *UpstreamError
	if errors.As(err, &ue) {
		return ue.Err.Code, true
	}
	return 0, false
}

// RetryAfterError is an error after which the server said when to try again: an HTTP server that refused
// the request as busy (429, or 503) with a Retry-After, at most MaxRetryAfter. It wraps the error's class
// (ErrUnavailable); the server package adds google.rpc.RetryInfo to the status (REST: a Retry-After header).
type RetryAfterError struct {
	Err   error
	After time.Duration
}

func (e *RetryAfterError) Error() string {
	return fmt.Sprintf("%v (the server asks to retry after %v)", e.Err, e.After)
}

// Unwrap returns the error's class.
func (e *RetryAfterError) Unwrap() error { return e.Err }

// RetryAfter reports when err says to try again (a *RetryAfterError in its chain).
func RetryAfter(err error) (time.Duration, bool) {
	var ra *RetryAfterError
	if errors.As(err, &ra) {
		return ra.After, true
	}
	return 0, false
}

// ErrWrongReplica: the call reached a replica that does not serve the session it names (the proxy did not
// route it by the session, or two processes share one replica name). ErrStateStoreUnavailable: the shared
// state store does not answer, so the replica cannot take a session over or open one that must be kept.
// With ErrSessionMoved they are the sentinels of session ownership (mcpcore/ownership, whose refusals,
// *ownership.Error, wrap them).
var (
	ErrWrongReplica          = errors.New("the session is served by another replica")
	ErrStateStoreUnavailable = errors.New("the shared state store does not answer")
)

// errorClasses is the core's one classification of its errors, most specific first, where errors wrap
// each other (the bridge's own deadlines before the upstream errors they may wrap and before
// context.DeadlineExceeded; ErrAuthorization before the ErrUnavailable that wraps it). Classify picks the
// first row an error matches; ErrorType names it by the row's label (a metric label, OTel's error.type);
// the server package maps the same row's sentinel to a gRPC code and reason (server/errors.go). A test
// there checks that the two agree for every row (TestStatusAndMetricLabelAgree).
var errorClasses = []struct {
	err   error
	label string
}{
	{ErrSessionNotFound, "session_not_found"},
	{ErrServerNotFound, "server_not_found"},
	{ErrRequestNotFound, "request_not_found"},
	{ErrCallNotFound, "call_not_found"},
	{ErrRequestEnded, "request_ended"},
	{ErrWrongAnswerKind, "wrong_answer_kind"},
	{ErrInvalidAnswer, "invalid_argument"},
	{ErrTooManySessions, "too_many_sessions"},
	{ErrDescriptorLimit, "descriptor_limit"},
	{ErrTooManyPending, "too_many_pending"},
	{ErrUnconfiguredServer, "unconfigured_server"},
	{ErrPermissionDenied, "permission_denied"},
	{ErrApprovalDenied, "approval_denied"},
	{ErrApprovalExpired, "approval_expired"},
	{ErrApprovalArgumentsChanged, "approval_arguments_changed"},
	{ErrCapabilityMissing, "capability_missing"},
	{ErrServerRequestTimedOut, "server_request_timeout"},
	{ErrRequestTimeout, "timeout"},
	{ErrInputRefused, "input_refused"},
	{ErrCallOutcomeUnknown, "call_outcome_unknown"},
	{ErrCallIDUsed, "call_id_used"},
	{ErrKeptOutcomeEvicted, "call_outcome_evicted"},
	{ErrShuttingDown, "shutting_down"},
	{ErrServerRemoved, "server_removed"},
	{ErrSessionMoved, "session_moved"},
	{ErrWrongReplica, "wrong_replica"},
	{ErrStateStoreUnavailable, "state_store_unavailable"},
	{ErrSessionClosed, "session_closed"},
	{ErrBadMessage, "bad_message"},
	{ErrAuthorization, "authorization_failed"},
	{ErrUnavailable, "unavailable"},
	{ErrTaskCreated, "task_created"},
	{context.DeadlineExceeded, "deadline_exceeded"},
	{context.Canceled, "cancelled"},
}

// Classify returns the sentinel of err's class: the first of errorClasses that err matches, or nil when
// it matches none (an upstream JSON-RPC error, an *InvalidError of the core's own, anything else).
func Classify(err error) error {
	if err == nil {
		return nil
	}
	for _, c := range errorClasses {
		if errors.Is(err, c.err) {
			return c.err
		}
	}
	return nil
}

// Classes lists the sentinels Classify returns, in its order: for the server package's table and tests.
func Classes() []error {
	out := make([]error, len(errorClasses))
	for i, c := range errorClasses {
		out[i] = c.err
	}
	return out
}

// AsUpstream returns the server's JSON-RPC error err carries, unless err is the bridge's own timeout of a
// server request the call waited on (ErrServerRequestTimedOut), which may wrap the server's error but is
// not the server's answer.
func AsUpstream(err error) (*UpstreamError, bool) {
	var ue *UpstreamError
	if errors.As(err, &ue) && !errors.Is(err, ErrServerRequestTimedOut) {
		return ue, true
	}
	return nil, false
}

// ErrorType is the low-cardinality class of an error of the core, as OTel's error.type attribute and the
// bridge's metrics name it: "" for nil; the JSON-RPC code of an upstream error (AsUpstream);
// "invalid_argument" for a host's bad input (*InvalidError); else the label of its class (Classify), and
// OtherValue for an error of no class. It decides in the order the server's status does.
func ErrorType(err error) string {
	if err == nil {
		return ""
	}
	if ue, ok := AsUpstream(err); ok {
		return codeType(ue.Err.Code)
	}
	var ie *InvalidError
	if errors.As(err, &ie) {
		return "invalid_argument"
	}
	if c := Classify(err); c != nil {
		for _, row := range errorClasses {
			if row.err == c {
				return row.label
			}
		}
	}
	return OtherValue
}

// jsonrpcCodes are the JSON-RPC error codes ErrorType names as themselves: JSON-RPC 2.0's, and those
// MCP and the bridge define. A server may send any integer; the others are OtherValue.
var jsonrpcCodes = func() map[int64]string {
	m := map[int64]string{}
	for _, c := range []int64{
		-32700, -32600, -32601, -32602, -32603, // JSON-RPC 2.0
		-32000, -32001, -32800, // the bridge's own answers to servers (dispatch.go)
		-32002,                 // MCP: resource not found
		-32003, -32004, -32005, // Streamable HTTP session errors the SDK surfaces (ops.go)
		-32020, -32021, -32022, // MCP 2026-07-28: header mismatch, missing client capabilities, unsupported version
		-32042, // MCP: URL elicitation required
	} {
		m[c] = strconv.FormatInt(c, 10)
	}
	return m
}()

// codeType is the error type of a JSON-RPC error code.
func codeType(code int64) string {
	if s, ok := jsonrpcCodes[code]; ok {
		return s
	}
	return OtherValue
}

// ErrorTypes lists every value ErrorType and Operation.ErrorType can take besides "": for exporters that
// pre-declare label values, and for tests.
func ErrorTypes() []string {
	out := []string{"tool_error", "invalid_argument", OtherValue}
	for _, s := range jsonrpcCodes {
		out = append(out, s)
	}
	for _, c := range errorClasses {
		out = append(out, c.label)
	}
	slices.Sort(out)
	return slices.Compact(out)
}
