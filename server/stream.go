package server

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// endedWait bounds how long StreamCallTool waits, after the call returned, for the RequestEnded of the
// call's server requests (they have all ended by then; this only covers their waiters' scheduling).
const endedWait = 5 * time.Second

// callQueue collects the messages of one streaming call from the core's callbacks, which must not block.
// Progress and log messages beyond the bound are dropped; server requests and their endings never are (they
// are bounded by the session's pending-request limit).
type callQueue struct {
	limit  int
	signal chan struct{} // has a value when items are waiting

	mu      sync.Mutex // guards items
	items   []*pb.StreamCallToolResponse
	dropped int
}

func newCallQueue(limit int) *callQueue {
	return &callQueue{limit: limit, signal: make(chan struct{}, 1)}
}

func (q *callQueue) push(m *pb.StreamCallToolResponse, droppable bool) {
	q.mu.Lock()
	if droppable && len(q.items) >= q.limit {
		q.dropped++
		q.mu.Unlock()
		return
	}
	q.items = append(q.items, m)
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

func (q *callQueue) take() []*pb.StreamCallToolResponse {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	q.items = nil
	return items
}

// StreamCallTool calls a tool and streams its progress, log messages, server requests and their endings,
// then the result, which is the last message. Like CallTool it runs under the RPC's context, so a deadline
// or cancellation cancels the call upstream.
func (s *Service) StreamCallTool(req *pb.StreamCallToolRequest, stream grpc.ServerStreamingServer[pb.StreamCallToolResponse]) error {
	ctx := stream.Context()
	sess, release, err := s.use(ctx, req.GetSessionId())
	if err != nil {
		return err
	}
	defer release()
	tc, err := prepareToolCall(req.GetName(), req.GetArguments(), req.GetMeta(), req.GetTask())
	if err != nil {
		return err
	}
	callID, end, err := s.beginCall(sess.ID(), req.GetCallId())
	if err != nil {
		return err
	}
	defer end()

	q := newCallQueue(s.opts.StreamBuffer)
	waitCtx, stopWaiting := context.WithCancel(ctx)
	// waiters report the end of the call's server requests. waitMu orders their Add before the final
	// Wait: once the handler is returning, the core may still call OnRequest, and that waiter is skipped.
	var (
		waiters    sync.WaitGroup
		waitMu     sync.Mutex
		waitClosed bool
	)
	defer func() {
		waitMu.Lock()
		waitClosed = true
		waitMu.Unlock()
		stopWaiting()
		waiters.Wait()
	}()
	d := s.core.Dispatcher()
	tc.opts.CallID = callID
	tc.opts.OnProgress = func(p mcpcore.Progress) {
		pp, err := progressToProto(&p)
		if err != nil {
			s.logger.Warn("progress not delivered", "call", callID, "error", err)
			return
		}
		q.push(&pb.StreamCallToolResponse{CallId: callID, Event: &pb.StreamCallToolResponse_Progress{Progress: pp}}, true)
	}
	tc.opts.OnLog = func(l *mcp.LoggingMessageParams) {
		pl, err := logToProto(l, callID)
		if err != nil {
			s.logger.Warn("log message not delivered", "call", callID, "error", err)
			return
		}
		q.push(&pb.StreamCallToolResponse{CallId: callID, Event: &pb.StreamCallToolResponse_Log{Log: pl}}, true)
	}
	tc.opts.OnRequest = func(pr *mcpcore.PendingRequest) {
		r, err := serverRequestToProto(pr)
		if err != nil {
			s.logger.Warn("server request not shown on the call's stream", "request", pr.ID, "error", err)
			return
		}
		q.push(&pb.StreamCallToolResponse{CallId: callID, Event: &pb.StreamCallToolResponse_ServerRequest{ServerRequest: r}}, false)
		waitMu.Lock()
		defer waitMu.Unlock()
		if waitClosed {
			return
		}
		waiters.Add(1)
		go func() { // ends when the request ends or the stream does
			defer waiters.Done()
			defer logPanic(s.logger, "stream request waiter")
			ended, err := d.Wait(waitCtx, pr.ID)
			if err != nil {
				return
			}
			q.push(&pb.StreamCallToolResponse{CallId: callID, Event: &pb.StreamCallToolResponse_RequestEnded{RequestEnded: &pb.RequestEnded{
				RequestId: ended.RequestID, SessionId: pr.SessionID, Outcome: outcomeToProto(ended.Outcome), Detail: ended.Detail,
			}}}, false)
		}()
	}

	type outcome struct {
		res  *mcp.CallToolResult
		task *mcpcore.Task
		err  error
	}
	done := make(chan outcome, 1)
	go func() { // ends when the call returns, which the handler's context bounds
		defer logPanic(s.logger, "stream call")
		var o outcome
		defer func() { done <- o }()
		o.res, o.task, o.err = s.callToolAudited(ctx, sess, tc)
	}()

	flush := func() error {
		for _, m := range q.take() {
			if err := stream.Send(m); err != nil {
				return err
			}
		}
		return nil
	}
	for {
		select {
		case <-q.signal:
			if err := flush(); err != nil {
				return err
			}
		case o := <-done:
			if o.err != nil {
				_ = flush()
				return toStatus(o.err)
			}
			// Every request of the call has ended by now; let the waiters report it, boundedly.
			allEnded := make(chan struct{})
			go func() { waiters.Wait(); close(allEnded) }() // ends when the waiters do (bounded by stopWaiting)
			t := time.NewTimer(endedWait)
			select {
			case <-allEnded:
			case <-t.C:
				stopWaiting()
			case <-ctx.Done():
			}
			t.Stop()
			if err := flush(); err != nil {
				return err
			}
			res, err := callResultToProto(o.res, o.task)
			if err != nil {
				return s.upstreamBad(sess, err)
			}
			return stream.Send(&pb.StreamCallToolResponse{CallId: callID, Event: &pb.StreamCallToolResponse_Result{Result: res}})
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		case <-s.streamsEnd:
			return statusShuttingDown()
		}
	}
}
