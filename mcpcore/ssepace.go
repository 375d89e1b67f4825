package mcpcore

import (
	"context"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// A Streamable HTTP server's SSE streams can be fed as fast as the connection carries them — comments,
// empty events, notifications — and every line costs the bridge a read, the wire tap and the SDK's parse:
// the standalone GET stream (2025-era) for the session's life, and the stream that answers a POST (a call)
// for the request's life, which a server can make endless by never sending the response. The per-session
// notification rate (wiretap.go) bounds what is delivered, not what is read: an endless stream of comments
// took more than a core. So the bridge reads a connection's SSE streams at one budget of lines —
// streamPaceLines a second, with a burst of streamPaceLineBurst — since a line's cost is mostly the same
// whatever its size, and of bytes — streamPaceBytes a second, with a burst of one message of
// limits.maxMessageBytes (at least streamPaceByteBurst) so a large request of the server is read at once.
// The budget is the connection's, shared by all its streams, so that a server answering many calls with
// endless streams gets no more than one. The line that answers a POST's own request is not charged: a
// large result is read at once whatever the stream sent before it.
// Over the budget the bridge drops nothing: it stops reading, and TCP's flow control holds the server back.
// Each wait is counted (Stats.StreamThrottled) and the first on a connection is logged. A server's
// legitimate traffic (requests of the session, progress, list_changed, resource updates, logs within the
// notification rate) is far below it (docs/adr/0098, 0110).
const (
	streamPaceLines     = 1000
	streamPaceLineBurst = 4000
	streamPaceBytes     = 1 << 20
	streamPaceByteBurst = 1 << 20
)

// streamPace is the read budget of one connection's SSE streams. Safe for concurrent use.
type streamPace struct {
	lines  *rate.Limiter
	bytes  *rate.Limiter
	logged atomic.Bool // the first wait was logged
}

func newStreamPace(maxMessage int) *streamPace {
	return &streamPace{lines: rate.NewLimiter(streamPaceLines, streamPaceLineBurst),
		bytes: rate.NewLimiter(streamPaceBytes, max(streamPaceByteBurst, maxMessage+64<<10))}
}

// stream returns the pacing of one SSE stream read under p's budget: the standalone GET stream or a
// POST's response stream (method). Its waits end when ctx (the stream's request) ends or stop is called.
func (p *streamPace) stream(ctx context.Context, method string) *streamPacing {
	if p == nil {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	return &streamPacing{p: p, ctx: ctx, cancel: cancel, method: method}
}

// streamPacing is one stream's use of its connection's budget.
type streamPacing struct {
	p      *streamPace
	ctx    context.Context // ends when the stream's request does, or the stream is closed
	cancel context.CancelFunc
	method string // GET: the standalone stream; POST: a request's response stream
}

// wait charges a line of size bytes to the budget, waiting while it is spent, until the stream ends.
func (p *streamPacing) wait(s *sseTap, size int) {
	p.take(s, p.p.lines, 1)
	for size > 0 && p.ctx.Err() == nil { // a line longer than the burst is charged in parts
		n := min(size, p.p.bytes.Burst())
		size -= n
		p.take(s, p.p.bytes, n)
	}
}

// take takes n from lim, waiting until it has them or the stream ends.
func (p *streamPacing) take(s *sseTap, lim *rate.Limiter, n int) {
	r := lim.ReserveN(time.Now(), n)
	d := r.Delay()
	if d <= 0 {
		return
	}
	if sess := s.session(); sess != nil {
		if sess.core != nil {
			sess.core.stats.streamThrottled.Add(1)
		}
		if p.p.logged.CompareAndSwap(false, true) {
			sess.logger.Warn("the server's SSE streams send faster than the bridge reads them: reading them at their budget",
				"stream", p.method, "lines_per_second", streamPaceLines, "bytes_per_second", streamPaceBytes)
		}
	}
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-p.ctx.Done():
		t.Stop()
		r.Cancel()
	}
}

// stop ends the stream's waits (Close).
func (p *streamPacing) stop() { p.cancel() }

// session is the session whose stream s is, or nil (a tap of a test).
func (s *sseTap) session() *Session {
	if s.tap == nil {
		return nil
	}
	return s.tap.s
}
