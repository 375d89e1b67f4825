package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/mcp-bridge/mcp-bridge/mcpcore"
	"github.com/mcp-bridge/mcp-bridge/mcpcore/ownership"
)

// ErrorDomain is the google.rpc.ErrorInfo domain of every error the bridge returns.
const ErrorDomain = "mcp-bridge"

// Reasons of google.rpc.ErrorInfo, stable for clients to branch on (UPPER_SNAKE_CASE, as AIP-193 asks).
const (
	ReasonUpstreamError      = "UPSTREAM_ERROR" // the server answered with a JSON-RPC error; metadata has it
	ReasonUpstreamBadMessage = "UPSTREAM_BAD_MESSAGE"
	ReasonUnavailable        = "UPSTREAM_UNAVAILABLE"
	ReasonSessionNotFound    = "SESSION_NOT_FOUND"
	ReasonServerNotFound     = "SERVER_NOT_FOUND"
	ReasonRequestNotFound    = "REQUEST_NOT_FOUND"
	ReasonCallNotFound       = "CALL_NOT_FOUND"
	ReasonRequestEnded       = "REQUEST_ENDED"
	ReasonWrongAnswerKind    = "WRONG_ANSWER_KIND"
	ReasonInvalidInput       = "INVALID_INPUT"
	ReasonTooManySessions    = "TOO_MANY_SESSIONS"
	// The process is near its descriptor limit: new sessions are refused, the rest kept for live ones.
	ReasonDescriptorLimit = "DESCRIPTOR_LIMIT"
	// The principal holds limits.maxEventStreamsPerPrincipal WatchEvents streams.
	ReasonTooManyStreams     = "TOO_MANY_STREAMS"
	ReasonTooManyPending     = "TOO_MANY_PENDING_REQUESTS"
	ReasonSessionClosed      = "SESSION_CLOSED"
	ReasonCapabilityMissing  = "CAPABILITY_NOT_NEGOTIATED"
	ReasonPermissionDenied   = "PERMISSION_DENIED"
	ReasonUnconfiguredServer = "UNCONFIGURED_SERVER"
	ReasonDeadlineExceeded   = "DEADLINE_EXCEEDED"
	ReasonCancelled          = "CANCELLED"
	ReasonUnauthenticated    = "UNAUTHENTICATED"
	ReasonShuttingDown       = "SHUTTING_DOWN"
	// The session's server was removed from the configuration by a reload (docs/adr/0095-live-configuration.md).
	ReasonServerRemoved = "SERVER_REMOVED"
	// The server did not answer within its requestTimeout; the request was cancelled upstream.
	ReasonRequestTimeout = "UPSTREAM_REQUEST_TIMEOUT"
	// A sampling, elicitation or roots request the call depended on reached its deadline unanswered.
	ReasonServerRequestTimedOut = "SERVER_REQUEST_TIMED_OUT"
	// A host answered an input request of a 2026-07-28 call with an error; the call ends with it.
	ReasonInputRefused = "INPUT_REFUSED"
	// ReasonCallOutcomeUnknown: a resumed call (resume: true) whose first attempt was in flight when it was
	// lost — it may or may not have run upstream — and whose tool is not annotated idempotentHint, so the
	// bridge did not send it again. Not to be retried blindly: the host decides.
	ReasonCallOutcomeUnknown = "CALL_OUTCOME_UNKNOWN"
	// ReasonCallIDUsed: a call without resume named a call id the bridge knows (a completed call whose
	// outcome is kept, or a call kept across a restart): the tool is not run again (docs/adr/0093).
	ReasonCallIDUsed = "CALL_ID_USED"
	// ReasonCallOutcomeEvicted: a resumed call completed, but its kept outcome was evicted for
	// limits.keptResultsBytes before the host came back for it (docs/adr/0093).
	ReasonCallOutcomeEvicted = "CALL_OUTCOME_EVICTED"
	// The upstream OAuth authorization failed or was declined (mcpcore.ErrAuthorization).
	ReasonUpstreamAuthorization = "UPSTREAM_AUTHORIZATION_FAILED"
	// The identity provider's keys could not be fetched, so a JWT could not be verified.
	ReasonIdentityProviderUnavailable = "IDENTITY_PROVIDER_UNAVAILABLE"
	// The principal's calls per second (RATE_LIMITED) or calls in flight (TOO_MANY_CONCURRENT_CALLS)
	// reached rateLimits; google.rpc.RetryInfo says when to try again.
	ReasonRateLimited            = "RATE_LIMITED"
	ReasonTooManyConcurrentCalls = "TOO_MANY_CONCURRENT_CALLS"
	ReasonInternal               = "INTERNAL"
	// ReasonMessageTooLarge: a REST body over limits.maxMessageBytes (HTTP 413, answered before the gateway).
	ReasonMessageTooLarge = "MESSAGE_TOO_LARGE"
	// Approvals (approval.go): an approver denied the call (PERMISSION_DENIED), nobody decided before the
	// expiry (DEADLINE_EXCEEDED), or the arguments about to be sent are not those approved
	// (FAILED_PRECONDITION: a resumed call retried with other arguments).
	ReasonApprovalDenied           = "APPROVAL_DENIED"
	ReasonApprovalExpired          = "APPROVAL_EXPIRED"
	ReasonApprovalArgumentsChanged = "APPROVAL_ARGUMENTS_CHANGED"
	// Routing and takeover (routing.go, takeover.go; docs/adr/0070). ReasonWrongReplica: the call reached a
	// replica that does not own the session it names (the proxy did not route it by SessionRoutingKey or
	// the path). Retrying through a correctly configured proxy helps.
	ReasonWrongReplica = "WRONG_REPLICA"
	// ReasonReplicaUnavailable: the replica that owned the session is gone, and the session with it; create
	// a new session. The proxy answers it (deploy/haproxy/haproxy.cfg); the bridge defines it.
	ReasonReplicaUnavailable = "REPLICA_UNAVAILABLE"
	// ReasonNoReplicaAvailable: no replica is up while they restart; the sessions are kept in the shared
	// state. The proxy answers it (deploy/haproxy/haproxy-shared.cfg); the bridge defines it. Retry.
	ReasonNoReplicaAvailable = "NO_REPLICA_AVAILABLE"
	// ReasonStateStoreUnavailable: the shared state store (Redis) does not answer, so this replica
	// cannot take a session over or open one that must be kept. Sessions it holds keep working. Retry.
	ReasonStateStoreUnavailable = "STATE_STORE_UNAVAILABLE"
	// ReasonSessionMoved: the session moved to another replica while the call ran (a drain, a handover);
	// retry through the proxy, with the same call id to resume the call.
	ReasonSessionMoved = "SESSION_MOVED"
)

