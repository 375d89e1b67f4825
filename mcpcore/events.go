package mcpcore

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// eventLog is one session's ordered stream of events, fanned out to any number of subscriptions.
//
// publish never blocks: each subscription has a bounded channel, and an event that does not fit is dropped
// for that subscription only and counted. Once the subscription has room again, the next delivery to it is
// first an EventDropped carrying the count, then the newer event — so every subscriber sees events in
// publish order, and every gap in Seq it sees was announced by an EventDropped.
//
// The notice is delivered at the next publish (or at close) after room frees up: a channel cannot tell the
// sender when its reader has caught up, and a goroutine per subscription to find out is not worth it.
// Subscription.Dropped is always current.
//
// The dispatcher's feed of requests (watch.go) is an eventLog too, with feed set: its events carry no Seq
// (they belong to no session's stream), its subscriptions select requests by their filter, and a drop is
// told by the gap signal alone. So every receiver of events holds the one Subscription type.
//
// An eventLog starts no goroutines.
type eventLog struct {
	sessionID string
	buf       int  // default subscription buffer
	feed      bool // the dispatcher's feed of requests: unnumbered, filtered, no drop notices

	// mu guards seq, subs, closed, and the delivery state of every subscription in subs (unreported,
	// lastDropped, closed). publish holds it while it numbers the event and hands it to every
	// subscription with a non-blocking send: that is what makes each subscriber's order the publish order
	// and lets Subscription.Close close the channel without racing a send. Nothing blocks while it is
	// held.
	mu     sync.Mutex
	seq    uint64
	subs   []*Subscription
	closed bool

	obs Observer // told of each event a subscription dropped (EventDropped); set at creation, nil for the feed
}

// newEventLog returns the event log of a session. limits.EventBuffer is the default subscription buffer
// (DefaultEventBuffer when zero).
func newEventLog(sessionID string, limits Limits) *eventLog {
	buf := limits.EventBuffer
	if buf <= 0 {
		buf = DefaultEventBuffer
	}
	return &eventLog{sessionID: sessionID, buf: buf}
}

// publish numbers ev (Seq: 1, 2, 3, … per session), stamps its Time and SessionID, and delivers it to every
// subscription without blocking. It is safe for concurrent use; concurrent publishers are ordered by
// whoever takes the lock first, so a caller that needs an order between two events publishes them from one
// goroutine. After close, publish does nothing.
// The rate of progress and log notifications a server may send in one session (wireTap.received): a burst
// of notificationBurst, then notificationRate a second. Beyond, they are dropped, counted
// (Stats.NotificationsDropped) and announced to the session's watchers by an EventDropped.
const (
	notificationRate  = 1000
	notificationBurst = 2000
)

func (l *eventLog) publish(ev Event) *Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.seq++
	ev.Seq = l.seq
	ev.SessionID = l.sessionID
	ev.Time = time.Now()
	shared := &ev // one copy for every subscriber, which only reads it
	l.deliverLocked(shared)
	return shared
}

// deliverLocked hands ev to every subscription whose filter admits it. The caller holds l.mu.
func (l *eventLog) deliverLocked(ev *Event) {
	for _, s := range l.subs {
		if s.match != nil && (ev.Request == nil || !s.match(ev.Request)) {
			continue
		}
		s.deliverLocked(ev)
	}
}

// subscribe adds a subscription that receives every event published from now on. buf is its channel
// capacity; zero or less means the log's default. On a closed log the subscription's channel is already
// closed.
func (l *eventLog) subscribe(buf int) *Subscription { return l.add(&Subscription{}, buf, nil) }

// subscribeNotify adds a pull subscription (see Subscription.Take): it queues at most buf events (zero or
// less: the log's default), taking memory for them only as they come, so an idle one costs a few words; and
// it calls notify whenever it has something new to take — events, a drop, or its end. notify runs with the
// log's lock held: it must not block, and must not call into the session.
func (l *eventLog) subscribeNotify(buf int, notify func()) *Subscription {
	return l.add(&Subscription{}, buf, notify)
}

