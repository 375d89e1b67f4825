// Package mcpcore is mcp-bridge's MCP client core. It holds many sessions to upstream MCP servers, keeps them
// alive, and turns everything a server asks of a client — sampling, elicitation, roots, whether pushed as a
// legacy JSON-RPC request or returned inside a 2026-07-28 input_required result — into pending requests that a
// host answers when it can.
//
// It is built on the official MCP Go SDK (github.com/modelcontextprotocol/go-sdk), which speaks the wire
// protocol of both eras, and adds what a bridge needs: a session registry with owners and states,
// supervision, dispatch of server-initiated requests with deadlines and tombstones, ordered per-session
// events, cancellation mapping and limits. It never imports gRPC: the service in package server sits on top
// of it and owns the mapping of errors to status codes.
//
// The package's public types use the SDK's own MCP types (mcp.CallToolResult and so on) for MCP payloads.
package mcpcore

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcp-bridge/mcp-bridge/internal/state"
)

// TransportKind is how the bridge reaches an upstream MCP server.
type TransportKind string

// The transports the core speaks.
const (
	// TransportStdio launches the server as a supervised subprocess and speaks newline-delimited JSON-RPC
	// over its stdin and stdout.
	TransportStdio TransportKind = "stdio"
	// TransportStreamableHTTP is the Streamable HTTP transport (2025-03-26 and later).
	TransportStreamableHTTP TransportKind = "streamable-http"
	// TransportSSE is the deprecated HTTP+SSE transport (2024-11-05).
	TransportSSE TransportKind = "sse"
)

// ServerConfig describes one configured upstream MCP server. The zero value of every optional field means
// "the default".
type ServerConfig struct {
	// Name is the server's name in the bridge configuration; hosts open sessions by this name.
	Name string
	// Transport is how to reach the server.
	Transport TransportKind
	// Command, Args, Env and Dir launch a stdio server. Env entries are added to a minimal inherited
	// environment (PATH, HOME, LANG, TMPDIR); the bridge's own secrets are not passed down.
	Command string
	Args    []string
	Env     map[string]string
	Dir     string
	// URL and Headers reach an HTTP server (Streamable HTTP or HTTP+SSE). Header values are secrets: they
	// never appear in logs or errors.
	URL     string
	Headers map[string]string
	// H2C makes a Streamable HTTP server's sessions speak HTTP/2 with prior knowledge over cleartext, on
	// connections shared by all of them (an http:// URL; https negotiates HTTP/2 by itself).
	H2C bool
	// ProtocolVersion pins the MCP protocol version for this server. Empty means negotiate: try 2026-07-28
	// (server/discover) and fall back to the initialize handshake.
	ProtocolVersion string
	// Roots are the session's default roots, used when a host declares the roots capability without a list
	// of its own, and as the answer to roots/list when a pending roots request reaches its deadline.
	Roots []*mcp.Root
	// Restart governs supervision of a crashed stdio server.
	Restart RestartPolicy
	// RequestTimeout bounds how long the core waits for the server's response to each request of a host
	// call (default 30s). Every progress notification for the call starts it anew, and it does not run
	// while the call waits for a host to answer one of the server's own requests (sampling, elicitation,
	// roots). When it passes the core cancels the request upstream (notifications/cancelled) and the call
	// fails with ErrRequestTimeout. A shorter deadline of the host's own wins.
	RequestTimeout time.Duration
	// MaxRequestTimeout bounds the total time the server may take to answer one host call however often
	// progress restarts RequestTimeout (default 30m; time spent waiting for a host is not counted).
	MaxRequestTimeout time.Duration
	// OAuth, when set, authorizes the session with the MCP authorization flow (Streamable HTTP only):
	// tokens are obtained on the server's 401 and kept per server and per owner. Package upstreamauth
	// builds it (Client.Server); the core's side is authorization.go.
	OAuth Authorizer
	// Policy, when set, limits who may open sessions to the server and which tools, prompts and
	// resources they may see and use (policy.go). Nil allows everything.
	Policy *Policy
}

// RestartPolicy is exponential backoff with jitter for restarting crashed stdio servers.
type RestartPolicy struct {
	// MaxRestarts bounds consecutive restarts without a successful handshake; 0 (or less) disables restarts,
	// as `maxRestarts: 0` does in the configuration. DefaultMaxRestarts is the configuration's default.
	MaxRestarts int
	// InitialBackoff is the first delay (default 200ms); MaxBackoff caps it (default 30s).
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
}

