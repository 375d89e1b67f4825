package mcpcore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// listServer is an SDK server whose list results carry the cache fields cache decides (2026-07-28), with
// counters of the list requests that reached it. Its tools are "echo" and "hidden"; the tool "add" adds one.
type listServer struct {
	srv   *mcp.Server
	lists sync.Map // method → *atomic.Int64
	mu    sync.Mutex
	ttl   int
	scope string
}

func newListServer(ttl int, scope string, caps *mcp.ServerCapabilities) *listServer {
	ls := &listServer{ttl: ttl, scope: scope}
	ls.srv = mcp.NewServer(&mcp.Implementation{Name: "list-server", Version: "1"}, &mcp.ServerOptions{
		Capabilities: caps,
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
			ls.mu.Lock()
			c.TTLMs, c.CacheScope = ls.ttl, ls.scope
			ls.mu.Unlock()
		},
	})
	ls.srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if strings.HasSuffix(method, "/list") {
				n, _ := ls.lists.LoadOrStore(method, new(atomic.Int64))
				n.(*atomic.Int64).Add(1)
			}
			return next(ctx, method, req)
		}
	})
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	added := 0
	ls.srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: objectSchema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("echo"), nil
	})
	ls.srv.AddTool(&mcp.Tool{Name: "hidden", InputSchema: objectSchema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("hidden"), nil
	})
	ls.srv.AddTool(&mcp.Tool{Name: "add", InputSchema: objectSchema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ls.mu.Lock()
		added++
		name := fmt.Sprintf("added-%d", added)
		ls.mu.Unlock()
		ls.srv.AddTool(&mcp.Tool{Name: name, InputSchema: objectSchema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("new"), nil
		})
		return text(name), nil
	})
	ls.srv.AddPrompt(&mcp.Prompt{Name: "greet"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	})
	return ls
}

// served is how many requests of method reached the server.
func (ls *listServer) served(method string) int64 {
	n, ok := ls.lists.Load(method)
	if !ok {
		return 0
	}
	return n.(*atomic.Int64).Load()
}

// fakeClock is the list cache's clock in these tests: time moves only when the test says so.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	f.mu.Unlock()
}

// lookups counts what the core tells its ListCacheObserver.
type lookups struct {
	NopObserver
	hits, misses atomic.Int64
}

func (l *lookups) ListCacheLookup(_, method string, hit bool) {
	if method != "tools/list" {
		return
	}
	if hit {
		l.hits.Add(1)
	} else {
		l.misses.Add(1)
	}
}

// listCore is a core with servers "list" (everything allowed) and "strict" (the policy hides "hidden"), both
// reaching ls over in-memory connections, the list cache on a fake clock, and obs as its Observer.
func listCore(t *testing.T, ls *listServer, obs Observer) (*Core, *fakeClock) {
	t.Helper()
	c, _ := newTestCore(t, map[string]ServerConfig{
		"list":   {Transport: transportTest},
		"strict": {Transport: transportTest, Policy: &Policy{Tools: Filter{Deny: []string{"hidden"}}}},
	}, func(o *Options) { o.Observer = obs })
	c.testDial = func(ServerConfig) (mcp.Transport, error) {
		ct, st := mcp.NewInMemoryTransports()
		if _, err := ls.srv.Connect(context.Background(), st, nil); err != nil {
			return nil, err
		}
		return ct, nil
	}
	clock := &fakeClock{now: time.Unix(1_800_000_000, 0)}
	c.lists.now = clock.Now
	return c, clock
}

func openAs(t *testing.T, c *Core, owner, server, pin string) *Session {
	t.Helper()
	s, err := c.Open(tctx(t), OpenParams{Owner: owner, Server: server, ProtocolVersion: pin})
	if err != nil {
		t.Fatalf("Open(%s as %s): %v", server, owner, err)
	}
	return s
}

