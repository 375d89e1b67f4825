package mcpcore

import (
	"context"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// A detached call goes on when its host's context ends, and its session's close ends it and waits for its
// goroutine; the session's slot (OnDetachedEnd) is given back once, when it ends.
func TestDetachedCallOutlivesHostAndEndsWithSession(t *testing.T) {
	hooks := &serverHooks{started: make(chan string, 1), cancelled: make(chan string, 1)}
	c := memCore(t, hooks, nil)
	s := open(t, c, "mem", "2025-11-25", HostCapabilities{})
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan struct{}, 2)
	errc := make(chan error, 1)
	go func() {
		_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "slow"}, CallOptions{CallID: "d1", Detach: true, OnDetachedEnd: func() { ended <- struct{}{} }})
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
		t.Errorf("OnDetachedEnd called %d times, want once", len(ended))
	}
	// A detached call needs the host's own call id.
	if _, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo"}, CallOptions{Detach: true}); !errors.As(err, new(*InvalidError)) {
		t.Errorf("a detached call without a call id = %v, want an InvalidError", err)
	}
}

// CancelCall ends a detached call upstream; a resume with its id joined to it meanwhile gets its outcome.
func TestCancelCallEndsDetachedCall(t *testing.T) {
	hooks := &serverHooks{started: make(chan string, 1), cancelled: make(chan string, 1)}
	c := memCore(t, hooks, nil)
	s := open(t, c, "mem", "2025-11-25", HostCapabilities{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the host is gone at once
	go func() {
		_, _ = s.CallTool(ctx, &mcp.CallToolParams{Name: "slow"}, CallOptions{CallID: "d2", Detach: true})
	}()
	<-hooks.started
	if err := s.CancelCall("d2"); err != nil {
		t.Fatalf("CancelCall: %v", err)
	}
	<-hooks.cancelled
}
