package mcpcore

// This file is the dispatcher's one feed of pending requests. The dispatcher publishes each request event
// — a request created, a request ended — once (Dispatcher.publish), and every receiver reads it from there
// through the one Subscription type (events.go); receivers differ only by what they select:
//
//   - a session's subscribers (a host's Connect attachment, WatchEvents, the console's watch of a session)
//     receive the requests of that session in the session's own numbered stream (Session.Subscribe), which
//     the publish reaches through the session's log (sessionLookup);
//   - a streaming tool call receives the requests of its call (Dispatcher.WatchCall);
//   - an approver receives the approval requests it may decide (ApprovalFilter), and a Connect stream or
//     WatchEvents on "-" the authorization requests of its owner's sessions being created (Dispatcher.Watch
//     with a filter).
//
// The dispatcher is the one owner of a request, its outcome and who answered it; one Event value is
// published for each, and every receiver shares it.

// RequestFilter selects the requests a feed subscription receives; it is called with the feed's lock held,
// once per event, and must not block or call back into the dispatcher.
type RequestFilter func(*PendingRequest) bool

// sessionLookup finds what the dispatcher keeps on a session the core serves, in the core's one registry of
// sessions (registry.go): nil when it serves none — a session closed, or a test without sessions. Core
// implements it (core.go).
//
//   - sessionLog is the session's event log: a request event of the session goes into it too, numbered in the
//     session's stream;
//   - sessionPending is the session's count of pending requests (Limits.MaxPendingPerSession).
type sessionLookup interface {
	sessionLog(sessionID string) *eventLog
	sessionPending(sessionID string) *pendingCount
}

// pendingCount is one session's count of pending requests in the dispatcher, kept on the Session
// (Session.pending) so that it goes with it. Guarded by Dispatcher.mu.
type pendingCount struct{ n int }

// pendingOf is the pending-request count of session sessionID, or nil when the dispatcher serves no such
// session (its own tests): such requests are not bounded per session. Called without d.mu.
func (d *Dispatcher) pendingOf(sessionID string) *pendingCount {
	if d.logs == nil {
		return nil
	}
	return d.logs.sessionPending(sessionID)
}

// newFeed returns the dispatcher's feed of requests.
func newFeed() eventLog { return eventLog{buf: 1, feed: true} }

// Watch starts a subscription to the dispatcher's feed: the request events that match (nil: every request),
// EventRequestCreated (Request set) once a request is visible to List, Get and Respond, and
// EventRequestEnded (Ended set, and Request — the request that ended) once it has ended, in that order for
// each request. A receiver of the feed ignores Seq: an event is numbered only when its session has a stream
// (the Seq is that stream's), and the feed's receivers are not placed in any.
//
// buf (at least 1) bounds the channel; an event that does not fit is dropped and counted, and Gap is
// signalled, so that the receiver re-reads what it may have missed (Dispatcher.List for requests still
// pending, Dispatcher.Ended for those that ended). The caller must Close it.
func (d *Dispatcher) Watch(match RequestFilter, buf int) *Subscription {
	return d.feed.add(&Subscription{match: match}, max(buf, 1), nil)
}

// WatchNotify is Watch as a pull subscription (Subscription.Take): up to buf events (at least 1) queue
// without a buffer allocated up front, and notify is called whenever there is something to take. notify
// runs with the feed's lock held: it must not block or call into the dispatcher.
func (d *Dispatcher) WatchNotify(match RequestFilter, buf int, notify func()) *Subscription {
	return d.feed.add(&Subscription{match: match}, max(buf, 1), notify)
}

// WatchCall is Watch for a call that streams its requests to its caller (StreamCallTool): the requests of
// call callID in sessionID, and the session's requests that belong to no call (a push over stdio or SSE
// names no request of the client) while it runs; of the approval requests only the call's own. While it is
// open, a request the call raises is one a host could answer (callWatched).
func (d *Dispatcher) WatchCall(sessionID, callID string, buf int) *Subscription {
	match := func(pr *PendingRequest) bool {
		if pr.SessionID != sessionID {
			return false
		}
		if pr.Kind == KindApproval { // only its approvers see it as a request; the caller is told it waits
			return pr.OriginCallID == callID
		}
		return pr.OriginCallID == callID || pr.OriginCallID == ""
	}
	return d.feed.add(&Subscription{match: match, watchSession: sessionID, watchCall: callID}, max(buf, 1), nil)
}

// callWatched reports whether a call streams the requests of call origin in sessionID to its caller: that
// call's WatchCall is open or, for a request of the session (origin ""), any call's of the session.
func (d *Dispatcher) callWatched(sessionID, origin string) bool {
	d.feed.mu.Lock()
	defer d.feed.mu.Unlock()
	for _, s := range d.feed.subs {
		if s.watchCall != "" && s.watchSession == sessionID && (origin == "" || s.watchCall == origin) {
			return true
		}
	}
	return false
}

// publish is the one publish of a request event: ev, about req, goes to the subscribers of req's session
// (numbered in its stream; an approval request is not its session's — only its approvers see it) and to
// the feed's subscriptions that select req, as one Event value. The caller holds the request's pubMu (so one
// request's Created precedes its Ended for every receiver) and not d.mu.
func (d *Dispatcher) publish(req *PendingRequest, ev Event) {
	ev.Request = req
	var shared *Event
	if req.Kind != KindApproval && d.logs != nil {
		if l := d.logs.sessionLog(req.SessionID); l != nil {
			shared = l.publish(ev) // numbered and stamped; nil when the log has closed
		}
	}
	if shared == nil {
		ev.SessionID, ev.Time = req.SessionID, d.now()
		shared = &ev
	}
	d.feed.mu.Lock()
	d.feed.deliverLocked(shared)
	d.feed.mu.Unlock()
}