func toolNames(t *testing.T, s *Session) []string {
	t.Helper()
	r, err := s.ListTools(tctx(t), nil, CallOptions{})
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	var names []string
	for _, tool := range r.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// TestListCacheScopes: on 2026-07-28 a public list is shared by every principal's sessions to the server, a
// private one (and one of an unknown scope) only by the same principal's; each is kept while its ttl holds.
func TestListCacheScopes(t *testing.T) {
	for _, tc := range []struct {
		scope string
		// bobShares: bob's first list is answered from alice's
		bobShares bool
	}{
		{"public", true},
		{"private", false},
		{"shared-by-nobody", false}, // an unknown scope is private
	} {
		t.Run(tc.scope, func(t *testing.T) {
			ls := newListServer(60_000, tc.scope, nil)
			obs := &lookups{}
			c, clock := listCore(t, ls, obs)
			alice1, alice2 := openAs(t, c, "alice", "list", ""), openAs(t, c, "alice", "list", "")
			bob := openAs(t, c, "bob", "list", "")

			toolNames(t, alice1)
			toolNames(t, alice1)
			toolNames(t, alice2) // another session of the same principal
			if got := ls.served("tools/list"); got != 1 {
				t.Fatalf("alice's three lists reached the server %d times, want 1", got)
			}
			toolNames(t, bob)
			want := int64(2)
			if tc.bobShares {
				want = 1
			}
			if got := ls.served("tools/list"); got != want {
				t.Fatalf("after bob's list the server answered %d lists, want %d", got, want)
			}

			// Past the ttl the list is fetched again. (alice1's and bob's SDK sessions keep their own copy on
			// the real clock, so a fresh session asks.)
			clock.advance(61 * time.Second)
			toolNames(t, openAs(t, c, "alice", "list", ""))
			if got := ls.served("tools/list"); got != want+1 {
				t.Fatalf("after the ttl the server answered %d lists, want %d", got, want+1)
			}
			if obs.hits.Load() == 0 || obs.misses.Load() == 0 {
				t.Errorf("observer: %d hits, %d misses; want both counted", obs.hits.Load(), obs.misses.Load())
			}
		})
	}
}

// TestListCacheNoTTL: a 2026-07-28 list without a ttl is never kept.
func TestListCacheNoTTL(t *testing.T) {
	ls := newListServer(0, "public", nil)
	c, _ := listCore(t, ls, nil)
	a, b := openAs(t, c, "alice", "list", ""), openAs(t, c, "alice", "list", "")
	toolNames(t, a)
	toolNames(t, b)
	if got := ls.served("tools/list"); got != 2 {
		t.Fatalf("the server answered %d lists, want 2", got)
	}
}

// TestListCacheListChanged: a list_changed drops the cached lists of that kind on both eras, so the next
// list shows the change; on the handshake era a list is kept only for its own connection.
func TestListCacheListChanged(t *testing.T) {
	for _, pin := range []string{"", "2025-11-25"} {
		t.Run("pin="+pin, func(t *testing.T) {
			ls := newListServer(60_000, "public", nil)
			c, _ := listCore(t, ls, nil)
			s := openAs(t, c, "alice", "list", pin)
			before := toolNames(t, s)
			if got := toolNames(t, s); !slices.Equal(got, before) {
				t.Fatalf("second list %v, first %v", got, before)
			}
			if got := ls.served("tools/list"); got != 1 {
				t.Fatalf("two lists reached the server %d times, want 1", got)
			}
			prompts := func() {
				if _, err := s.ListPrompts(tctx(t), nil, CallOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			prompts()
			prompts()

			sub := s.Subscribe(64)
			added := callText(t, s, "add", nil, CallOptions{})
			waitEvent(t, sub, func(ev Event) bool { return ev.Kind == EventToolsListChanged })
			if got := toolNames(t, s); !slices.Contains(got, added) {
				t.Fatalf("after list_changed the list is %v, without %s", got, added)
			}
			if got := ls.served("tools/list"); got != 2 {
				t.Fatalf("after list_changed the server answered %d lists, want 2", got)
			}
			// Only the tools changed: the prompts are still cached.
			prompts()
			if got := ls.served("prompts/list"); got != 1 {
				t.Errorf("prompts/list reached the server %d times, want 1", got)
			}
			if pin != "" {
				// Handshake era: another session (its own connection) does not use s's list.
				toolNames(t, openAs(t, c, "alice", "list", pin))
				if got := ls.served("tools/list"); got != 3 {
					t.Errorf("a second handshake-era session: the server answered %d lists, want 3", got)
				}
			}
		})
	}
}

// TestListCacheHandshakeNeedsListChanged: on the handshake era a server that does not declare listChanged
// for its tools never has them cached.
func TestListCacheHandshakeNeedsListChanged(t *testing.T) {
	ls := newListServer(0, "", &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: false}})
	c, _ := listCore(t, ls, nil)
	s := openAs(t, c, "alice", "list", "2025-11-25")
	if r := s.lists.liveGeneration(); r == nil || r.serverCaps().Tools == nil || r.serverCaps().Tools.ListChanged {
		t.Skip("the SDK server declared tools.listChanged anyway") // the premise, not the cache, failed
	}
	toolNames(t, s)
	toolNames(t, s)
	if got := ls.served("tools/list"); got != 2 {
		t.Fatalf("the server answered %d lists, want 2", got)
	}
}

// TestListCachePolicy: the server's policy filter applies to cached lists exactly as to fresh ones, and
// the cache keeps what the server said, so a server without the policy still sees everything.
func TestListCachePolicy(t *testing.T) {
	for _, pin := range []string{"", "2025-11-25"} {
		t.Run("pin="+pin, func(t *testing.T) {
			ls := newListServer(60_000, "public", nil)
			c, _ := listCore(t, ls, nil)
			strict := openAs(t, c, "alice", "strict", pin)
			for i := range 3 {
				if got := toolNames(t, strict); slices.Contains(got, "hidden") || !slices.Contains(got, "echo") {
					t.Fatalf("list %d on strict: %v", i, got)
				}
			}
			if got := ls.served("tools/list"); got != 1 {
				t.Fatalf("three lists on strict reached the server %d times, want 1", got)
			}
			if got := toolNames(t, openAs(t, c, "alice", "list", pin)); !slices.Contains(got, "hidden") {
				t.Fatalf("the unfiltered server's list %v lacks hidden", got)
			}
		})
	}
}

// TestListCacheBypass: a list call with host _meta or a call id goes upstream and is not stored.
func TestListCacheBypass(t *testing.T) {
	ls := newListServer(60_000, "public", nil)
	c, _ := listCore(t, ls, nil)
	s := openAs(t, c, "alice", "list", "")
	for _, opts := range []CallOptions{{Meta: map[string]any{"k": "v"}}, {CallID: "call-1"}} {
		if _, err := s.ListTools(tctx(t), nil, opts); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := cachedList(s, listTools, "", false, func(r *mcp.ListToolsResult) *mcp.ListToolsResult { return r }); ok {
		t.Fatal("a bypassing call was stored")
	}
}

// TestListCacheInFlight: an answer to a request sent before a list_changed is not stored, and entries of a
// closed session go.
func TestListCacheInFlight(t *testing.T) {
	ls := newListServer(60_000, "public", nil)
	c, _ := listCore(t, ls, nil)
	for _, pin := range []string{"", "2025-11-25"} {
		s := openAs(t, c, "alice", "list", pin)
		g := s.lists.liveGeneration()
		res := &mcp.ListToolsResult{Tools: []*mcp.Tool{{Name: "old"}}}
		res.TTLMs, res.CacheScope = 60_000, "public"

		fill := s.lists.listFill(g, listTools, "", false)
		c.lists.listChanged("list", "notifications/tools/list_changed")
		fill(res)
		if _, ok := cachedList(s, listTools, "", false, func(r *mcp.ListToolsResult) *mcp.ListToolsResult { return r }); ok {
			t.Fatalf("pin=%q: an answer sent before list_changed was stored", pin)
		}
		s.lists.listFill(g, listTools, "", false)(res)
		if _, ok := cachedList(s, listTools, "", false, func(r *mcp.ListToolsResult) *mcp.ListToolsResult { return r }); !ok {
			t.Fatalf("pin=%q: an answer was not stored", pin)
		}
		// A missing scope is private: another principal does not see it.
		res2 := &mcp.ListPromptsResult{Prompts: []*mcp.Prompt{{Name: "mine"}}}
		res2.TTLMs = 60_000
		s.lists.listFill(g, listPrompts, "", false)(res2)
		if pin == "" {
			if _, ok := cachedList(s, listPrompts, "", false, func(r *mcp.ListPromptsResult) *mcp.ListPromptsResult { return r }); !ok {
				t.Fatal("a list without cacheScope was not kept for its principal")
			}
			bob := openAs(t, c, "bob", "list", pin)
			if _, ok := cachedList(bob, listPrompts, "", false, func(r *mcp.ListPromptsResult) *mcp.ListPromptsResult { return r }); ok {
				t.Fatal("a list without cacheScope was shared with another principal")
			}
		}
		if err := s.Close(tctx(t)); err != nil {
			t.Fatal(err)
		}
	}
	c.lists.mu.Lock()
	defer c.lists.mu.Unlock()
	for k := range c.lists.entries {
		if strings.HasPrefix(k.scope, "s\x00") {
			t.Errorf("a closed session's handshake-era list is still kept: %q", k.scope)
		}
	}
}

// TestListCacheViewIdentity: a hit returns the same filtered result object while the entry and the policy
// hold (the server keys its encoded response on it), and a list_changed replaces it.
func TestListCacheViewIdentity(t *testing.T) {
	for _, server := range []string{"list", "strict"} {
		t.Run(server, func(t *testing.T) {
			ls := newListServer(60_000, "public", nil)
			c, _ := listCore(t, ls, nil)
			s := openAs(t, c, "alice", server, "")
			list := func() *mcp.ListToolsResult {
				t.Helper()
				r, err := s.ListTools(tctx(t), nil, CallOptions{})
				if err != nil {
					t.Fatal(err)
				}
				return r
			}
			list() // fills the cache
			first, second := list(), list()
			if first != second {
				t.Fatal("two hits returned different result objects")
			}
			if server == "strict" && slices.ContainsFunc(first.Tools, func(x *mcp.Tool) bool { return x.Name == "hidden" }) {
				t.Fatal("the cached view shows a tool the policy hides")
			}
			c.lists.listChanged(server, "notifications/tools/list_changed")
			list() // fills the cache again
			if third := list(); third == first {
				t.Fatal("after list_changed a hit returned the old result object")
			}
		})
	}
}
