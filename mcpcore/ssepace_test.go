package mcpcore

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// endlessComments is a body of SSE comment lines without end, as a hostile server's stream, until it is
// closed — or, so that a stream read without a budget ends the test instead of spinning for ever, until it
// has sent ten minutes' worth of the budget.
type endlessComments struct {
	closed atomic.Bool
	sent   int
}

func (e *endlessComments) Read(p []byte) (int, error) {
	if e.closed.Load() || e.sent >= 2*(streamPaceLineBurst+streamPaceLines*600) {
		return 0, io.EOF
	}
	p = p[:min(len(p), 4096)&^1]
	for i := range p {
		p[i] = ":\n"[i%2]
	}
	e.sent += len(p)
	return len(p), nil
}

func (e *endlessComments) Close() error { e.closed.Store(true); return nil }

// pacedStreams opens n endless streams of one connection (one httpTap, one budget), answers to requests
// of method, reads them all for a minute of (fake) time and returns the lines read in all; then it closes
// them, which wakes the reads that wait for their budget.
func pacedStreams(t *testing.T, method string, n int) int {
	t.Helper()
	h := &httpTap{max: 64 << 10, pace: newStreamPace(64 << 10)}
	var lines atomic.Int64
	var streams []*sseTap
	var done []chan struct{}
	for range n {
		req := httptest.NewRequestWithContext(t.Context(), method, "http://upstream/mcp", nil)
		body := &endlessComments{}
		st := h.sseBody(req, body, nil, jsonrpc.ID{})
		d := make(chan struct{})
		go func() {
			defer close(d)
			buf := make([]byte, 2)
			for {
				if _, err := io.ReadFull(st, buf); err != nil {
					return
				}
				lines.Add(1)
			}
		}()
		streams, done = append(streams, st), append(done, d)
	}
	time.Sleep(time.Minute) // fake time: the readers run until they wait for their budget
	synctest.Wait()
	got := int(lines.Load())
	for i, st := range streams {
		_ = st.Close()
		<-done[i]
	}
	return got
}

// A standalone stream is read at its budget however fast the server sends: over a minute of (fake) time the
// reader gets no more lines than the burst plus the rate times the minute, and Close wakes a read that waits
// for its budget. Before: read as fast as it came.
func TestStreamPaceBoundsAnEndlessStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		got := pacedStreams(t, http.MethodGet, 1)
		budget := streamPaceLineBurst + streamPaceLines*60
		if got > budget+1 {
			t.Errorf("read %d lines in a minute, want at most %d (the budget)", got, budget)
		}
		if got < budget/2 {
			t.Errorf("read %d lines in a minute, want near %d: the budget is not a stall", got, budget)
		}
	})
}

// A POST's response stream — a server answering a call with an endless stream — is read at the same budget,
// and the streams of one connection share it: four endless answers get no more than one. Before: a POST's
// stream was read as fast as it came, for the request's life.
func TestStreamPaceBoundsEndlessPostStreams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		budget := streamPaceLineBurst + streamPaceLines*60
		for _, n := range []int{1, 4} {
			got := pacedStreams(t, http.MethodPost, n)
			if got > budget+n {
				t.Errorf("%d POST streams of a connection: read %d lines in a minute, want at most %d (one budget)", n, got, budget)
			}
			if got < budget/2 {
				t.Errorf("%d POST streams: read %d lines in a minute, want near %d: the budget is not a stall", n, got, budget)
			}
		}
	})
}

// The line that answers a POST's own request is not charged to the connection's budget: with the budget
// spent (another stream's flood), a large result is read at once, while another line of the same size on
// the same stream waits for its budget.
func TestStreamPaceDoesNotHoldAPostsAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &httpTap{tap: &wireTap{outgoing: map[jsonrpc.ID]*outgoingCall{}}, max: 1 << 20, pace: newStreamPace(1 << 20)}
		id, _ := jsonrpc.MakeID(float64(7))
		big := strings.Repeat("x", 512<<10)
		read := func(line string) time.Duration {
			t.Helper()
			h.pace.lines.ReserveN(time.Now(), h.pace.lines.Burst()) // the budget is spent
			h.pace.bytes.ReserveN(time.Now(), h.pace.bytes.Burst())
			req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "http://upstream/mcp", nil)
			st := h.sseBody(req, io.NopCloser(strings.NewReader(line)), nil, id)
			start := time.Now()
			if _, err := io.ReadAll(st); err != nil {
				t.Fatal(err)
			}
			took := time.Since(start) // fake time: only the budget's waits move it
			time.Sleep(time.Hour)     // the budget refills before the next case
			return took
		}
		answer := `data: {"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"` + big + `"}]}}` + "\n"
		if took := read(answer); took != 0 {
			t.Errorf("the POST's answer waited %v for the budget, want it read at once", took)
		}
		if took := read(": " + big + "\n"); took == 0 {
			t.Error("a line of the same size that is not the answer did not wait for a spent budget")
		}
	})
}
