package server

// The Connect stream: a host attaches sessions and answers their requests over one bidirectional stream.

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// hostStream is one Connect stream. Two goroutines wait for it for as long as it lives, and do nothing else:
//
//   - the handler (gRPC's goroutine for the stream) waits for the stream to end — the client going away, a
//     receive or send failing, a session moving, shutdown — and then for the workers;
//   - the reader receives the host's messages and puts them in the inbox.
//
// The work runs on two workers (onDemand), each started when there is work and gone when there is none:
//
//   - the handling worker handles the inbox in order (attach, detach, reply, cancel), queuing acks;
//   - the sender is the only one that sends on the stream (gRPC allows one sender). It sends, in order, what
//     was queued, then takes from the stream's feeds — each attached session's events, the opening and
//     approval requests — which tell it (a pull subscription's notify) when they have something.
//
// So an idle stream, attached to any number of sessions, is two parked goroutines and no buffers, and the
// reader's stack is never grown by the work (the handler's is grown by gRPC and the interceptors before the
// stream is ours). A burst takes memory only while it lasts.
//
// Everything is bounded. The inbox and the send queue hold Options.StreamBuffer messages each: a host that
// sends faster than the bridge handles, or than it reads the answers, is slowed (gRPC flow control), not
// buffered without end. Each feed is bounded too: when the sender falls behind it drops events (counted,
// announced by an EventDropped) and the sender re-reads the pending requests, so no session is ever slowed
// down and no request goes untold.
type hostStream struct {
	svc    *Service
	stream grpc.BidiStreamingServer[pb.ConnectRequest, pb.ConnectResponse]
	owner  string
	who    mcpcore.Identity // the owner and its groups: an approver's stream also answers approval requests
	key    string           // identifies this stream as the answerer of requests
	ctx    context.Context  // ends when the handler returns
	limit  int              // bound on inbox and queue

	opening, approvals *watchedFeed // the owner's requests of sessions being created; approvals it may decide
	failed             chan error   // capacity 1: the sender's error, which ends the stream
	sender, handling   onDemand
	inRoom, outRoom    chan struct{} // capacity 1: a worker took from a full inbox, queue

	qmu      sync.Mutex           // guards what follows; a leaf: nothing is called while it is held
	inbox    []*pb.ConnectRequest // from the reader, in order
	queue    []outbound           // to send, in order
	ready    []*attachment        // attachments whose subscription has something to take
	replayed bool                 // the sender delivered the opening and approval requests pending at the start

	mu       sync.Mutex             // guards attached and ended
	attached map[string]*attachment // by session id
	ended    bool                   // detachAll ran: no new attachments
}

// outbound is one entry of a host stream's send queue: a message, or an attachment whose pending requests
// the sender delivers (at this place in the stream: after the ack that names its session) before its events.
type outbound struct {
	msg   *pb.ConnectResponse
	start *attachment
}

