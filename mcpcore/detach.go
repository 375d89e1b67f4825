package mcpcore

// Detached calls and CancelCall (docs/adr/0105-detached-calls.md). A tools/call made with
// CallOptions.Detach runs on a context that the host's does not cancel: a host whose connection ends — a
// console page reloaded, a stream cut — leaves the call running, its server requests pending, and comes
// back with Resume and the same call id to join it (resume.go). The call is still bounded: by the host's
// deadline if it had one, else by MaxDetachedCall; by the request deadline every call has (beginCall); and
// by its session, which cancels it on close and waits for its goroutine. CancelCall is the deliberate
// cancellation, detached or not.

import (
	"context"
	"fmt"
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
	onEnd := opts.OnDetachedEnd
	if onEnd == nil {
		onEnd = func() {}
	}
	opts.Detach, opts.OnDetachedEnd = false, nil
	if opts.CallID == "" || opts.MintedID {
		onEnd()
		return nil, nil, &InvalidError{Err: errInvalidArguments, Violations: []FieldViolation{{Field: "call_id", Description: "required to detach a call"}}}
	}
	if !s.detached.add() {
		onEnd()
		return nil, nil, s.closedError()
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
	type outcome struct {
		res  *mcp.CallToolResult
		task *Task
		err  error
	}
	done := make(chan outcome, 1)
	go func() { // owned by the session (detachedCalls): its context ends with the session at the latest
		defer s.detached.wg.Done()
		defer onEnd()
		defer cancel()
		defer endWithSession(nil)
		defer stopSession()
		defer stop()
		var o outcome
		o.res, o.task, o.err = s.callTool(dctx, params, opts)
		done <- o
	}()
	select {
	case o := <-done:
		return o.res, o.task, o.err
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
	c.cancel(fmt.Errorf("%w: cancelled by the host (CancelCall)", context.Canceled))
	return nil
}
