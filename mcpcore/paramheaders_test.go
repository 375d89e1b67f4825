package mcpcore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// headerServer is a 2026-07-28 Streamable HTTP server (the SDK's, stateless) with one tool, "route", whose
// "region" argument its schema mirrors into an Mcp-Param-* header (x-mcp-header); the SDK server refuses a
// call whose headers do not match its current schema with HeaderMismatch. It counts the tools/list and
// tools/call requests it receives, and the Mcp-Param-* headers of each call.
type headerServer struct {
	srv *mcp.Server
	url string

	mu     sync.Mutex
	lists  int
	calls  int
	params []http.Header // the Mcp-Param-* headers of each tools/call
	// mismatch, when set, refuses every tools/call with HeaderMismatch, whatever its headers.
	mismatch bool
}

func newHeaderServer(t *testing.T, header string) *headerServer {
	t.Helper()
	hs := &headerServer{srv: mcp.NewServer(&mcp.Implementation{Name: "headers", Version: "1"}, nil)}
	hs.annotate(header)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return hs.srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("Mcp-Method") {
		case "tools/list":
			hs.mu.Lock()
			hs.lists++ // counted before it is answered, so a count read after the call's answer holds it
			hs.mu.Unlock()
		case "tools/call":
			p := http.Header{}
			for k, v := range r.Header {
				if len(k) > len("Mcp-Param-") && http.CanonicalHeaderKey(k[:len("Mcp-Param-")]) == "Mcp-Param-" {
					p[k] = v
				}
			}
			hs.mu.Lock()
			hs.calls++
			hs.params = append(hs.params, p)
			mismatch := hs.mismatch
			hs.mu.Unlock()
			if mismatch {
				body, _ := io.ReadAll(r.Body)
				msg, err := jsonrpc.DecodeMessage(body)
				req, ok := msg.(*jsonrpc.Request)
				if err != nil || !ok {
					http.Error(w, "not a request", http.StatusBadRequest)
					return
				}
				out, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: mcp.CodeHeaderMismatch, Message: "header mismatch: always"}})
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write(out)
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	hs.url = ts.URL
	return hs
}

// annotate (re)defines the tool with its "region" argument mirrored into Mcp-Param-<header>.
func (hs *headerServer) annotate(header string) {
	hs.srv.AddTool(&mcp.Tool{Name: "route", InputSchema: map[string]any{"type": "object", "properties": map[string]any{
		"region": map[string]any{"type": "string", "x-mcp-header": header},
		"query":  map[string]any{"type": "string"}}}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "routed"}}}, nil
		})
}

func (hs *headerServer) counts() (lists, calls int) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	return hs.lists, hs.calls
}

func headerCore(t *testing.T, hs *headerServer) *Session {
	t.Helper()
	c, _ := newTestCore(t, map[string]ServerConfig{"hdr": {Transport: TransportStreamableHTTP, URL: hs.url}}, nil)
	s := open(t, c, "hdr", "", HostCapabilities{})
	if v := s.Info().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %q, want 2026-07-28", v)
	}
	return s
}

// A server that changes a tool's x-mcp-header annotation after the bridge listed it refuses the next call
// (its headers follow the old schema) with HeaderMismatch; the spec (2026-07-28 transports, Streamable HTTP,
// custom headers, client behaviour): the client SHOULD call tools/list to check for changes to the tool's
// inputSchema, then retry the original request with the appropriate headers. The bridge does: one list,
// one retry, and the host gets the tool's answer. Before: the host got the HeaderMismatch error.
func TestHeaderMismatchRelistsAndRetriesOnce(t *testing.T) {
	hs := newHeaderServer(t, "Region")
	s := headerCore(t, hs)
	call := func() (*mcp.CallToolResult, error) {
		return s.CallTool(tctx(t), &mcp.CallToolParams{Name: "route", Arguments: map[string]any{"region": "eu-west1", "query": "q"}}, CallOptions{})
	}
	if _, err := call(); err != nil {
		t.Fatalf("first call: %v", err)
	}
	hs.annotate("Zone") // between the bridge's list and its next call
	res, err := call()
	if err != nil {
		t.Fatalf("the call after the schema changed: %v, want it retried with the new header", err)
	}
	if got := textOf(res); got != "routed" {
		t.Errorf("answer %q, want routed", got)
	}
	lists, calls := hs.counts()
	if lists != 2 || calls != 3 {
		t.Errorf("the server saw %d lists and %d calls, want 2 and 3 (one re-list, one retry)", lists, calls)
	}
	hs.mu.Lock()
	last := hs.params[len(hs.params)-1]
	hs.mu.Unlock()
	if last.Get("Mcp-Param-Zone") != "eu-west1" {
		t.Errorf("the retry's headers %v, want Mcp-Param-Zone: eu-west1", last)
	}
}

// A server that refuses every call with HeaderMismatch gets one re-list and one retry per host call, never
// a loop, and the host gets its error.
func TestHeaderMismatchRetriedOnlyOnce(t *testing.T) {
	hs := newHeaderServer(t, "Region")
	hs.mismatch = true
	s := headerCore(t, hs)
	_, err := s.CallTool(tctx(t), &mcp.CallToolParams{Name: "route", Arguments: map[string]any{"region": "eu-west1"}}, CallOptions{})
	var ue *UpstreamError
	if !errors.As(err, &ue) || ue.Err.Code != -32020 {
		t.Fatalf("err = %v, want the server's HeaderMismatch", err)
	}
	lists, calls := hs.counts()
	if lists != 2 || calls != 2 {
		t.Errorf("the server saw %d lists and %d calls, want 2 and 2 (the first list, one re-list, one retry)", lists, calls)
	}
}

// A call to a tool the server's list does not hold lists the tools once per connection, not on every such
// call: the connection remembers the name was absent until a tools/list_changed arrives. Before: every call
// to the missing tool listed every page of the server's tools first.
func TestAbsentToolListedOnce(t *testing.T) {
	hs := newHeaderServer(t, "Region")
	s := headerCore(t, hs)
	missing := func() {
		t.Helper()
		_, err := s.CallTool(tctx(t), &mcp.CallToolParams{Name: "nosuch"}, CallOptions{})
		if err == nil {
			t.Fatal("a call to a missing tool succeeded")
		}
	}
	for range 5 {
		missing()
	}
	if lists, calls := hs.counts(); lists != 1 || calls != 5 {
		t.Errorf("5 calls to a missing tool: the server saw %d lists and %d calls, want 1 and 5", lists, calls)
	}
	s.core.lists.listChanged("hdr", "notifications/tools/list_changed") // as the wire tap does
	missing()
	missing()
	if lists, _ := hs.counts(); lists != 2 {
		t.Errorf("after a list_changed: %d lists, want 2 (the name is listed for once more)", lists)
	}
}

// The names a connection remembers as absent are bounded; past the bound it forgets them all.
func TestAbsentToolsBounded(t *testing.T) {
	var a absentTools
	for i := range maxAbsentTools + 10 {
		a.add(fmt.Sprint("t", i), 7)
	}
	if n := a.size(); n > maxAbsentTools {
		t.Errorf("%d names kept, want at most %d", n, maxAbsentTools)
	}
	if !a.has(fmt.Sprint("t", maxAbsentTools+9), 7) {
		t.Error("the last name added is forgotten")
	}
	if a.has(fmt.Sprint("t", maxAbsentTools+9), 8) {
		t.Error("a name is absent under a later epoch of the server's tools")
	}
}
