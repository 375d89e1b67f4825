package mcpcore

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Streamable HTTP server configured for h2c is spoken to over HTTP/2 with prior knowledge, every session on
// the same connection; without h2c, over HTTP/1.1. Both eras.
func TestH2C(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		t.Run(fmt.Sprintf("stateless=%v", stateless), func(t *testing.T) {
			srv := newTestServer(nil, nil)
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: stateless})
			var mu sync.Mutex
			protos, conns := map[string]int{}, map[string]bool{}
			ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				protos[r.Proto]++
				conns[r.RemoteAddr] = true
				mu.Unlock()
				h.ServeHTTP(w, r)
			}))
			ts.Config.Protocols = new(http.Protocols)
			ts.Config.Protocols.SetHTTP1(true)
			ts.Config.Protocols.SetUnencryptedHTTP2(true)
			ts.Start()
			t.Cleanup(ts.Close)
			pin := "2025-11-25"
			if stateless {
				pin = ""
			}
			c, _ := newTestCore(t, map[string]ServerConfig{
				"h2":  {Transport: TransportStreamableHTTP, URL: ts.URL, H2C: true},
				"h11": {Transport: TransportStreamableHTTP, URL: ts.URL},
			}, nil)
			for range 3 {
				s := open(t, c, "h2", pin, HostCapabilities{})
				if got := callText(t, s, "echo", map[string]any{"text": "over h2"}, CallOptions{}); got != "over h2" {
					t.Errorf("echo over h2c = %q", got)
				}
			}
			mu.Lock()
			h2, h1, n := protos["HTTP/2.0"], protos["HTTP/1.1"], len(conns)
			mu.Unlock()
			if h2 == 0 || h1 != 0 {
				t.Errorf("requests by protocol %v, want HTTP/2.0 only", protos)
			}
			if n != 1 {
				t.Errorf("three sessions used %d connections, want 1", n)
			}
			s := open(t, c, "h11", pin, HostCapabilities{})
			if got := callText(t, s, "echo", map[string]any{"text": "over h1"}, CallOptions{}); got != "over h1" {
				t.Errorf("echo over HTTP/1.1 = %q", got)
			}
			mu.Lock()
			defer mu.Unlock()
			if protos["HTTP/1.1"] == 0 {
				t.Errorf("a server without h2c: requests by protocol %v, want HTTP/1.1 too", protos)
			}
		})
	}
}
