package mcpcore

import (
	"context"
	"errors"
	"strconv"
	"time"
)

// Observer is told the core's facts as they happen, for metrics (docs/adr/0014). The core owns the facts;
// an Observer only counts them, so the core does not depend on a metrics library.
//
// Every method is called synchronously from the core's goroutines, sometimes with a session's or the
// dispatcher's bookkeeping just done: it must be cheap, must not block and must not call back into the
// core. All methods may be called concurrently. Labels an implementation derives from the arguments are of
// low cardinality: server names, methods, tool and prompt names, kinds, outcomes — never session,
// request or call ids, which the core does not pass.
//
// Embed NopObserver to implement only some methods.
type Observer interface {
	// SessionStateChanged: a session to server moved from one state to another. from is 0 for a session
	// that is being opened (to is StateConnecting); to is StateClosed exactly once per session.
	SessionStateChanged(server string, from, to SessionState)
	// SessionEnded: a session closed after living lifetime (OTel mcp.client.session.duration).
	// protocolVersion is the last one negotiated ("" if none was); errorType is "" for a session the host
	// or the bridge closed, and the reason's class otherwise (a session that failed to open, or whose
	// supervision gave up).
	SessionEnded(server string, transport TransportKind, protocolVersion, errorType string, lifetime time.Duration)
	// OperationDone: one MCP request the bridge sent upstream got its answer or failed (OTel
	// mcp.client.operation.duration). A host call that is retried or answers input_required rounds
	// makes several.
	OperationDone(op Operation)
	// ServerRequestStarted and ServerRequestEnded bracket one pending server request (sampling,
	// elicitation, roots, authorization) registered with the dispatcher: waited is the time from its
	// registration to its end.
	ServerRequestStarted(kind RequestKind)
	ServerRequestEnded(kind RequestKind, outcome Outcome, waited time.Duration)
	// Reconnected: supervision replaced a session's broken connection (restarted a stdio server,
	// reconnected to an HTTP server); reinitialized says the HTTP server had lost the session.
	Reconnected(server string, transport TransportKind, reinitialized bool)
	// EventDropped: a subscriber to a session's events (a host stream) was too slow and lost one event.
	EventDropped()
	// MessageTransferred: one JSON-RPC message of size bytes went to (sent) or came from a server over
	// transport. The transports call it through Session.ObserveMessage.
	MessageTransferred(transport TransportKind, sent bool, bytes int)
}

// Operation is one MCP request the bridge sent upstream and its end, as Observer.OperationDone sees it.
type Operation struct {
	Server          string        // the configured server's name
	Transport       TransportKind // how the server is reached
	Method          string        // mcp.method.name: "tools/call", "resources/read", …
	Target          string        // gen_ai.tool.name for tools/call, gen_ai.prompt.name for prompts/get; else ""
	ProtocolVersion string        // mcp.protocol.version negotiated with the server
	// ErrorType is error.type: "" on success; the JSON-RPC error code ("-32602") of an error the server
	// sent; "tool_error" for a tools/call result with isError; else the bridge's class of the failure
	// ("timeout", "cancelled", "unavailable", "bad_message", "session_closed", …).
	ErrorType string
	Duration  time.Duration
}

// NopObserver is an Observer that does nothing; embed it to implement only some methods.
type NopObserver struct{}

func (NopObserver) SessionStateChanged(string, SessionState, SessionState)            {}
func (NopObserver) SessionEnded(string, TransportKind, string, string, time.Duration) {}
func (NopObserver) OperationDone(Operation)                                           {}
func (NopObserver) ServerRequestStarted(RequestKind)                                  {}
func (NopObserver) ServerRequestEnded(RequestKind, Outcome, time.Duration)            {}
func (NopObserver) Reconnected(string, TransportKind, bool)                           {}
func (NopObserver) EventDropped()                                                     {}
func (NopObserver) MessageTransferred(TransportKind, bool, int)                       {}

// ObserveMessage tells the core's Observer of one JSON-RPC message of n bytes sent to (sent) or received
// from the session's server. The transports call it once per message on the wire; it is cheap and safe
// for concurrent use.
func (s *Session) ObserveMessage(sent bool, n int) {
	s.core.obs.MessageTransferred(s.server.Transport, sent, n)
}

// ErrorType is the low-cardinality class of an error of the core, as OTel's error.type attribute and the
// bridge's metrics name it: "" for nil; the JSON-RPC code of an *UpstreamError; else the bridge's own
// class.
func ErrorType(err error) string {
	if err == nil {
		return ""
	}
	var ue *UpstreamError
	if errors.As(err, &ue) && !errors.Is(err, ErrServerRequestTimedOut) {
		return strconv.FormatInt(ue.Err.Code, 10)
	}
	for _, c := range errorClasses {
		if errors.Is(err, c.err) {
			return c.name
		}
	}
	var ie *InvalidError
	if errors.As(err, &ie) {
		return "invalid_argument"
	}
	return "_OTHER"
}

// errorClasses are the classes ErrorType tells apart, most specific first.
var errorClasses = []struct {
	err  error
	name string
}{
	{ErrServerRequestTimedOut, "server_request_timeout"},
	{ErrRequestTimeout, "timeout"},
	{ErrShuttingDown, "shutting_down"},
	{ErrSessionClosed, "session_closed"},
	{ErrUnavailable, "unavailable"},
	{ErrBadMessage, "bad_message"},
	{ErrCapabilityMissing, "capability_missing"},
	{ErrInputRefused, "input_refused"},
	{ErrTaskCreated, "task_created"},
	{context.DeadlineExceeded, "deadline_exceeded"},
	{context.Canceled, "cancelled"},
}

// observeState tells the Observer of a state change of s, and of its end when to is StateClosed.
// errorType is the class of a failed opening; a session whose supervision gave up is "unavailable".
func (s *Session) observeState(from, to SessionState, version, errorType string) {
	s.core.obs.SessionStateChanged(s.server.Name, from, to)
	if to != StateClosed {
		return
	}
	if errorType == "" && from != 0 {
		if errors.Is(s.closedError(), ErrUnavailable) {
			errorType = "unavailable"
		}
	}
	s.core.obs.SessionEnded(s.server.Name, s.server.Transport, version, errorType, time.Since(s.created))
}
