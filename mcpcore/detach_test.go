package mcpcore

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// A detached call goes on when its host's context ends, and its session's close ends it and waits for its
// goroutine; its end hook (OnEnd) is called once, when it ends, with its own outcome (the session's end).
func TestDetachedCallOutlivesHostAndEndsWithSession(t *testing.T) {
	hooks := &serverHooks{started: make(chan string, 1), cancelled: make(chan string, 1)}
	c := memCore(t, hooks, nil)
	s := open(t, c, "mem", "2025-11-25", HostCapabilities{})
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan CallOutcome, 2)
	errc := make(chan error, 1)
	go func() {
		_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "slow"}, CallOptions{CallID: "d1", Detach: true, OnEnd: func(o CallOutcome) { ended <- o }})
		errc <- err
	}()
	<-hooks.started
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("the host's call returned %v, want context.Canceled", err)
	}
	select {
	case <-hooks.cancelled:
		t.Fatal("the host's cancellation reached the server of a detached call")
	default:
	}
	if err := s.CancelCall("nope"); !errors.Is(err, ErrCallNotFound) {
		t.Errorf("CancelCall of an unknown id = %v, want ErrCallNotFound", err)
	}
	if err := s.Close(tctx(t)); err != nil {
		t.Fatal(err)
	}
	<-hooks.cancelled // the session's close ended the call upstream
	if len(ended) != 1 {
		t.Fatalf("OnEnd called %d times, want once", len(ended))
	}
	if o := <-ended; !errors.Is(o.Err, ErrSessionClosed) || o.Result != nil {
		t.Errorf("OnEnd got %+v, want the call's own outcome: ErrSessionClosed", o)
	}
	// A detached call needs the host's own call id; its end hook is called all the same, with the refusal.
	_, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo"}, CallOptions{Detach: true, OnEnd: func(o CallOutcome) { ended <- o }})
	if !errors.As(err, new(*InvalidError)) {
		t.Errorf("a detached call without a call id = %v, want an InvalidError", err)
	}
	if len(ended) != 1 {
		t.Fatalf("OnEnd of a refused detached call called %d times, want once", len(ended))
	}
	if o := <-ended; o.Err != err {
		t.Errorf("OnEnd of a refused detached call got %v, want %v", o.Err, err)
	}
}

// CancelCall ends a detached call upstream; a resume with its id joined to it meanwhile gets its outcome.
func TestCancelCallEndsDetachedCall(t *testing.T) {
	hooks := &serverHooks{started: make(chan string, 1), cancelled: make(chan string, 1)}
	c := memCore(t, hooks, nil)
	s := open(t, c, "mem", "2025-11-25", HostCapabilities{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the host is gone at once
	ended := make(chan CallOutcome, 1)
	go func() {
		_, _ = s.CallTool(ctx, &mcp.CallToolParams{Name: "slow"}, CallOptions{CallID: "d2", Detach: true, OnEnd: func(o CallOutcome) { ended <- o }})
	}()
	<-hooks.started
	if err := s.CancelCall("d2"); err != nil {
		t.Fatalf("CancelCall: %v", err)
	}
	<-hooks.cancelled
	if o := <-ended; !errors.Is(o.Err, context.Canceled) {
		t.Errorf("the cancelled call ended with %v, want context.Canceled", o.Err)
	}
	// The host cancelled it: a resume says so, it is not a call whose fate is unknown.
	_, err := s.CallTool(tctx(t), &mcp.CallToolParams{Name: "slow"}, CallOptions{CallID: "d2", Resume: true})
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrCallOutcomeUnknown) || !strings.Contains(err.Error(), "CancelCall") {
		t.Errorf("a resume of a call the host cancelled = %v, want context.Canceled saying CancelCall did it", err)
	}
	select {
	case <-hooks.started:
		t.Error("the resume ran the cancelled call again")
	default:
	}
}
