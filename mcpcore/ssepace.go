package mcpcore

import (
	"context"
	"time"

	"golang.org/x/time/rate"
)

// The standalone SSE stream (the GET a 2025-era Streamable HTTP client opens for the server's own messages)
// has no end and answers no request: a server can send on it as fast as the connection carries — comments,
// empty events, notifications — for the session's life, and every line costs the bridge a read, the wire tap
// and the SDK's parse. The per-session notification rate (wiretap.go) bounds what is delivered, not what is
// read: an endless stream of comments took more than a core. So the bridge reads that stream at a budget of
// lines — streamPaceLines a second, with a burst of streamPaceLineBurst — since a line's cost is mostly the
// same whatever its size, and of bytes — streamPaceBytes a second, with a burst of one message of
// limits.maxMessageBytes (at least streamPaceByteBurst) so a large request of the server is read at once.
// Over the budget the bridge drops nothing: it stops reading, and TCP's flow control holds the server back.
// Each wait is counted (Stats.StreamThrottled) and the first on a stream is logged. A server's legitimate
// traffic on that stream (requests of the session, list_changed, resource updates, logs within the
// notification rate) is far below it.
const (
	streamPaceLines     = 1000
	streamPaceLineBurst = 4000
	streamPaceBytes     = 1 << 20
	streamPaceByteBurst = 1 << 20
)

// streamPace is the read budget of one standalone SSE stream.
type streamPace struct {
	lines  *rate.Limiter
	bytes  *rate.Limiter
	ctx    context.Context // ends when the stream's request does, or the stream is closed
	cancel context.CancelFunc
	logged bool // the first wait was logged; only the reading goroutine touches it
}

func newStreamPace(ctx context.Context, maxMessage int) *streamPace {
	ctx, cancel := context.WithCancel(ctx)
	return &streamPace{lines: rate.NewLimiter(streamPaceLines, streamPaceLineBurst),
		bytes: rate.NewLimiter(streamPaceBytes, max(streamPaceByteBurst, maxMessage+64<<10)), ctx: ctx, cancel: cancel}
}

// wait charges a line of size bytes to the budget, waiting while it is spent, until the stream ends.
func (p *streamPace) wait(s *sseTap, size int) {
	p.take(s, p.lines, 1)
	for size > 0 && p.ctx.Err() == nil { // a line longer than the burst is charged in parts
		n := min(size, p.bytes.Burst())
		size -= n
		p.take(s, p.bytes, n)
	}
}

// take takes n from lim, waiting until it has them or the stream ends.
func (p *streamPace) take(s *sseTap, lim *rate.Limiter, n int) {
	r := lim.ReserveN(time.Now(), n)
	d := r.Delay()
	if d <= 0 {
		return
	}
	if sess := s.session(); sess != nil {
		if sess.core != nil {
			sess.core.stats.streamThrottled.Add(1)
		}
		if !p.logged {
			p.logged = true
			sess.logger.Warn("the server's standalone SSE stream sends faster than the bridge reads it: reading it at its budget",
				"lines_per_second", streamPaceLines, "bytes_per_second", streamPaceBytes)
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
func (p *streamPace) stop() { p.cancel() }

// session is the session whose stream s is, or nil (a tap of a test).
func (s *sseTap) session() *Session {
	if s.tap == nil {
		return nil
	}
	return s.tap.s
}
