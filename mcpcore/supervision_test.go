package mcpcore

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// dialUnless is a test dialer that connects to srv in memory (keeping the server side in *server) unless
// refuse reports true.
func dialUnless(srv *mcp.Server, refuse func() bool, server **mcp.ServerSession) func(ServerConfig) (mcp.Transport, error) {
	return func(ServerConfig) (mcp.Transport, error) {
		if refuse() {
			return nil, errors.New("connection refused")
		}
		ct, st := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(context.Background(), st, nil)
		*server = ss
		return ct, err
	}
}

// maxRestarts counts reconnection attempts exactly: 2 means two attempts after the connection broke, then
// the session closes (it allowed three).
func TestMaxRestartsIsExact(t *testing.T) {
	for _, max := range []int{1, 2, 5} {
		t.Run(fmt.Sprint(max), func(t *testing.T) {
			srv := newTestServer(nil, nil)
			c, _ := newTestCore(t, map[string]ServerConfig{"mem": {Transport: transportTest, Restart: RestartPolicy{MaxRestarts: max, InitialBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond}}}, nil)
			var dials atomic.Int32
			var server *mcp.ServerSession
			c.testDial = dialUnless(srv, func() bool { return dials.Add(1) > 1 }, &server)
			s := open(t, c, "mem", "2025-11-25", HostCapabilities{})
			sub := s.Subscribe(0)
			defer sub.Close()
			_ = server.Close() // the server goes away: the connection breaks
			ev := waitEvent(t, sub, func(e Event) bool { return e.Kind == EventStateChanged && e.State == StateClosed })
			if got := int(dials.Load()) - 1; got != max {
				t.Errorf("reconnection attempts = %d, want %d (reason %q)", got, max, ev.Reason)
			}
			if _, err := s.ListTools(tctx(t), nil, CallOptions{}); !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrSessionClosed) {
				t.Errorf("call on a session supervision gave up on = %v, want ErrUnavailable", err)
			}
		})
	}
}

// While a reconnection has failed (the server is down), calls fail at once with ErrUnavailable rather than
// waiting for the next attempt; they succeed again once the server is back.
func TestCallsFailFastWhileServerDown(t *testing.T) {
	srv := newTestServer(nil, nil)
	c, _ := newTestCore(t, map[string]ServerConfig{"mem": {Transport: transportTest, Restart: RestartPolicy{MaxRestarts: 1000, InitialBackoff: time.Millisecond, MaxBackoff: 50 * time.Millisecond}}}, nil)
	var down atomic.Bool
	var server *mcp.ServerSession
	c.testDial = dialUnless(srv, down.Load, &server)
	s := open(t, c, "mem", "2025-11-25", HostCapabilities{})
	sub := s.Subscribe(0)
	defer sub.Close()
	down.Store(true)
	_ = server.Close()
	waitEvent(t, sub, func(e Event) bool {
		return e.Kind == EventStateChanged && e.State == StateReconnecting && e.Reason != "" && e.Reason[:9] == "reconnect"
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.ListTools(ctx, nil, CallOptions{}); !errors.Is(err, ErrUnavailable) || ctx.Err() != nil {
		t.Fatalf("ListTools while down = %v, want ErrUnavailable at once", err)
	}
	down.Store(false)
	waitEvent(t, sub, func(e Event) bool { return e.Kind == EventStateChanged && e.State == StateReady })
	if _, err := s.ListTools(tctx(t), nil, CallOptions{}); err != nil {
		t.Fatalf("ListTools after the server came back: %v", err)
	}
}

// A call to a server that does not answer ends at the server's RequestTimeout with ErrRequestTimeout
// (which is context.DeadlineExceeded), and the tool sees the cancellation.
func TestRequestTimeout(t *testing.T) {
	hooks := &serverHooks{started: make(chan string, 1), cancelled: make(chan string, 1)}
	c := memCore(t, hooks, func(o *Options) {
		cfg := o.Servers["mem"]
		cfg.RequestTimeout = 200 * time.Millisecond
		o.Servers["mem"] = cfg
	})
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			s := open(t, c, "mem", era.pin, HostCapabilities{})
			_, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow"}, CallOptions{})
			if !errors.Is(err, ErrRequestTimeout) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("CallTool = %v, want ErrRequestTimeout", err)
			}
			<-hooks.started
			if got := <-hooks.cancelled; got != "slow" {
				t.Errorf("cancelled %q", got)
			}
		})
	}
}

// The request deadline does not run while the server waits for a host: a pending request answered after
// several request timeouts still completes the call.
func TestRequestTimeoutPausedForHost(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			// On synctest's fake clock: the host's three request timeouts of thinking cost no real time.
			synctest.Test(t, func(t *testing.T) {
				c := memCore(t, nil, func(o *Options) {
					cfg := o.Servers["mem"]
					cfg.RequestTimeout = time.Second
					o.Servers["mem"] = cfg
				})
				s := open(t, c, "mem", era.pin, allCaps)
				sub := s.Subscribe(0)
				defer sub.Close()
				done := make(chan error, 1)
				go func() {
					_, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"kinds": []any{"elicitation"}}}, CallOptions{})
					done <- err
				}()
				ev := waitEvent(t, sub, func(e Event) bool { return e.Kind == EventRequestCreated })
				time.Sleep(3 * time.Second) // the host takes its time: three request timeouts
				if err := c.Dispatcher().Respond(tctx(t), "alice", ev.Request.ID, Answer{Elicitation: &mcp.ElicitResult{Action: "decline"}}); err != nil {
					t.Fatal(err)
				}
				if err := <-done; err != nil {
					t.Fatalf("CallTool = %v, want the call to complete after the host answered", err)
				}
			})
		})
	}
}

