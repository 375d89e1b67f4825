package mcpcore

import (
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The list cache answers tools/list, prompts/list, resources/list and resources/templates/list from the
// bridge where the protocol lets a client keep a list (docs/adr/0050):
//
//   - 2026-07-28 (SEP-2549): a list result carries ttlMs and cacheScope. It is kept for ttlMs, counted from
//     when the request was sent, and never when ttlMs is 0 or absent. A "public" result is shared by every
//     session to the same configured server and protocol version, whoever owns it; a "private" one only by
//     the sessions of the same principal (Session.owner); a missing or unknown scope is private.
//   - the handshake era (up to 2025-11-25) has no ttl: a list is kept, for the one connection it came
//     from, only if the server declared listChanged for it in its capabilities, and only until that
//     list_changed arrives or the connection is replaced.
//   - notifications/{tools,prompts,resources}/list_changed from any session of a server drops that server's
//     lists of that kind (resources/list_changed drops resources and templates, as the SDK does); a request
//     in flight when it arrived does not store its (possibly older) answer.
//
// The cache keeps the server's answer as it came; the server's policy filter is applied to every answer,
// cached or fresh (policy.go), so a cached list never shows what the policy hides. A cached answer is
// filtered once per entry and policy, and that filtered result is what every later hit returns. A call with
// host _meta, a call id, a progress callback or params _meta always goes upstream and is not stored: its
// answer may depend on them.

// maxListEntries bounds the cache. Past it, expired entries are dropped, then everything: a cache that
// fills only costs the round trips it would have saved.
const maxListEntries = 4096

type listKind uint8

const (
	listTools listKind = iota
	listPrompts
	listResources
	listTemplates
	numListKinds
)

var listMethods = [numListKinds]string{"tools/list", "prompts/list", "resources/list", "resources/templates/list"}

func (k listKind) method() string { return listMethods[k] }

// ListCacheObserver is an optional extension of Observer: when the core's Observer implements it, it is
// told of every list request the cache could answer (one that was not bypassed), and whether it did.
// The Observer's rules apply (cheap, non-blocking, concurrent; server names and methods only).
type ListCacheObserver interface {
	ListCacheLookup(server, method string, hit bool)
}

type listKey struct {
	server  string
	kind    listKind
	version string // the protocol version negotiated with the server
	// scope is "" for a public 2026-07-28 list, "p\x00"+owner for a private one, "s\x00"+session id on the
	// handshake era.
	scope  string
	cursor string
}

type listEntry struct {
	result  mcp.CacheableResult
	expires time.Time                // 2026-07-28; zero on the handshake era
	gen     weak.Pointer[generation] // handshake era: the connection the list came from
	// view is result as the last policy that read it filters it. Every session of a server shares its
	// ServerConfig.Policy, so a hit returns the very same filtered result again and again, and callers may
	// key what they derive from it (the server's encoded response) on its identity.
	view atomic.Pointer[listView]
}

// listView is a cached result filtered by one server policy (nil: everything allowed).
type listView struct {
	policy *Policy
	result mcp.CacheableResult
}

// stale reports whether e can no longer be served: expired, or its connection is gone.
func (e *listEntry) stale(now time.Time) bool {
	if e.expires.IsZero() {
		return e.gen.Value() == nil
	}
	return !now.Before(e.expires)
}

type listFamily struct {
	server string
	kind   listKind
}

// listCache is the core's cache of list results. Its methods are safe for concurrent use.
type listCache struct {
	now func() time.Time // time.Now; tests advance a fake clock

	mu      sync.Mutex             // guards the fields below
	entries map[listKey]*listEntry // at most maxListEntries
	epochs  map[listFamily]uint64  // bumped by every invalidation of a server's lists of one kind
}

func newListCache() *listCache {
	return &listCache{now: time.Now, entries: map[listKey]*listEntry{}, epochs: map[listFamily]uint64{}}
}

// bypassListCache reports whether a list call must go upstream and not be stored.
func bypassListCache(opts CallOptions, paramsMeta mcp.Meta) bool {
	return opts.CallID != "" || opts.Meta != nil || opts.OnProgress != nil || opts.OnLog != nil ||
		paramsMeta != nil
}

// sessionLists is a session's half of the core's list cache (Core.lists): which of its lists may be kept
// and under which key, and storing an answer when it comes. The session holds it as Session.lists.
type sessionLists struct {
	s *Session
}

// liveGeneration returns the session's connection if the session is Ready on it.
func (l *sessionLists) liveGeneration() *generation {
	s := l.s
	s.mu.Lock()
	st, g := s.state, s.gen
	s.mu.Unlock()
	if st != StateReady || g == nil || g.dead.Load() {
		return nil
	}
	return g
}

// listKeyFor is the key of a list of kind from g's server, or false when the era and the server's
// capabilities do not let it be kept. scope is the result's cacheScope (2026-07-28; "" when unknown yet).
func (l *sessionLists) listKeyFor(g *generation, kind listKind, cursor string, modern bool, scope string) (listKey, bool) {
	s := l.s
	r := g.cs.InitializeResult()
	if r == nil {
		return listKey{}, false
	}
	k := listKey{server: s.server.Name, kind: kind, version: r.ProtocolVersion, cursor: cursor}
	if modern {
		if scope != "public" {
			k.scope = "p\x00" + s.owner
		}
		return k, true
	}
	c := g.serverCaps()
	var changes bool
	switch kind {
	case listTools:
		changes = c.Tools != nil && c.Tools.ListChanged
	case listPrompts:
		changes = c.Prompts != nil && c.Prompts.ListChanged
	default:
		changes = c.Resources != nil && c.Resources.ListChanged
	}
	k.scope = "s\x00" + s.id
	return k, changes
}

// cachedList returns the list of kind at cursor from the cache, filtered by the session's policy, if it
// holds a live one for this session. It tells the ListCacheObserver of the lookup.
//
// The filtered result is kept with the entry: while the entry and the policy stay the same, every hit
// returns the same result object (filter runs once per entry and policy, and so does its learnListed). A
// list_changed, an expiry or a new connection replaces the entry and so the result; a Policy is not
// modified once the core has it (Options.Servers), so its identity stands for its content.
func cachedList[R mcp.CacheableResult](s *Session, kind listKind, cursor string, bypass bool, filter func(R) R) (R, bool) {
	var zero R
	if bypass {
		return zero, false
	}
	g := s.lists.liveGeneration()
	if g == nil {
		return zero, false
	}
	c := s.core.lists
	var e *listEntry
	if g.modern() {
		// A public list first (shared by every principal), then this principal's private one.
		pub, ok := s.lists.listKeyFor(g, kind, cursor, true, "public")
		if ok {
			priv, _ := s.lists.listKeyFor(g, kind, cursor, true, "")
			e = c.getModern(pub, priv)
		}
	} else if k, ok := s.lists.listKeyFor(g, kind, cursor, false, ""); ok {
		e = c.get(k, g)
	} else {
		return zero, false // the server never says when this list changes: it is not kept, nor counted
	}
	r, hit := zero, false
	if e != nil {
		r, hit = e.result.(R)
	}
	if o, ok := s.core.obs.(ListCacheObserver); ok {
		o.ListCacheLookup(s.server.Name, kind.method(), hit)
	}
	if !hit {
		return zero, false
	}
	p := s.policy()
	if v := e.view.Load(); v != nil && v.policy == p {
		if fr, ok := v.result.(R); ok {
			return fr, true
		}
	}
	fr := filter(r)
	e.view.Store(&listView{policy: p, result: fr})
	return fr, true
}

// listFill prepares to store the answer to a list request about to be sent on g: the returned function
// stores r (an unfiltered result) if the era, the server and r's ttl and scope allow it, and no
// list_changed of this kind arrived in between.
func (l *sessionLists) listFill(g *generation, kind listKind, cursor string, bypass bool) func(r mcp.CacheableResult) {
	s := l.s
	if bypass {
		return func(mcp.CacheableResult) {}
	}
	c := s.core.lists
	fam := listFamily{s.server.Name, kind}
	c.mu.Lock()
	epoch := c.epochs[fam]
	c.mu.Unlock()
	sent := c.now()
	return func(r mcp.CacheableResult) {
		if r == nil {
			return
		}
		modern := g.modern()
		k, ok := s.lists.listKeyFor(g, kind, cursor, modern, r.GetCacheScope())
		if !ok {
			return
		}
		e := &listEntry{result: r}
		if modern {
			if r.GetTTLMs() <= 0 {
				return
			}
			e.expires = sent.Add(time.Duration(r.GetTTLMs()) * time.Millisecond)
		} else {
			e.gen = weak.Make(g)
		}
		c.put(k, e, fam, epoch)
	}
}

// get returns the entry at k if it is live: not expired (2026-07-28), from connection g (handshake era).
func (c *listCache) get(k listKey, g *generation) *listEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.entries[k]
	if e == nil {
		return nil
	}
	if (g == nil && !c.now().Before(e.expires)) || (g != nil && e.gen != weak.Make(g)) {
		delete(c.entries, k)
		return nil
	}
	return e
}

