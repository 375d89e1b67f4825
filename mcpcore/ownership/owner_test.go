package ownership

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/mcp-bridge/mcp-bridge/internal/state"
	"github.com/mcp-bridge/mcp-bridge/internal/state/statetest"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// Without shared state a session lives on the replica its id names: the owner refuses the others'
// (ErrWrongReplica, counted), says NOT_FOUND of its own it does not have, always lets a session open,
// restores at start, and never ends a stream as moved.
func TestOwnerWithoutSharedState(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	core := mcpcore.New(mcpcore.Options{Logger: logger, Replica: "r1"})
	t.Cleanup(func() { _ = core.Close(context.Background()) })
	o := New(core, Options{Logger: logger})
	o.Start()
	t.Cleanup(func() { o.Close(context.Background()) })

	_, err := o.Lookup(t.Context(), "s-r2.ABCDEFGHIJKLMNOPQRSTUVWXYZ", "alice")
	var oe *Error
	if !errors.Is(err, ErrWrongReplica) || !errors.As(err, &oe) || oe.Metadata["owner"] != "r2" || oe.Metadata["replica"] != "r1" {
		t.Errorf("another replica's session: %v (%+v), want ErrWrongReplica naming r2 and r1", err, oe)
	}
	if n := o.Misrouted(); n != 1 {
		t.Errorf("misrouted = %d, want 1", n)
	}
	if _, err := o.Lookup(t.Context(), "s-r1.ABCDEFGHIJKLMNOPQRSTUVWXYZ", "alice"); !errors.Is(err, mcpcore.ErrSessionNotFound) {
		t.Errorf("an unknown session of this replica: %v, want ErrSessionNotFound", err)
	}
	if err := o.CanOpen(); err != nil {
		t.Errorf("CanOpen = %v", err)
	}
	if rep, err := o.Restore(t.Context()); err != nil || rep != (mcpcore.RestoreReport{}) {
		t.Errorf("Restore without a store = %+v, %v", rep, err)
	}
	ev := mcpcore.Event{Kind: mcpcore.EventStateChanged, State: mcpcore.StateClosed, SessionID: "s-r1.ABCDEFGHIJKLMNOPQRSTUVWXYZ"}
	if err := o.Moved(ev); err != nil || o.HiddenByMove(ev) {
		t.Errorf("a closed session without shared state: moved %v, hidden %v", err, o.HiddenByMove(ev))
	}
	if o.Leases() != nil || o.Takeovers() != 0 {
		t.Errorf("leases %v, takeovers %d", o.Leases(), o.Takeovers())
	}
}

// With shared state, a session another replica's live lease holds is refused after the wait with the
// same wording as a session whose id names another replica: one refusal, whichever way it is learned.
func TestWrongReplicaByLeaseOneWording(t *testing.T) {
	r := statetest.StartRedis(t, statetest.RedisConfig{})
	open := func(replica string) (*Owner, *state.Leases) {
		rs, err := state.OpenRedis(context.Background(), state.RedisOptions{Address: r.Addr, KeyPrefix: "own:"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = rs.Close() })
		logger := slog.New(slog.DiscardHandler)
		leases := state.NewLeases(rs, replica, 300*time.Millisecond, logger)
		core := mcpcore.New(mcpcore.Options{Logger: logger, Replica: replica, Store: FencedStore(rs, leases, leases.Gone)})
		t.Cleanup(func() { _ = core.Close(context.Background()) })
		o := New(core, Options{Leases: leases, Logger: logger})
		o.Start()
		t.Cleanup(func() { o.Close(context.Background()) })
		return o, leases
	}
	_, la := open("r1")
	b, _ := open("r2")
	const id = "s-r3.ABCDEFGHIJKLMNOPQRSTUVWXYZ" // home r3 is down; r1 holds it, the call reached r2
	if _, err := la.Acquire(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	_, err := b.Lookup(t.Context(), id, "alice")
	var oe *Error
	if !errors.As(err, &oe) || !errors.Is(err, ErrWrongReplica) {
		t.Fatalf("Lookup of r1's session on r2 = %v, want ErrWrongReplica", err)
	}
	if want := wrongReplica(id, "r1", "r2").Error(); oe.Message != want {
		t.Errorf("message %q, want the routing path's %q", oe.Message, want)
	}
	if oe.Metadata["owner"] != "r1" || oe.Metadata["replica"] != "r2" || b.Misrouted() != 1 {
		t.Errorf("metadata %v, misrouted %d", oe.Metadata, b.Misrouted())
	}
}