// Limits bound what a host or a server can make the core hold. Zero means the documented default.
type Limits struct {
	// MaxMessageBytes bounds one JSON-RPC message from a server (default 16 MiB). A larger frame fails
	// the request it belongs to, or the session if it cannot be attributed, and is counted.
	MaxMessageBytes int
	// MaxSessions bounds open sessions in the core (default 1024).
	MaxSessions int
	// MaxSessionsPerOwner bounds open sessions per owner (default 64).
	MaxSessionsPerOwner int
	// MaxPendingPerSession bounds server-initiated requests waiting for a host answer in one session
	// (default 64). A request over the bound is answered with an error at once.
	MaxPendingPerSession int
	// MaxStdioProcesses bounds concurrently running stdio server processes (default 256).
	MaxStdioProcesses int
	// EventBuffer is the per-subscriber event buffer (default 64); a subscriber that falls further
	// behind loses events, and the loss is counted and reported as an EventDropped event.
	EventBuffer int
	// DescriptorReserve is how many of the process's descriptors (RLIMIT_NOFILE) are kept for live sessions,
	// health checks and new host connections: a new session is refused with ErrDescriptorLimit while fewer
	// are left (walls.go). Default: a tenth of the limit, at least MinDescriptorReserve.
	DescriptorReserve int
	// OpenTimeout bounds opening a session — connecting and the handshake — whatever the host's deadline
	// (default DefaultOpenTimeout, as the handshake of a reconnection).
	OpenTimeout time.Duration
}

// PendingPolicy sets deadlines for server-initiated requests and what happens when one passes.
// At the deadline: elicitation → the request is answered {"action":"cancel"}; sampling → a JSON-RPC error;
// roots → the session's configured roots.
type PendingPolicy struct {
	SamplingTimeout    time.Duration // default 5m
	ElicitationTimeout time.Duration // default 10m
	RootsTimeout       time.Duration // default 30s
}

// Options configure a Core. The zero value is usable: no servers, default limits, slog.Default.
type Options struct {
	// Logger receives structured logs; nil means slog.Default().
	Logger *slog.Logger
	// Servers are the configured upstreams, by name.
	Servers map[string]ServerConfig
	// AllowUnconfigured lets OpenParams.Server carry an ad-hoc ServerConfig (off by default: hosts may
	// open sessions only to configured servers).
	AllowUnconfigured bool
	Limits            Limits
	Pending           PendingPolicy
	// KeptResults bounds the outcomes of completed tools/calls kept for resumed calls (kept.go).
	KeptResults KeptResultsPolicy
	// ClientInfo is the implementation the bridge presents upstream; nil means {"mcp-bridge", version}.
	ClientInfo *mcp.Implementation
	// OAuth configures how hosts are asked to authorize servers with ServerConfig.OAuth set.
	OAuth OAuthOptions
	// ClosedRetention is how long a closed session stays visible to Core.Session (State reports Closed and
	// why; calls fail) before it is forgotten and Session reports ErrSessionNotFound; default 5 minutes.
	// Core.Forget drops one at once.
	ClosedRetention time.Duration
	// Replica names this bridge among the replicas of a shared service; it is embedded in every session id
	// ("s-<replica>.<random>", see SessionReplica) so that a proxy can route a session's calls to the replica
	// that owns it. It must be a DNS label ([a-z0-9-], at most 63). Empty: ids are "s-<random>".
	Replica string
	// ApprovalHistory bounds the history of approval requests that ended (Core.ApprovalHistory): at most
	// Max records (default 1000), none older than MaxAge (default 24h).
	ApprovalHistory ApprovalHistoryLimits
	// Observer is told the core's facts for metrics (sessions, upstream requests, server requests,
	// reconnections, dropped events, messages); nil means none. See Observer.
	Observer Observer
	// Store keeps what must outlive the process — sessions, pending requests and accepted answers, MRTR
	// rounds — when set (durable.go; Core.Restore brings it back). Nil: nothing is kept.
	Store state.Store
	// TracerProvider makes the core's spans: a client span per MCP request sent upstream and a span per
	// server-initiated request (docs/adr/0014). Nil means no spans; the trace context a call's context
	// carries is passed on all the same (to the server in _meta, to the host in PendingRequest.TraceContext).
	TracerProvider trace.TracerProvider
}

