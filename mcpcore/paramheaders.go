package mcpcore

import (
	"context"
	"errors"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxToolsPages bounds the pages of tools/list learnTool follows looking for one tool.
const maxToolsPages = 100

// paramHeaders reports whether calls on g carry x-mcp-header parameters in Mcp-Param-* headers: a
// 2026-07-28 Streamable HTTP connection.
func (g *generation) paramHeaders() bool {
	return g.s.server.Transport == TransportStreamableHTTP && g.modern()
}

// callTool sends a tools/call on g (run's op; call is the host call it belongs to), with the tool's
// x-mcp-header parameters (learnTool). A server that refuses it with HeaderMismatch (-32020) may have
// changed the tool's schema since the connection listed it; the spec (2026-07-28, transports, Streamable
// HTTP, custom headers, client behaviour): the client SHOULD call tools/list to check for changes to the
// tool's inputSchema, then retry the original request with the appropriate headers. The server refused the
// request before running it, so the bridge does that, once: one listing, one retry; a second HeaderMismatch
// is the call's answer (docs/adr/0110).
func (g *generation) callTool(ctx context.Context, call *activeCall, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	g.learnTool(ctx, params.Name)
	r, err := g.cs.CallTool(ctx, params)
	if err == nil || !g.paramHeaders() || !headerMismatch(call, err) {
		return r, err
	}
	g.s.logger.Info("the server refused a call's headers (HeaderMismatch): listing the tools again and retrying once", "tool", params.Name, "call_id", call.id)
	g.toolsListing.Lock()
	g.listTool(ctx, params.Name)
	g.toolsListing.Unlock()
	call.resetAttempt() // classify judges the retry
	return g.cs.CallTool(ctx, params)
}

// headerMismatch reports whether err is the server's HeaderMismatch answer to call's request.
func headerMismatch(call *activeCall, err error) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we) && we.Code == mcp.CodeHeaderMismatch && call.fromServer(we)
}

// learnTool makes g's SDK session know the definition of the named tool before a tools/call on a 2026-07-28
// Streamable HTTP connection: the SDK mirrors a tool's x-mcp-header parameters into Mcp-Param-* headers (the
// spec: clients MUST) only from a definition a tools/list on the same connection returned, and the bridge
// answers hosts' lists from its own cache, so the connection's first call — the session's first, or the
// first after a reconnect — would go without them and a server that checks them refuses it (HeaderMismatch).
// It lists the tools, page by page until it finds the tool, once per connection (a list_changed drops what
// the SDK knew, and the next call lists again). A failed list is not the call's failure: the call goes on,
// and the server says what it lacks.
//
// A tool the whole list did not hold is remembered as absent on the connection (absentTools) until a
// tools/list_changed of the server arrives, so that calls to a missing tool — the server's answer to them
// is its own error — do not list the tools every time.
func (g *generation) learnTool(ctx context.Context, name string) {
	if !g.paramHeaders() || g.cs.KnowsTool(name) {
		return
	}
	epoch := g.s.core.lists.toolsEpoch(g.s.server.Name)
	if g.absentTools.has(name, epoch) {
		return
	}
	g.toolsListing.Lock()
	defer g.toolsListing.Unlock()
	if g.cs.KnowsTool(name) || g.absentTools.has(name, epoch) { // another call listed meanwhile
		return
	}
	g.listTool(ctx, name)
}

// listTool lists the server's tools on g, page by page, until a page holds the named tool or the list
// ends; a complete list without it records the name as absent. The caller holds g.toolsListing.
func (g *generation) listTool(ctx context.Context, name string) {
	epoch := g.s.core.lists.toolsEpoch(g.s.server.Name) // a list_changed during the listing voids its finding
	cursor := ""
	for range maxToolsPages {
		r, err := g.cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			g.s.logger.Debug("listing the tools before a call, for their x-mcp-header parameters", "tool", name, "error", err)
			return
		}
		if pageHolds(r, name) {
			return
		}
		if r.NextCursor == "" {
			g.absentTools.add(name, epoch)
			return
		}
		cursor = r.NextCursor
	}
}

// pageHolds reports whether a tools/list page holds the named tool.
func pageHolds(r *mcp.ListToolsResult, name string) bool {
	for _, t := range r.Tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

// maxAbsentTools bounds the names a connection remembers as absent from its server's tools; past it, it
// forgets them all (a forgotten name costs one listing).
const maxAbsentTools = 256

// absentTools is what a connection remembers of the tools its server's list did not hold, so that calls to
// a missing tool do not list the tools every time: the names a complete listing did not find, as of the
// epoch of the server's tool lists (listCache.toolsEpoch) when that listing began. A list_changed bumps the
// epoch, and the names are forgotten; a new connection starts with none. Safe for concurrent use.
type absentTools struct {
	mu    sync.Mutex
	epoch uint64
	names map[string]struct{}
}

// has reports whether name was absent from a listing under epoch.
func (a *absentTools) has(name string, epoch uint64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	_, ok := a.names[name]
	return ok && a.epoch == epoch
}

// add records that a listing begun under epoch did not find name.
func (a *absentTools) add(name string, epoch uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.epoch != epoch || len(a.names) >= maxAbsentTools {
		clear(a.names)
		a.epoch = epoch
	}
	if a.names == nil {
		a.names = make(map[string]struct{})
	}
	a.names[name] = struct{}{}
}

func (a *absentTools) size() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.names)
}
