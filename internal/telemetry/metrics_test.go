package telemetry

import (
	"fmt"
	"testing"
	"time"

	"github.com/mcp-bridge/mcp-bridge/mcpcore"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// gather returns reg's families by name.
func gather(t *testing.T, reg *prometheus.Registry) map[string]*dto.MetricFamily {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

// TestLabelSetsCapped: whatever values reach the Observer — names the core would have folded, error types
// and versions it never sends, server names not configured — each family stops at its cap of label sets
// plus the folded sets, and the folding is counted.
func TestLabelSetsCapped(t *testing.T) {
	const limit, calls = 20, 5000
	reg := prometheus.NewRegistry()
	m := newMetrics(reg, []string{"demo"}, limit)
	for i := range calls {
		m.OperationDone(mcpcore.Operation{Server: "demo", Transport: mcpcore.TransportStdio, Method: "tools/call",
			Target: fmt.Sprintf("tool-%d", i), ProtocolVersion: "2026-07-28", Duration: time.Millisecond})
		m.OperationDone(mcpcore.Operation{Server: fmt.Sprintf("adhoc-%d", i), Transport: mcpcore.TransportStreamableHTTP, Method: "prompts/get",
			Target: fmt.Sprintf("prompt-%d", i), ProtocolVersion: fmt.Sprintf("v%d", i), ErrorType: fmt.Sprint(i)})
		m.SessionEnded("demo", mcpcore.TransportStdio, fmt.Sprintf("v%d", i), fmt.Sprintf("err-%d", i), time.Second)
	}
	fams := gather(t, reg)
	// The cap, plus the folded sets: tools/call on demo; prompts/get on _unconfigured.
	if n := len(fams["mcp_client_operation_duration_seconds"].GetMetric()); n > limit+2 {
		t.Errorf("mcp_client_operation_duration_seconds has %d label sets, want at most %d", n, limit+2)
	}
	if n := len(fams["mcp_client_session_duration_seconds"].GetMetric()); n > limit+1 {
		t.Errorf("mcp_client_session_duration_seconds has %d label sets, want at most %d", n, limit+1)
	}
	folded := map[string]float64{}
	for _, s := range fams["mcp_bridge_metric_label_sets_folded_total"].GetMetric() {
		folded[s.GetLabel()[0].GetValue()] = s.GetCounter().GetValue()
	}
	// Every operation past the cap, but those of the folded sets once they exist.
	if got := folded["mcp_client_operation_duration_seconds"]; got < 2*calls-limit-2 {
		t.Errorf("folded operations = %v, want at least %d", got, 2*calls-limit-2)
	}
	if got := folded["mcp_client_session_duration_seconds"]; got < calls-limit-1 {
		t.Errorf("folded sessions = %v, want at least %d", got, calls-limit-1)
	}
	// Error types outside mcpcore.ErrorTypes are _OTHER before any cap.
	for et, want := range map[string]string{"err-1": "_OTHER", "12345": "_OTHER", "-32602": "-32602", "": "", "timeout": "timeout"} {
		if got := m.errorType(et); got != want {
			t.Errorf("errorType(%q) = %q, want %q", et, got, want)
		}
	}
}

// TestFoldedCounterFromTheStart: the counter of folded label sets exists at zero for both capped families,
// so an alert on its rate sees zeros rather than nothing.
func TestFoldedCounterFromTheStart(t *testing.T) {
	reg := prometheus.NewRegistry()
	NewMetrics(reg, []string{"demo"})
	f := gather(t, reg)["mcp_bridge_metric_label_sets_folded_total"]
	if n := len(f.GetMetric()); n != 2 {
		t.Fatalf("mcp_bridge_metric_label_sets_folded_total has %d series, want 2", n)
	}
}
