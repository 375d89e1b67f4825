package server

// Authorization requests of sessions still being created. An upstream server that needs OAuth makes
// CreateSession wait for a person (docs/adr/0005-upstream-oauth.md); the authorization request it raises
// belongs to a session no host can attach to yet. The service delivers such requests, and their ends, to
// every Connect stream of the owner and to WatchEvents on session "-", so that hosts need not poll
// ListPendingRequests on "-" (which keeps working).
//
// The core tells of these requests through its hook mcpcore.OAuthOptions.OnAuthorization, which the binary
// points at AnnounceAuthorization (the core is built before the service, so cmd/mcp-bridge sets the hook to
// forward to the service once New has returned). A core whose hook is not wired still lists the requests
// in ListPendingRequests on "-"; they are just not pushed.

import (
	"context"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// openingBuffer bounds the opening events queued for one receiver; a receiver that falls behind loses
// them (the requests stay listed by ListPendingRequests on "-"). Every Connect stream holds one, and an
// opening event (an authorization waiting for a person) is rare, so it is small: 8 events of ~200 bytes.
const openingBuffer = 8

// openingSub is one receiver of an owner's opening events.
type openingSub struct {
	owner string
	ch    chan *mcpcore.Event // pointers: an idle receiver's buffer is 8 B a slot
}

// subscribeOpening registers a receiver of owner's opening events; the caller must unsubscribe it.
func (s *Service) subscribeOpening(owner string) *openingSub {
	sub := &openingSub{owner: owner, ch: make(chan *mcpcore.Event, openingBuffer)}
	s.openingMu.Lock()
	if s.openingSubs == nil {
		s.openingSubs = map[*openingSub]struct{}{}
	}
	s.openingSubs[sub] = struct{}{}
	s.openingMu.Unlock()
	return sub
}

func (s *Service) unsubscribeOpening(sub *openingSub) {
	s.openingMu.Lock()
	delete(s.openingSubs, sub)
	s.openingMu.Unlock()
}

// publishOpening hands ev to every receiver of owner without blocking.
func (s *Service) publishOpening(owner string, ev mcpcore.Event) {
	s.openingMu.Lock()
	defer s.openingMu.Unlock()
	shared := &ev // every receiver reads the same event and none modifies it
	for sub := range s.openingSubs {
		if sub.owner != owner {
			continue
		}
		select {
		case sub.ch <- shared:
		default:
			s.logger.Warn("opening event dropped: the receiver is behind", "principal", owner)
		}
	}
}

// openingRequests lists owner's authorization requests of sessions not open yet.
func (s *Service) openingRequests(owner string) []*mcpcore.PendingRequest {
	var out []*mcpcore.PendingRequest
	for _, pr := range s.core.Dispatcher().List(owner, "") {
		if pr.Kind != mcpcore.KindAuthorization {
			continue
		}
		if _, err := s.core.Session(pr.SessionID); err == nil {
			continue // an open session's (step-up): delivered by its own event stream
		}
		out = append(out, pr)
	}
	return out
}

// AnnounceAuthorization delivers pr, an authorization request of a session being created, to every Connect
// stream of its owner and to WatchEvents on session "-", once, and then its end. Point the core's
// mcpcore.OAuthOptions.OnAuthorization at it. Requests of open sessions (step-up) are left to the
// session's own event stream, and other kinds are ignored. It does not block and is safe for concurrent
// use, also during and after Close (requests announced after Close are not pushed).
func (s *Service) AnnounceAuthorization(pr *mcpcore.PendingRequest) {
	if pr == nil || pr.Kind != mcpcore.KindAuthorization {
		return
	}
	if _, err := s.core.Session(pr.SessionID); err == nil {
		return // an open session's (step-up): delivered by its own event stream
	}
	s.announceOpening(pr)
}

// announceOpening publishes pr unless it was already, and its end once it ends.
func (s *Service) announceOpening(pr *mcpcore.PendingRequest) {
	s.openingMu.Lock()
	if s.openingSeen == nil {
		s.openingSeen = map[string]bool{}
	}
	if s.openingClosed || s.openingSeen[pr.ID] {
		s.openingMu.Unlock()
		return
	}
	s.openingSeen[pr.ID] = true
	s.openingWG.Add(1)
	s.openingMu.Unlock()
	s.publishOpening(pr.Owner, mcpcore.Event{SessionID: pr.SessionID, Time: time.Now(), Kind: mcpcore.EventRequestCreated, Request: pr})
	// Every request ends: answered, cancelled, at its deadline, when the opening is abandoned, or when the
	// core closes, so this goroutine does too.
	go func() {
		defer s.openingWG.Done()
		defer logPanic(s.logger, "opening request watcher")
		ended, err := s.core.Dispatcher().Wait(context.Background(), pr.ID)
		s.openingMu.Lock()
		delete(s.openingSeen, pr.ID)
		s.openingMu.Unlock()
		if err != nil {
			return
		}
		s.publishOpening(pr.Owner, mcpcore.Event{SessionID: pr.SessionID, Time: time.Now(), Kind: mcpcore.EventRequestEnded, Ended: &ended})
	}()
}

// openingFeed is the requestFeed of the opening requests (authorization requests of sessions being
// created) of one owner, for one receiver (key as in outcomeFor).
type openingFeed struct {
	requestFeed
	sub *openingSub
}

func (s *Service) newOpeningFeed(owner, key string) *openingFeed {
	sub := s.subscribeOpening(owner)
	return &openingFeed{
		requestFeed: requestFeed{svc: s, what: "opening requests", outcome: s.outcomeFor(key), seen: map[string]bool{},
			pending: func() []*mcpcore.PendingRequest { return s.openingRequests(owner) }},
		sub: sub,
	}
}

func (f *openingFeed) close() { f.svc.unsubscribeOpening(f.sub) }

// watchOpeningEvents is WatchEvents on session "-": the caller's authorization requests of sessions being
// created (those pending first, unless include_pending is false) and their ends, until the client goes
// away or shutdown.
func (s *Service) watchOpeningEvents(req *pb.WatchEventsRequest, stream grpc.ServerStreamingServer[pb.WatchEventsResponse]) error {
	ctx := stream.Context()
	feed := s.newOpeningFeed(Principal(ctx), "")
	defer feed.close()
	if err := feed.startWatch(req, stream); err != nil {
		return err
	}
	for {
		select {
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		case <-s.streamsEnd:
			return statusShuttingDown()
		case ev := <-feed.sub.ch:
			if pe, ok := feed.convert(*ev); ok {
				if err := stream.Send(&pb.WatchEventsResponse{Event: pe}); err != nil {
					return err
				}
			}
		}
	}
}
