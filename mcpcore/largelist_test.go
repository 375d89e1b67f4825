package mcpcore

import (
	"context"
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