// Metadata keys of google.rpc.ErrorInfo for upstream JSON-RPC errors.
const (
	MetaJSONRPCCode    = "jsonrpcCode"
	MetaJSONRPCMessage = "jsonrpcMessage"
	MetaJSONRPCData    = "jsonrpcData"
)

// maxErrorData bounds the JSON-RPC error data copied into ErrorInfo metadata.
const maxErrorData = 4096

// statusRow is the gRPC code and ErrorInfo reason of a class of errors.
type statusRow struct {
	code   codes.Code
	reason string
}

// classStatus is the one table from the core's error classes (mcpcore.Classify, which also names the
// metric label) to gRPC codes and ErrorInfo reasons. A class without a row (mcpcore.ErrTaskCreated,
// which the service never returns) is INTERNAL.
var classStatus = map[error]statusRow{
	mcpcore.ErrSessionNotFound:    {codes.NotFound, ReasonSessionNotFound},
	mcpcore.ErrServerNotFound:     {codes.NotFound, ReasonServerNotFound},
	mcpcore.ErrRequestNotFound:    {codes.NotFound, ReasonRequestNotFound},
	mcpcore.ErrCallNotFound:       {codes.NotFound, ReasonCallNotFound},
	mcpcore.ErrRequestEnded:       {codes.FailedPrecondition, ReasonRequestEnded},
	mcpcore.ErrWrongAnswerKind:    {codes.InvalidArgument, ReasonWrongAnswerKind},
	mcpcore.ErrInvalidAnswer:      {codes.InvalidArgument, ReasonInvalidInput},
	mcpcore.ErrTooManySessions:    {codes.ResourceExhausted, ReasonTooManySessions},
	mcpcore.ErrDescriptorLimit:    {codes.ResourceExhausted, ReasonDescriptorLimit},
	mcpcore.ErrTooManyPending:     {codes.ResourceExhausted, ReasonTooManyPending},
	mcpcore.ErrUnconfiguredServer: {codes.PermissionDenied, ReasonUnconfiguredServer},
	mcpcore.ErrPermissionDenied:   {codes.PermissionDenied, ReasonPermissionDenied},
	// Approvals: an approver denied the call, nobody decided before the expiry, or the arguments about to
	// be sent are not those approved (a resumed call retried with other arguments).
	mcpcore.ErrApprovalDenied:           {codes.PermissionDenied, ReasonApprovalDenied},
	mcpcore.ErrApprovalExpired:          {codes.DeadlineExceeded, ReasonApprovalExpired},
	mcpcore.ErrApprovalArgumentsChanged: {codes.FailedPrecondition, ReasonApprovalArgumentsChanged},
	mcpcore.ErrCapabilityMissing:        {codes.FailedPrecondition, ReasonCapabilityMissing},
	// The bridge's own deadlines (classified before the upstream errors they may wrap).
	mcpcore.ErrServerRequestTimedOut: {codes.DeadlineExceeded, ReasonServerRequestTimedOut},
	mcpcore.ErrRequestTimeout:        {codes.DeadlineExceeded, ReasonRequestTimeout},
	mcpcore.ErrInputRefused:          {codes.Aborted, ReasonInputRefused},
	// A resumed call whose first attempt may or may not have run upstream (docs/adr/0022).
	mcpcore.ErrCallOutcomeUnknown: {codes.Aborted, ReasonCallOutcomeUnknown},
	mcpcore.ErrCallIDUsed:         {codes.AlreadyExists, ReasonCallIDUsed},
	mcpcore.ErrKeptOutcomeEvicted: {codes.Aborted, ReasonCallOutcomeEvicted},
	// Shutdown: pending requests ended by the drain, calls cut by the final close.
	mcpcore.ErrShuttingDown: {codes.Unavailable, ReasonShuttingDown},
	// A reload removed the session's server: the session ended; open one to a configured server.
	mcpcore.ErrServerRemoved: {codes.FailedPrecondition, ReasonServerRemoved},
	// Session ownership (*ownership.Error, ownershipStatus): the session moved to another replica while the call
	// ran (retry, resuming by call id), is served by another, or the shared store does not answer.
	mcpcore.ErrSessionMoved:          {codes.Unavailable, ReasonSessionMoved},
	mcpcore.ErrWrongReplica:          {codes.Unavailable, ReasonWrongReplica},
	mcpcore.ErrStateStoreUnavailable: {codes.Unavailable, ReasonStateStoreUnavailable},
	// A call cut short by DeleteSession: the API contract says in-flight calls fail CANCELLED. A session
	// that supervision gave up on fails its calls with ErrUnavailable instead.
	mcpcore.ErrSessionClosed: {codes.Canceled, ReasonSessionClosed},
	mcpcore.ErrBadMessage:    {codes.Internal, ReasonUpstreamBadMessage},
	// Classified before ErrUnavailable, which wraps it when a session could not be opened for want of
	// authorization.
	mcpcore.ErrAuthorization: {codes.FailedPrecondition, ReasonUpstreamAuthorization},
	mcpcore.ErrUnavailable:   {codes.Unavailable, ReasonUnavailable},
	context.DeadlineExceeded: {codes.DeadlineExceeded, ReasonDeadlineExceeded},
	context.Canceled:         {codes.Canceled, ReasonCancelled},
}

