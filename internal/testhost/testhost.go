// Package testhost is a host's Connect stream for tests: the in-process server tests and the e2e tests
// against the real binary drive the bridge's bidirectional host stream through this one type, over any
// BridgeServiceClient (issue 34: one harness per level, no copied host helper).
package testhost

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// Wait is how long Next waits for a matching message before it fails the test: a check that the stream
// does not hang, not a timing assertion.
const Wait = 60 * time.Second

// Conn is a host's Connect stream with a reader goroutine that ends with the stream; Close (registered
// with the test's Cleanup) cancels the stream and waits for the reader.
type Conn struct {
	t       testing.TB
	stream  grpc.BidiStreamingClient[pb.ConnectRequest, pb.ConnectResponse]
	msgs    chan *pb.ConnectResponse
	backlog []*pb.ConnectResponse // received, not yet taken by Next
	cancel  context.CancelFunc
	done    chan struct{} // closed when the stream has ended
	err     error         // why it ended; set before done is closed
}

// Connect opens a Connect stream on client.
func Connect(ctx context.Context, t testing.TB, client pb.BridgeServiceClient) *Conn {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	stream, err := client.Connect(ctx)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	h := &Conn{t: t, stream: stream, msgs: make(chan *pb.ConnectResponse, 256), cancel: cancel, done: make(chan struct{})}
	go func() { // ends when the stream does; Close waits for it
		defer close(h.done)
		defer close(h.msgs)
		for {
			m, err := stream.Recv()
			if err != nil {
				h.err = err
				return
			}
			h.msgs <- m
		}
	}()
	t.Cleanup(h.Close)
	return h
}

// Close cancels the stream and waits for its reader.
func (h *Conn) Close() {
	h.cancel()
	<-h.done
}

// Header is the stream's response header (which replica answered, for example).
func (h *Conn) Header() (metadata.MD, error) { return h.stream.Header() }

// Ended is closed when the stream has ended; Err then says why.
func (h *Conn) Ended() <-chan struct{} { return h.done }

// Err is why the stream ended; read it after Ended is closed.
func (h *Conn) Err() error { return h.err }

// Received is every message received and not yet taken by Next, after the stream has ended.
func (h *Conn) Received() []*pb.ConnectResponse {
	<-h.done
	out := append([]*pb.ConnectResponse(nil), h.backlog...)
	for m := range h.msgs {
		out = append(out, m)
	}
	return out
}

// Pending is every message received so far that Next has not taken, without waiting for more: for a test
// that checks what a stream was (not) shown. The messages stay for Next.
func (h *Conn) Pending() []*pb.ConnectResponse {
	for {
		select {
		case m, ok := <-h.msgs:
			if !ok {
				return append([]*pb.ConnectResponse(nil), h.backlog...)
			}
			h.backlog = append(h.backlog, m)
		default:
			return append([]*pb.ConnectResponse(nil), h.backlog...)
		}
	}
}

// Messages is the stream's messages as they arrive, for a background goroutine that answers what comes
// on a stream it owns; do not mix it with Next on the same stream.
func (h *Conn) Messages() <-chan *pb.ConnectResponse { return h.msgs }

// Deliver sends r and returns the error instead of failing the test: for a background goroutine, which
// must not call t.Fatal.
func (h *Conn) Deliver(r *pb.ConnectRequest) error { return h.stream.Send(r) }

// Send sends r on the stream.
func (h *Conn) Send(r *pb.ConnectRequest) {
	h.t.Helper()
	if err := h.stream.Send(r); err != nil {
		h.t.Fatalf("Connect send: %v", err)
	}
}

// Attach attaches the stream to the sessions ids and returns the bridge's answer.
func (h *Conn) Attach(ids ...string) *pb.AttachedSessions {
	h.t.Helper()
	h.Send(&pb.ConnectRequest{Action: &pb.ConnectRequest_Attach{Attach: &pb.AttachSessions{SessionIds: ids}}})
	return h.Next(func(m *pb.ConnectResponse) bool { return m.GetAttached() != nil }).GetAttached()
}

// Next returns the first message matching match, received or yet to come; messages that do not match stay
// for later calls. It fails the test when the stream ends or nothing matches within Wait.
func (h *Conn) Next(match func(*pb.ConnectResponse) bool) *pb.ConnectResponse {
	h.t.Helper()
	for i, m := range h.backlog {
		if match(m) {
			h.backlog = append(h.backlog[:i:i], h.backlog[i+1:]...)
			return m
		}
	}
	timeout := time.NewTimer(Wait)
	defer timeout.Stop()
	for {
		select {
		case m, ok := <-h.msgs:
			if !ok {
				h.t.Fatalf("Connect stream ended: %v", h.err)
			}
			if match(m) {
				return m
			}
			h.backlog = append(h.backlog, m)
		case <-timeout.C:
			h.t.Fatal("timed out waiting for a Connect message")
		}
	}
}

// NextRequest is the next server request event.
func (h *Conn) NextRequest() *pb.ServerRequest {
	h.t.Helper()
	return h.Next(func(m *pb.ConnectResponse) bool { return m.GetEvent().GetServerRequest() != nil }).GetEvent().GetServerRequest()
}

// NextEnded is the event that request id ended.
func (h *Conn) NextEnded(id string) *pb.RequestEnded {
	h.t.Helper()
	return h.Next(func(m *pb.ConnectResponse) bool { return m.GetEvent().GetRequestEnded().GetRequestId() == id }).GetEvent().GetRequestEnded()
}

// WaitState is the next state change of session id to want.
func (h *Conn) WaitState(id string, want pb.SessionState) *pb.SessionStateChange {
	h.t.Helper()
	return h.Next(func(m *pb.ConnectResponse) bool {
		return m.GetEvent().GetSessionId() == id && m.GetEvent().GetSessionState().GetState() == want
	}).GetEvent().GetSessionState()
}

// Reply answers request id with a and returns the bridge's acknowledgement.
func (h *Conn) Reply(id string, a *pb.HostAnswer) *pb.ReplyAck {
	h.t.Helper()
	h.Send(&pb.ConnectRequest{Action: &pb.ConnectRequest_Reply{Reply: &pb.HostReply{RequestId: id, Answer: a}}})
	return h.Next(func(m *pb.ConnectResponse) bool {
		return m.GetReplyAck() != nil && m.GetReplyAck().GetRequestId() == id
	}).GetReplyAck()
}

// CallResult is the outcome of a CallTool run by CallAsync.
type CallResult struct {
	Resp *pb.CallToolResponse
	Err  error
}

// CallAsync runs CallTool on client in a goroutine, which ends when the call does (ctx bounds it); the
// outcome arrives on the channel.
func CallAsync(ctx context.Context, client pb.BridgeServiceClient, req *pb.CallToolRequest) <-chan CallResult {
	ch := make(chan CallResult, 1)
	go func() {
		r, err := client.CallTool(ctx, req)
		ch <- CallResult{r, err}
	}()
	return ch
}

// AwaitWait is how long Await waits: a check that a call does not hang, not a timing assertion.
const AwaitWait = 90 * time.Second

// Await is the next value on ch; it fails the test when none comes within AwaitWait.
func Await[T any](t testing.TB, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(AwaitWait):
		t.Fatal("timed out")
	}
	var zero T
	return zero
}
