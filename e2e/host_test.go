package e2e

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// hostConn is a host's Connect stream, with a reader goroutine.
type hostConn struct {
	t       *testing.T
	stream  grpc.BidiStreamingClient[pb.ConnectRequest, pb.ConnectResponse]
	msgs    chan *pb.ConnectResponse
	backlog []*pb.ConnectResponse // received, not yet taken by next
	cancel  context.CancelFunc
	done    chan struct{}
}

func (b *bridge) connect(ctx context.Context) *hostConn {
	b.t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	stream, err := b.client.Connect(ctx)
	if err != nil {
		cancel()
		b.t.Fatal(err)
	}
	h := &hostConn{t: b.t, stream: stream, msgs: make(chan *pb.ConnectResponse, 256), cancel: cancel, done: make(chan struct{})}
	go func() { // ends when the stream does
		defer close(h.done)
		defer close(h.msgs)
		for {
			m, err := stream.Recv()
			if err != nil {
				return
			}
			h.msgs <- m
		}
	}()
	b.t.Cleanup(h.close)
	return h
}

func (h *hostConn) close() {
	h.cancel()
	<-h.done
}

func (h *hostConn) send(r *pb.ConnectRequest) {
	h.t.Helper()
	if err := h.stream.Send(r); err != nil {
		h.t.Fatalf("Connect send: %v", err)
	}
}

func (h *hostConn) attach(ids ...string) *pb.AttachedSessions {
	h.t.Helper()
	h.send(&pb.ConnectRequest{Action: &pb.ConnectRequest_Attach{Attach: &pb.AttachSessions{SessionIds: ids}}})
	return h.next(func(m *pb.ConnectResponse) bool { return m.GetAttached() != nil }).GetAttached()
}

func (h *hostConn) next(match func(*pb.ConnectResponse) bool) *pb.ConnectResponse {
	h.t.Helper()
	for i, m := range h.backlog {
		if match(m) {
			h.backlog = append(h.backlog[:i:i], h.backlog[i+1:]...)
			return m
		}
	}
	timeout := time.NewTimer(60 * time.Second)
	defer timeout.Stop()
	for {
		select {
		case m, ok := <-h.msgs:
			if !ok {
				h.t.Fatal("Connect stream ended")
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

func (h *hostConn) nextRequest() *pb.ServerRequest {
	h.t.Helper()
	return h.next(func(m *pb.ConnectResponse) bool { return m.GetEvent().GetServerRequest() != nil }).GetEvent().GetServerRequest()
}

func (h *hostConn) reply(id string, a *pb.HostAnswer) *pb.ReplyAck {
	h.t.Helper()
	h.send(&pb.ConnectRequest{Action: &pb.ConnectRequest_Reply{Reply: &pb.HostReply{RequestId: id, Answer: a}}})
	return h.next(func(m *pb.ConnectResponse) bool {
		return m.GetReplyAck().GetRequestId() == id && m.GetReplyAck() != nil
	}).GetReplyAck()
}

type callResult struct {
	resp *pb.CallToolResponse
	err  error
}

func (b *bridge) callAsync(ctx context.Context, req *pb.CallToolRequest) <-chan callResult {
	ch := make(chan callResult, 1)
	go func() {
		r, err := b.client.CallTool(ctx, req)
		ch <- callResult{r, err}
	}()
	return ch
}