// ownStatus is the table of the service's own sentinels, which the core does not classify: checked
// before the core's classes.
var ownStatus = []struct {
	err error
	statusRow
}{
	{errTooManyStreams, statusRow{codes.ResourceExhausted, ReasonTooManyStreams}},
	// Authentication (auth.go, oidc.go).
	{errBadToken, statusRow{codes.Unauthenticated, ReasonUnauthenticated}},
	{errNoCredentials, statusRow{codes.Unauthenticated, ReasonUnauthenticated}},
	{errIdentityProviderUnavailable, statusRow{codes.Unavailable, ReasonIdentityProviderUnavailable}},
}

// row is the table's row of err: the service's own sentinel it wraps, else its class's (mcpcore.Classify).
func row(err error) (statusRow, bool) {
	for _, r := range ownStatus {
		if errors.Is(err, r.err) {
			return r.statusRow, true
		}
	}
	r, ok := classStatus[mcpcore.Classify(err)]
	return r, ok
}

// jsonrpcCodes maps JSON-RPC error codes a server returns to gRPC codes. Codes not listed are UNKNOWN.
var jsonrpcCodes = map[int64]codes.Code{
	jsonrpc.CodeParseError:     codes.Internal, // the server could not parse what the bridge sent
	jsonrpc.CodeInvalidRequest: codes.InvalidArgument,
	jsonrpc.CodeMethodNotFound: codes.Unimplemented,
	jsonrpc.CodeInvalidParams:  codes.InvalidArgument,
	jsonrpc.CodeInternalError:  codes.Internal,
	-32002:                     codes.NotFound,           // resource not found (MCP before SEP-2164)
	-32042:                     codes.FailedPrecondition, // URL elicitation required
	-32021:                     codes.FailedPrecondition, // missing required client capabilities
	-32022:                     codes.FailedPrecondition, // unsupported protocol version
	-32020:                     codes.InvalidArgument,    // header mismatch
	-1:                         codes.PermissionDenied,   // user rejected (sampling)
	// Codes such as -32001 and -32800 are the server's own (the TypeScript SDK's RequestTimeout is also
	// its "Session not found"): they are UNKNOWN, never read as the bridge's own timeout or cancellation,
	// which are typed errors of the core (mcpcore.ErrRequestTimeout, …).
}

