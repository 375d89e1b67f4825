package telemetry

import (
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
	"github.com/prometheus/client_golang/prometheus"
)

var _ mcpcore.ListCacheObserver = (*Metrics)(nil)

// newListCacheCounter registers mcp_bridge_list_cache_lookups_total: the list requests the core's list
// cache could answer (mcpcore/listcache.go), by server, method and result (hit: answered by the bridge;
// miss: sent upstream).
func newListCacheCounter(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "list_cache_lookups_total",
		Help: "List requests (tools, prompts, resources, resource templates) the bridge's list cache could answer, by server, method and result (hit: answered by the bridge; miss: sent upstream).",
	}, []string{"server", "method", "result"})
	reg.MustRegister(c)
	return c
}

// ListCacheLookup implements mcpcore.ListCacheObserver.
func (m *Metrics) ListCacheLookup(server, method string, hit bool) {
	result := "miss"
	if hit {
		result = "hit"
	}
	m.listCache.WithLabelValues(m.server(server), method, result).Inc()
}
