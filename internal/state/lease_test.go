package state_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-bridge/mcp-bridge/internal/state"
	"github.com/mcp-bridge/mcp-bridge/internal/state/statetest"
)

// leaseRig is two replicas, a and b, sharing one redis-server.
type leaseRig struct {
	r      *statetest.Redis
	sa, sb *state.RedisStore
	a, b   *state.Leases
}

func newLeaseRig(t *testing.T, cfg statetest.RedisConfig, ttl time.Duration) *leaseRig {
	t.Helper()
	r := statetest.StartRedis(t, cfg)
	rig := &leaseRig{r: r, sa: openRedis(t, r, "lease:"), sb: openRedis(t, r, "lease:")}
	t.Cleanup(func() { rig.sa.Close(); rig.sb.Close() })
	rig.a = state.NewLeases(rig.sa, "a", ttl, nil)
	rig.b = state.NewLeases(rig.sb, "b", ttl, nil)
	return rig
}

func fencedPut(s state.Store, f state.Fence, value string) error {
	return s.Put(state.WithFence(context.Background(), f), state.KindSession, f.Session, []byte(value))
}

func tokenCounter(t *testing.T, f state.Fence) int64 {
	t.Helper()
	n, err := strconv.ParseInt(strings.SplitN(f.Token, "/", 2)[0], 10, 64)
	if err != nil {
		t.Fatalf("token %q: %v", f.Token, err)
	}
	return n
}

func TestLeaseOneOwner(t *testing.T) {
	rig := newLeaseRig(t, statetest.RedisConfig{}, time.Minute)
	ctx := context.Background()
	fa, err := rig.a.Acquire(ctx, "s-1")
	if err != nil {
		t.Fatal(err)
	}
	var held *state.HeldError
	if _, err := rig.b.Acquire(ctx, "s-1"); !errors.As(err, &held) || held.Holder != "a" {
		t.Fatalf("b.Acquire of a's session = %v, want HeldError naming a", err)
	}
	if err := fencedPut(rig.sa, fa, "by a"); err != nil {
		t.Fatalf("owner's fenced write: %v", err)
	}
	if err := fencedPut(rig.sb, state.Fence{Session: "s-1", Token: "999/b/x"}, "by b"); !errors.Is(err, state.ErrFenced) {
		t.Errorf("a write under a made-up fence = %v, want ErrFenced", err)
	}
	if !rig.a.Holds("s-1") || rig.b.Holds("s-1") {
		t.Error("Holds: a should hold s-1, b not")
	}
	// Again on the owner: confirmed, the same fence.
	if f, err := rig.a.Acquire(ctx, "s-1"); err != nil || f != fa {
		t.Errorf("a.Acquire again = %v, %v; want %v", f, err, fa)
	}
}

func TestLeaseReleaseHandsOver(t *testing.T) {
	rig := newLeaseRig(t, statetest.RedisConfig{}, time.Minute)
	ctx := context.Background()
	fa, err := rig.a.Acquire(ctx, "s-1")
	if err != nil {
		t.Fatal(err)
	}
	if err := rig.a.Release(ctx, "s-1"); err != nil {
		t.Fatal(err)
	}
	if _, ok := rig.a.Fence("s-1"); ok {
		t.Error("a still has a fence after Release")
	}
	fb, err := rig.b.Acquire(ctx, "s-1")
	if err != nil {
		t.Fatalf("b.Acquire after a released: %v", err)
	}
	if tokenCounter(t, fb) <= tokenCounter(t, fa) {
		t.Errorf("token went backwards: %s after %s", fb.Token, fa.Token)
	}
	if err := fencedPut(rig.sa, fa, "stale"); !errors.Is(err, state.ErrFenced) {
		t.Errorf("the old owner's write after the handover = %v, want ErrFenced", err)
	}
	if err := fencedPut(rig.sb, fb, "new"); err != nil {
		t.Errorf("the new owner's write: %v", err)
	}
}

// A paused owner: its lease expires (it does not renew), another replica takes the session; when the old
// owner wakes, its writes are refused and its renewal says the session is lost.
func TestLeasePausedOwnerIsFenced(t *testing.T) {
	rig := newLeaseRig(t, statetest.RedisConfig{}, time.Second)
	ctx := context.Background()
	fa, err := rig.a.Acquire(ctx, "s-1")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	var fb state.Fence
	for {
		if fb, err = rig.b.Acquire(ctx, "s-1"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("b could not take the session over after a's lease expired: %v", err)
		}
		time.Sleep(50 * time.Millisecond) // a real redis-server: the lease expires on its clock (TIME), which a test cannot fake; polled
	}
	if rig.a.Holds("s-1") {
		t.Error("a still counts its lease as held after it expired")
	}
	if err := fencedPut(rig.sa, fa, "stale"); !errors.Is(err, state.ErrFenced) {
		t.Errorf("the paused owner's write = %v, want ErrFenced", err)
	}
	var lost []string
	rig.a.RenewNow(ctx, state.LeaseEvents{Lost: func(s string) { lost = append(lost, s) }})
	if len(lost) != 1 || lost[0] != "s-1" {
		t.Errorf("a's renewal lost %v, want [s-1]", lost)
	}
	if _, err := rig.a.Confirm(ctx, "s-1"); !errors.Is(err, state.ErrNoLease) {
		t.Errorf("a.Confirm after losing = %v, want ErrNoLease", err)
	}
	if err := fencedPut(rig.sb, fb, "new"); err != nil {
		t.Errorf("the new owner's write: %v", err)
	}
}

