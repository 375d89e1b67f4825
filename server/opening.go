package server

// Authorization requests of sessions still being created. An upstream server that needs OAuth makes
// CreateSession wait for a person (docs/adr/0005-upstream-oauth.md); the authorization request it raises
// belongs to a session no host can attach to yet. The service delivers such requests, and their ends, to
// every Connect stream of the owner and to WatchEvents on session "-", so that hosts need not poll
// ListPendingRequests on "-" (which keeps working). They come from the dispatcher's one feed of requests
// (mcpcore.Dispatcher.Watch), like every other receiver's.

import (
	"google.golang.org/grpc"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// openingBuffer bounds the opening events queued for one receiver; a receiver that falls behind re-reads
// the pending requests (the watch's Gap). Every Connect stream holds one, and an opening event (an
// authorization waiting for a person) is rare, so it is small.
const openingBuffer = 8

// openingRequests lists owner's authorization requests of sessions not open yet.
func (ha *hostAPI) openingRequests(owner string) []*mcpcore.PendingRequest {
	s := ha.s
	var out []*mcpcore.PendingRequest
	for _, pr := range s.core.Dispatcher().List(owner, "") {
		if s.isOpening(pr) {
			out = append(out, pr)
		}
	}
	return out
}

// isOpening reports whether pr is an authorization request of a session being created. Requests of open
// sessions (step-up) are delivered by the session's own event stream.
func (ha *hostAPI) isOpening(pr *mcpcore.PendingRequest) bool {
	s := ha.s
	if pr.Kind != mcpcore.KindAuthorization {
		return false
	}
	_, err := s.core.Session(pr.SessionID)
	return err != nil
}

// newOpeningFeed is the feed of the opening requests (authorization requests of sessions being created) of
// one owner, for one receiver (key as in outcomeFor); with notify, its watch is a pull one (watchRequests).
func (ha *hostAPI) newOpeningFeed(owner, key string, notify func()) *watchedFeed {
	s := ha.s
	watch := watchRequests(s.core.Dispatcher(), func(pr *mcpcore.PendingRequest) bool {
		return pr.Owner == owner && pr.Kind == mcpcore.KindAuthorization
	}, openingBuffer, notify)
	return &watchedFeed{
		requestFeed: requestFeed{svc: s, what: "opening requests", outcome: outcomeFor(key), seen: map[string]bool{},
			pending: func() []*mcpcore.PendingRequest { return s.openingRequests(owner) }},
		watch: watch,
		show:  func(pr *mcpcore.PendingRequest) bool { return s.isOpening(pr) }, // an open session's: its own stream
	}
}

// watchOpeningEvents is WatchEvents on session "-": the caller's authorization requests of sessions being
// created (those pending first, unless include_pending is false) and their ends, until the client goes
// away or shutdown.
func (ha *hostAPI) watchOpeningEvents(req *pb.WatchEventsRequest, stream grpc.ServerStreamingServer[pb.WatchEventsResponse]) error {
	s := ha.s
	feed := s.newOpeningFeed(Principal(stream.Context()), "", nil)
	defer feed.close()
	return s.serveFeed(feed, req, stream)
}

// watchedFeed is a requestFeed read from a dispatcher watch rather than a session's event log: the opening
// requests of sessions being created, and the approval requests an approver may decide.
type watchedFeed struct {
	requestFeed
	watch *mcpcore.Subscription
	// show, when set, says whether a newly raised request of the watch is for this receiver.
	show func(*mcpcore.PendingRequest) bool
}

func (f *watchedFeed) close() { f.watch.Close() }

// watchRequests starts a dispatcher watch: a channel one for a receiver that selects on it (WatchEvents), or
// with notify a pull one for a Connect stream, whose sender takes from all its feeds when told to.
func watchRequests(d *mcpcore.Dispatcher, match mcpcore.RequestFilter, buf int, notify func()) *mcpcore.Subscription {
	if notify != nil {
		return d.WatchNotify(match, buf, notify)
	}
	return d.Watch(match, buf)
}

// next converts an event of the watch; ok is false for events this receiver skips: requests show refuses,
// and ends of requests it never delivered.
func (f *watchedFeed) next(ev *mcpcore.Event) (*pb.Event, bool) {
	switch ev.Kind {
	case mcpcore.EventRequestCreated:
		if f.show != nil && !f.show(ev.Request) {
			return nil, false
		}
	case mcpcore.EventRequestEnded:
		if !f.seen[ev.Ended.RequestID] {
			return nil, false
		}
	}
	return f.convert(*ev)
}

// resync returns what a full watch buffer lost: the pending requests not delivered, and the ends of those
// delivered that ended meanwhile.
func (f *watchedFeed) resync() []*pb.Event { return f.undeliveredAndEnded() }

// watchFeed is what one WatchEvents stream serves: a session's events (eventFeed) or a dispatcher watch
// (watchedFeed: opening requests, approvals). serveFeed is the one loop that serves either.
type watchFeed interface {
	startWatch(req *pb.WatchEventsRequest, stream grpc.ServerStreamingServer[pb.WatchEventsResponse]) error
	subscription() *mcpcore.Subscription
	// resync returns what a full buffer lost.
	resync() []*pb.Event
	// event converts one event; ok is false for one this stream skips, and an error ends the stream.
	event(ev *mcpcore.Event) (pe *pb.Event, ok bool, err error)
}

func (f *watchedFeed) subscription() *mcpcore.Subscription { return f.watch }

func (f *watchedFeed) event(ev *mcpcore.Event) (*pb.Event, bool, error) {
	pe, ok := f.next(ev)
	return pe, ok, nil
}

// serveFeed is WatchEvents on a feed: its pending requests first (unless include_pending is false), then its
// events, until the client goes away, the subscription ends (a session's, after its final state event) or
// the bridge shuts down.
func (ha *hostAPI) serveFeed(feed watchFeed, req *pb.WatchEventsRequest, stream grpc.ServerStreamingServer[pb.WatchEventsResponse]) error {
	s := ha.s
	ctx := stream.Context()
	if err := feed.startWatch(req, stream); err != nil {
		return err
	}
	sub := feed.subscription()
	send := func(pe *pb.Event) error { return stream.Send(&pb.WatchEventsResponse{Event: pe}) }
	for {
		select {
		case <-ctx.Done():
			return contextStatus(ctx)
		case <-s.streamsEnd:
			return statusShuttingDown()
		case <-sub.Gap():
			for _, pe := range feed.resync() {
				if err := send(pe); err != nil {
					return err
				}
			}
		case ev, ok := <-sub.C():
			if !ok {
				return nil
			}
			pe, ok, err := feed.event(ev)
			if err != nil {
				return err
			}
			if ok {
				if err := send(pe); err != nil {
					return err
				}
			}
		}
	}
}