var errShuttingDown = mcpcore.ErrShuttingDown

// reasonHTTPStatus is the HTTP status of an error whose reason says more than its code: the REST gateway
// uses it instead of the code's standard mapping (grpc-gateway's runtime.HTTPStatusFromCode).
var reasonHTTPStatus = map[string]int{
	// The server misbehaved (a result of the wrong shape, a malformed or oversized message): 502 Bad Gateway,
	// so a REST host can tell "the server sent garbage" from "the bridge broke" (INTERNAL, 500).
	ReasonUpstreamBadMessage: http.StatusBadGateway,
}

// HTTPStatus returns the HTTP status a REST client gets for err when its ErrorInfo reason calls for
// another one than its gRPC code's standard mapping, and false otherwise. The code and reason themselves
// are unchanged: REST and gRPC agree on both.
func HTTPStatus(err error) (int, bool) {
	st, ok := status.FromError(err)
	if !ok {
		return 0, false
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == ErrorDomain {
			code, ok := reasonHTTPStatus[info.GetReason()]
			return code, ok
		}
	}
	return 0, false
}

// errNoCredentials: authentication is on and the call carries no bearer token (nor a client certificate
// that names a principal, when certificates do).
var errNoCredentials = errors.New("missing bearer token: send the header \"authorization: Bearer <token>\"")

// errOwnData is wrapped by a failure to convert the bridge's own data (ownDataError): INTERNAL, as any
// error the table does not know.
var errOwnData = errors.New("the bridge's own data does not convert")

// ownDataError is the error of the bridge's own data (an approval request's canonical arguments) that does
// not convert: the bridge's failure, never the server's bad message.
func ownDataError(what string, err error) error {
	return fmt.Errorf("%w: %s: %v", errOwnData, what, err)
}

// errRateLimited is wrapped by *RateLimitedError.
var errRateLimited = errors.New("rate limit reached")

// RateLimitedError refuses a call over the caller's rate limits (ratelimit.go). It is RESOURCE_EXHAUSTED
// with google.rpc.RetryInfo; the REST gateway turns that into a Retry-After header.
type RateLimitedError struct {
	Reason     string        // ReasonRateLimited or ReasonTooManyConcurrentCalls
	Detail     string        // what was exceeded, e.g. "5 calls per second"
	RetryAfter time.Duration // when a retry may succeed
}

func (e *RateLimitedError) Error() string { return errRateLimited.Error() + ": " + e.Detail }