// add completes s, whose filter (if any) is set, as a channel subscription or, with notify, a pull one,
// and adds it to the log.
func (l *eventLog) add(s *Subscription, buf int, notify func()) *Subscription {
	if buf <= 0 {
		buf = l.buf
	}
	s.log = l
	if notify != nil {
		s.notify, s.limit = notify, buf
	} else {
		s.ch, s.gap = make(chan *Event, buf), make(chan struct{}, 1)
	}
	l.mu.Lock()
	s.start = l.seq
	if l.closed {
		s.closed = true
		if s.ch != nil {
			close(s.ch)
		}
	} else {
		l.subs = append(l.subs, s)
	}
	l.mu.Unlock()
	return s
}

// close ends the log: a subscription that still owes a drop notice gets it if it has room, then every
// subscription's channel is closed (a pull subscription ends), after any events already in it. Publish after close does nothing; the
// caller publishes the session's final state event before closing. close is idempotent.
func (l *eventLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	l.closed = true
	now := time.Now()
	for _, s := range l.subs {
		s.closed = true
		if s.notify != nil {
			if s.unreported > 0 && len(s.q) < s.limit {
				s.q = append(s.q, s.dropNotice(now))
				s.unreported = 0
			}
			s.notify()
			continue
		}
		if s.unreported > 0 {
			select {
			case s.ch <- s.dropNotice(now):
				s.unreported = 0
			default:
			}
		}
		close(s.ch)
	}
	l.subs = nil
}

// Subscription receives events in order: a session's (Session.Subscribe, or a pull subscription from
// Session.SubscribeNotify), or the requests the dispatcher's feed selects for it (Dispatcher.Watch,
// WatchNotify, WatchCall, watch.go). It is the one subscription type of every receiver.
//
// Receive from C until it is closed — when the session's event log closes or Close is called. A subscriber
// that stops receiving does not slow the session: it loses events (counted by Dropped, announced by an
// EventDropped once it catches up). A subscription abandoned without Close holds its buffer until the
// session closes.
//
// A pull subscription has no channel: its reader is told by a callback that there is something to take, and
// takes it with Take. One goroutine can so serve any number of subscriptions (a host stream attached to many
// sessions) without a goroutine or an allocated buffer per subscription.
type Subscription struct {
	log   *eventLog
	ch    chan *Event   // a slot is a pointer: an idle buffer costs 8 B a slot, not an Event's 200; nil when pulled
	gap   chan struct{} // signalled (without blocking) when an event is dropped; see Gap; nil when pulled
	start uint64        // Seq of the last event published before the subscription; set once

	notify func() // a pull subscription's callback (subscribeNotify); nil for a channel one
	limit  int    // a pull subscription's bound on q

	// A subscription of the dispatcher's feed selects requests: match (nil: every request), and for a
	// streaming call's (Dispatcher.WatchCall) the session and call it watches, which the dispatcher asks
	// (callWatched) when it decides whether a host could answer a request. Set once, before it is added.
	match        RequestFilter
	watchSession string
	watchCall    string

	// Guarded by log.mu.
	unreported  uint64 // drops not yet announced by an EventDropped
	lastDropped uint64 // Seq of the newest dropped event
	closed      bool
	q           []*Event // a pull subscription's events not yet taken
	gapPending  bool     // a pull subscription dropped events since the last Take

	dropped atomic.Uint64 // all drops so far; read by Dropped without the lock
}

// C returns the channel of events (nil for a pull subscription). It is closed when the subscription ends. An event is shared by every
// subscription of the session: read it, never modify it.
func (s *Subscription) C() <-chan *Event { return s.ch }

// Gap receives a value soon after this subscription drops an event, without waiting for the next publish
// (which is when the EventDropped notice goes out, and which may never come: a session whose server waits
// for a host's answer publishes nothing). A subscriber that must not miss state — a pending request whose
// EventRequestCreated was lost — re-reads it from its source (Dispatcher.List) when Gap fires. Several drops
// may coalesce into one value. The channel is never closed. A pull subscription has none: Take reports gaps.
func (s *Subscription) Gap() <-chan struct{} { return s.gap }

// Start returns the Seq of the last event the session published before this subscription began (0 when
// there was none): every event the subscription receives has a larger Seq. A subscriber that shows state
// read after subscribing (Dispatcher.List) as events places it at this position of the stream.
func (s *Subscription) Start() uint64 { return s.start }

// Dropped reports how many events this subscription has lost because its buffer was full.
func (s *Subscription) Dropped() uint64 { return s.dropped.Load() }

