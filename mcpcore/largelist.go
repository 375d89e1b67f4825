package mcpcore

import (
	"context"
	"sync"
)

// Large tool lists are read, decoded and converted one at a time (docs/adr/0107). A tools/list answer of
// 100,000 tools is 16 MB of JSON; the SDK's decoded tools take about 1.6 times that and the response's
// encoding about as much as the JSON, and four such lists answered at once held all of it together (the
// bridge's peak RSS grew by 6–7 times each list's size). A server's tools/list response body larger than
// LargeListBytes holds one of the bridge's LargeListsAtOnce slots from its first LargeListBytes until the
// host's ListTools that asked for it has its response (HoldLargeList): the other large lists wait with only
// their first LargeListBytes read. A list that fits in LargeListBytes never waits. The wait is bounded by the
// host's deadline, not the server's requestTimeout, which is paused (the server has answered; the call waits
// for the bridge, as while a host answers an elicitation); a call whose context ends while it waits reads on
// without a slot (it is being abandoned, and its response with it). A ListTools holds at most one slot, so a
// call that is retried (a reconnect) never waits for its own. Counted as Stats.LargeListWaits.
//
// Where: every transport's responses pass the wire tap's received (wiretap.go), which takes the slot for a
// tools/list result over LargeListBytes before the SDK decodes it — a Streamable HTTP JSON body, a POST's or
// the GET's SSE stream, a stdio server's stdout, the legacy SSE transport. The message has been read by then
// (at most Limits.MaxMessageBytes); what waits for the slot is its decoding into the SDK's tools and the
// conversion, most of a list's memory. Each transport's reader takes it earlier, after a response's first
// LargeListBytes, so that a waiting list holds only that much: a Streamable HTTP JSON body (jsonBodyTap), an
// SSE line and a stdio line (holdLargeListFor, which names the call from the line's first bytes when the
// stream is not the call's own). On a stdio or SSE stream the wait holds the stream's later messages back
// too, as any slow read of the stream would (bounded the same way).
const (
	// LargeListBytes is the size above which a tools/list response is a large list.
	LargeListBytes = 1 << 20
	// LargeListsAtOnce is how many large lists the bridge reads and converts at once.
	LargeListsAtOnce = 1
)

// largeLists are the bridge's slots for large lists.
type largeLists struct {
	slots chan struct{}
}

func newLargeLists(n int) *largeLists { return &largeLists{slots: make(chan struct{}, n)} }

// listHold is what one host's ListTools holds of the large-list slots: one at most.
type listHold struct {
	mu   sync.Mutex // guards from
	from *largeLists
	done bool // released: a hold taken after the release (a late read) is given back at once
}

type listHoldKey struct{}

// HoldLargeList returns a context for a host's ListTools under which a large tools/list response the wire
// tap reads takes a slot (see LargeListBytes), and the function that gives it back: call it once the
// response is converted. Without it a large list takes no slot (the core's own lists, e.g. for x-mcp-header
// parameters).
func HoldLargeList(ctx context.Context) (context.Context, func()) {
	h := &listHold{}
	return context.WithValue(ctx, listHoldKey{}, h), h.release
}

// holdLargeList takes a large-list slot for call (see above), if its context holds one (HoldLargeList). The
// server has answered: while the call waits for the bridge, its requestTimeout is paused, as while it waits
// for a host; the host's deadline still bounds the wait. A call holds one slot at most: a second take is a
// no-op.
func (s *Session) holdLargeList(call *activeCall) {
	if d := call.deadline; d != nil {
		d.pause()
		defer d.resume()
	}
	if c := s.core; c.largeLists.acquire(call.ctx) {
		c.stats.largeListWaits.Add(1)
	}
}

// holdLargeListFor takes the slot for the tools/list call a line longer than LargeListBytes answers, before
// the rest of the line is read: the call whose stream it is (origin, a POST's SSE stream), else the one whose
// id the line's first bytes name (salvageID: a stdio server's stdout, a GET stream). A line that names no
// list call of ours takes nothing; received takes the slot in any case before the SDK decodes a list.
func (t *wireTap) holdLargeListFor(prefix []byte, origin *activeCall) {
	call := origin
	if call == nil || call.method != "tools/list" {
		call = nil
		if id, isRequest, ok := salvageID(prefix); ok && !isRequest {
			t.mu.Lock()
			if rec := t.outgoing[id]; rec != nil && rec.method == "tools/list" {
				call = rec.call
			}
			t.mu.Unlock()
		}
	}
	if call != nil {
		t.s.holdLargeList(call)
	}
}

// acquire takes a slot of l for the hold in ctx, waiting at most until ctx ends; it reports whether it
// had to wait. Nothing is taken without a hold in ctx, nor twice for one hold, nor after its release.
func (l *largeLists) acquire(ctx context.Context) (waited bool) {
	h, _ := ctx.Value(listHoldKey{}).(*listHold)
	if h == nil || l == nil { // l is nil in a Core not made by New (tests)
		return false
	}
	h.mu.Lock()
	taken := h.from != nil || h.done
	h.mu.Unlock()
	if taken {
		return false
	}
	got := false
	select {
	case l.slots <- struct{}{}:
		got = true
	default:
		waited = true
		select { // not under h.mu: release must not wait for this
		case l.slots <- struct{}{}:
			got = true
		case <-ctx.Done():
		}
	}
	if got {
		h.mu.Lock()
		if h.from != nil || h.done { // released meanwhile, or taken by another read of the same call
			<-l.slots
		} else {
			h.from = l
		}
		h.mu.Unlock()
	}
	return waited
}

func (h *listHold) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.done = true
	if h.from != nil {
		<-h.from.slots
		h.from = nil
	}
}

// inUse is how many slots are held.
func (l *largeLists) inUse() int {
	if l == nil {
		return 0
	}
	return len(l.slots)
}
