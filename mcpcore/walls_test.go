package mcpcore

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

// Issue 31, item 5: one WARN line per malformed frame from a server was unthrottled (782 MB of log in
// 20 s). Now the lines are rate-limited and the next line logged says how many were suppressed.
func TestBadFrameLogThrottled(t *testing.T) {
	var buf bytes.Buffer
	s := &Session{core: &Core{}, logger: slog.New(slog.NewJSONHandler(&buf, nil))}
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
