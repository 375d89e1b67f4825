package server

import (
	"context"
	"encoding/json"
	"errors"
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
)

// Metadata keys of google.rpc.ErrorInfo for upstream JSON-RPC errors.
const (
	MetaJSONRPCCode    = "jsonrpcCode"
	MetaJSONRPCMessage = "jsonrpcMessage"
	MetaJSONRPCData    = "jsonrpcData"
)

// maxErrorData bounds the JSON-RPC error data copied into ErrorInfo metadata.
const maxErrorData = 4096

// sentinelTable is the one table from mcpcore's sentinel errors to gRPC codes and ErrorInfo reasons.
// Order matters only where errors wrap each other (InvalidError wraps ErrInvalidAnswer: both map alike).
var sentinelTable = []struct {
	err    error
	code   codes.Code
	reason string
}{
	{mcpcore.ErrSessionNotFound, codes.NotFound, ReasonSessionNotFound},
	{mcpcore.ErrServerNotFound, codes.NotFound, ReasonServerNotFound},
	{mcpcore.ErrRequestNotFound, codes.NotFound, ReasonRequestNotFound},
	{mcpcore.ErrRequestEnded, codes.FailedPrecondition, ReasonRequestEnded},
	{mcpcore.ErrWrongAnswerKind, codes.InvalidArgument, ReasonWrongAnswerKind},
	{mcpcore.ErrInvalidAnswer, codes.InvalidArgument, ReasonInvalidInput},
	{mcpcore.ErrTooManySessions, codes.ResourceExhausted, ReasonTooManySessions},
	{mcpcore.ErrDescriptorLimit, codes.ResourceExhausted, ReasonDescriptorLimit},
	{errTooManyStreams, codes.ResourceExhausted, ReasonTooManyStreams},
	{mcpcore.ErrTooManyPending, codes.ResourceExhausted, ReasonTooManyPending},
	{mcpcore.ErrUnconfiguredServer, codes.PermissionDenied, ReasonUnconfiguredServer},
	{mcpcore.ErrPermissionDenied, codes.PermissionDenied, ReasonPermissionDenied},
	{mcpcore.ErrApprovalDenied, codes.PermissionDenied, ReasonApprovalDenied},
	{mcpcore.ErrApprovalExpired, codes.DeadlineExceeded, ReasonApprovalExpired},
	{mcpcore.ErrApprovalArgumentsChanged, codes.FailedPrecondition, ReasonApprovalArgumentsChanged},
	{mcpcore.ErrCapabilityMissing, codes.FailedPrecondition, ReasonCapabilityMissing},
	// The bridge's own deadlines, before the upstream errors they may wrap and context.DeadlineExceeded.
	{mcpcore.ErrServerRequestTimedOut, codes.DeadlineExceeded, ReasonServerRequestTimedOut},
	{mcpcore.ErrRequestTimeout, codes.DeadlineExceeded, ReasonRequestTimeout},
	{mcpcore.ErrInputRefused, codes.Aborted, ReasonInputRefused},
	// A resumed call whose first attempt may or may not have run upstream (docs/adr/0022).
	{mcpcore.ErrCallOutcomeUnknown, codes.Aborted, ReasonCallOutcomeUnknown},
	{mcpcore.ErrCallIDUsed, codes.AlreadyExists, ReasonCallIDUsed},
	{mcpcore.ErrKeptOutcomeEvicted, codes.Aborted, ReasonCallOutcomeEvicted},
	// Shutdown: pending requests ended by the drain, calls cut by the final close.
	{mcpcore.ErrShuttingDown, codes.Unavailable, ReasonShuttingDown},
	// A reload removed the session's server: the session ended; open one to a configured server.
	{mcpcore.ErrServerRemoved, codes.FailedPrecondition, ReasonServerRemoved},
	// The session moved to another replica while the call ran (takeover.go): retry, resuming by call id.
	{mcpcore.ErrSessionMoved, codes.Unavailable, ReasonSessionMoved},
	// A call cut short by DeleteSession: the API contract says in-flight calls fail CANCELLED. A session
	// that supervision gave up on fails its calls with ErrUnavailable instead.
	{mcpcore.ErrSessionClosed, codes.Canceled, ReasonSessionClosed},
	{mcpcore.ErrBadMessage, codes.Internal, ReasonUpstreamBadMessage},
	// Before ErrUnavailable, which wraps it when a session could not be opened for want of authorization.
	{mcpcore.ErrAuthorization, codes.FailedPrecondition, ReasonUpstreamAuthorization},
	{mcpcore.ErrUnavailable, codes.Unavailable, ReasonUnavailable},
	// The service's own: authentication (auth.go, oidc.go).
	{errBadToken, codes.Unauthenticated, ReasonUnauthenticated},
	{errNoCredentials, codes.Unauthenticated, ReasonUnauthenticated},
	{errIdentityProviderUnavailable, codes.Unavailable, ReasonIdentityProviderUnavailable},
	{context.DeadlineExceeded, codes.DeadlineExceeded, ReasonDeadlineExceeded},
	{context.Canceled, codes.Canceled, ReasonCancelled},
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
	var ue *mcpcore.UpstreamError
	if errors.As(err, &ue) && !errors.Is(err, mcpcore.ErrServerRequestTimedOut) {
		we, code := ue.Err, ue.Err.Code
		c, known := jsonrpcCodes[code]
		if !known {
			c = codes.Unknown
		}
		md := map[string]string{
			MetaJSONRPCCode:    strconv.FormatInt(code, 10),
			MetaJSONRPCMessage: we.Message,
		}
		if len(we.Data) > 0 && len(we.Data) <= maxErrorData && json.Valid(we.Data) {
			md[MetaJSONRPCData] = string(we.Data)
		}
		return withDetails(c, "upstream error: "+we.Message, &errdetails.ErrorInfo{Reason: ReasonUpstreamError, Domain: ErrorDomain, Metadata: md})
	}
	var ae *mcpcore.ApprovalError
	if errors.As(err, &ae) {
		return approvalStatus(ae) // approval.go
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
	for _, row := range sentinelTable {
		if errors.Is(err, row.err) {
			info := &errdetails.ErrorInfo{Reason: row.reason, Domain: ErrorDomain}
			if row.err == mcpcore.ErrWrongAnswerKind {
				br := &errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{
					Field: joinField(fieldPrefix, ""), Description: err.Error(),
				}}}
				return withDetails(row.code, err.Error(), info, br)
			}
			return withDetails(row.code, err.Error(), info)
		}
	}
	return withDetails(codes.Internal, "internal error", &errdetails.ErrorInfo{Reason: ReasonInternal, Domain: ErrorDomain})
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

// ---- A request message that does not decode (server/decode.go) ----

// undecodableRequest is the status of a host's gRPC request message that protobuf cannot decode (and that is
// not merely nested too deep: that is TooDeep): the host's error, INVALID_ARGUMENT, INVALID_INPUT.
func undecodableRequest(err error) error {
	return withDetails(codes.InvalidArgument, "invalid request: "+err.Error(), &errdetails.ErrorInfo{Reason: ReasonInvalidInput, Domain: ErrorDomain})
}