// HostCapabilities are what the host declared when it opened a session. The session advertises exactly
// these upstream; a server request for anything else is answered -32601 by the core without reaching
// the host.
type HostCapabilities struct {
	Sampling         bool // sampling/createMessage
	SamplingTools    bool // sampling with tools / toolChoice (2025-11-25)
	SamplingContext  bool // includeContext other than "none"
	ElicitationForm  bool // elicitation/create, form mode
	ElicitationURL   bool // elicitation/create, URL mode
	Roots            bool // roots/list
	RootsListChanged bool // the host may change roots; handshake-era servers get list_changed
	// Tasks: the host takes task results of tools/call (CallToolOrTask). On 2026-07-28 the session then
	// declares the io.modelcontextprotocol/tasks extension, and the server may answer any tools/call with a
	// task; on 2025-11-25 a task is only created when CallOptions.Task or TaskTTL asks for one.
	Tasks bool
}

// OpenParams open a session.
type OpenParams struct {
	// Owner is the principal that owns the session; only it may see, use or answer for it.
	Owner string
	// Server names a configured server.
	Server string
	// AdHoc is an unconfigured server; only honoured when Options.AllowUnconfigured is set.
	AdHoc *ServerConfig
	// Capabilities the host declared.
	Capabilities HostCapabilities
	// Roots the host exposes; nil means the server's configured roots.
	Roots []*mcp.Root
	// ProtocolVersion overrides the server's configured pin for this session; empty keeps it.
	ProtocolVersion string
	// ClientInfo, when set, is presented upstream instead of Options.ClientInfo.
	ClientInfo *mcp.Implementation
	// LogLevel, when set, is the session's log level from the start, as Session.SetLogLevel would set it,
	// except that a server without the logging capability is not an error: the level is then unused.
	LogLevel mcp.LoggingLevel
}

// SessionState is where a session is in its life.
type SessionState int

// Session states. A session moves Connecting → Ready; Ready → Reconnecting → Ready when supervision
// restarts or re-initializes it; any state → Closed, which is final.
const (
	StateConnecting SessionState = iota + 1
	StateReady
	StateReconnecting
	StateClosed
)

func (s SessionState) String() string {
	switch s {
	case StateConnecting:
		return "connecting"
	case StateReady:
		return "ready"
	case StateReconnecting:
		return "reconnecting"
	case StateClosed:
		return "closed"
	}
	return fmt.Sprintf("SessionState(%d)", int(s))
}

// SessionInfo is what the session negotiated with its server. It changes only when supervision redoes
// the handshake.
type SessionInfo struct {
	ProtocolVersion string
	ServerInfo      *mcp.Implementation
	Capabilities    *mcp.ServerCapabilities
	Instructions    string
}

// CallOptions accompany a host call into a session.
type CallOptions struct {
	// CallID identifies the host call bridge-wide; pending requests and progress events raised by this
	// call carry it. Empty means the core assigns one (see Call.ID in OnStart).
	CallID string
	// Meta is _meta to send with the request (merged under the core's own keys).
	Meta map[string]any
	// OnProgress, if set, makes the core send a progress token and receive this call's
	// notifications/progress; it is called in order, never concurrently, and must not block for long.
	OnProgress func(Progress)
	// OnLog, if set, receives log messages the server sends while this call runs (2026-07-28 sends them on
	// the request's own stream; on the handshake era they are the session's log messages during the call).
	OnLog func(*mcp.LoggingMessageParams)
	// TaskTTL asks the server to run a tools/call as a task kept for this long after creation (2025-11-25
	// task augmentation). 0 asks for no task unless Task is set.
	TaskTTL time.Duration
	// Task asks for a task like TaskTTL does, without a TTL: the server decides how long it keeps the task.
	Task bool
	// Resume says that this call (CallID, which must be set) may have been made before and its outcome lost
	// — the host's connection dropped, the call failed UNAVAILABLE, the bridge restarted — and asks for that
	// call's one outcome instead of a second execution (resume.go): a tools/call waiting between MRTR rounds
	// goes on from its kept round; one that completed returns its kept result; one whose fate upstream is
	// unknown fails with ErrCallOutcomeUnknown, unless the tool is annotated idempotentHint, when it is sent
	// again. Without Resume a call id the bridge knows is refused (ErrCallInFlight, ErrCallIDUsed).
	Resume bool
	// MintedID says CallID was minted by the caller, not chosen by the host: no host can resume the call,
	// so its outcome is not kept (kept.go).
	MintedID bool
	// Detach lets a tools/call run to its end when ctx ends (detach.go, ADR 0105): it needs a host CallID;
	// its outcome is kept for a resumed call, which joins it while it runs.
	Detach bool
	// OnEnd, if set, is called exactly once when a tools/call (CallTool, CallToolOrTask) ends, with its
	// outcome, whether or not it was started: an ordinary call's before CallTool returns, a detached call's
	// where it really ends — on the goroutine the session owns for it, possibly after its host left
	// (detach.go). It is where a caller audits a call and releases what the call holds. A panic in it is
	// logged.
	OnEnd func(CallOutcome)
}

