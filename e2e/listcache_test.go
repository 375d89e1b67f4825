package e2e

import (
	"fmt"
	"slices"
	"testing"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// TestListCache: through the binary, a handshake-era server that declared tools.listChanged has its tool list
// answered by the bridge from the second ListTools on (the demo server over stdio, a real SDK peer), both over
// gRPC and REST; a 2026-07-28 list without ttlMs is never kept. The hit counter says which answered.
func TestListCache(t *testing.T) {
	b := start(t, bridgeConfig{})
	ctx := testCtx(t)
	for _, server := range []string{serverLegacy, serverModern} {
		cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: server})
		if err != nil {
			t.Fatal(err)
		}
		id := cs.GetSession().GetSessionId()
		if !cs.GetSession().GetServerCapabilities().GetTools().GetListChanged() && server == serverLegacy {
			t.Fatalf("%s does not declare tools.listChanged: the test's premise", server)
		}
		var first []string
		for i := range 3 {
			r, err := b.client.ListTools(ctx, &pb.ListToolsRequest{SessionId: id})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range r.GetTools() {
				names = append(names, tool.GetName())
			}
			if i == 0 {
				first = names
			} else if !slices.Equal(names, first) {
				t.Fatalf("%s: list %d = %v, first %v", server, i, names, first)
			}
		}
		// REST reads the very response gRPC sends (in process, through the gateway): the same tools.
		rest := b.rest("").must("GET", "/v1/sessions/"+id+"/tools", "")
		var restNames []string
		for _, tool := range jsonPath(rest, "tools").([]any) {
			restNames = append(restNames, fmt.Sprint(jsonPath(tool, "name")))
		}
		if !slices.Equal(restNames, first) {
			t.Errorf("%s: REST lists %v, gRPC %v", server, restNames, first)
		}
	}
	m := scrape(t, b.http)
	name := "mcp_bridge_list_cache_lookups_total"
	wantMetric(t, m, name, map[string]string{"server": serverLegacy, "method": "tools/list", "result": "miss"}, 1)
	wantMetric(t, m, name, map[string]string{"server": serverLegacy, "method": "tools/list", "result": "hit"}, 3)
	wantMetric(t, m, name, map[string]string{"server": serverModern, "method": "tools/list", "result": "miss"}, 4)
	if v, ok := metric(m, name, map[string]string{"server": serverModern, "result": "hit"}); ok && v != 0 {
		t.Errorf("%s: %v hits for a list without ttlMs", serverModern, v)
	}
}
