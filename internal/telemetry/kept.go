package telemetry

import (
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
	"github.com/prometheus/client_golang/prometheus"
)

// RegisterKeptResults registers the metrics of the outcomes of completed tool calls kept for resumed calls
// (docs/adr/0093-kept-results-and-call-ids.md), read from the core at each scrape.
func RegisterKeptResults(reg prometheus.Registerer, stats func() mcpcore.KeptStats) {
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: Namespace, Name: "kept_results_bytes",
			Help: "Bytes of the completed tool calls' outcomes kept for resumed calls (bounded by limits.keptResultsBytes).",
		}, func() float64 { return float64(stats().Bytes) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: Namespace, Name: "kept_results",
			Help: "Completed tool calls' outcomes kept for resumed calls.",
		}, func() float64 { return float64(stats().Outcomes) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace: Namespace, Name: "kept_results_evicted_total",
			Help: "Kept outcomes evicted before their TTL to stay within limits.keptResultsBytes (a resumed call gets CALL_OUTCOME_EVICTED).",
		}, func() float64 { return float64(stats().Evicted) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace: Namespace, Name: "kept_results_expired_total",
			Help: "Kept outcomes dropped at limits.keptResultsTTL.",
		}, func() float64 { return float64(stats().Expired) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace: Namespace, Name: "kept_results_refused_total",
			Help: "Outcomes larger than limits.keptResultsBytes, not kept.",
		}, func() float64 { return float64(stats().Refused) }),
	)
}