// CallOutcome is how a tools/call ended (CallOptions.OnEnd): what CallToolOrTask returns, or would have
// returned to a host that left first.
type CallOutcome struct {
	Result *mcp.CallToolResult
	Task   *Task
	Err    error
}

// Progress is one notifications/progress routed to the call that asked for it.
type Progress struct {
	CallID   string
	Token    any
	Progress float64
	Total    float64 // 0 when unknown
	Message  string
}

// RequestKind is what a server asks of the client.
type RequestKind int

// Kinds of server-initiated requests.
const (
	KindSampling RequestKind = iota + 1
	KindElicitation
	KindRoots
	// KindAuthorization is the bridge's own request, not a server's: a person must open an OAuth
	// authorization URL and hand back the redirect the authorization server sent them to (see authorization.go).
	KindAuthorization
	// KindApproval is the bridge's own request too: a tool call the server's policy says needs approval waits
	// for a person other than the caller to approve or deny it (approval.go). Only its approvers see it.
	KindApproval
)

func (k RequestKind) String() string {
	switch k {
	case KindSampling:
		return "sampling"
	case KindElicitation:
		return "elicitation"
	case KindRoots:
		return "roots"
	case KindAuthorization:
		return "authorization"
	case KindApproval:
		return "approval"
	}
	return fmt.Sprintf("RequestKind(%d)", int(k))
}

// Delivery is how a server request reached the bridge.
type Delivery int

// Deliveries.
const (
	// DeliveryPush is a handshake-era server→client JSON-RPC request.
	DeliveryPush Delivery = iota + 1
	// DeliveryMRTR is an input request inside a 2026-07-28 input_required result; the answer goes into the
	// retried call's inputResponses.
	DeliveryMRTR
)

func (d Delivery) String() string {
	switch d {
	case DeliveryPush:
		return "push"
	case DeliveryMRTR:
		return "mrtr"
	}
	return fmt.Sprintf("Delivery(%d)", int(d))
}

// PendingRequest is one server-initiated request waiting for a host's answer. Its fields are immutable
// after creation; the outcome is learned from the dispatcher (Wait, events).
type PendingRequest struct {
	// ID is bridge-wide unique ("req-…"), never reused.
	ID        string
	SessionID string
	Owner     string
	// OriginCallID is the host call that led to this request (SEP-2260 ties every server request to a
	// client request); empty only when a legacy server pushed a request outside any call.
	OriginCallID string
	// OriginMethod and OriginName describe that call ("tools/call", tool name; "prompts/get", prompt name;
	// "resources/read", URI).
	OriginMethod string
	OriginName   string
	Delivery     Delivery
	// InputKey is the key in inputRequests for DeliveryMRTR.
	InputKey string
	// TaskID names the task the request serves, when it serves one: a request of a 2025-11-25 task in
	// input_required (pushed on the tasks/result stream the core opened for it, or carrying the
	// io.modelcontextprotocol/related-task _meta), or an entry of a 2026-07-28 task's inputRequests
	// (DeliveryMRTR, answered with tasks/update). OriginMethod is then "tasks/result" or "tasks/update"
	// and OriginName the task id.
	TaskID   string
	Kind     RequestKind
	Created  time.Time
	Deadline time.Time
	// Exactly one payload is set, matching Kind.
	Sampling      *mcp.CreateMessageWithToolsParams
	Elicitation   *mcp.ElicitParams
	Roots         *mcp.ListRootsParams
	Authorization *AuthorizationRequest
	Approval      *ApprovalRequest
	// upstreamID is the JSON-RPC id of a pushed request (DeliveryPush) as the server sent it: kept with the
	// request (durable.go) so that an answer given after a bridge restart can still be sent to it.
	upstreamID any
	// TraceContext is the W3C trace context (keys traceparent, tracestate, baggage) a host that serves the
	// request continues: the span of the request, or the originating call's context when the bridge does
	// not trace. Nil when there is none.
	TraceContext map[string]string
}

// Answer is a host's reply to a pending request: exactly one of the fields is set, and it must match the
// request's kind.
type Answer struct {
	Sampling      *mcp.CreateMessageWithToolsResult
	Elicitation   *mcp.ElicitResult
	Roots         *mcp.ListRootsResult
	Authorization *AuthorizationAnswer
	Approval      *ApprovalAnswer
	// Error answers with a JSON-RPC error (e.g. the user rejected sampling: code -1).
	Error *RPCError
}

