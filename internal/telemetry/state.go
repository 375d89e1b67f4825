package telemetry

import "github.com/prometheus/client_golang/prometheus"

// RegisterStateHealth registers mcp_bridge_state_store_healthy: 1 while the state store's writes succeed,
// 0 while they fail (a full disk, an I/O error); health is state.TrackedStore.Health.
func RegisterStateHealth(reg prometheus.Registerer, health func() error) {
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "state_store_healthy",
		Help: "1 while writes to the state store succeed, 0 while they fail (the bridge keeps serving; what changes meanwhile is lost on a restart).",
	}, func() float64 {
		if health() != nil {
			return 0
		}
		return 1
	}))
}