// Unwrap returns errRateLimited.
func (e *RateLimitedError) Unwrap() error { return errRateLimited }

// toStatus is the one function that turns an error into a gRPC status error. It understands gRPC status
// errors (returned unchanged), *mcpcore.InvalidError (INVALID_ARGUMENT with google.rpc.BadRequest), upstream
// JSON-RPC errors (ErrorInfo with the code, message and data), mcpcore sentinels and context errors.
// Anything else is INTERNAL, with a generic message: its text may hold details hosts need not see.
func toStatus(err error) error {
	return toStatusPrefixed(err, "")
}

// ToStatus is toStatus for the binary's own layers (the REST gateway): the one function that turns an error
// into a gRPC status error.
func ToStatus(err error) error { return toStatus(err) }

// toStatusPrefixed is toStatus with fieldPrefix prepended to the field of every BadRequest violation, so
// that violations mcpcore reports relative to an answer ("content.age") name the request field
// ("answer.elicitation.content.age").
func toStatusPrefixed(err error, fieldPrefix string) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	// Upstream JSON-RPC error: only an *mcpcore.UpstreamError is the server's; the SDK's and the core's
	// own errors are sentinels. A call that failed because a server request went unanswered is reported as
	// that timeout, with the server's error in the message.
	if ue, ok := mcpcore.AsUpstream(err); ok {
		c, known := jsonrpcCodes[ue.Err.Code]
		if !known {
			c = codes.Unknown
		}
		return upstreamStatus(ue, c)
	}
	if st, ok := ownershipStatus(err); ok {
		return st
	}
	var ae *mcpcore.ApprovalError
	if errors.As(err, &ae) {
		return approvalStatus(ae)
	}
	var rl *RateLimitedError
	if errors.As(err, &rl) {
		return withDetails(codes.ResourceExhausted, rl.Error(),
			&errdetails.ErrorInfo{Reason: rl.Reason, Domain: ErrorDomain},
			&errdetails.RetryInfo{RetryDelay: durationpb.New(rl.RetryAfter)})
	}
	var inv *mcpcore.InvalidError
	if errors.As(err, &inv) {
		reason := ReasonInvalidInput
		br := &errdetails.BadRequest{}
		for _, v := range inv.Violations {
			br.FieldViolations = append(br.FieldViolations, &errdetails.BadRequest_FieldViolation{
				Field:       joinField(fieldPrefix, v.Field),
				Description: v.Description,
			})
		}
		return withDetails(codes.InvalidArgument, err.Error(), &errdetails.ErrorInfo{Reason: reason, Domain: ErrorDomain}, br)
	}
	if r, ok := row(err); ok {
		info := &errdetails.ErrorInfo{Reason: r.reason, Domain: ErrorDomain}
		if errors.Is(err, mcpcore.ErrWrongAnswerKind) {
			br := &errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{
				Field: joinField(fieldPrefix, ""), Description: err.Error(),
			}}}
			return withDetails(r.code, err.Error(), info, br)
		}
		if d, ok := mcpcore.RetryAfter(err); ok { // the server said when to try again
			return withDetails(r.code, err.Error(), info, &errdetails.RetryInfo{RetryDelay: durationpb.New(d)})
		}
		return withDetails(r.code, err.Error(), info)
	}
	return internalError()
}

// upstreamStatus is the status c of a JSON-RPC error the server sent: reason UPSTREAM_ERROR with the
// error's code, message and (bounded, valid JSON) data in the ErrorInfo's metadata.
func upstreamStatus(ue *mcpcore.UpstreamError, c codes.Code) error {
	we := ue.Err
	md := map[string]string{
		MetaJSONRPCCode:    strconv.FormatInt(we.Code, 10),
		MetaJSONRPCMessage: we.Message,
	}
	if len(we.Data) > 0 && len(we.Data) <= maxErrorData && json.Valid(we.Data) {
		md[MetaJSONRPCData] = string(we.Data)
	}
	return withDetails(c, "upstream error: "+we.Message, &errdetails.ErrorInfo{Reason: ReasonUpstreamError, Domain: ErrorDomain, Metadata: md})
}