func TestLeaseAskBack(t *testing.T) {
	rig := newLeaseRig(t, statetest.RedisConfig{}, time.Minute)
	ctx := context.Background()
	if _, err := rig.b.Acquire(ctx, "s-a.1"); err != nil {
		t.Fatal(err)
	}
	if err := rig.a.AskBack(ctx, "s-a.1"); err != nil {
		t.Fatal(err)
	}
	var wanted []string
	rig.b.RenewNow(ctx, state.LeaseEvents{Wanted: func(s string) { wanted = append(wanted, s) }})
	if len(wanted) != 1 {
		t.Fatalf("wanted = %v", wanted)
	}
	if err := rig.b.Release(ctx, "s-a.1"); err != nil {
		t.Fatal(err)
	}
	if _, err := rig.a.Acquire(ctx, "s-a.1"); err != nil {
		t.Fatalf("a.Acquire after b handed it back: %v", err)
	}
}

// Redis down: the holder keeps the session (nobody can take it), nobody can acquire; when Redis is back
// the holder renews.
func TestLeaseRedisDown(t *testing.T) {
	rig := newLeaseRig(t, statetest.RedisConfig{}, time.Second)
	ctx := context.Background()
	if _, err := rig.a.Acquire(ctx, "s-1"); err != nil {
		t.Fatal(err)
	}
	rig.r.Stop()
	var reach []bool
	ev := state.LeaseEvents{Reachable: func(ok bool) { reach = append(reach, ok) }, Lost: func(s string) { t.Errorf("lost %s", s) }}
	rig.a.RenewNow(ctx, ev)
	if !rig.a.Down() {
		t.Fatal("Down is false while Redis is stopped")
	}
	// A real wait, kept: past the lease's validity on this process's clock (Holds reads time.Now; Leases has no
	// clock to inject), with Redis stopped so that nothing else changes that a test could wait on instead.
	time.Sleep(time.Second)
	if !rig.a.Holds("s-1") {
		t.Error("the holder stopped holding while Redis was down")
	}
	if _, err := rig.b.Acquire(ctx, "s-2"); !errors.Is(err, state.ErrUnreachable) {
		t.Errorf("Acquire while Redis is down = %v, want ErrUnreachable", err)
	}
	rig.r.Start()
	rig.a.RenewNow(ctx, ev)
	if rig.a.Down() || len(reach) != 2 || reach[0] || !reach[1] {
		t.Errorf("down = %v, reachable events %v", rig.a.Down(), reach)
	}
	var held *state.HeldError
	if _, err := rig.b.Acquire(ctx, "s-1"); !errors.As(err, &held) {
		t.Errorf("b.Acquire after Redis came back = %v, want HeldError", err)
	}
}

// A Redis that lost its data hands the session to one replica only, with a token above the old one.
func TestLeaseRedisLostItsData(t *testing.T) {
	rig := newLeaseRig(t, statetest.RedisConfig{NoPersistence: true}, time.Minute)
	ctx := context.Background()
	fa, err := rig.a.Acquire(ctx, "s-1")
	if err != nil {
		t.Fatal(err)
	}
	rig.r.Kill()
	rig.r.Wipe()
	rig.r.Start()
	// b asks first: it gets the session (nothing in Redis says otherwise); a's renewal finds it lost.
	fb, err := rig.b.Acquire(ctx, "s-1")
	if err != nil {
		t.Fatal(err)
	}
	if tokenCounter(t, fb) <= tokenCounter(t, fa) {
		t.Errorf("the counter went backwards after the data loss: %s after %s", fb.Token, fa.Token)
	}
	var lost, reseeded []string
	ev := state.LeaseEvents{Lost: func(s string) { lost = append(lost, s) }, Reseeded: func(s string) { reseeded = append(reseeded, s) }}
	rig.a.RenewNow(ctx, ev)
	if len(lost) != 1 || len(reseeded) != 0 || rig.a.Holds("s-1") {
		t.Errorf("a after b took the session: lost %v, reseeded %v, holds %v", lost, reseeded, rig.a.Holds("s-1"))
	}
	if err := fencedPut(rig.sa, fa, "stale"); !errors.Is(err, state.ErrFenced) {
		t.Errorf("the old owner's write = %v, want ErrFenced", err)
	}
	// Another loss, nobody asking: the holder takes its lease again and is told to rewrite the record.
	rig.r.Kill()
	rig.r.Wipe()
	rig.r.Start()
	lost, reseeded = nil, nil
	rig.b.RenewNow(ctx, ev)
	if len(reseeded) != 1 || len(lost) != 0 || !rig.b.Holds("s-1") {
		t.Errorf("b after the loss: lost %v, reseeded %v", lost, reseeded)
	}
	var held *state.HeldError
	if _, err := rig.a.Acquire(ctx, "s-1"); !errors.As(err, &held) || held.Holder != "b" {
		t.Errorf("a.Acquire after b reseeded = %v, want HeldError naming b", err)
	}
}

// Holds reads a lease's validity while the renewal loop (and Confirm) move it forward: under the lock, or
// the race detector finds the two (it did, in the race-built replicas of make test-scale).
func TestLeaseHoldsWhileRenewing(t *testing.T) {
	rig := newLeaseRig(t, statetest.RedisConfig{}, time.Minute)
	ctx := context.Background()
	if _, err := rig.a.Acquire(ctx, "s-1"); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // ends at stop
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				if !rig.a.Holds("s-1") {
					t.Error("a stopped holding s-1 while renewing it")
					return
				}
			}
		}
	}()
	for range 20 {
		rig.a.RenewNow(ctx, state.LeaseEvents{})
		if _, err := rig.a.Confirm(ctx, "s-1"); err != nil {
			t.Error(err)
		}
	}
	close(stop)
	<-done
}
