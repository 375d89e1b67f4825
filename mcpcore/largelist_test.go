package mcpcore

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
)

// TestLargeListSlots: a large list takes a slot only under a host's ListTools (HoldLargeList), one per
// ListTools however often its call reads; a second waits until the first is released, or until its own
// context ends (then it reads on without one: no deadlock); a release before a late read leaves nothing
// taken.
func TestLargeListSlots(t *testing.T) {
	l := newLargeLists(1)
	if l.acquire(context.Background()); l.inUse() != 0 {
		t.Fatal("a list took a slot without a hold")
	}

	ctx1, release1 := HoldLargeList(context.Background())
	if waited := l.acquire(ctx1); waited || l.inUse() != 1 {
		t.Fatalf("first: waited %v, %d held", waited, l.inUse())
	}
	if waited := l.acquire(ctx1); waited || l.inUse() != 1 { // a retried call of the same ListTools
		t.Fatalf("the same ListTools again: waited %v, %d held", waited, l.inUse())
	}

	// A second waits for the first's release.
	ctx2, release2 := HoldLargeList(context.Background())
	acquired := make(chan bool)
	go func() { acquired <- l.acquire(ctx2) }()
	release1()
	if waited := <-acquired; l.inUse() != 1 {
		t.Fatalf("second after the first's release: waited %v, %d held", waited, l.inUse())
	}

	// A third whose context ends while the second holds the slot reads on without one.
	ctx3, cancel3 := context.WithCancel(context.Background())
	ctx3, release3 := HoldLargeList(ctx3)
	go func() { acquired <- l.acquire(ctx3) }()
	cancel3()
	if waited := <-acquired; !waited || l.inUse() != 1 {
		t.Fatalf("third, cancelled: waited %v, %d held", waited, l.inUse())
	}
	release3()
	release2()
	release2() // twice is harmless
	if l.inUse() != 0 {
		t.Fatalf("%d held after every release", l.inUse())
	}

	// A read after its ListTools ended (an abandoned call) takes nothing.
	ctx4, release4 := HoldLargeList(context.Background())
	release4()
	if l.acquire(ctx4); l.inUse() != 0 {
		t.Fatal("a read after the release took a slot")
	}
}

// TestReadBoundedLineHook: the hook is called once, when the line has grown past its threshold and before
// the rest is read, with what was read so far; a line within the threshold does not call it, and the line
// comes back whole either way.
func TestReadBoundedLineHook(t *testing.T) {
	long := `{"jsonrpc":"2.0","id":7,"result":"` + strings.Repeat("x", 3000) + `"}` + "\n"
	r := &countingReader{r: strings.NewReader(long + `{"short":true}` + "\n")}
	br := bufio.NewReaderSize(r, 256)
	var calls int
	var prefix []byte
	var readAtCall int
	hook := func(p []byte) { calls++; prefix = append([]byte(nil), p...); readAtCall = r.n }
	line, size, oversized, err := readBoundedLineHook(br, 1<<20, 4<<10, 1000, hook)
	if err != nil || oversized || string(line) != long || size != len(long) {
		t.Fatalf("line = %d bytes (size %d, oversized %v, %v), want the whole line", len(line), size, oversized, err)
	}
	if calls != 1 || len(prefix) <= 1000 || !strings.HasPrefix(long, string(prefix)) || readAtCall >= len(long) {
		t.Fatalf("hook called %d times with %d bytes after %d of %d were read; want once, past 1000 bytes, before the end", calls, len(prefix), readAtCall, len(long))
	}
	if id, isRequest, ok := salvageID(prefix); !ok || isRequest || id.Raw() != int64(7) {
		t.Errorf("the prefix names id %v (request %v, ok %v), want response 7", id, isRequest, ok)
	}
	calls = 0
	if line, _, _, err := readBoundedLineHook(br, 1<<20, 4<<10, 1000, hook); err != nil || string(line) != `{"short":true}`+"\n" || calls != 0 {
		t.Errorf("a short line = %q, %v, hook called %d times; want it whole, no call", line, err, calls)
	}
}

// countingReader counts the bytes read from r.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}
