package mcpcore

import (
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Observer is told the core's facts as they happen, for metrics (docs/adr/0014). The core owns the facts;
// an Observer only counts them, so the core does not depend on a metrics library.
//
// Every method is called synchronously from the core's goroutines, sometimes with a session's or the
// dispatcher's bookkeeping just done: it must be cheap, must not block and must not call back into the
// core. All methods may be called concurrently. Labels an implementation derives from the arguments are of
// low cardinality: server names, methods, tool and prompt names, kinds, outcomes — never session,
// request or call ids, which the core does not pass. Values that come from outside the bridge are bounded
// before the Observer sees them (docs/adr/0030): a tool or prompt name is itself only when its server
// listed it (else OtherValue), an error type and a protocol version come from fixed sets.
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
	Server    string        // the configured server's name
	Transport TransportKind // how the server is reached
	Method    string        // mcp.method.name: "tools/call", "resources/read", …
	// Target is gen_ai.tool.name for tools/call, gen_ai.prompt.name for prompts/get, else "": the name
	// when the server listed it (to any session, up to MaxListedNames of each kind per server), else
	// OtherValue — a host may call any name, so only the server's own list bounds the values.
	Target          string
	ProtocolVersion string // mcp.protocol.version negotiated with the server: one the SDK supports, else OtherValue
	// ErrorType is error.type: "" on success; the JSON-RPC error code ("-32602") of an error the server
	// sent, when it is one of the codes JSON-RPC and MCP define (else OtherValue); "tool_error" for a
	// tools/call result with isError; else the bridge's class of the failure ("timeout", "cancelled",
	// "unavailable", "bad_message", "session_closed", …). The set is fixed: ErrorTypes.
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

// sessionMetrics tells the core's Observer a session's facts: its messages, its states and its end, and the
// names its server listed. Session embeds it, so ObserveMessage is the session's method.
type sessionMetrics struct {
	s *Session
}

// ObserveMessage tells the core's Observer of one JSON-RPC message of n bytes sent to (sent) or received
// from the session's server. The transports call it once per message on the wire; it is cheap and safe
// for concurrent use.
func (m *sessionMetrics) ObserveMessage(sent bool, n int) {
	s := m.s
	s.core.obs.MessageTransferred(s.server.Transport, sent, n)
}

// OtherValue is the value of a metric label or span attribute whose real value is outside the set the
// bridge knows, as the OpenTelemetry semantic conventions spell it: an unlisted tool name, an error code
// no specification defines, an unknown protocol version.
const OtherValue = "_OTHER"

// versionLabel is the protocol version as a label: "" before a handshake, a version the SDK supports,
// else OtherValue.
func versionLabel(v string) string {
	if v == "" || slices.Contains(mcp.SupportedProtocolVersions(), v) {
		return v
	}
	return OtherValue
}

// MaxListedNames bounds how many tool names, and how many prompt names, the core remembers as listed by
// one server. A server that lists more has its further names recorded as OtherValue.
const MaxListedNames = 1000

// maxListedNameBytes bounds the length of a name the core remembers (MCP 2025-11-25, tools: names SHOULD
// be 1 to 128 characters); a longer one stays OtherValue, so a server cannot make the set large by
// listing long names.
const maxListedNameBytes = 128

// listedNames remembers the names each configured server listed in tools/list and prompts/list results,
// so that metrics and spans name a tool or a prompt only when its server has it. It only grows, bounded by
// MaxListedNames per server and kind and by the configured servers (Session.learnListed leaves ad-hoc
// servers out: their names come from hosts); its zero value is ready. Safe for concurrent use.
type listedNames struct {
	mu    sync.RWMutex // guards names and count
	names map[listedName]struct{}
	count map[listedName]int // names kept per server and method (name "")
}

// listedName is one name a server listed, under the method that uses it (tools/call, prompts/get).
type listedName struct{ server, method, name string }

// learn records the n names name(0) … name(n-1) of server's list for method.
func (l *listedNames) learn(server, method string, n int, name func(int) string) {
	if n == 0 {
		return
	}
	l.mu.RLock()
	missing := false
	for i := range n {
		if nm := name(i); nm != "" && len(nm) <= maxListedNameBytes {
			if _, ok := l.names[listedName{server, method, nm}]; !ok {
				missing = true
				break
			}
		}
	}
	l.mu.RUnlock()
	if !missing { // the usual case: the same list again
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.names == nil {
		l.names, l.count = map[listedName]struct{}{}, map[listedName]int{}
	}
	kind := listedName{server, method, ""}
	for i := range n {
		k := listedName{server, method, name(i)}
		if _, ok := l.names[k]; ok || k.name == "" || len(k.name) > maxListedNameBytes {
			continue
		}
		if l.count[kind] >= MaxListedNames {
			return
		}
		l.names[k] = struct{}{}
		l.count[kind]++
	}
}

// learnListed records the names of a list result of the session's server, when the server is configured.
func (m *sessionMetrics) learnListed(method string, n int, name func(int) string) {
	s := m.s
	if _, ok := s.core.table()[s.server.Name]; ok {
		s.core.listed.learn(s.server.Name, method, n, name)
	}
}

// target is name when server listed it for method, else OtherValue.
func (l *listedNames) target(server, method, name string) string {
	l.mu.RLock()
	_, ok := l.names[listedName{server, method, name}]
	l.mu.RUnlock()
	if ok {
		return name
	}
	return OtherValue
}

// observeState tells the Observer of a state change of s, and of its end when to is StateClosed.
// errorType is the class of a failed opening; a session whose supervision gave up is "unavailable".
func (m *sessionMetrics) observeState(from, to SessionState, version, errorType string) {
	s := m.s
	version = versionLabel(version)
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