// getModern returns the 2026-07-28 entry at pub if it is live, else the one at priv, under one lock.
func (c *listCache) getModern(pub, priv listKey) *listEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	for _, k := range [2]listKey{pub, priv} {
		e := c.entries[k]
		if e == nil {
			continue
		}
		if !now.Before(e.expires) {
			delete(c.entries, k)
			continue
		}
		return e
	}
	return nil
}

func (c *listCache) put(k listKey, e *listEntry, fam listFamily, epoch uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.epochs[fam] != epoch {
		return // a list_changed arrived while the request was in flight
	}
	if len(c.entries) >= maxListEntries {
		now := c.now()
		for k, e := range c.entries {
			if e.stale(now) {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= maxListEntries {
			clear(c.entries)
		}
	}
	c.entries[k] = e
}

// listChanged drops server's lists that a notifications/…/list_changed method makes stale. It reports
// whether method was one.
func (c *listCache) listChanged(server, method string) bool {
	var kinds []listKind
	switch method {
	case "notifications/tools/list_changed":
		kinds = []listKind{listTools}
	case "notifications/prompts/list_changed":
		kinds = []listKind{listPrompts}
	case "notifications/resources/list_changed":
		kinds = []listKind{listResources, listTemplates}
	default:
		return false
	}
	if c == nil {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, kind := range kinds {
		c.epochs[listFamily{server, kind}]++
	}
	for k := range c.entries {
		if k.server == server && (k.kind == kinds[0] || (len(kinds) > 1 && k.kind == kinds[1])) {
			delete(c.entries, k)
		}
	}
	return true
}

// toolsEpoch is the count of invalidations of server's tool lists (a list_changed bumps it): what a
// connection found absent from the list under one epoch may be there under the next (paramheaders.go).
func (c *listCache) toolsEpoch(server string) uint64 {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.epochs[listFamily{server, listTools}]
}

// dropSession forgets the handshake-era lists of a session that closed.
func (c *listCache) dropSession(id string) {
	if c == nil {
		return
	}
	scope := "s\x00" + id
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.entries {
		if k.scope == scope {
			delete(c.entries, k)
		}
	}
}

// cursorParams are the four list methods' params.
type cursorParams interface {
	*mcp.ListToolsParams | *mcp.ListPromptsParams | *mcp.ListResourcesParams | *mcp.ListResourceTemplatesParams
}

// cursorOf returns params' cursor ("" for nil params).
func cursorOf[P cursorParams](params P) string {
	switch p := any(params).(type) {
	case *mcp.ListToolsParams:
		if p != nil {
			return p.Cursor
		}
	case *mcp.ListPromptsParams:
		if p != nil {
			return p.Cursor
		}
	case *mcp.ListResourcesParams:
		if p != nil {
			return p.Cursor
		}
	case *mcp.ListResourceTemplatesParams:
		if p != nil {
			return p.Cursor
		}
	}
	return ""
}

// paramsMeta returns params' _meta (nil for nil params).
func paramsMeta[P cursorParams](params P) mcp.Meta {
	switch p := any(params).(type) {
	case *mcp.ListToolsParams:
		if p != nil {
			return p.Meta
		}
	case *mcp.ListPromptsParams:
		if p != nil {
			return p.Meta
		}
	case *mcp.ListResourcesParams:
		if p != nil {
			return p.Meta
		}
	case *mcp.ListResourceTemplatesParams:
		if p != nil {
			return p.Meta
		}
	}
	return nil
}
