package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// headerRecorder is a 2026-07-28 Streamable HTTP server (the SDK's) with one tool whose "region" argument
// its schema mirrors into the Mcp-Param-Region header (x-mcp-header), recording that header of every
// tools/call it receives. dropNext makes it close the connection of the next tools/call unanswered.
type headerRecorder struct {
	url      string
	mu       sync.Mutex
	regions  []string // Mcp-Param-Region of each tools/call, "" when absent
	dropNext atomic.Bool
}

func newHeaderRecorder(t *testing.T) *headerRecorder {
	r := &headerRecorder{}
	s := mcp.NewServer(&mcp.Implementation{Name: "headers", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "route", InputSchema: map[string]any{"type": "object", "properties": map[string]any{
		"region": map[string]any{"type": "string", "x-mcp-header": "Region"},
		"query":  map[string]any{"type": "string"}}}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "routed"}}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Header.Get("Mcp-Method") == "tools/call" {
			if r.dropNext.CompareAndSwap(true, false) {
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					_ = conn.Close()
				}
				return
			}
			r.mu.Lock()
			r.regions = append(r.regions, req.Header.Get("Mcp-Param-Region"))
			r.mu.Unlock()
		}
		h.ServeHTTP(w, req)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL
	return r
}

func (r *headerRecorder) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.regions...)
}

// Issue 31, item 5: on a 2026-07-28 Streamable HTTP session a tool's x-mcp-header parameters are mirrored into
// Mcp-Param-* headers (the spec: clients MUST) on the session's first call, before anything listed the tools,
// and on the first call after a reconnect. Before: the SDK only knew a tool's schema from a tools/list on the
// same connection, so both calls went out without the header.
func TestParamHeadersFirstCallAndAfterReconnect(t *testing.T) {
	up := newHeaderRecorder(t)
	b := start(t, bridgeConfig{extraServers: "  hdr:\n    url: " + up.url + "\n"})
	ctx := testCtx(t)
	cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "hdr"})
	if err != nil {
		t.Fatal(err)
	}
	sid := cs.GetSession().GetSessionId()
	if v := cs.GetSession().GetProtocolVersion(); v != "2026-07-28" {
		t.Fatalf("negotiated %q, want 2026-07-28", v)
	}
	call := func() error {
		_, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: sid, Name: "route",
			Arguments: args(t, map[string]any{"region": "eu-west1", "query": "q"})})
		return err
	}
	if err := call(); err != nil {
		t.Fatal(err)
	}
	if got := up.seen(); len(got) != 1 || got[0] != "eu-west1" {
		t.Fatalf("first call's Mcp-Param-Region = %q, want [eu-west1]", got)
	}
	// The connection breaks under a call: the session reconnects, and the next call carries the header again.
	up.dropNext.Store(true)
	if err := call(); err == nil {
		t.Fatal("the dropped call succeeded")
	}
	b.logs.waitFor(t, func(rec map[string]any) bool {
		return rec["msg"] == "session state" && rec["session"] == sid && rec["state"] == "ready" && rec["reason"] == "reconnected"
	})
	if err := call(); err != nil {
		t.Fatal(err)
	}
	got := up.seen()
	if len(got) != 2 || got[1] != "eu-west1" {
		t.Errorf("Mcp-Param-Region of the calls = %q, want [eu-west1 eu-west1]", got)
	}
}