// result is the answer's result — an MCP InputResponse and the result of the server's request — or nil for
// an error answer (or none).
func (a Answer) result() mcp.InputResponse {
	switch {
	case a.Elicitation != nil:
		return a.Elicitation
	case a.Sampling != nil:
		return a.Sampling
	case a.Roots != nil:
		return a.Roots
	}
	return nil
}

// RPCError is a JSON-RPC error a host sends as its answer.
type RPCError struct {
	Code    int64
	Message string
	Data    json.RawMessage
}

func (e *RPCError) Error() string { return fmt.Sprintf("json-rpc error %d: %s", e.Code, e.Message) }

// Outcome is how a pending request ended.
type Outcome int

// Outcomes.
const (
	// OutcomeAnswered: a host answered and the answer went upstream.
	OutcomeAnswered Outcome = iota + 1
	// OutcomeCancelledByServer: the server sent notifications/cancelled (or its connection ended).
	OutcomeCancelledByServer
	// OutcomeCancelledByHost: a host withdrew the request (the server gets an error answer).
	OutcomeCancelledByHost
	// OutcomeTimedOut: the deadline passed and the policy default was sent upstream.
	OutcomeTimedOut
	// OutcomeSessionClosed: the session closed first; shutdown drains with the policy default.
	OutcomeSessionClosed
	// OutcomeCallEnded: the host call that led to the request ended (cancelled, failed or returned) before
	// the request was answered.
	OutcomeCallEnded
	// OutcomeBridgeRestarted: the bridge restarted while the request was pending, and the connection it
	// came on died with the old process, so no answer can reach the server that asked (durable.go).
	OutcomeBridgeRestarted
)

func (o Outcome) String() string {
	switch o {
	case OutcomeAnswered:
		return "answered"
	case OutcomeCancelledByServer:
		return "cancelled-by-server"
	case OutcomeCancelledByHost:
		return "cancelled-by-host"
	case OutcomeTimedOut:
		return "timed-out"
	case OutcomeSessionClosed:
		return "session-closed"
	case OutcomeCallEnded:
		return "call-ended"
	case OutcomeBridgeRestarted:
		return "bridge-restarted"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// EventKind tells which field of an Event is set.
type EventKind int

// Event kinds.
const (
	EventRequestCreated EventKind = iota + 1 // Request
	EventRequestEnded                        // Ended
	EventProgress                            // Progress
	EventLog                                 // Log
	EventToolsListChanged
	EventPromptsListChanged
	EventResourcesListChanged
	EventResourceUpdated     // URI
	EventElicitationComplete // ElicitationID
	EventTaskStatus          // Task (raw task object as the server sent it)
	EventCancelled           // CancelledRequestID, Reason: the server cancelled one of its requests
	EventStateChanged        // State, Reason, Restarts
	EventDropped             // Dropped: events this subscriber lost because it was too slow
)

// Event is one thing that happened in a session, delivered to subscribers in order.
type Event struct {
	// Seq increases by one per event within a session, starting at 1; gaps seen by a subscriber equal the
	// drops it was told of.
	Seq       uint64
	SessionID string
	Time      time.Time
	Kind      EventKind

	Request            *PendingRequest
	Ended              *RequestEnded
	Progress           *Progress
	Log                *mcp.LoggingMessageParams
	URI                string
	ElicitationID      string
	Task               json.RawMessage
	CancelledRequestID string
	Reason             string
	State              SessionState
	Restarts           int
	Dropped            uint64
}

// RequestEnded reports the end of a pending request.
type RequestEnded struct {
	RequestID string
	SessionID string
	Outcome   Outcome
	Detail    string
	// AnsweredBy names who answered (Dispatcher.RespondAs) when Outcome is OutcomeAnswered; empty otherwise.
	AnsweredBy string
}

// FieldViolation names a field of a host's input and what is wrong with it.
type FieldViolation struct {
	Field       string
	Description string
}

// InvalidError is a host input error with field violations; it wraps ErrInvalidAnswer or is standalone.
type InvalidError struct {
	Err        error
	Violations []FieldViolation
}

func (e *InvalidError) Error() string {
	if len(e.Violations) == 0 {
		return e.Err.Error()
	}
	return fmt.Sprintf("%v: %s: %s", e.Err, e.Violations[0].Field, e.Violations[0].Description)
}

func (e *InvalidError) Unwrap() error { return e.Err }
