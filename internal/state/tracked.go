package state

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// TrackedStore is a store that watches its own writes: a write that fails (a full disk, an I/O error)
// marks it degraded, and RecoverAfter writes in a row that succeed mark it healthy again (on a disk that is
// nearly full, a small write may succeed between failures: that is not yet health). The failed write's error
// still goes to its caller, which keeps serving from memory: nothing crashes or waits. The bridge reports
// Health in /readyz and a metric.
//
// It logs once per degradation (not per failed write), at most once per LogEvery, and once at recovery. It
// is safe for concurrent use.
type TrackedStore struct {
	Store
	logger   *slog.Logger
	onChange func(healthy bool)

	degraded atomic.Bool // fast path of a healthy write; set and cleared under mu
	mu       sync.Mutex  // guards health and since, and orders onChange calls
	health   error       // nil: healthy
	since    time.Time   // when the current degradation began
	good     int         // writes in a row that succeeded while degraded
	logged   time.Time   // when a degradation was last logged

	writes atomic.Uint64 // Put and Delete calls made, failed or not (Writes)
}

// RecoverAfter is how many writes in a row must succeed before a degraded store is healthy again.
const RecoverAfter = 3

// LogEvery bounds how often a degradation is logged at level error when the store keeps recovering and
// failing again; the others are logged at level debug.
const LogEvery = time.Minute

// Tracked wraps s. logger (nil: slog.Default) is told of each degradation and recovery; onChange (may be
// nil) is called on each change, in order, with the store's new health. onChange must not call back into
// the store.
func Tracked(s Store, logger *slog.Logger, onChange func(healthy bool)) *TrackedStore {
	if logger == nil {
		logger = slog.Default()
	}
	return &TrackedStore{Store: s, logger: logger, onChange: onChange}
}

// Health is nil while writes succeed; after a write failed, and until one succeeds again, an error saying
// since when and the first failure, in one line.
func (t *TrackedStore) Health() error {
	if !t.degraded.Load() {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.health
}

// Writes is how many writes (Put and Delete calls, whatever their outcome) the store was asked for since it
// was opened: mcp_bridge_state_writes_total. A plain tools/call adds none (make bench checks it).
func (t *TrackedStore) Writes() uint64 { return t.writes.Load() }

func (t *TrackedStore) Put(ctx context.Context, kind Kind, key string, value []byte) error {
	t.writes.Add(1)
	err := t.Store.Put(ctx, kind, key, value)
	t.note(err)
	return err
}

func (t *TrackedStore) Delete(ctx context.Context, kind Kind, key string) error {
	t.writes.Add(1)
	err := t.Store.Delete(ctx, kind, key)
	t.note(err)
	return err
}

// NoteFailedWrite tells the TrackedStore under s (if any) that a write failed before it reached it — a
// replica's lease on the record's session could not be taken, so the record was not written — so that its
// health (/readyz, the metric) says what the store's own writes would have said.
func NoteFailedWrite(s Store, err error) {
	if t, ok := under[*TrackedStore](s); ok {
		t.writes.Add(1)
		t.note(err)
	}
}

// note records the outcome of a write. The caller's own mistakes — a cancelled context, a closed store, a
// write under a fence another replica replaced —
// say nothing of the store's health.
func (t *TrackedStore) note(err error) {
	var held *HeldError
	if err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrClosed) || errors.Is(err, ErrFenced) || errors.As(err, &held)) {
		return
	}
	if err == nil && !t.degraded.Load() {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case err != nil:
		t.good = 0
		if t.health != nil {
			return
		}
		t.since = time.Now()
		t.health = fmt.Errorf("state store failing since %s: %w", t.since.UTC().Format(time.RFC3339), err)
		t.degraded.Store(true)
		level := slog.LevelError
		if !t.logged.IsZero() && t.since.Sub(t.logged) < LogEvery {
			level = slog.LevelDebug
		} else {
			t.logged = t.since
		}
		if t.onChange != nil {
			t.onChange(false)
		}
		// Logged once the new health is published (/readyz, the metric): whoever reads the line finds it.
		t.logger.Log(context.Background(), level, "state store: a write failed; the bridge keeps serving, but what changes until writes succeed again is lost if it restarts (logged once until it recovers)", "err", err)
	case t.health != nil:
		if t.good++; t.good < RecoverAfter {
			return
		}
		t.good = 0
		t.health = nil
		t.degraded.Store(false)
		if t.onChange != nil {
			t.onChange(true)
		}
		t.logger.Info("state store: writes succeed again", "failing_for", time.Since(t.since).Round(time.Millisecond).String())
	}
}
