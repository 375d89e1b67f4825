package server

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/structpb"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// callWatchBuffer bounds the request events queued for one streaming call between its handler's reads; a
// call raises few requests (at most the session's pending limit), and a lost event is re-read (resync).
const callWatchBuffer = 16

// callQueue collects the messages of one streaming call from the core's callbacks, which must not block.
// Progress and log messages beyond the bound are dropped; server requests and their endings never are (they
// are bounded by the session's pending-request limit).
type callQueue struct {
	limit  int
	callID string
	signal chan struct{} // has a value when items are waiting

	mu      sync.Mutex // guards items
	items   []*pb.StreamCallToolResponse
	dropped int
}

func newCallQueue(limit int, callID string) *callQueue {
	return &callQueue{limit: limit, callID: callID, signal: make(chan struct{}, 1)}
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

// take returns the queued messages and, when some were dropped since the last take, a log message of the
// bridge's own after them saying how many (issue 31: the host is told that events were lost).
func (q *callQueue) take() []*pb.StreamCallToolResponse {
	q.mu.Lock()
	defer q.mu.Unlock()
	items := q.items
	q.items = nil
	if q.dropped > 0 {
		items = append(items, droppedMarker(q.callID, q.dropped))
		q.dropped = 0
	}
	return items
}

// droppedLogger is the logger name of the bridge's own log messages on a call's stream.
const droppedLogger = "mcp-bridge"

// droppedMarker is the message that tells a StreamCallTool host that n progress or log messages of the
// call were dropped because it read too slowly: a LoggingMessage at warning from logger "mcp-bridge" whose
// data is {"eventsDropped": n, "message": …}.
func droppedMarker(callID string, n int) *pb.StreamCallToolResponse {
	data, _ := structpb.NewValue(map[string]any{
		"eventsDropped": n,
		"message":       fmt.Sprintf("the bridge dropped %d progress or log messages of this call: the stream was read too slowly", n),
	})
	return &pb.StreamCallToolResponse{CallId: callID, Event: &pb.StreamCallToolResponse_Log{Log: &pb.LoggingMessage{
		Level: logLevelToProto("warning"), Logger: droppedLogger, Data: data, CallId: callID}}}
}

// StreamCallTool calls a tool and streams its progress, log messages, server requests and their endings,
// then the result, which is the last message. Like CallTool it runs under the RPC's context, so a deadline
// or cancellation cancels the call upstream.
func (c *toolCalls) StreamCallTool(req *pb.StreamCallToolRequest, stream grpc.ServerStreamingServer[pb.StreamCallToolResponse]) error {
	s := c.s
	ctx := stream.Context()
	sess, release, err := s.use(ctx, req.GetSessionId())
	if err != nil {
		return err
	}
	var held func() // a detached call's: its end, not the RPC's return, gives the session's use back
	defer func() {
		if held == nil {
			release()
		}
	}()
	tc, err := prepareToolCall(req.GetName(), req.GetArguments(), req.GetMeta(), req.GetTask())
	if err != nil {
		return err
	}
	callID := callIDOf(req.GetCallId())
	tc.opts.Resume = req.GetResume()

	q := newCallQueue(s.opts.StreamBuffer, callID)
	d := s.core.Dispatcher()
	sid := sess.ID()
	// The call's server requests and their ends come from the dispatcher's one feed: the requests this call
	// raised, and the session's requests that belong to no call (a push over stdio or SSE names none) while
	// it runs. The call's own approval request is not shown as a request (only its approvers see that,
	// approval.go): the caller is told the call waits for approval (approval_pending). While the watch is
	// open the core knows the call streams its requests (a roots request waits for the caller's answer).
	watch := d.WatchCall(sid, callID, callWatchBuffer)
	defer watch.Close()
	shown := map[string]bool{} // requests shown on the stream whose end is not yet shown; this goroutine's
	showRequest := func(pr *mcpcore.PendingRequest) {
		if shown[pr.ID] {
			return
		}
		if pr.Kind == mcpcore.KindApproval {
			if pr.Approval != nil {
				shown[pr.ID] = true
				q.push(&pb.StreamCallToolResponse{CallId: callID, Event: &pb.StreamCallToolResponse_ApprovalPending{ApprovalPending: approvalPendingToProto(pr)}}, false)
			}
			return
		}
		r, err := serverRequestToProto(pr)
		if err != nil {
			s.logger.Warn("server request not shown on the call's stream", "request", pr.ID, "error", err)
			return
		}
		shown[pr.ID] = true
		q.push(&pb.StreamCallToolResponse{CallId: callID, Event: &pb.StreamCallToolResponse_ServerRequest{ServerRequest: r}}, false)
	}
	showEnded := func(ended mcpcore.RequestEnded) {
		if !shown[ended.RequestID] {
			return
		}
		delete(shown, ended.RequestID)
		q.push(&pb.StreamCallToolResponse{CallId: callID, Event: &pb.StreamCallToolResponse_RequestEnded{RequestEnded: &pb.RequestEnded{
			RequestId: ended.RequestID, SessionId: sid, Outcome: outcomeToProto(ended.Outcome), Detail: ended.Detail,
		}}}, false)
	}
	// resyncEnds shows the ends a full watch buffer lost; resync also the requests still pending.
	resyncEnds := func() {
		for id := range shown {
			if ended, ok := d.Ended(id); ok {
				showEnded(ended)
			}
		}
	}
	resync := func() {
		for _, pr := range d.List(Principal(ctx), sid) {
			if pr.OriginCallID == callID || pr.OriginCallID == "" {
				showRequest(pr)
			}
		}
		resyncEnds()
	}
	onWatch := func(ev *mcpcore.Event) {
		switch ev.Kind {
		case mcpcore.EventRequestCreated:
			showRequest(ev.Request)
		case mcpcore.EventRequestEnded:
			showEnded(*ev.Ended)
		}
	}
	tc.opts.CallID = callID
	tc.opts.MintedID = req.GetCallId() == "" // the host chose no id to resume it by: its outcome is not kept
	if req.GetDetach() {
		held = detach(ctx, &tc, release)
	}
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
		o.res, o.task, o.err = s.callToolAudited(ctx, sess, tc, held)
	}()

	flush := func() error {
		for _, m := range q.take() {
			if err := stream.Send(m); err != nil {
				return err
			}
		}
		return nil
	}
	if tc.opts.Resume {
		// A resumed call may join one in flight (a detached call whose host came back, ADR 0105): show the
		// requests it already waits on; the watch, opened before, has those created from now on.
		resync()
	}
	for {
		select {
		case <-q.signal:
			if err := flush(); err != nil {
				return err
			}
		case ev, ok := <-watch.C():
			if ok {
				onWatch(ev)
			}
		case <-watch.Gap():
			resync()
		case o := <-done:
			// Every request of the call has ended by now, and the dispatcher published each end before
			// the call could return: show what the watch holds, and what it may have dropped.
			for drained := false; !drained; {
				select {
				case ev := <-watch.C():
					onWatch(ev)
				default:
					drained = true
				}
			}
			resyncEnds()
			if o.err != nil {
				_ = flush()
				return toStatus(o.err)
			}
			if err := flush(); err != nil {
				return err
			}
			res, err := callResultToProto(o.res, o.task)
			if err != nil {
				return s.upstreamBad(sess, err)
			}
			return stream.Send(&pb.StreamCallToolResponse{CallId: callID, Event: &pb.StreamCallToolResponse_Result{Result: res}})
		case <-ctx.Done():
			return contextStatus(ctx)
		case <-s.streamsEnd:
			return statusShuttingDown()
		}
	}
}

