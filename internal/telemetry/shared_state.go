package telemetry

import "github.com/prometheus/client_golang/prometheus"

// RegisterSharedState registers the metrics of replicas sharing their state in Redis
// (docs/adr/0070-replicas-share-state.md): whether Redis answers, how many sessions this replica holds,
// and how many it took over.
func RegisterSharedState(reg prometheus.Registerer, reachable func() bool, held func() int, takeovers func() uint64) {
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: Namespace, Name: "state_store_reachable",
			Help: "1 while the shared state store (Redis) answers the lease renewals, 0 while it does not (held sessions keep working; takeovers and new sessions are refused).",
		}, func() float64 {
			if reachable() {
				return 1
			}
			return 0
		}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: Namespace, Name: "session_leases_held",
			Help: "Sessions whose lease this replica holds.",
		}, func() float64 { return float64(held()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace: Namespace, Name: "sessions_taken_over_total",
			Help: "Sessions this replica took over from a replica that died, drained or handed them back.",
		}, func() float64 { return float64(takeovers()) }),
	)
}
