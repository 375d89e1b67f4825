package mcpcore

// Detached calls and CancelCall (docs/adr/0105-detached-calls.md). A tools/call made with
// CallOptions.Detach runs on a context that the host's does not cancel: a host whose connection ends — a
// console page reloaded, a stream cut — leaves the call running, its server requests pending, and comes
// back with Resume and the same call id to join it (resume.go). The call is still bounded: by the host's
// deadline if it had one, else by MaxDetachedCall; by the request deadline every call has (beginCall); and
// by its session, which cancels it on close and waits for its goroutine. That goroutine is the call's one
// owner: it calls CallOptions.OnEnd with the call's outcome where the call ends, so a caller (the server's
// audit, its admission) needs no goroutine of its own. CancelCall is the deliberate cancellation, detached
// or not.

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxDetachedCall bounds a detached call whose host gave no deadline (documented in the proto and ADR 0105).
const MaxDetachedCall = time.Hour

// detachedCalls owns the goroutines of a session's detached calls: shutdown closes it and waits for them.
type detachedCalls struct {
	mu     sync.Mutex // guards closed and the WaitGroup's Add against Wait
	closed bool
	wg     sync.WaitGroup
}

// add counts one more detached call, or reports false once the session is closing.
func (d *detachedCalls) add() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return false
	}
	d.wg.Add(1)
	return true
}

// closeAndWait refuses new detached calls and waits for those running (the session's context, already
// cancelled, ends them).
func (d *detachedCalls) closeAndWait() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
	d.wg.Wait()
}

// callDetached runs callTool on a context of its own (see the top of the file) and returns its outcome, or
// the host's context error if the host goes first: the call goes on, and its outcome is kept for a resume.
func (s *Session) callDetached(ctx context.Context, params *mcp.CallToolParams, opts CallOptions) (*mcp.CallToolResult, *Task, error) {
	hook := opts.OnEnd
	// onEnd is the one call of the caller's OnEnd, with the call's outcome, where the call ends.
	onEnd := func(o CallOutcome) {
		if hook != nil {
			safeCall(s, "OnEnd", func() { hook(o) })
		}
	}
	opts.Detach, opts.OnEnd = false, nil
	if opts.CallID == "" || opts.MintedID {
		err := &InvalidError{Err: errInvalidArguments, Violations: []FieldViolation{{Field: "call_id", Description: "required to detach a call"}}}
		onEnd(CallOutcome{Err: err})
		return nil, nil, err
	}
	if !s.detached.add() {
		err := s.closedError()
		onEnd(CallOutcome{Err: err})
		return nil, nil, err
	}
	base := context.WithoutCancel(ctx)
	var dctx context.Context
	var cancel context.CancelFunc
	if dl, ok := ctx.Deadline(); ok {
		dctx, cancel = context.WithDeadline(base, dl)
	} else {
		dctx, cancel = context.WithTimeoutCause(base, MaxDetachedCall, fmt.Errorf("%w: %w: a detached call ran for %v (its maximum)", ErrRequestTimeout, context.DeadlineExceeded, MaxDetachedCall))
	}
	// Ended by the session's end too, also before the call is registered (beginCall ties it then).
	dctx, endWithSession := context.WithCancelCause(dctx)
	stopSession := context.AfterFunc(s.ctx, func() { endWithSession(s.closedError()) })
	// The host's callbacks are not called once the host is gone: nobody reads what they would deliver.
	var gone atomic.Bool
	stop := context.AfterFunc(ctx, func() { gone.Store(true) })
	if f := opts.OnProgress; f != nil {
		opts.OnProgress = func(p Progress) {
			if !gone.Load() {
				f(p)
			}
		}
	}
	if f := opts.OnLog; f != nil {
		opts.OnLog = func(l *mcp.LoggingMessageParams) {
			if !gone.Load() {
				f(l)
			}
		}
	}
	done := make(chan CallOutcome, 1)
	go func() { // owned by the session (detachedCalls): its context ends with the session at the latest
		defer s.detached.wg.Done()
		var o CallOutcome
		defer func() { done <- o }()
		defer func() { onEnd(o) }() // before the session's close stops waiting for the call
		defer cancel()
		defer endWithSession(nil)
		defer stopSession()
		defer stop()
		defer func() {
			if r := recover(); r != nil { // the call fails; the session and the process go on
				s.logger.Error("panic", "where", "detached call", "call_id", opts.CallID, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				o = CallOutcome{Err: fmt.Errorf("internal error: detached call %s panicked", opts.CallID)}
			}
		}()
		o.Result, o.Task, o.Err = s.callTool(dctx, params, opts)
	}()
	select {
	case o := <-done:
		return o.Result, o.Task, o.Err
	case <-ctx.Done():
		s.logger.Info("the host left a detached call; it goes on", "call_id", opts.CallID, "tool", params.Name)
		return nil, nil, ctxError(ctx)
	}
}

// CancelCall cancels the call callID in flight in the session (detached or not): its context ends, so its
// request is cancelled upstream (notifications/cancelled), its server requests end and it fails
// context.Canceled. ErrCallNotFound when no call with that id is in flight.
func (s *Session) CancelCall(callID string) error {
	s.mu.Lock()
	c := s.calls[callID]
	s.mu.Unlock()
	if callID == "" || c == nil || c.cancel == nil {
		return fmt.Errorf("%w: no call %q in flight in session %s", ErrCallNotFound, callID, s.id)
	}
	s.logger.Info("call cancelled by the host", "call_id", callID, "method", c.method)
	c.cancel(errCancelledByHost)
	return nil
}

// errCancelledByHost is the cause CancelCall ends a call's context with. A tools/call it ends is kept as
// cancelled (keepOutcome): a resume of it fails context.Canceled saying so, not ErrCallOutcomeUnknown.
var errCancelledByHost = fmt.Errorf("%w: cancelled by the host (CancelCall)", context.Canceled)

// hostCancelled is the outcome kept for the tools/call callID that CancelCall ended, or nil when call
// ended otherwise (its outcome err is then kept, or not, as it is).
func hostCancelled(call *activeCall, err error) error {
	if err == nil || call.ctx == nil || !errors.Is(err, context.Canceled) || !errors.Is(context.Cause(call.ctx), errCancelledByHost) {
		return nil
	}
	return fmt.Errorf("call %s: %w", call.opts.CallID, errCancelledByHost)
}