// resourceStatus is toStatus for resources/read, subscribe and unsubscribe of uri. A missing resource is
// NOT_FOUND, as the API promises: -32002 in MCP before SEP-2164 (the code table), -32602 since. A -32602
// is a missing resource when its data names the URI asked for ({"uri": uri}, as both protocol eras show
// it); any other -32602 stays INVALID_ARGUMENT. The error's message is never read (docs/adr/0102).
func resourceStatus(err error, uri string) error {
	if ue, ok := mcpcore.AsUpstream(err); ok && ue.Err.Code == jsonrpc.CodeInvalidParams && dataNamesURI(ue.Err.Data, uri) {
		return upstreamStatus(ue, codes.NotFound)
	}
	return toStatus(err)
}

// dataNamesURI reports whether a JSON-RPC error's data is an object whose "uri" is uri.
func dataNamesURI(data json.RawMessage, uri string) bool {
	if len(data) == 0 || len(data) > maxErrorData {
		return false
	}
	var d struct {
		URI *string `json:"uri"`
	}
	return json.Unmarshal(data, &d) == nil && d.URI != nil && *d.URI == uri
}

// isInvalidArgument reports whether err's status is INVALID_ARGUMENT.
func isInvalidArgument(err error) bool {
	return status.Code(toStatus(err)) == codes.InvalidArgument
}

// taskEndedStatus is the FAILED_PRECONDITION of a tasks/cancel the server refused (err, INVALID_ARGUMENT)
// for a task that already ended in state: the upstream error's details are kept.
func taskEndedStatus(err error, taskID, state string) error {
	p := status.Convert(toStatus(err)).Proto()
	p.Code = int32(codes.FailedPrecondition)
	p.Message = "task " + strconv.Quote(taskID) + " already " + state + ": " + p.Message
	return status.FromProto(p).Err()
}

// The in-process channel's own statuses (server/gateway/inproc.go), which stand in for grpc-go's on a
// connection the REST gateway's unary calls skip: the same codes and messages a gRPC client would get.

// InprocMisuse is the INTERNAL of an in-process call the channel cannot make (messages that are not
// protocol buffers, a handler that returned no message): a bug of the binary, not of a host.
func InprocMisuse(method, what string) error {
	return status.Errorf(codes.Internal, "in-process call %s: %s", method, what)
}

// InprocTooLarge is grpc-go's RESOURCE_EXHAUSTED for a message of n bytes over max: a request the server
// would not receive (sending false), or a response it would not send (sending true).
func InprocTooLarge(sending bool, n, max int) error {
	if sending {
		return status.Errorf(codes.ResourceExhausted, "grpc: trying to send message larger than max (%d vs. %d)", n, max)
	}
	return status.Errorf(codes.ResourceExhausted, "grpc: received message larger than max (%d vs. %d)", n, max)
}

// ClientStatus is the error a gRPC client of the service would see for a handler's err: its status,
// UNKNOWN for an error that is not one, and the client's own CANCELLED or DEADLINE_EXCEEDED when its
// context ended.
func ClientStatus(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return status.FromContextError(ctx.Err()).Err()
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return status.FromContextError(err).Err()
	}
	return status.New(codes.Unknown, err.Error()).Err()
}

// contextStatus is the CANCELLED or DEADLINE_EXCEEDED of a host's call whose context ended, as grpc-go
// reports it.
func contextStatus(ctx context.Context) error {
	return status.FromContextError(ctx.Err()).Err()
}

// internalError is the INTERNAL of a failure of the bridge itself (an error it does not know, a panic in
// a handler): a generic message, as the error's text may hold details hosts need not see.
func internalError() error {
	return withDetails(codes.Internal, "internal error", &errdetails.ErrorInfo{Reason: ReasonInternal, Domain: ErrorDomain})
}

// Metadata keys of the ErrorInfo of a denied or expired approval.
const (
	MetaApprovalRequestID = "approvalRequestId"
	MetaApprovalRule      = "rule"
	MetaApprovalDecidedBy = "decidedBy"
	MetaApproverReason    = "approverReason"
	MetaApprovalExpires   = "expireTime"
)

