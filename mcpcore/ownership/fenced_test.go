package ownership

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/mcp-bridge/mcp-bridge/internal/state"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// fakeFences holds the fences of a replica's sessions.
type fakeFences struct {
	mu       sync.Mutex
	held     map[string]string
	gone     map[string]bool
	acquired []string
	forgot   []string
}

func (f *fakeFences) Fence(s string) (state.Fence, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	tok, ok := f.held[s]
	return state.Fence{Session: s, Token: tok}, ok
}

func (f *fakeFences) Acquire(_ context.Context, s string) (state.Fence, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.acquired = append(f.acquired, s)
	f.held[s] = "new-" + s
	return state.Fence{Session: s, Token: "new-" + s}, nil
}

func (f *fakeFences) Forget(_ context.Context, s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forgot = append(f.forgot, s)
}

// fenceLog is a store that records the fence each write carried.
type fenceLog struct {
	state.Store
	mu     sync.Mutex
	writes []string // "op kind/key token"
}

func (l *fenceLog) note(ctx context.Context, op string, kind state.Kind, key string) {
	f, _ := state.FenceOf(ctx)
	l.mu.Lock()
	l.writes = append(l.writes, op+" "+string(kind)+"/"+key+" "+f.Token)
	l.mu.Unlock()
}

func (l *fenceLog) Put(ctx context.Context, kind state.Kind, key string, v []byte) error {
	l.note(ctx, "put", kind, key)
	return l.Store.Put(ctx, kind, key, v)
}

func (l *fenceLog) Delete(ctx context.Context, kind state.Kind, key string) error {
	l.note(ctx, "del", kind, key)
	return l.Store.Delete(ctx, kind, key)
}

func TestFencedStore(t *testing.T) {
	ctx := context.Background()
	fences := &fakeFences{held: map[string]string{"s-a.1": "tok1"}, gone: map[string]bool{"s-a.2": true}}
	inner := &fenceLog{Store: state.NewMemory()}
	s := FencedStore(inner, fences, func(id string) bool { return fences.gone[id] })
	// A pending request's record as the core writes it (mcpcore/durable.go): the request names its session.
	req, _ := json.Marshal(map[string]any{"v": 1, "request": mcpcore.PendingRequest{ID: "req-1", SessionID: "s-a.1"}})
	steps := []struct {
		name string
		do   func() error
		err  error
	}{
		{"session of a held session", func() error { return s.Put(ctx, state.KindSession, "s-a.1", []byte("{}")) }, nil},
		{"round of a held session", func() error { return s.Put(ctx, state.KindCall, "s-a.1/call-1", []byte("{}")) }, nil},
		{"request: session from the record", func() error { return s.Put(ctx, state.KindRequest, "req-1", req) }, nil},
		{"request deleted: session remembered", func() error { return s.Delete(ctx, state.KindRequest, "req-1") }, nil},
		{"a session given up", func() error { return s.Put(ctx, state.KindSession, "s-a.2", []byte("{}")) }, ErrNotHeld},
		{"a session given up, delete", func() error { return s.Delete(ctx, state.KindCall, "s-a.2/call-1") }, ErrNotHeld},
		{"a new session takes its lease", func() error { return s.Put(ctx, state.KindSession, "s-a.3", []byte("{}")) }, nil},
		{"grants are not fenced", func() error { return s.Put(ctx, state.KindGrant, "g", []byte("{}")) }, nil},
		{"the session ends", func() error { return s.Delete(ctx, state.KindSession, "s-a.1") }, nil},
	}
	for _, st := range steps {
		if err := st.do(); !errors.Is(err, st.err) {
			t.Errorf("%s: %v, want %v", st.name, err, st.err)
		}
	}
	want := []string{
		"put sessions/s-a.1 tok1", "put calls/s-a.1/call-1 tok1", "put requests/req-1 tok1", "del requests/req-1 tok1",
		"put sessions/s-a.3 new-s-a.3", "put grants/g ", "del sessions/s-a.1 tok1",
	}
	if diff := cmp.Diff(want, inner.writes); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"s-a.3"}, fences.acquired); diff != "" {
		t.Errorf("acquired (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"s-a.1"}, fences.forgot); diff != "" {
		t.Errorf("forgot (-want +got):\n%s", diff)
	}
}
