package server

// The Connect stream: a host attaches sessions and answers their requests over one bidirectional stream.

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"slices"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// hostStream is one Connect stream, served by two goroutines for as long as it lives:
//
//   - the handler (gRPC's goroutine for the stream) is the only one that sends on the stream (gRPC allows one
//     sender). When woken it sends, in order, what the reader queued, then takes from the stream's feeds —
//     each attached session's events, the opening and approval requests — which wake it (a pull
//     subscription's notify) when they have something; it ends the stream when the client goes away, a send
//     fails, a session moves, or at shutdown;
//   - the reader receives the host's messages and handles them (attach, detach, reply, cancel), queuing acks.
//
// So an idle stream attached to any number of sessions is two parked goroutines and no buffers — the least
// grpc-go allows (docs/adr/0053) — and a burst takes memory only while it lasts.
//
// Everything is bounded. The send queue holds Options.StreamBuffer messages: a host that sends faster than it
// reads the answers is slowed (the reader waits, then gRPC flow control), not buffered without end. Each feed
// is bounded too: when the handler falls behind it drops events (counted, announced by an EventDropped) and
// the handler re-reads the pending requests, so no session is ever slowed down and no request goes untold.
type hostStream struct {
	svc    *Service
	stream grpc.BidiStreamingServer[pb.ConnectRequest, pb.ConnectResponse]
	owner  string
	who    mcpcore.Identity // the owner and its groups: an approver's stream also answers approval requests
	key    string           // identifies this stream as the answerer of requests
	ctx    context.Context  // ends when the handler returns
	limit  int              // bound on queue

	opening, approvals *watchedFeed  // the owner's requests of sessions being created; approvals it may decide
	wake               chan struct{} // capacity 1: the queue or a feed has something for the handler
	room               chan struct{} // capacity 1: the handler took from a full queue

	qmu   sync.Mutex    // guards what follows; a leaf: nothing is called while it is held
	queue []outbound    // to send, in order
	ready []*attachment // attachments whose subscription has something to take

	mu       sync.Mutex             // guards attached and ended
	attached map[string]*attachment // by session id
	ended    bool                   // detachAll ran: no new attachments
}

// outbound is one entry of a host stream's send queue: a message, or an attachment whose pending requests
// the handler delivers (at this place in the stream: after the ack that names its session) before its events.
type outbound struct {
	msg   *pb.ConnectResponse
	start *attachment
}

// attachment is one attached session: its event feed (a pull subscription), read by the handler.
type attachment struct {
	feed     *eventFeed
	release  func()
	once     sync.Once
	detached atomic.Bool // detached or ended: the handler delivers nothing more of it
	flagged  atomic.Bool // in hostStream.ready
	started  bool        // the handler delivered its pending requests; the handler's only
}

// end releases the attachment (once): its subscription, the host's claim on the session, the session.
func (a *attachment) end() {
	a.detached.Store(true)
	a.once.Do(func() {
		a.feed.sub.Close()
		a.release()
	})
}

// Connect runs the host stream: see the API's documentation. The stream ends when the client closes its
// side or goes away, or at shutdown (UNAVAILABLE); pending requests stay pending.
func (ha *hostAPI) Connect(stream grpc.BidiStreamingServer[pb.ConnectRequest, pb.ConnectResponse]) error {
	s := ha.s
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	h := &hostStream{
		svc:      s,
		stream:   stream,
		owner:    Principal(ctx),
		who:      identity(ctx),
		key:      "stream-" + rand.Text(),
		ctx:      ctx,
		limit:    s.opts.StreamBuffer,
		wake:     make(chan struct{}, 1),
		room:     make(chan struct{}, 1),
		attached: map[string]*attachment{},
	}
	h.opening = s.newOpeningFeed(h.owner, h.key, h.poke) // authorization requests of sessions being created
	defer h.opening.close()
	h.approvals = s.newApprovalFeed(h.who, h.key, h.poke) // approval requests this principal may decide (approval.go)
	defer h.approvals.close()
	defer h.detachAll()
	for _, ev := range append(h.opening.replay(), h.approvals.replay()...) {
		if err := h.sendEvent(ev); err != nil {
			return err
		}
	}
	readDone := make(chan error, 1)
	// The reader ends when Recv fails: the client closed its side, or the stream ended (which it does once
	// this handler returns, so the goroutine never outlives the stream).
	go func() {
		defer logPanic(s.logger, "connect reader")
		readDone <- h.read()
	}()
	for {
		select {
		case <-h.wake:
			if err := h.sendAll(); err != nil {
				return err
			}
		case err := <-readDone:
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		case <-ctx.Done():
			return contextStatus(ctx)
		case <-s.streamsEnd:
			return statusShuttingDown()
		}
	}
}

