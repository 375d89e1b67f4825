package server

// The host side of the API: server requests delivered over Connect and WatchEvents, answered with
// HostReply or RespondToRequest.

import (
	"context"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// anySession is the session id that stands for every session of the caller, including sessions still being
// created (whose authorization requests are listed only this way).
const anySession = "-"

// hostAPI is how server requests reach hosts and their answers come back: the Connect stream (connect.go),
// WatchEvents and the opening requests (opening.go), ListPendingRequests and RespondToRequest, the cap on
// WatchEvents streams (stream.go). Service embeds it.
type hostAPI struct {
	s       *Service
	watches watchSlots // WatchEvents streams per principal (stream.go)
}

// ListPendingRequests lists the session's requests waiting for a host, oldest first.
func (ha *hostAPI) ListPendingRequests(ctx context.Context, req *pb.ListPendingRequestsRequest) (*pb.ListPendingRequestsResponse, error) {
	s := ha.s
	sessionID := ""
	if req.GetSessionId() != anySession && req.GetSessionId() != approvalsSession {
		sess, err := s.lookup(ctx, req.GetSessionId())
		if err != nil {
			return nil, err
		}
		sessionID = sess.ID()
	}
	list := s.core.Dispatcher().List(Principal(ctx), sessionID)
	if req.GetSessionId() == approvalsSession {
		list = s.core.Dispatcher().ListApprovals(identity(ctx)) // approval.go
	}
	out := &pb.ListPendingRequestsResponse{}
	for _, pr := range list {
		r, err := serverRequestToProto(pr)
		if err != nil {
			s.logger.Warn("pending request not shown", "request", pr.ID, "error", err)
			continue
		}
		out.Requests = append(out.Requests, r)
	}
	return out, nil
}

// RespondToRequest answers a pending request of one of the caller's sessions.
func (ha *hostAPI) RespondToRequest(ctx context.Context, req *pb.RespondToRequestRequest) (*pb.RespondToRequestResponse, error) {
	s := ha.s
	var vs []mcpcore.FieldViolation
	if req.GetSessionId() == "" {
		vs = append(vs, required("session_id"))
	}
	if req.GetRequestId() == "" {
		vs = append(vs, required("request_id"))
	}
	if req.GetAnswer() == nil {
		vs = append(vs, required("answer"))
	}
	if len(vs) > 0 {
		return nil, invalidArgument(vs...)
	}
	sessionID := ""
	if req.GetSessionId() != anySession && req.GetSessionId() != approvalsSession {
		sess, err := s.lookup(ctx, req.GetSessionId())
		if err != nil {
			return nil, err
		}
		sessionID = sess.ID()
	}
	if err := s.answer(ctx, sessionID, req.GetRequestId(), req.GetAnswer(), respondKey, "answer"); err != nil {
		return nil, err
	}
	return &pb.RespondToRequestResponse{}, nil
}

// answer converts and delivers a host's answer to request id of sessionID for the receiver key; path is
// where the answer sits in the host's message, for field violations. It returns a status error.
func (ha *hostAPI) answer(ctx context.Context, sessionID, id string, ans *pb.HostAnswer, key, path string) (err error) {
	s := ha.s
	who := identity(ctx) // the owner, or an approver of an approval request (approval.go)
	pr, err := s.core.Dispatcher().GetFor(who, id)
	if err != nil {
		return toStatus(err)
	}
	defer func() { s.auditAnswer(ctx, pr, id, ans, err) }()
	if pr.SessionID != sessionID && sessionID != "" {
		return toStatus(mcpcore.ErrRequestNotFound)
	}
	a, err := answerFromProto(ans)
	if err != nil {
		return toStatusPrefixed(err, path)
	}
	if err := s.respond(ctx, who, id, key, a); err != nil {
		return toStatusPrefixed(err, joinField(path, answerViolationPrefix(a)))
	}
	return nil
}

// respond delivers an answer on behalf of the receiver with key (see outcomeFor).
func (ha *hostAPI) respond(ctx context.Context, who mcpcore.Identity, id, key string, a mcpcore.Answer) error {
	return ha.s.core.Dispatcher().RespondFor(ctx, who, id, key, a)
}

// pendingEvent wraps a pending request listed (not published) for a receiver. seq is the receiver's
// position in the session's stream (eventFeed.pos): the replay stands at that position, and the receiver's
// next live event follows it by one unless events were dropped. Opening requests, which belong to no
// session's stream, have 0.
func pendingEvent(pr *mcpcore.PendingRequest, seq uint64) (*pb.Event, error) {
	r, err := serverRequestToProto(pr)
	if err != nil {
		return nil, err
	}
	return &pb.Event{Sequence: seq, SessionId: pr.SessionID, Time: timestamppb.Now(), Payload: &pb.Event_ServerRequest{ServerRequest: r}}, nil
}

// requestFeed turns core events into API events for one receiver: first the requests pending when it was
// made (replay), then the events in order, delivering each request once. A session's events (eventFeed) and
// the opening requests of sessions being created (openingFeed) share it; they differ in where the pending
// requests come from and in the subscription.
type requestFeed struct {
	svc     *Service
	what    string                           // for logs: "session <id>", or "opening requests"
	pending func() []*mcpcore.PendingRequest // the requests pending now, for this receiver
	// away, when set, lists the requests that ended while the bridge restarted (OutcomeBridgeRestarted):
	// the replay tells a receiver how requests it may have been shown before the restart ended.
	away    func() []mcpcore.RequestEnded
	outcome func(mcpcore.RequestEnded) pb.RequestOutcome
	seen    map[string]bool // requests delivered and not yet ended
	pos     uint64          // Seq of the last event converted, or where the subscription started (0 for opening)
}

// replay returns the pending requests as events, at the feed's position.
func (f *requestFeed) replay() []*pb.Event {
	var out []*pb.Event
	if f.away != nil {
		for _, ended := range f.away() {
			if pe, ok := f.convert(mcpcore.Event{Seq: f.pos, SessionID: ended.SessionID, Time: time.Now(), Kind: mcpcore.EventRequestEnded, Ended: &ended}); ok {
				out = append(out, pe)
			}
		}
	}
	return append(out, f.undelivered()...)
}

// undelivered returns, as events, the pending requests this receiver has not delivered, and forgets
// delivered requests that are no longer pending (their EventRequestEnded may have been lost).
func (f *requestFeed) undelivered() []*pb.Event {
	pending := f.pending()
	live := make(map[string]bool, len(pending))
	var out []*pb.Event
	for _, pr := range pending {
		live[pr.ID] = true
		if f.seen[pr.ID] {
			continue
		}
		ev, err := pendingEvent(pr, f.pos)
		if err != nil {
			f.svc.logger.Warn("pending request not delivered", "request", pr.ID, "error", err)
			continue
		}
		f.seen[pr.ID] = true
		out = append(out, ev)
	}
	for id := range f.seen {
		if !live[id] {
			delete(f.seen, id)
		}
	}
	return out
}

// undeliveredAndEnded is undelivered, preceded by the ends of delivered requests that ended meanwhile (the
// dispatcher remembers them): what a receiver whose feed dropped events has missed.
func (f *requestFeed) undeliveredAndEnded() []*pb.Event {
	var out []*pb.Event
	for id := range f.seen {
		ended, ok := f.svc.core.Dispatcher().Ended(id)
		if !ok {
			continue
		}
		if pe, ok := f.convert(mcpcore.Event{Seq: f.pos, SessionID: ended.SessionID, Time: time.Now(), Kind: mcpcore.EventRequestEnded, Ended: &ended}); ok {
			out = append(out, pe)
		}
	}
	return append(out, f.undelivered()...)
}

// convert turns a core event into an API event; ok is false for events this receiver must skip.
func (f *requestFeed) convert(ev mcpcore.Event) (*pb.Event, bool) {
	f.pos = ev.Seq
	switch ev.Kind {
	case mcpcore.EventRequestCreated:
		if ev.Request != nil {
			if f.seen[ev.Request.ID] {
				return nil, false
			}
			f.seen[ev.Request.ID] = true
		}
	case mcpcore.EventRequestEnded:
		if ev.Ended != nil {
			delete(f.seen, ev.Ended.RequestID)
		}
	}
	out, err := eventToProto(ev, f.outcome)
	if err != nil {
		f.svc.logger.Warn("event not delivered", "to", f.what, "seq", ev.Seq, "error", err)
		return nil, false
	}
	return out, true
}

// startWatch begins a WatchEvents stream: the response headers go out first (the first Send would send
// them too, and SendHeader after it fails the stream), then the replay unless include_pending is false.
func (f *requestFeed) startWatch(req *pb.WatchEventsRequest, stream grpc.ServerStreamingServer[pb.WatchEventsResponse]) error {
	if err := stream.SendHeader(nil); err != nil {
		return err
	}
	if req.IncludePending == nil || req.GetIncludePending() {
		for _, ev := range f.replay() {
			if err := stream.Send(&pb.WatchEventsResponse{Event: ev}); err != nil {
				return err
			}
		}
	}
	return nil
}

// eventFeed is the requestFeed of one session's subscription.
type eventFeed struct {
	requestFeed
	session string
	sub     *mcpcore.Subscription
}

// feedBuffer is the core-side buffer of a WatchEvents subscription. It is small on purpose: the watcher
// moves events straight on into the stream, so this only has to absorb scheduling jitter, and every watcher
// holds one (the core's default of 64 would cost ~200 KB per idle stream). A Connect attachment's pull
// subscription queues up to Options.StreamBuffer events instead, and takes memory for them only as they come.
const feedBuffer = 16

// newEventFeed subscribes first and lists second, so no request falls between the two. With notify, the
// subscription is a pull one (mcpcore.Session.SubscribeNotify) that calls notify when it has events.
func (ha *hostAPI) newEventFeed(owner, sessionID string, sess *mcpcore.Session, key string, notify func()) *eventFeed {
	s := ha.s
	var sub *mcpcore.Subscription
	if notify != nil {
		sub = sess.SubscribeNotify(s.opts.StreamBuffer, notify)
	} else {
		sub = sess.Subscribe(feedBuffer)
	}
	return &eventFeed{
		requestFeed: requestFeed{svc: s, what: "session " + sessionID, outcome: outcomeFor(key), seen: map[string]bool{}, pos: sub.Start(),
			pending: func() []*mcpcore.PendingRequest { return s.core.Dispatcher().List(owner, sessionID) },
			away:    func() []mcpcore.RequestEnded { return s.core.Dispatcher().EndedWhileAway(owner, sessionID) }},
		session: sessionID, sub: sub,
	}
}

// resync returns, as events, the session's pending requests this receiver has not delivered. The core
// signals a gap (Subscription.Gap) when the receiver's subscription dropped events; a lost
// EventRequestCreated would otherwise leave a request no host was told of, waiting for its deadline.
func (f *eventFeed) resync() []*pb.Event {
	out := f.undelivered()
	if len(out) > 0 {
		f.svc.logger.Info("events dropped for a slow receiver; pending requests delivered again", "session", f.session, "requests", len(out))
	}
	return out
}

// WatchEvents streams one session's events: its pending requests first (unless include_pending is false),
// then every event in order. The response headers go out before anything else, so a client sees the stream
// open even when there is nothing to send. It ends when the session closes (after its final state event), when the client
// goes away, or at shutdown (UNAVAILABLE). A watcher keeps the session from being closed as idle.
func (ha *hostAPI) WatchEvents(req *pb.WatchEventsRequest, stream grpc.ServerStreamingServer[pb.WatchEventsResponse]) error {
	s := ha.s
	ctx := stream.Context()
	release, err := s.watchSlot(ctx) // stream.go
	if err != nil {
		return toStatus(err)
	}
	defer release()
	if req.GetSessionId() == anySession {
		return s.watchOpeningEvents(req, stream)
	}
	if req.GetSessionId() == approvalsSession {
		return s.watchApprovalEvents(req, stream) // approval.go
	}
	sess, detach, err := s.attachHost(ctx, req.GetSessionId())
	if err != nil {
		return err
	}
	defer detach()
	feed := s.newEventFeed(Principal(ctx), sess.ID(), sess, "", nil)
	defer feed.sub.Close()
	return s.serveFeed(feed, req, stream)
}

func (f *eventFeed) subscription() *mcpcore.Subscription { return f.sub }

// event converts one of the session's events for WatchEvents: a session served by another replica now ends
// the stream (the host watches again through the proxy), and what the move hides is skipped.
func (f *eventFeed) event(ev *mcpcore.Event) (*pb.Event, bool, error) {
	if err := f.svc.movedError(*ev); err != nil {
		return nil, false, err
	}
	if f.svc.hiddenByMove(*ev) {
		return nil, false, nil
	}
	pe, ok := f.convert(*ev)
	return pe, ok, nil
}
