package mcpcore

// Resumable calls (docs/adr/0022-resumable-calls.md, docs/adr/0093-kept-results-and-call-ids.md). A host
// that lost a call — its connection dropped, the call failed UNAVAILABLE, the bridge restarted — calls again
// with the same call id and CallOptions.Resume, and gets that call's one outcome, never a second execution:
//
//   - a tools/call that was waiting between MRTR rounds when the bridge restarted goes on from its kept
//     round (durable.go) without asking anybody again;
//   - a tools/call that completed (a result, or the server's error) while only its response was lost
//     returns the kept outcome: the bridge keeps it in memory, in its encoded form, within a bridge-wide
//     budget and for a TTL (kept.go; only its id is in the store, until that TTL ends: callids.go);
//   - a tools/call whose kept outcome was evicted for the budget fails with ErrKeptOutcomeEvicted;
//   - a tools/call still in flight is joined: the retry waits for it and returns its outcome;
//   - otherwise the call's fate upstream cannot be known (it was in flight when the bridge died, or it was
//     cut off before its outcome): ErrCallOutcomeUnknown, unless the tool is annotated idempotentHint, when
//     it is sent again.
//
// One outcome per call id: a call WITHOUT Resume whose id the bridge knows — in flight, kept or evicted, or
// kept in the store before a restart — never runs the tool a second time (callIDUse): with the same tool and
// arguments it is the same call delivered again and is answered as a resumed call (docs/adr/0106); with
// others it is refused, ErrCallInFlight while the known call runs and ErrCallIDUsed after.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// NewCallID returns a new call id ("call-" and 128 random bits). The core mints every id it is not given.
func NewCallID() string { return newID("call-") }

// callOutcomes keeps a session's one outcome per call id (see the top of the file): it refuses a known id
// without Resume (callIDUse), finds a resumed call's outcome (resumeCall) and keeps a completed
// call's (keepOutcome). The session holds it as Session.outcomes.
type callOutcomes struct {
	s *Session
}

// errCallInFlight is ErrCallInFlight as a host input error on the call_id field.
func errCallInFlight() error {
	return &InvalidError{Err: ErrCallInFlight, Violations: []FieldViolation{{Field: "call_id", Description: "already used by a call in flight in this session"}}}
}

// callIDUse is what a call without Resume finds under its id: free, the same call delivered
// again (same tool, same arguments: docs/adr/0106), or used by another call.
type callIDUse int

const (
	callIDFree callIDUse = iota
	callIDSame
	callIDUsed
)

// callDigest is the SHA-256 of a tools/call's tool name and its arguments in canonical JSON (CanonicalJSON):
// what tells the same call delivered twice from a new call that reuses an id (docs/adr/0106).
func callDigest(name string, args any) string {
	raw, ok := args.(json.RawMessage)
	if !ok {
		b, err := json.Marshal(args)
		if err != nil {
			return ""
		}
		raw = b
	}
	if canon, err := CanonicalJSON(raw); err == nil {
		raw = canon
	}
	return digestOf(append(append([]byte(name), 0), raw...))
}

// lazyDigest is a call's callDigest, computed once, when first asked: most calls never ask (an id no host
// chose, or one nothing is known under, whose outcome is not kept), and the canonical JSON is most of what
// the core spends on a small call. Safe for concurrent use: a call in flight is compared by other calls.
type lazyDigest struct {
	once sync.Once
	name string
	args any // dropped once the digest is computed
	d    string
}

func newLazyDigest(name string, args any) *lazyDigest { return &lazyDigest{name: name, args: args} }

// knownDigest is a lazyDigest whose value is already known (a resumed round's own).
func knownDigest(d string) *lazyDigest {
	l := &lazyDigest{d: d}
	l.once.Do(func() {})
	return l
}

// get returns the digest; "" for a nil lazyDigest (a call that is not a tools/call).
func (l *lazyDigest) get() string {
	if l == nil {
		return ""
	}
	l.once.Do(func() { l.d, l.args = callDigest(l.name, l.args), nil })
	return l.d
}

// callIDUse is the one decision on a call without Resume whose id the bridge may know (docs/adr/0106): a
// call in flight under the id, one kept in the store across a restart (a round, or its id's record), or one
// whose outcome is kept or was evicted, with the same digest (callDigest) is the same call delivered again
// and goes the resume path; with another digest, or none known (a record written before digests), the id is
// used. A call in flight with another digest is left to beginCall, which refuses it ErrCallInFlight.
func (co *callOutcomes) callIDUse(callID string, digest *lazyDigest) callIDUse {
	s := co.s
	if callID == "" {
		return callIDFree
	}
	s.mu.Lock()
	inFlight := s.calls[callID]
	var d *lazyDigest
	if inFlight != nil {
		d = inFlight.digest
	}
	s.mu.Unlock()
	if inFlight != nil {
		if held := d.get(); inFlight.method == "tools/call" && held != "" && held == digest.get() {
			return callIDSame
		}
		return callIDFree // beginCall refuses it: ErrCallInFlight
	}
	return co.storedUse(callID, digest)
}