// poke wakes the handler; it never blocks. It is the notify of the stream's feeds, called while a session or
// the dispatcher publishes.
func (h *hostStream) poke() {
	select {
	case h.wake <- struct{}{}:
	default: // already woken and not yet run
	}
}

// read receives the host's messages and handles them, in order, until Recv fails.
func (h *hostStream) read() error {
	for {
		req, err := h.stream.Recv()
		if err != nil {
			return err
		}
		switch a := req.GetAction().(type) {
		case *pb.ConnectRequest_Attach:
			h.attach(a.Attach.GetSessionIds())
		case *pb.ConnectRequest_Detach:
			h.detach(a.Detach.GetSessionIds())
		case *pb.ConnectRequest_Reply:
			h.reply(a.Reply)
		case *pb.ConnectRequest_Cancel:
			h.cancel(a.Cancel)
		default:
			h.ack("", invalidArgument(mcpcore.FieldViolation{Field: "action", Description: "one of attach, detach, reply or cancel is required"}))
		}
	}
}

// send queues entries for the handler, in order, waiting while the queue is full; false when the stream has
// ended.
func (h *hostStream) send(entries ...outbound) bool {
	for {
		h.qmu.Lock()
		if len(h.queue) < h.limit {
			h.queue = append(h.queue, entries...)
			h.qmu.Unlock()
			h.poke()
			return true
		}
		h.qmu.Unlock()
		select {
		case <-h.room:
		case <-h.ctx.Done():
			return false
		}
	}
}

func (h *hostStream) sendMsg(m *pb.ConnectResponse) bool { return h.send(outbound{msg: m}) }