// Take returns a pull subscription's queued events, appended to dst, in order; whether it dropped events
// since the last Take (what Gap says of a channel subscription: re-read what must not be missed); and
// whether it has ended (its session's log closed, or Close was called) — nothing will follow what it
// returned. It is safe to call concurrently with publishing; one reader calls it.
func (s *Subscription) Take(dst []*Event) (evs []*Event, gap, ended bool) {
	l := s.log
	l.mu.Lock()
	if len(dst) == 0 {
		dst = s.q // handed over: an idle subscription holds no queue
	} else {
		dst = append(dst, s.q...)
	}
	s.q = nil
	gap, s.gapPending = s.gapPending, false
	ended = s.closed
	l.mu.Unlock()
	return dst, gap, ended
}

// Close ends the subscription: no further events are delivered and C is closed (events already buffered
// stay readable; a pull subscription's are dropped). It is idempotent and safe to call concurrently with publish and with the log's close.
func (s *Subscription) Close() {
	if s == nil || s.log == nil {
		return
	}
	l := s.log
	l.mu.Lock()
	defer l.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	if i := slices.Index(l.subs, s); i >= 0 {
		l.subs = slices.Delete(l.subs, i, i+1)
	}
	if s.notify != nil {
		s.q = nil
		return
	}
	close(s.ch)
}

// deliverLocked hands ev to the subscription without blocking: first an owed drop notice, then ev; what does
// not fit is dropped and counted. The caller holds s.log.mu.
func (s *Subscription) deliverLocked(ev *Event) {
	if s.notify != nil {
		s.queueLocked(ev)
		return
	}
	if s.unreported > 0 {
		select {
		case s.ch <- s.dropNotice(ev.Time):
			s.unreported = 0
		default:
			s.dropLocked(ev.Seq)
			return
		}
	}
	select {
	case s.ch <- ev:
	default:
		s.dropLocked(ev.Seq)
	}
}

// queueLocked is deliverLocked for a pull subscription: the same order and drop rules, into q, then notify.
func (s *Subscription) queueLocked(ev *Event) {
	defer s.notify()
	if s.unreported > 0 {
		if len(s.q) >= s.limit {
			s.dropLocked(ev.Seq)
			return
		}
		s.q = append(s.q, s.dropNotice(ev.Time))
		s.unreported = 0
	}
	if len(s.q) >= s.limit {
		s.dropLocked(ev.Seq)
		return
	}
	s.q = append(s.q, ev)
}

// dropNotice is the EventDropped owed to this subscription. Its Seq is that of the newest event it lost, so
// a subscriber's Seqs never go backwards and the gap before the notice equals Dropped.
func (s *Subscription) dropNotice(now time.Time) *Event {
	return &Event{Seq: s.lastDropped, SessionID: s.log.sessionID, Time: now, Kind: EventDropped, Dropped: s.unreported}
}

func (s *Subscription) dropLocked(seq uint64) {
	s.unreported++
	s.lastDropped = seq
	s.dropped.Add(1)
	if s.log.feed { // the feed's events carry no Seq to announce: the gap signal alone tells the receiver
		s.unreported, s.lastDropped = 0, 0
	} else if o := s.log.obs; o != nil {
		o.EventDropped()
	}
	if s.gap == nil { // a pull subscription: Take reports it
		s.gapPending = true
		return
	}
	select {
	case s.gap <- struct{}{}:
	default: // already signalled and not yet received
	}
}

// sessionEvents is a session's event log and the subscriptions hosts take to it. Session embeds it, so
// Subscribe and SubscribeNotify are the session's methods and s.events its log.
type sessionEvents struct {
	s      *Session
	events *eventLog
}

// Subscribe returns a subscription to the session's events from now on, with a buffer of buf events (0:
// Limits.EventBuffer). The caller must Close it; it is closed by the session after the final state event.
func (e *sessionEvents) Subscribe(buf int) *Subscription {
	s := e.s
	if buf <= 0 {
		buf = s.core.limits.EventBuffer
	}
	return s.events.subscribe(buf)
}

// SubscribeNotify returns a pull subscription to the session's events (Subscription.Take): it queues up to
// buf events (zero or less: the configured EventBuffer) without allocating a buffer up front, and calls
// notify whenever there is something to take. notify must not block or call into the session: it runs while
// the session publishes.
func (e *sessionEvents) SubscribeNotify(buf int, notify func()) *Subscription {
	s := e.s
	if buf <= 0 {
		buf = s.core.limits.EventBuffer
	}
	return s.events.subscribeNotify(buf, notify)
}
