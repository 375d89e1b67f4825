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

// RegisterStateWrites registers mcp_bridge_state_writes_total: the writes (puts and deletes) the bridge asked
// of its state store; writes is state.TrackedStore.Writes. The core writes when something kept changes — a
// session, a pending request, an MRTR round — never per message: a plain tools/call adds nothing.
func RegisterStateWrites(reg prometheus.Registerer, writes func() uint64) {
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Namespace: Namespace, Name: "state_writes_total",
		Help: "Writes (puts and deletes) the bridge asked of its state store, failed or not; a plain tools/call makes none.",
	}, func() float64 { return float64(writes()) }))
}