// approvalStatus is the status of a call whose approval was denied or expired: the sentinel's code and
// reason (the table), the approver's reason in the message, and the request's facts in metadata.
func approvalStatus(ae *mcpcore.ApprovalError) error {
	r, _ := row(ae)
	md := map[string]string{MetaApprovalRequestID: ae.RequestID, MetaApprovalRule: ae.Rule,
		MetaApprovalExpires: ae.Expires.UTC().Format(time.RFC3339)}
	if !errors.Is(ae, mcpcore.ErrApprovalExpired) {
		md[MetaApproverReason] = ae.Reason
		if ae.DecidedBy != "" {
			md[MetaApprovalDecidedBy] = ae.DecidedBy
		}
	}
	return withDetails(r.code, ae.Error(), &errdetails.ErrorInfo{Reason: r.reason, Domain: ErrorDomain, Metadata: md})
}

// TooDeepMessage is the message of a request nested deeper than MaxNestingDepth.
var TooDeepMessage = fmt.Sprintf("invalid request: it nests deeper than %d levels of objects and arrays (the bridge's fixed limit, MaxNestingDepth)", MaxNestingDepth)

// TooDeep returns the INVALID_ARGUMENT status (reason INVALID_INPUT) of a request nested deeper than
// MaxNestingDepth.
func TooDeep() error {
	return withDetails(codes.InvalidArgument, TooDeepMessage, &errdetails.ErrorInfo{Reason: ReasonInvalidInput, Domain: ErrorDomain})
}

// invalidArgument is INVALID_ARGUMENT for a host's bad input, with one violation per field.
func invalidArgument(vs ...mcpcore.FieldViolation) error {
	return toStatus(&mcpcore.InvalidError{Err: errInvalidInput, Violations: vs})
}

var errInvalidInput = errors.New("invalid request")

// required is the violation of a missing required field.
func required(field string) mcpcore.FieldViolation {
	return mcpcore.FieldViolation{Field: field, Description: "required"}
}

// notFound is the NOT_FOUND of a session that does not exist or belongs to another principal; the two are
// indistinguishable on purpose.
func sessionNotFound(id string) error {
	return withDetails(codes.NotFound, "session "+strconv.Quote(id)+" not found",
		&errdetails.ErrorInfo{Reason: ReasonSessionNotFound, Domain: ErrorDomain})
}

func joinField(prefix, field string) string {
	switch {
	case prefix == "":
		return field
	case field == "":
		return prefix
	case field[0] == '[':
		return prefix + field
	}
	return prefix + "." + field
}

func withDetails(c codes.Code, msg string, details ...protoadapt.MessageV1) error {
	st := status.New(c, msg)
	for _, d := range details {
		if ds, err := st.WithDetails(d); err == nil {
			st = ds
		}
	}
	return st.Err()
}

// --- Session ownership among replicas (mcpcore/ownership) -------------------------------------------------
//
// The owner's sentinels, each UNAVAILABLE with its reason; the message and the ErrorInfo metadata (the
// replicas involved) are the refusal's own (*ownership.Error). A host retries each through the proxy.

// ownershipStatus is the status of a refusal of the owner; false for any other error.
func ownershipStatus(err error) (error, bool) {
	var oe *ownership.Error
	if !errors.As(err, &oe) {
		return nil, false
	}
	r, ok := row(oe)
	if !ok {
		return internalError(), true
	}
	return withDetails(r.code, oe.Message, &errdetails.ErrorInfo{Reason: r.reason, Domain: ErrorDomain, Metadata: oe.Metadata}), true
}

// lookupStatus is the status of a failed lookup of session id: NOT_FOUND naming it, or what toStatus makes
// of the owner's refusal or of an adoption's error.
func lookupStatus(id string, err error) error {
	if errors.Is(err, mcpcore.ErrSessionNotFound) {
		return sessionNotFound(id)
	}
	return toStatus(err)
}

// ---- A request message that does not decode (server/decode.go) ----

// undecodableRequest is the status of a host's gRPC request message that protobuf cannot decode (and that is
// not merely nested too deep: that is TooDeep): the host's error, INVALID_ARGUMENT, INVALID_INPUT.
func undecodableRequest(err error) error {
	return withDetails(codes.InvalidArgument, "invalid request: "+err.Error(), &errdetails.ErrorInfo{Reason: ReasonInvalidInput, Domain: ErrorDomain})
}
