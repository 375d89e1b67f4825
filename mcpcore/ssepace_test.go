package mcpcore

import (
	"bufio"
	"context"
	"io"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// endlessComments is a body of SSE comment lines without end, as a hostile server's standalone stream,
// until it is closed.
type endlessComments struct{ closed atomic.Bool }

func (e *endlessComments) Read(p []byte) (int, error) {
	if e.closed.Load() {
		return 0, io.EOF
	}
	for i := range p {
		p[i] = ":\n"[i%2]
	}
	return len(p), nil
}

func (e *endlessComments) Close() error { e.closed.Store(true); return nil }

// A standalone stream is read at its budget however fast the server sends: over a minute of (fake) time the
// reader gets no more lines than the burst plus the rate times the minute, and Close wakes a read that waits
// for its budget. Before: read as fast as it came.
func TestStreamPaceBoundsAnEndlessStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		body := &endlessComments{}
		st := &sseTap{body: body, br: bufio.NewReaderSize(body, sseReadBuffer), max: 64 << 10, pace: newStreamPace(ctx, 64<<10)}
		lines := 0
		done := make(chan struct{})
		go func() {
			defer close(done)
			buf := make([]byte, 2)
			for {
				if _, err := io.ReadFull(st, buf); err != nil {
					return
				}
				lines++
			}
		}()
		time.Sleep(time.Minute) // fake time: the reader runs until it waits for its budget
		synctest.Wait()
		got := lines
		budget := streamPaceLineBurst + streamPaceLines*60
		if got > budget+1 {
			t.Errorf("read %d lines in a minute, want at most %d (the budget)", got, budget)
		}
		if got < budget/2 {
			t.Errorf("read %d lines in a minute, want near %d: the budget is not a stall", got, budget)
		}
		_ = st.Close() // wakes the waiting read, which then ends
		<-done
	})
}
