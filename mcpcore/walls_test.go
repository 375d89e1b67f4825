package mcpcore

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Issue 31, item 5: one WARN line per malformed frame from a server was unthrottled (782 MB of log in
// 20 s). Now the lines are rate-limited and the next line logged says how many were suppressed.
func TestBadFrameLogThrottled(t *testing.T) {
	var buf bytes.Buffer
	s := &Session{core: &Core{}, logger: slog.New(slog.NewJSONHandler(&buf, nil))}
	linkConcerns(s)
	tap := newWireTap(s, nil)
	const frames = 10_000
	for range frames {
		tap.badFrame([]byte("not json"), 8, false, errors.New("invalid character"), nil)
	}
	lines := strings.Count(buf.String(), "\n")
	if lines > badFrameLogBurst+1 {
		t.Errorf("%d frames logged %d lines, want at most %d", frames, lines, badFrameLogBurst+1)
	}
	if got := s.core.Stats().MalformedMessages; got != frames {
		t.Errorf("counted %d malformed frames, want %d", got, frames)
	}
	// Once the rate allows again, the line logged says what was suppressed.
	tap.badLog.last = tap.badLog.last.Add(-badFrameLogWindow)
	buf.Reset()
	tap.badFrame([]byte("not json"), 8, false, errors.New("invalid character"), nil)
	if !strings.Contains(buf.String(), `"suppressed":`) {
		t.Errorf("the line after the throttle: %s, want the count suppressed", buf.String())
	}
}

// Issue 31, item 4: a new session is refused with ErrDescriptorLimit, naming the key, while fewer than the
// reserve of descriptors are left; the refusal is counted.
func TestDescriptorReserveRefusesNewSessions(t *testing.T) {
	c := New(Options{Limits: Limits{DescriptorReserve: 10}})
	c.testFDs = func() (int, bool) { return 1 << 40, true }
	err := c.checkDescriptors()
	if !errors.Is(err, ErrDescriptorLimit) || !strings.Contains(err.Error(), "limits.descriptorReserve") {
		t.Fatalf("at the wall: %v", err)
	}
	if c.Stats().DescriptorRefusals != 1 {
		t.Errorf("refusals = %d", c.Stats().DescriptorRefusals)
	}
	c.testFDs = func() (int, bool) { return 3, true }
	if err := c.checkDescriptors(); err != nil {
		t.Errorf("far from the wall: %v", err)
	}
}

// Issue 31, item 5: a flood of progress notifications from a server is bounded per session: beyond the
// rate they are dropped before the SDK decodes them, counted, and the session's watchers get an
// EventDropped with the count when the next one passes.
func TestNotificationFloodBounded(t *testing.T) {
	c := &Core{}
	s := &Session{core: c, logger: slog.New(slog.DiscardHandler), sessionEvents: sessionEvents{events: newEventLog("s1", Limits{})}}
	linkConcerns(s)
	tap := newWireTap(s, nil)
	const sent = 50_000
	sub := s.events.subscribe(sent + 10) // room for every event: none lost by the subscription itself
	passed := 0
	for range sent {
		if _, ok := tap.received(&jsonrpc.Request{Method: "notifications/progress", Params: []byte(`{"progressToken":"t","progress":1}`)}, nil); ok {
			passed++
		}
	}
	dropped := c.Stats().NotificationsDropped
	if dropped == 0 || uint64(passed)+dropped != sent {
		t.Fatalf("%d passed and %d dropped of %d", passed, dropped, sent)
	}
	tap.flood.last = tap.flood.last.Add(-time.Second)
	tap.received(&jsonrpc.Request{Method: "notifications/progress", Params: []byte(`{"progressToken":"t","progress":2}`)}, nil)
	var told uint64
	for done := false; !done; {
		select {
		case ev := <-sub.C():
			if ev.Kind == EventDropped {
				told += ev.Dropped
			}
		default:
			done = true
		}
	}
	if told != dropped {
		t.Errorf("watchers were told of %d dropped, want %d", told, dropped)
	}
}

func TestJSONTooDeep(t *testing.T) {
	deep := func(n int) []byte {
		return []byte(strings.Repeat(`[`, n) + strings.Repeat(`]`, n))
	}
	for _, c := range []struct {
		in   []byte
		want bool
	}{
		{deep(MaxNestingDepth), false},
		{deep(MaxNestingDepth + 1), true},
		{[]byte(`{"a":"` + strings.Repeat(`[{`, 1000) + `\"{"}`), false}, // brackets in strings do not count
		{[]byte(`{"a":[1,{"b":[]}]}`), false},
	} {
		if got := JSONTooDeep(c.in, MaxNestingDepth); got != c.want {
			t.Errorf("JSONTooDeep(%.40s…) = %v, want %v", c.in, got, c.want)
		}
	}
}