// attachment is one attached session: its event feed (a pull subscription), read by the sender.
type attachment struct {
	feed     *eventFeed
	release  func()
	once     sync.Once
	detached atomic.Bool // detached or ended: the sender delivers nothing more of it
	flagged  atomic.Bool // in hostStream.ready
	started  bool        // the sender delivered its pending requests; the sender's only
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
func (s *Service) Connect(stream grpc.BidiStreamingServer[pb.ConnectRequest, pb.ConnectResponse]) error {
	ctx, cancel := context.WithCancel(stream.Context())
	h := &hostStream{
		svc:      s,
		stream:   stream,
		owner:    Principal(ctx),
		who:      identity(ctx),
		key:      "stream-" + rand.Text(),
		ctx:      ctx,
		limit:    s.opts.StreamBuffer,
		failed:   make(chan error, 1),
		inRoom:   make(chan struct{}, 1),
		outRoom:  make(chan struct{}, 1),
		attached: map[string]*attachment{},
	}
	h.sender.work, h.handling.work = h.sendTurn, h.handleTurn
	h.sender.logger, h.handling.logger = s.logger, s.logger
	h.opening = s.newOpeningFeed(h.owner, h.key, h.sender.kick)  // authorization requests of sessions being created
	h.approvals = s.newApprovalFeed(h.who, h.key, h.sender.kick) // approval requests this principal may decide (approval.go)
	defer func() {
		cancel() // a worker waiting for room in a queue gives up
		h.handling.stop()
		h.sender.stop() // no send after the handler returns
		h.detachAll()
		h.approvals.close()
		h.opening.close()
	}()
	h.sender.kick() // the sender's first turn delivers the requests pending now
	readDone := make(chan error, 1)
	// The reader ends when Recv fails: the client closed its side, or the stream ended (which it does once
	// this handler returns, so the goroutine never outlives the stream).
	go func() {
		defer logPanic(s.logger, "connect reader")
		readDone <- h.read()
	}()
	select {
	case err := <-h.failed:
		return err
	case err := <-readDone:
		if errors.Is(err, io.EOF) {
			return nil
		}
		return err
	case <-ctx.Done():
		return status.FromContextError(ctx.Err()).Err()
	case <-s.streamsEnd:
		return statusShuttingDown()
	}
}

// onDemand runs work on a goroutine of its own while there is any: kick says there is (more), and starts
// the goroutine if none runs; the goroutine calls work until a call finds nothing new since the last, then
// ends. work returning false stops it for good. stop keeps it from starting again and waits for it.
type onDemand struct {
	work   func() bool
	logger *slog.Logger

	mu      sync.Mutex // a leaf: kick is a feed's notify, called while a session or the dispatcher publishes
	dirty   bool       // kicked since the goroutine last looked
	running bool
	stopped bool
	wg      sync.WaitGroup
}

func (d *onDemand) kick() {
	d.mu.Lock()
	d.dirty = true
	start := !d.running && !d.stopped
	if start {
		d.running = true
		d.wg.Add(1)
	}
	d.mu.Unlock()
	if start {
		go d.run()
	}
}

func (d *onDemand) run() {
	defer d.wg.Done()
	defer logPanic(d.logger, "connect worker")
	for {
		d.mu.Lock()
		if !d.dirty || d.stopped {
			d.running = false
			d.mu.Unlock()
			return
		}
		d.dirty = false
		d.mu.Unlock()
		if !d.work() {
			d.mu.Lock()
			d.stopped, d.running = true, false
			d.mu.Unlock()
			return
		}
	}
}

func (d *onDemand) stop() {
	d.mu.Lock()
	d.stopped = true
	d.mu.Unlock()
	d.wg.Wait()
}

// read receives the host's messages into the inbox until Recv fails.
func (h *hostStream) read() error {
	for {
		req, err := h.stream.Recv()
		if err != nil {
			return err
		}
		if !put(h, &h.inbox, h.inRoom, req) {
			return status.FromContextError(h.ctx.Err()).Err()
		}
		h.handling.kick()
	}
}

// put appends v to q (guarded by qmu), waiting while q is full for room (signalled by the worker that
// takes from it); false when the stream has ended.
func put[T any](h *hostStream, q *[]T, room chan struct{}, v ...T) bool {
	for {
		h.qmu.Lock()
		if len(*q) < h.limit {
			*q = append(*q, v...)
			h.qmu.Unlock()
			return true
		}
		h.qmu.Unlock()
		select {
		case <-room:
		case <-h.ctx.Done():
			return false
		}
	}
}

// takeAll empties q (guarded by qmu) and signals room if it was full.
func takeAll[T any](h *hostStream, q *[]T, room chan struct{}) []T {
	h.qmu.Lock()
	got := *q
	*q = nil
	h.qmu.Unlock()
	if len(got) >= h.limit {
		select {
		case room <- struct{}{}:
		default:
		}
	}
	return got
}

// handleTurn is one turn of the handling worker: the host's messages received since the last, in order.
func (h *hostStream) handleTurn() bool {
	for _, req := range takeAll(h, &h.inbox, h.inRoom) {
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
	return true
}

// send queues entries for the sender, in order; false when the stream has ended.
func (h *hostStream) send(entries ...outbound) bool {
	if !put(h, &h.queue, h.outRoom, entries...) {
		return false
	}
	h.sender.kick()
	return true
}

func (h *hostStream) sendMsg(m *pb.ConnectResponse) bool { return h.send(outbound{msg: m}) }

// sendTurn is one turn of the sender: on the first, the opening and approval requests pending at the start;
// then the queue in order; then what the feeds have. A failed send ends the stream.
func (h *hostStream) sendTurn() bool {
	if err := h.sendAll(); err != nil {
		select {
		case h.failed <- err:
		default:
		}
		return false
	}
	return true
}

func (h *hostStream) sendAll() error {
	h.qmu.Lock()
	first, ready := !h.replayed, h.ready
	h.replayed, h.ready = true, nil
	h.qmu.Unlock()
	if first {
		for _, ev := range append(h.opening.replay(), h.approvals.replay()...) {
			if err := h.sendEvent(ev); err != nil {
				return err
			}
		}
	}
	for _, o := range takeAll(h, &h.queue, h.outRoom) {
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
		evs, gap := f.watch.Take(nil)
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

// attach attaches sessions and acknowledges with the stream's sessions; the sender then delivers each new
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
		sess, release, err := h.svc.use(ctx, id)
		if err != nil {
			failures = append(failures, &pb.AttachFailure{SessionId: id, Status: status.Convert(err).Proto()})
			continue
		}
		detachHost := h.svc.attachHost(sess)
		a := &attachment{release: func() { detachHost(); release() }}
		a.feed = h.svc.newEventFeed(h.owner, id, sess, h.key, func() { h.flag(a) })
		h.attached[id] = a
		started = append(started, outbound{start: a})
	}
	ack := &pb.AttachedSessions{SessionIds: h.idsLocked(), Failures: failures}
	h.mu.Unlock()
	h.send(append([]outbound{{msg: &pb.ConnectResponse{Message: &pb.ConnectResponse_Attached{Attached: ack}}}}, started...)...)
}

// flag puts a in the sender's ready list once, and wakes the sender. It is a subscription's notify: it runs
// while the session publishes, so it only takes the leaf lock.
func (h *hostStream) flag(a *attachment) {
	if !a.flagged.CompareAndSwap(false, true) {
		return
	}
	h.qmu.Lock()
	h.ready = append(h.ready, a)
	h.qmu.Unlock()
	h.sender.kick()
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
		a.end() // marks it detached first: the sender delivers nothing more of it
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