// errTooManyStreams refuses a WatchEvents stream over Options.MaxEventStreamsPerPrincipal.
var errTooManyStreams = errors.New("too many event streams")

// watchSlots counts the WatchEvents streams of each principal (Options.MaxEventStreamsPerPrincipal).
type watchSlots struct {
	mu      sync.Mutex
	n       map[string]int
	refused atomic.Uint64
}

// watchSlot takes one of the caller's WatchEvents streams; release gives it back. Over the cap it
// returns errTooManyStreams naming the key that raises it.
func (ha *hostAPI) watchSlot(ctx context.Context) (release func(), err error) {
	s := ha.s
	limit := s.maxEventStreams()
	if limit <= 0 {
		return func() {}, nil
	}
	p := Principal(ctx)
	w := &s.watches
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n == nil {
		w.n = map[string]int{}
	}
	if w.n[p] >= limit {
		w.refused.Add(1)
		return nil, fmt.Errorf("%w: the principal holds %d WatchEvents streams, its limit (limits.maxEventStreamsPerPrincipal)", errTooManyStreams, limit)
	}
	w.n[p]++
	return sync.OnceFunc(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.n[p]--; w.n[p] <= 0 {
			delete(w.n, p)
		}
	}), nil
}

// WatchStreamsRefused counts WatchEvents streams refused over limits.maxEventStreamsPerPrincipal.
func (ha *hostAPI) WatchStreamsRefused() uint64 { return ha.s.watches.refused.Load() }
