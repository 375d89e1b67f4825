package mcpcore

import (
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-bridge/mcp-bridge/internal/state"
)

// heldBy names what the core still keeps under session s's id (docs/adr/0109): the registry, the dispatcher's
// pending requests and their count, its call-id records, its restored rounds and approvals, the list cache.
func heldBy(c *Core, s *Session) []string {
	var out []string
	c.mu.Lock()
	if _, ok := c.sessions[s.id]; ok {
		out = append(out, "Core.sessions")
	}
	c.mu.Unlock()
	c.dispatcher.mu.Lock()
	for _, e := range c.dispatcher.pending {
		if e.req.SessionID == s.id {
			out = append(out, "Dispatcher.pending")
			break
		}
	}
	if s.pending.n != 0 {
		out = append(out, "Session.pending")
	}
	c.dispatcher.mu.Unlock()
	if c.callIDs.scheduled(s) > 0 {
		out = append(out, "Session.callIDs")
	}
	if s.restoredRounds.size()+s.restoredApprovals.size() > 0 {
		out = append(out, "Session.restored")
	}
	c.lists.mu.Lock()
	for k := range c.lists.entries {
		if k.scope == "s\x00"+s.id {
			out = append(out, "listCache")
			break
		}
	}
	c.lists.mu.Unlock()
	return out
}

// A session's facts go with it: while it is open the registry, the dispatcher (a pending request) and the
// call-id schedule hold it; once its Close has returned nothing keyed by its id is left but the closed
// session kept for Options.ClosedRetention.
func TestClosedSessionLeavesNoFactBehind(t *testing.T) {
	store := state.NewMemory()
	c := memCore(t, nil, func(o *Options) { o.Store = store })
	s, _ := completeCall(t, c, store, "call-done")

	sub := s.Subscribe(0)
	defer sub.Close()
	callDone := make(chan error, 1)
	go func() { // ends when the session's Close ends the call
		_, err := s.CallTool(tctx(t), &mcp.CallToolParams{Name: "ask", Arguments: map[string]any{"kinds": []any{"elicitation"}}}, CallOptions{})
		callDone <- err
	}()
	waitEvent(t, sub, func(e Event) bool { return e.Kind == EventRequestCreated })
	got := strings.Join(heldBy(c, s), ",")
	if want := "Core.sessions,Dispatcher.pending,Session.pending,Session.callIDs"; !strings.HasPrefix(got, want) {
		t.Fatalf("an open session with a pending request and a kept call id is held by %q, want at least %q", got, want)
	}

	if err := s.Close(tctx(t)); err != nil {
		t.Fatal(err)
	}
	<-callDone
	if got := heldBy(c, s); len(got) != 0 {
		t.Errorf("a closed session is still held by %v", got)
	}
	if got, err := c.Session(s.id); err != nil || got != s {
		t.Errorf("Session(closed id) = %v, %v; want the closed session, kept for ClosedRetention", got, err)
	}
}

// A session being opened is registered: it counts against the limits (the bridge's and its owner's) and its
// events are routed, but Session and Sessions do not show it until Open has made it open.
func TestOpeningSessionCountsAgainstTheLimits(t *testing.T) {
	c := New(Options{Logger: slog.New(slog.DiscardHandler), Limits: Limits{MaxSessions: 2, MaxSessionsPerOwner: 1}})
	cfg := ServerConfig{Name: "x", Transport: TransportStreamableHTTP, URL: "http://127.0.0.1:1/mcp"}
	opening := newSession(c, "s-opening", OpenParams{Owner: "alice"}, cfg)
	if err := c.register(opening); err != nil {
		t.Fatal(err)
	}
	if got := c.Sessions(""); len(got) != 0 {
		t.Errorf("Sessions lists %d sessions while one is being opened, want 0", len(got))
	}
	if _, err := c.Session(opening.id); !errors.Is(err, ErrSessionNotFound) {
		t.Errorf("Session(opening) = %v, want ErrSessionNotFound", err)
	}
	if c.sessionLog(opening.id) != opening.events {
		t.Error("an opening session's events are not routed to its log")
	}
	if err := c.register(newSession(c, "s-alice2", OpenParams{Owner: "alice"}, cfg)); !errors.Is(err, ErrTooManySessions) {
		t.Errorf("alice's second session while one is opening: %v, want ErrTooManySessions", err)
	}
	bob := newSession(c, "s-bob", OpenParams{Owner: "bob"}, cfg)
	if err := c.register(bob); err != nil {
		t.Fatalf("bob's session: %v", err)
	}
	if err := c.register(newSession(c, "s-carol", OpenParams{Owner: "carol"}, cfg)); !errors.Is(err, ErrTooManySessions) {
		t.Errorf("a third session past maxSessions 2: %v, want ErrTooManySessions", err)
	}
	c.unregister(opening)
	c.unregister(opening) // idempotent
	if c.sessionLog(opening.id) != nil {
		t.Error("an unregistered session's events are still routed")
	}
	if err := c.register(newSession(c, "s-alice3", OpenParams{Owner: "alice"}, cfg)); err != nil {
		t.Errorf("alice's session after her opening one failed: %v", err)
	}
	c.unregister(bob)
	if err := c.Close(tctx(t)); err != nil {
		t.Fatal(err)
	}
}

// A session already registered is not restored a second time (Restore and Adopt of one id): the duplicate
// check and the registration are one step, and the registry keeps the first.
func TestRestoringARegisteredSessionIsRefused(t *testing.T) {
	store := state.NewMemory()
	withStore := func(o *Options) { o.Store = store }
	c1 := memCore(t, nil, withStore)
	s1 := open(t, c1, "mem", "", allCaps)
	c1.Drain()
	if err := c1.Close(tctx(t)); err != nil {
		t.Fatal(err)
	}
	c2, s2 := restoredSession(t, withStore, s1.ID())
	raw, err := store.Get(tctx(t), state.KindSession, s1.ID())
	if err != nil {
		t.Fatal(err)
	}
	var r sessionRecord
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatal(err)
	}
	if s, err := c2.restoreSession(r); err == nil {
		_ = s.Close(tctx(t))
		t.Fatal("a registered session was restored a second time")
	}
	if got, err := c2.Session(s1.ID()); err != nil || got != s2 {
		t.Errorf("Session = %p, %v; want the first restored session %p", got, err, s2)
	}
}
