package mcpcore

import (
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// ErrBadMessage is wrapped when the server sent something the core could not use: a frame over
// Limits.MaxMessageBytes, malformed JSON-RPC, or a result of the wrong shape. The frame is counted
// (Core.Stats) and logged; only the request it belonged to fails.
var ErrBadMessage = errors.New("bad message from the server")

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

// ErrWrongReplica: the call reached a replica that does not serve the session it names (the proxy did not
// route it by the session, or two processes share one replica name). ErrStateStoreUnavailable: the shared
// state store does not answer, so the replica cannot take a session over or open one that must be kept.
// With ErrSessionMoved they are the sentinels of a *ReplicaError.
var (
	ErrWrongReplica          = errors.New("the session is served by another replica")
	ErrStateStoreUnavailable = errors.New("the shared state store does not answer")
)

// ReplicaError is a call refused because this replica does not serve the session it names: Err is
// ErrWrongReplica, ErrSessionMoved or ErrStateStoreUnavailable, Message what a host is told, and Session,
// Owner and Replica the facts a proxy or a host can act on ("" when not known). The service's error table
// (server/errors.go) turns it into a status; nothing else does.
type ReplicaError struct {
	Err     error
	Message string
	Session string // the session id, for an error that ends a stream rather than a call naming it
	Owner   string // the replica that holds the session
	Replica string // this replica
}

func (e *ReplicaError) Error() string { return e.Message }

// Unwrap returns the sentinel.
func (e *ReplicaError) Unwrap() error { return e.Err }
