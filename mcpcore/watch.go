package mcpcore

import (
	"slices"
	"sync"
	"sync/atomic"
)

// This file is the dispatcher's one feed of pending requests. Every receiver of server requests — a host's
// Connect stream and WatchEvents (through the session's event log, which is itself fed from here), a
// streaming tool call (its own requests), the opening feed of authorization requests of sessions still being
// created — reads the requests, and how each ended, from here, and nowhere else: the dispatcher is the one
// owner of a request, its outcome and who answered it.

// RequestFilter selects the requests a RequestWatch receives; it is called with the dispatcher's locks
// released, once per event, and must not block or call back into the dispatcher.
type RequestFilter func(*PendingRequest) bool

// RequestWatch receives the dispatcher's request events that match its filter: EventRequestCreated (Request
// set) once a request is visible to List, Get and Respond, and EventRequestEnded (Ended set, and Request —
// the request that ended) once it has ended, in that order for each request. Events carry no Seq: they
// belong to no session's stream.
//
// A watch never slows the dispatcher down: its channel is bounded, and an event that does not fit is dropped
// and counted, and Gap is signalled, so that the receiver re-reads what it may have missed (Dispatcher.List
// for requests still pending, Dispatcher.Ended for those that ended).
//
// A pull watch (WatchNotify) has no channels: it tells its reader that there is something to take, and the
// reader takes it with Take — so one goroutine can serve several watches and subscriptions, and an idle one
// holds no buffer.
type RequestWatch struct {
	d      *Dispatcher
	match  RequestFilter
	ch     chan *Event   // nil for a pull watch
	gap    chan struct{} // nil for a pull watch
	notify func()        // a pull watch's callback
	limit  int           // a pull watch's bound on q

	// Guarded by d.watchMu.
	closed     bool
	q          []*Event // a pull watch's events not yet taken
	gapPending bool     // a pull watch dropped events since the last Take

	dropped atomic.Uint64
}

// Watch starts a watch of the requests that match (nil: every request) with a buffer of buf events (at
// least 1). The caller must Close it.
func (d *Dispatcher) Watch(match RequestFilter, buf int) *RequestWatch {
	w := &RequestWatch{d: d, match: match, ch: make(chan *Event, max(buf, 1)), gap: make(chan struct{}, 1)}
	d.watchMu.Lock()
	d.watches = append(d.watches, w)
	d.watchMu.Unlock()
	return w
}

// WatchNotify starts a pull watch of the requests that match (nil: every request): up to buf events (at least
// 1) queue without a buffer allocated up front, and notify is called whenever there is something to take
// (Take). notify runs with the dispatcher's watch lock held: it must not block or call into the dispatcher.
// The caller must Close the watch.
func (d *Dispatcher) WatchNotify(match RequestFilter, buf int, notify func()) *RequestWatch {
	w := &RequestWatch{d: d, match: match, notify: notify, limit: max(buf, 1)}
	d.watchMu.Lock()
	d.watches = append(d.watches, w)
	d.watchMu.Unlock()
	return w
}

// Take returns a pull watch's queued events, appended to dst, in order, and whether it dropped events since
// the last Take (what Gap says of a channel watch).
func (w *RequestWatch) Take(dst []*Event) (evs []*Event, gap bool) {
	d := w.d
	d.watchMu.Lock()
	dst = append(dst, w.q...)
	w.q = nil
	gap, w.gapPending = w.gapPending, false
	d.watchMu.Unlock()
	return dst, gap
}

// C returns the channel of events (nil for a pull watch); it is closed by Close. An event is shared by every watch: read it, never
// modify it.
func (w *RequestWatch) C() <-chan *Event { return w.ch }

// Gap receives a value soon after the watch dropped an event. Several drops may coalesce into one value.
// The channel is never closed.
func (w *RequestWatch) Gap() <-chan struct{} { return w.gap }

// Dropped reports how many events this watch has lost because its buffer was full.
func (w *RequestWatch) Dropped() uint64 { return w.dropped.Load() }

// Close ends the watch and closes C (events already buffered stay readable). It is idempotent and safe to
// call concurrently with the dispatcher's publishing.
func (w *RequestWatch) Close() {
	if w == nil {
		return
	}
	d := w.d
	d.watchMu.Lock()
	defer d.watchMu.Unlock()
	if w.closed {
		return
	}
	w.closed = true
	if i := slices.Index(d.watches, w); i >= 0 {
		d.watches = slices.Delete(d.watches, i, i+1)
	}
	if w.notify != nil {
		w.q = nil
		return
	}
	close(w.ch)
}

// notify hands ev, an event about req, to every watch that matches, without blocking. The caller holds the
// request's pubMu (so one request's Created precedes its Ended for every watch) and not d.mu.
func (d *Dispatcher) notify(req *PendingRequest, ev *Event) {
	d.watchMu.Lock()
	defer d.watchMu.Unlock()
	for _, w := range d.watches {
		if w.match != nil && !w.match(req) {
			continue
		}
		if w.notify != nil {
			if len(w.q) < w.limit {
				w.q = append(w.q, ev)
			} else {
				w.dropped.Add(1)
				w.gapPending = true
			}
			w.notify()
			continue
		}
		select {
		case w.ch <- ev:
		default:
			w.dropped.Add(1)
			select {
			case w.gap <- struct{}{}:
			default:
			}
		}
	}
}

// watchState is the part of the Dispatcher that serves watches; it is embedded there.
type watchState struct {
	// watchMu guards watches and every watch's closed flag; it is held while publishing to the watches
	// (non-blocking sends) and taken after a request's pubMu, never with Dispatcher.mu held.
	watchMu sync.Mutex
	watches []*RequestWatch
}
