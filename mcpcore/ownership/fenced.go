package ownership

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/mcp-bridge/mcp-bridge/internal/state"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// The fenced store: every write of a session's records carries the fence of this replica's lease on it
// (docs/adr/0070-replicas-share-state.md), so that a replica that lost a session cannot overwrite what
// its new owner writes.

// Fences gives the fence of the sessions a replica holds (state.Leases).
type Fences interface {
	// Fence is the fence of a session this replica holds.
	Fence(session string) (state.Fence, bool)
	// Acquire takes the lease of a session nobody holds (a session this replica just opened).
	Acquire(ctx context.Context, session string) (state.Fence, error)
	// Forget drops the lease of a session that ended for good.
	Forget(ctx context.Context, session string)
}

// ErrNotHeld is state.ErrNotHeld: a write for a session this replica does not hold (any more).
var ErrNotHeld = state.ErrNotHeld

// FencedStore wraps the shared store so that every write of a session's records carries the fence of the
// replica's lease on it (state.WithFence), and is refused at once (ErrNotHeld) for a session this replica
// gave up or lost. A session's first write takes its lease (a session this replica just opened);
// gone(session) reports the sessions the replica gave up or lost, whose writes are refused instead.
// OAuth grants are shared and not fenced.
func FencedStore(s state.Store, fences Fences, gone func(session string) bool) state.Store {
	return &fencedStore{Store: s, fences: fences, gone: gone, reqs: map[string]string{}}
}

type fencedStore struct {
	state.Store
	fences Fences
	gone   func(string) bool

	mu   sync.Mutex        // guards reqs
	reqs map[string]string // request id → session id, learned from the requests' records
}

// sessionOf is the session a record belongs to; "" for records of no session. A request's is learned
// from its record (Put, List) and remembered for its deletion.
func (f *fencedStore) sessionOf(kind state.Kind, key string, value []byte) string {
	if kind == state.KindRequest {
		f.mu.Lock()
		sid := f.reqs[key]
		f.mu.Unlock()
		if sid != "" {
			return sid
		}
	}
	return mcpcore.RecordSession(kind, key, value)
}

func (f *fencedStore) fenced(ctx context.Context, sid string) (context.Context, error) {
	fence, ok := f.fences.Fence(sid)
	if !ok {
		if f.gone(sid) {
			return nil, fmt.Errorf("%w %s", ErrNotHeld, sid)
		}
		var err error
		if fence, err = f.fences.Acquire(ctx, sid); err != nil {
			return nil, err
		}
	}
	return state.WithFence(ctx, fence), nil
}

func (f *fencedStore) Put(ctx context.Context, kind state.Kind, key string, value []byte) error {
	sid := f.sessionOf(kind, key, value)
	if sid == "" {
		return f.Store.Put(ctx, kind, key, value)
	}
	fctx, err := f.fenced(ctx, sid)
	if err != nil {
		if !errors.Is(err, ErrNotHeld) {
			state.NoteFailedWrite(f.Store, err) // the lease is the write's first step: its failure is the store's
		}
		return err
	}
	if err := f.Store.Put(fctx, kind, key, value); err != nil {
		return err
	}
	if kind == state.KindRequest {
		f.mu.Lock()
		f.reqs[key] = sid
		f.mu.Unlock()
	}
	return nil
}

func (f *fencedStore) Delete(ctx context.Context, kind state.Kind, key string) error {
	sid := f.sessionOf(kind, key, nil)
	if sid == "" {
		return f.Store.Delete(ctx, kind, key)
	}
	fence, ok := f.fences.Fence(sid)
	if !ok {
		return fmt.Errorf("%w %s", ErrNotHeld, sid)
	}
	if err := f.Store.Delete(state.WithFence(ctx, fence), kind, key); err != nil {
		return err
	}
	switch kind {
	case state.KindRequest:
		f.mu.Lock()
		delete(f.reqs, key)
		f.mu.Unlock()
	case state.KindSession:
		f.fences.Forget(ctx, sid)
	}
	return nil
}

// List learns which session each request record belongs to, so that its later deletion is fenced.
func (f *fencedStore) List(ctx context.Context, kind state.Kind, fn func(key string, value []byte) error) error {
	if kind != state.KindRequest {
		return f.Store.List(ctx, kind, fn)
	}
	return f.Store.List(ctx, kind, func(key string, value []byte) error {
		if sid := mcpcore.RecordSession(kind, key, value); sid != "" {
			f.mu.Lock()
			f.reqs[key] = sid
			f.mu.Unlock()
		}
		return fn(key, value)
	})
}
