package mcpcore

// Resumable calls (docs/adr/0022-resumable-calls.md). A host that lost a call — its connection dropped, the
// call failed UNAVAILABLE, the bridge restarted — calls again with the same call id and CallOptions.Resume,
// and gets that call's one outcome, never a second execution:
//
//   - a tools/call that was waiting between MRTR rounds when the bridge restarted goes on from its kept
//     round (durable.go) without asking anybody again;
//   - a tools/call that completed (a result, or the server's error) while only its response was lost
//     returns the kept outcome: the session keeps it in memory for keptOutcomeTTL (a plain call writes
//     nothing to the store);
//   - a tools/call still in flight is joined: the retry waits for it and returns its outcome;
//   - otherwise the call's fate upstream cannot be known (it was in flight when the bridge died, or it was
//     cut off before its outcome): ErrCallOutcomeUnknown, unless the tool is annotated idempotentHint, when
//     it is sent again.

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds of the kept outcomes of completed calls, per session.
const (
	keptOutcomeTTL = 5 * time.Minute
	maxKeptOutcome = 256
)

// NewCallID returns a new call id ("call-" and 128 random bits). The core mints every id it is not given.
func NewCallID() string { return newID("call-") }

// errCallInFlight is ErrCallInFlight as a host input error on the call_id field.
func errCallInFlight() error {
	return &InvalidError{Err: ErrCallInFlight, Violations: []FieldViolation{{Field: "call_id", Description: "already used by a call in flight in this session"}}}
}

// keptOutcome is the outcome of a completed tools/call, for a resumed call.
type keptOutcome struct {
	result *mcp.CallToolResult
	task   *Task
	err    error
	// unsent: the call ended while it waited for approval, before anything was sent upstream (approval.go):
	// a resumed call is not a repetition, and goes on as a new call (asking for approval again).
	unsent bool
}

// resumed is what resumeCall found for a resumed call: its kept outcome, or its kept MRTR round, or neither
// (the call is to be sent again: its tool is idempotent).
type resumed struct {
	kept  *keptOutcome
	round *restoredCall
}

// resumeCall finds the one outcome of the resumed tools/call callID of tool name (see the top of the file).
func (s *Session) resumeCall(ctx context.Context, name, callID string) (resumed, error) {
	if callID == "" {
		return resumed{}, &InvalidError{Err: errInvalidArguments, Violations: []FieldViolation{{Field: "call_id", Description: "required to resume a call"}}}
	}
	if rc, ok := s.core.mrtr.take(s.id, callID); ok && rc.rec.Method == "tools/call" {
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
	s.mu.Lock()
	k, ok := s.kept.get(callID, time.Now())
	s.mu.Unlock()
	if ok && k.unsent {
		return resumed{}, nil
	}
	if ok {
		return resumed{kept: k}, nil
	}
	idem, err := s.toolIdempotent(ctx, name)
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
// return: a result or a task, or the server's own error. An outcome the call did not reach — it was
// cancelled, timed out, or its connection was lost — is not kept: its fate upstream is unknown. Deferred by
// callTool with pointers to its named results.
func (s *Session) keepOutcome(call *activeCall, res **mcp.CallToolResult, task **Task, err *error) {
	defer close(call.ended)
	if call.opts.CallID == "" {
		return
	}
	o := &keptOutcome{result: *res, task: *task, err: *err}
	// An approval's denial or expiry is an outcome too: nothing was sent, and a retry must not ask again; a
	// call cut off while it waited for approval was not sent either, which a retry must know (approval.go).
	if errors.As(o.err, new(*unsentError)) {
		o = &keptOutcome{unsent: true}
	} else if o.err != nil && !errors.As(o.err, new(*UpstreamError)) && !approvalOutcome(o.err) {
		return
	}
	s.mu.Lock()
	s.kept.add(call.opts.CallID, o, time.Now())
	s.mu.Unlock()
}

// toolIdempotent reports whether the server lists tool name with annotations.idempotentHint true (MCP
// 2025-06-18 tool annotations), reading its tool list.
func (s *Session) toolIdempotent(ctx context.Context, name string) (bool, error) {
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
