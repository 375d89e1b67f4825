package ownership

import (
	"strconv"

	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// RoutingKey is the gRPC metadata key (and HTTP header) carrying the session id of a session-scoped
// call, for the proxy to route on (server.SessionRoutingKey).
const RoutingKey = "mcpbridge-session"

// The sentinels of ownership, declared with the core's others (mcpcore/errors.go) so that one classifier
// (mcpcore.Classify) names them for metrics and the service's one table maps them. Every refusal of an Owner is an *Error wrapping one of them; a host retries
// each of them through the proxy.
var (
	// ErrWrongReplica: the call reached a replica that does not serve the session it names (the proxy did
	// not route it by RoutingKey, or two live processes were given one replica name).
	ErrWrongReplica = mcpcore.ErrWrongReplica
	// ErrMoved: the session is served by another replica now, or is moving there (a hand-back, a lost
	// lease, a drain). It is the core's mcpcore.ErrSessionMoved, with which calls cut short by the move
	// fail: retrying through the proxy reaches the new owner, and a call retried with the same call id
	// resumes there.
	ErrMoved = mcpcore.ErrSessionMoved
	// ErrStoreUnavailable: the shared state store (Redis) does not answer, so this replica can neither take
	// a session over nor open one that must be kept. Sessions it holds keep working.
	ErrStoreUnavailable = mcpcore.ErrStateStoreUnavailable
)

// Error is a refusal of an Owner: Err is one of the sentinels, Message says what happened and what to do,
// and Metadata names the replicas involved ("owner": the one serving the session, "replica": this one;
// "session" when the message does not name it).
type Error struct {
	Err      error
	Message  string
	Metadata map[string]string
}

func (e *Error) Error() string { return e.Message }

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

// wrongReplica: owner, another replica, serves session id; this replica is own. One wording for both
// ways a replica learns it (the replica the id names, the live lease that holds it).
func wrongReplica(id, owner, own string) error {
	return &Error{Err: ErrWrongReplica,
		Message:  "session " + strconv.Quote(id) + " is served by replica " + strconv.Quote(owner) + ", not " + strconv.Quote(own) + ": the proxy must route on the " + RoutingKey + " header",
		Metadata: map[string]string{"owner": owner, "replica": own}}
}

// nameShared: another live process holds session id's lease under this replica's own name.
func nameShared(id, own string) error {
	return &Error{Err: ErrWrongReplica,
		Message:  "session " + strconv.Quote(id) + " is held by another live process under this replica's own name " + strconv.Quote(own) + ": every replica needs a name of its own (sessions.replica)",
		Metadata: map[string]string{"owner": own, "replica": own}}
}

// stillHeld: holder was asked to hand session id back (or is its home, back after a restart) and still
// holds it: the session is moving, and a retry reaches the right replica.
func stillHeld(id, holder, own string) error {
	return &Error{Err: ErrMoved,
		Message:  "session " + strconv.Quote(id) + " is still held by replica " + strconv.Quote(holder) + ", which was asked to hand it back: retry",
		Metadata: map[string]string{"owner": holder, "replica": own}}
}

// movedAway ends a host stream of session id, which this replica gave up to another.
func movedAway(id, own string) error {
	return &Error{Err: ErrMoved,
		Message:  "session " + strconv.Quote(id) + " moved to another replica: connect again through the proxy and attach it",
		Metadata: map[string]string{"session": id, "replica": own}}
}

func storeUnavailable() error {
	return &Error{Err: ErrStoreUnavailable,
		Message: "the shared state store (redis) does not answer: sessions of other replicas cannot be taken over and new sessions cannot be opened until it does; retry"}
}