// Core.Drain ends pending requests as the bridge shutting down, and the calls waiting on them fail with
// ErrShuttingDown at once, on both eras.
func TestDrainEndsPendingRequests(t *testing.T) {
	for _, era := range eras {
		t.Run(era.name, func(t *testing.T) {
			c := memCore(t, nil, nil)
			s := open(t, c, "mem", era.pin, allCaps)
			sub := s.Subscribe(0)
			defer sub.Close()
			done := make(chan error, 1)
			go func() {
				_, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"kinds": []any{"elicitation"}}}, CallOptions{})
				done <- err
			}()
			ev := waitEvent(t, sub, func(e Event) bool { return e.Kind == EventRequestCreated })
			c.Drain()
			ended, err := c.Dispatcher().Wait(tctx(t), ev.Request.ID)
			if err != nil || ended.Outcome != OutcomeSessionClosed || ended.Detail != "bridge shutting down" {
				t.Errorf("ended %+v, %v; want session-closed \"bridge shutting down\"", ended, err)
			}
			if err := <-done; !errors.Is(err, ErrShuttingDown) {
				t.Errorf("call = %v, want ErrShuttingDown", err)
			}
			if _, err := c.Open(tctx(t), OpenParams{Owner: "alice", Server: "mem"}); err == nil {
				t.Error("Open after Drain succeeded")
			}
		})
	}
}

// TestRequestDeadline runs on synctest's fake clock: the sleeps below advance it without waiting, and
// synctest.Wait lets the deadline's timer goroutine run before each check, so no check depends on how fast
// the machine is (a paused deadline that fired before pause ran was a flake on a loaded machine).
func TestRequestDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fired := make(chan bool, 1)
		d := newRequestDeadline(50*time.Millisecond, time.Hour, nil, func(total bool) { fired <- total })
		d.pause()
		time.Sleep(120 * time.Millisecond)
		synctest.Wait()
		select {
		case <-fired:
			t.Fatal("fired while paused")
		default:
		}
		d.resume()
		time.Sleep(49 * time.Millisecond)
		synctest.Wait()
		select {
		case <-fired:
			t.Fatal("fired before its idle timeout, counted from resume")
		default:
		}
		if total := <-fired; total {
			t.Error("the idle timeout reported as the total one")
		}

		d = newRequestDeadline(time.Hour, 80*time.Millisecond, nil, func(total bool) { fired <- total })
		for range 3 {
			d.alive() // progress cannot extend past the total
		}
		if total := <-fired; !total {
			t.Error("the total bound reported as the idle one")
		}
		d.stop()

		d = newRequestDeadline(30*time.Millisecond, time.Hour, nil, func(total bool) { fired <- total })
		d.stop()
		time.Sleep(60 * time.Millisecond)
		synctest.Wait()
		select {
		case <-fired:
			t.Error("fired after stop")
		default:
		}
	})
}

// A server's own request sent while a call is in flight, over a transport that does not tie it to the
// call (stdio, SSE, in-memory), belongs to the session: it has no origin and does not end with the call.
func TestUnrelatedServerRequestOutlivesTheCall(t *testing.T) {
	hooks := &serverHooks{started: make(chan string, 1), cancelled: make(chan string, 1)}
	srv := newTestServer(nil, hooks)
	c, _ := newTestCore(t, map[string]ServerConfig{"mem": {Transport: transportTest}}, nil)
	sessions := make(chan *mcp.ServerSession, 1)
	c.testDial = func(ServerConfig) (mcp.Transport, error) {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := srv.Connect(context.Background(), st, nil)
		sessions <- ss
		return ct, err
	}
	s := open(t, c, "mem", "2025-11-25", allCaps)
	ss := <-sessions
	sub := s.Subscribe(0)
	defer sub.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "slow"}, CallOptions{})
		done <- err
	}()
	<-hooks.started
	roots := make(chan error, 1)
	go func() {
		_, err := ss.ListRoots(context.Background(), nil)
		roots <- err
	}()
	ev := waitEvent(t, sub, func(e Event) bool { return e.Kind == EventRequestCreated })
	if ev.Request.OriginCallID != "" {
		t.Errorf("the server's own roots/list got origin %q, want none", ev.Request.OriginCallID)
	}
	cancel()
	<-done
	<-hooks.cancelled
	if p, err := c.Dispatcher().Get("alice", ev.Request.ID); err != nil || p == nil {
		t.Fatalf("the roots request ended with the unrelated call: %v", err)
	}
	if err := c.Dispatcher().Respond(tctx(t), "alice", ev.Request.ID, Answer{Roots: &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: "file:///x"}}}}); err != nil {
		t.Fatal(err)
	}
	if err := <-roots; err != nil {
		t.Errorf("server's roots/list = %v", err)
	}
}
