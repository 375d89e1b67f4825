package mcpcore

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxToolsPages bounds the pages of tools/list learnTool follows looking for one tool.
const maxToolsPages = 100

// learnTool makes g's SDK session know the definition of the named tool before a tools/call on a 2026-07-28
// Streamable HTTP connection: the SDK mirrors a tool's x-mcp-header parameters into Mcp-Param-* headers (the
// spec: clients MUST) only from a definition a tools/list on the same connection returned, and the bridge
// answers hosts' lists from its own cache, so the connection's first call — the session's first, or the
// first after a reconnect — would go without them and a server that checks them refuses it (HeaderMismatch).
// It lists the tools, page by page until it finds the tool, once per connection (a list_changed drops what
// the SDK knew, and the next call lists again). A failed list is not the call's failure: the call goes on,
// and the server says what it lacks.
func (g *generation) learnTool(ctx context.Context, name string) {
	if g.s.server.Transport != TransportStreamableHTTP || !g.modern() || g.cs.KnowsTool(name) {
		return
	}
	g.toolsListing.Lock()
	defer g.toolsListing.Unlock()
	if g.cs.KnowsTool(name) { // another call listed meanwhile
		return
	}
	cursor := ""
	for range maxToolsPages {
		r, err := g.cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			g.s.logger.Debug("listing the tools before a call, for their x-mcp-header parameters", "tool", name, "error", err)
			return
		}
		if r.NextCursor == "" || g.cs.KnowsTool(name) {
			return
		}
		cursor = r.NextCursor
	}
}