// storedUse is callIDUse without the calls in flight: a round kept across a restart, or an outcome kept,
// evicted or unknown (kept.go). callTool asks it again once the call's id is reserved.
func (co *callOutcomes) storedUse(callID string, digest *lazyDigest) callIDUse {
	s := co.s
	if callID == "" {
		return callIDFree
	}
	same := func(d string) callIDUse {
		if d != "" && d == digest.get() {
			return callIDSame
		}
		return callIDUsed
	}
	if rc, ok := s.restoredRounds.peek(callID); ok {
		if rc.rec.Method != "tools/call" {
			return callIDUsed
		}
		return same(rc.rec.Digest)
	}
	if d, ok := s.core.kept.digest(roundKey(s.id, callID)); ok {
		return same(d)
	}
	return callIDFree
}

// errCallIDUsed is ErrCallIDUsed for callID.
func errCallIDUsed(callID string) error {
	return fmt.Errorf("%w: call %s already ran in this session with another tool or other arguments (its outcome is kept, or it waits to be resumed): call again with resume for its outcome, or with a new call id", ErrCallIDUsed, callID)
}

// resumed is what resumeCall found for a resumed call: its kept outcome, or its kept MRTR round, or neither
// (the call is to be sent again: its tool is idempotent).
type resumed struct {
	kept  *keptOutcome
	round *restoredCall
}

// resumeCall finds the one outcome of the resumed tools/call callID of tool name (see the top of the file).
func (co *callOutcomes) resumeCall(ctx context.Context, name, callID string) (resumed, error) {
	s := co.s
	if callID == "" {
		return resumed{}, &InvalidError{Err: errInvalidArguments, Violations: []FieldViolation{{Field: "call_id", Description: "required to resume a call"}}}
	}
	if rc, ok := s.restoredRounds.take(callID); ok && rc.rec.Method == "tools/call" {
		return resumed{round: rc}, nil
	}
	// A call still in flight is joined: its outcome is kept when it ends.
	s.mu.Lock()
	inFlight := s.calls[callID]
	s.mu.Unlock()
	if inFlight != nil && inFlight.method == "tools/call" {
		select {
		case <-inFlight.ended:
		case <-ctx.Done():
			return resumed{}, ctxError(ctx)
		}
	}
	k, evicted, ok := s.core.kept.get(roundKey(s.id, callID))
	if evicted {
		return resumed{}, fmt.Errorf("%w: call %s of tool %q (limits.keptResultsBytes, or its outcome was in the memory of a bridge process that ended)", ErrKeptOutcomeEvicted, callID, name)
	}
	if ok && k != nil && k.unsent {
		return resumed{}, nil
	}
	if ok && k != nil {
		return resumed{kept: k}, nil
	}
	idem, err := s.outcomes.toolIdempotent(ctx, name)
	if err != nil {
		return resumed{}, err
	}
	if !idem {
		return resumed{}, fmt.Errorf("%w: call %s of tool %q", ErrCallOutcomeUnknown, callID, name)
	}
	s.logger.Info("resumed call of an idempotent tool sent again: its first outcome is unknown", "call_id", callID, "tool", name)
	return resumed{}, nil
}

// keepOutcome keeps the outcome of a tools/call with a host-given id when it is one a resumed call can
// return: a result or a task, or the server's own error, or the host's CancelCall (a resume is told the
// host cancelled it). An outcome the call did not reach otherwise — its host left, it timed out, or its
// connection was lost — is not kept: its fate upstream is unknown. Deferred by
// callTool with pointers to its named results.
func (co *callOutcomes) keepOutcome(call *activeCall, res **mcp.CallToolResult, task **Task, err *error) {
	s := co.s
	defer close(call.ended)
	kept := false
	defer func() { s.records.callEnds(call, kept) }() // the id's record in the store (callids.go), before ended
	if call.opts.CallID == "" || call.opts.MintedID {
		return // an id the host did not choose: no host can resume it
	}
	o := &keptOutcome{result: *res, task: *task, err: *err, digest: call.digest.get()}
	if cancelled := hostCancelled(call, o.err); cancelled != nil { // detach.go: the host's own decision
		o.err = cancelled
	}
	// An approval's denial or expiry is an outcome too: nothing was sent, and a retry must not ask again; a
	// call cut off while it waited for approval was not sent either, which a retry must know (approval.go).
	if errors.As(o.err, new(*unsentError)) {
		o = &keptOutcome{unsent: true, digest: call.digest.get()}
	} else if o.err != nil && !errors.As(o.err, new(*UpstreamError)) && !approvalOutcome(o.err) && !errors.Is(o.err, errCancelledByHost) {
		return
	}
	err2 := s.core.kept.add(roundKey(s.id, call.opts.CallID), o)
	if err2 != nil {
		s.logger.Warn("the outcome of a call is not kept for a resumed call", "call_id", call.opts.CallID, "error", err2)
	}
	kept = !o.unsent && (err2 == nil || errors.Is(err2, errKeptTooLarge)) // too large: known, marked evicted
}

// toolIdempotent reports whether the server lists tool name with annotations.idempotentHint true (MCP
// 2025-06-18 tool annotations), reading its tool list.
func (co *callOutcomes) toolIdempotent(ctx context.Context, name string) (bool, error) {
	s := co.s
	var cursor string
	for range 100 { // a bound on pages, against a server that pages forever
		r, err := s.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor}, CallOptions{})
		if err != nil {
			return false, err
		}
		for _, t := range r.Tools {
			if t.Name == name {
				return t.Annotations != nil && t.Annotations.IdempotentHint, nil
			}
		}
		if r.NextCursor == "" {
			return false, nil
		}
		cursor = r.NextCursor
	}
	return false, nil
}