// sendAll is the handler's turn when woken: the queue in order, then what the feeds have.
func (h *hostStream) sendAll() error {
	h.qmu.Lock()
	queue, ready := h.queue, h.ready
	full := len(queue) >= h.limit
	h.queue, h.ready = nil, nil
	h.qmu.Unlock()
	if full {
		select {
		case h.room <- struct{}{}:
		default:
		}
	}
	for _, o := range queue {
		if o.start == nil {
			if err := h.stream.Send(o.msg); err != nil {
				return err
			}
			continue
		}
		a := o.start
		if a.detached.Load() {
			continue
		}
		for _, ev := range a.feed.replay() {
			if err := h.sendEvent(ev); err != nil {
				return err
			}
		}
		a.started = true
		if err := h.deliver(a); err != nil {
			return err
		}
	}
	for _, a := range ready {
		a.flagged.Store(false) // before taking: what comes after flags it again
		if !a.started {        // its start entry, still to come, takes its events after its replay
			continue
		}
		if err := h.deliver(a); err != nil {
			return err
		}
	}
	for _, f := range []*watchedFeed{h.opening, h.approvals} {
		evs, gap, _ := f.watch.Take(nil)
		for _, ev := range evs {
			if pe, ok := f.next(ev); ok {
				if err := h.sendEvent(pe); err != nil {
					return err
				}
			}
		}
		if gap {
			for _, pe := range f.resync() {
				if err := h.sendEvent(pe); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func (h *hostStream) sendEvent(ev *pb.Event) error {
	return h.stream.Send(&pb.ConnectResponse{Message: &pb.ConnectResponse_Event{Event: ev}})
}

// deliver sends what an attached session's subscription has: its events, then (after a drop) the pending
// requests the host may not have been told of. A session that ended is detached; a session that moved to
// another replica ends the stream (takeover.go): the host reconnects through the proxy.
func (h *hostStream) deliver(a *attachment) error {
	if a.detached.Load() {
		return nil
	}
	evs, gap, ended := a.feed.sub.Take(nil)
	for _, ev := range evs {
		if err := h.svc.movedError(*ev); err != nil {
			return err
		}
		if h.svc.hiddenByMove(*ev) {
			continue
		}
		if pe, ok := a.feed.convert(*ev); ok {
			if err := h.sendEvent(pe); err != nil {
				return err
			}
		}
	}
	if gap {
		for _, pe := range a.feed.resync() {
			if err := h.sendEvent(pe); err != nil {
				return err
			}
		}
	}
	if ended { // the session closed (its final state event was the last) or the stream detached it
		h.mu.Lock()
		if h.attached[a.feed.session] == a {
			delete(h.attached, a.feed.session)
		}
		h.mu.Unlock()
		a.end()
	}
	return nil
}

func (h *hostStream) ack(requestID string, err error) {
	ack := &pb.ReplyAck{RequestId: requestID, Accepted: err == nil}
	if err != nil {
		ack.Error = status.Convert(err).Proto()
	}
	h.sendMsg(&pb.ConnectResponse{Message: &pb.ConnectResponse_ReplyAck{ReplyAck: ack}})
}

func (h *hostStream) reply(r *pb.HostReply) {
	var vs []mcpcore.FieldViolation
	if r.GetRequestId() == "" {
		vs = append(vs, required("reply.request_id"))
	}
	if r.GetAnswer() == nil {
		vs = append(vs, required("reply.answer"))
	}
	if len(vs) > 0 {
		h.ack(r.GetRequestId(), invalidArgument(vs...))
		return
	}
	ctx := WithGroups(WithPrincipal(h.ctx, h.owner), h.who.Groups)
	h.ack(r.GetRequestId(), h.svc.answer(ctx, "", r.GetRequestId(), r.GetAnswer(), h.key, "reply.answer"))
}

func (h *hostStream) cancel(c *pb.CancelServerRequest) {
	if c.GetRequestId() == "" {
		h.ack("", invalidArgument(required("cancel.request_id")))
		return
	}
	d := h.svc.core.Dispatcher()
	pr, _ := d.GetFor(h.who, c.GetRequestId())
	err := toStatus(d.CancelFor(h.who, c.GetRequestId(), c.GetReason()))
	if pr != nil && pr.Kind == mcpcore.KindApproval { // an approver's cancel denies the call
		h.svc.auditApproval(WithPrincipal(h.ctx, h.owner), pr, &pb.HostAnswer{Answer: &pb.HostAnswer_Approval{Approval: &pb.ApprovalDecision{Reason: "cancelled: " + c.GetReason()}}}, err)
	}
	h.ack(c.GetRequestId(), err)
}

// attach attaches sessions and acknowledges with the stream's sessions; the handler then delivers each new
// attachment's pending requests before its new events.
func (h *hostStream) attach(ids []string) {
	ctx := WithPrincipal(h.ctx, h.owner)
	var failures []*pb.AttachFailure
	var started []outbound
	h.mu.Lock()
	if h.ended {
		h.mu.Unlock()
		return
	}
	for _, id := range ids {
		if _, ok := h.attached[id]; ok {
			continue
		}
		sess, detach, err := h.svc.attachHost(ctx, id)
		if err != nil {
			failures = append(failures, &pb.AttachFailure{SessionId: id, Status: status.Convert(err).Proto()})
			continue
		}
		a := &attachment{release: detach}
		a.feed = h.svc.newEventFeed(h.owner, id, sess, h.key, func() { h.flag(a) })
		h.attached[id] = a
		started = append(started, outbound{start: a})
	}
	ack := &pb.AttachedSessions{SessionIds: h.idsLocked(), Failures: failures}
	h.mu.Unlock()
	h.send(append([]outbound{{msg: &pb.ConnectResponse{Message: &pb.ConnectResponse_Attached{Attached: ack}}}}, started...)...)
}

// flag puts a in the handler's ready list once, and wakes the handler. It is a subscription's notify: it runs
// while the session publishes, so it only takes the leaf lock.
func (h *hostStream) flag(a *attachment) {
	if !a.flagged.CompareAndSwap(false, true) {
		return
	}
	h.qmu.Lock()
	h.ready = append(h.ready, a)
	h.qmu.Unlock()
	h.poke()
}

func (h *hostStream) idsLocked() []string {
	ids := make([]string, 0, len(h.attached))
	for id := range h.attached {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (h *hostStream) detach(ids []string) {
	var gone []*attachment
	h.mu.Lock()
	for _, id := range ids {
		if a, ok := h.attached[id]; ok {
			delete(h.attached, id)
			gone = append(gone, a)
		}
	}
	ack := &pb.AttachedSessions{SessionIds: h.idsLocked()}
	h.mu.Unlock()
	for _, a := range gone {
		a.end() // marks it detached first: the handler delivers nothing more of it
	}
	h.sendMsg(&pb.ConnectResponse{Message: &pb.ConnectResponse_Attached{Attached: ack}})
}

// detachAll ends every attachment; the stream takes no new ones.
func (h *hostStream) detachAll() {
	h.mu.Lock()
	h.ended = true
	gone := make([]*attachment, 0, len(h.attached))
	for id, a := range h.attached {
		delete(h.attached, id)
		gone = append(gone, a)
	}
	h.mu.Unlock()
	for _, a := range gone {
		a.end()
	}
}
