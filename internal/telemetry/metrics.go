// Package telemetry holds the bridge's metrics and tracing set-up (docs/adr/0014): the Prometheus
// collectors that count what the MCP client core tells its mcpcore.Observer, the gRPC server's standard
// metrics, and the OpenTelemetry tracer provider the standard OTEL_* environment variables ask for.
package telemetry

import (
	"sync"
	"time"

	"github.com/mcp-bridge/mcp-bridge/mcpcore"
	"github.com/prometheus/client_golang/prometheus"
)

// Namespace prefixes the bridge's own metrics; the MCP semantic-convention metrics keep their OTel names
// (mcp.client.operation.duration → mcp_client_operation_duration_seconds).
const Namespace = "mcp_bridge"

// otherServer is the server label of sessions to servers that are not configured (ad-hoc servers, when
// allowUnconfiguredServers is on): their names come from hosts and would make the label unbounded.
const otherServer = "_unconfigured"

// MaxLabelSets is the cap on the label sets of each metric family whose labels carry values from outside
// the bridge (tool and prompt names, error types, protocol versions: docs/adr/0030). The core already
// bounds those values; the cap stops growth whatever happens. Past it, a new label set has those labels
// folded to mcpcore.OtherValue ("_OTHER") and mcp_bridge_metric_label_sets_folded_total counts it; the
// folded sets' other labels (method, server, transport) come from the bridge's code and configuration.
const MaxLabelSets = 1000

// durationBuckets are the OTel MCP conventions' recommended boundaries, in seconds.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// sessionBuckets bound mcp.client.session.duration: seconds to a day.
var sessionBuckets = []float64{1, 10, 60, 300, 900, 1800, 3600, 7200, 14400, 28800, 86400}

// waitBuckets bound the wait of pending server requests: a person may take minutes.
var waitBuckets = []float64{0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 120, 300, 600, 1800}

// Metrics is the mcpcore.Observer that keeps the core's facts as Prometheus metrics. Its methods are
// safe for concurrent use and do not block.
type Metrics struct {
	servers    map[string]bool // configured server names: the only values of the server label
	errorTypes map[string]bool // mcpcore.ErrorTypes: the only values of the error_type label

	operation    *cappedHistograms[operationLabels]
	session      *cappedHistograms[sessionLabels]
	sessions     *prometheus.GaugeVec
	pending      *prometheus.GaugeVec
	requests     *prometheus.CounterVec
	requestWait  *prometheus.HistogramVec
	reconnects   *prometheus.CounterVec
	eventsDrop   prometheus.Counter
	messages     *prometheus.CounterVec
	messageBytes *prometheus.CounterVec
	listCache    *prometheus.CounterVec // listcache.go
	// wire holds the message and byte counters of each known transport, [sent, received]: MessageTransferred
	// runs for every message, so it does not look its series up.
	wire map[mcpcore.TransportKind][2]wireCounters
}

type wireCounters struct{ messages, bytes prometheus.Counter }

var _ mcpcore.Observer = (*Metrics)(nil)

// operationLabels are the labels of mcp_client_operation_duration_seconds, in order.
type operationLabels struct{ method, tool, prompt, errorType, version, server, transport string }

func (l operationLabels) values() []string {
	return []string{l.method, l.tool, l.prompt, l.errorType, l.version, l.server, l.transport}
}

// folded keeps the labels whose values the bridge itself decides.
func (l operationLabels) folded() operationLabels {
	return operationLabels{l.method, fold(l.tool), fold(l.prompt), fold(l.errorType), fold(l.version), l.server, l.transport}
}

// sessionLabels are the labels of mcp_client_session_duration_seconds, in order.
type sessionLabels struct{ version, errorType, server, transport string }

func (l sessionLabels) values() []string {
	return []string{l.version, l.errorType, l.server, l.transport}
}

func (l sessionLabels) folded() sessionLabels {
	return sessionLabels{fold(l.version), fold(l.errorType), l.server, l.transport}
}

// fold is a label's value past the cap: "" (no value) stays, anything else is _OTHER.
func fold(v string) string {
	if v == "" {
		return ""
	}
	return mcpcore.OtherValue
}

// labelSet is a family's label values as a comparable key.
type labelSet[K any] interface {
	comparable
	values() []string
	folded() K
}

// cappedHistograms is a histogram family whose label sets are capped at limit: a new set past the cap
// is folded (labelSet.folded) and counted. Its series are cached by label set, so an observation costs one
// map lookup under a read lock. Safe for concurrent use.
type cappedHistograms[K labelSet[K]] struct {
	vec    *prometheus.HistogramVec
	limit  int
	folded prometheus.Counter // mcp_bridge_metric_label_sets_folded_total of this family

	mu     sync.RWMutex // guards series
	series map[K]prometheus.Observer
}

func newCappedHistograms[K labelSet[K]](vec *prometheus.HistogramVec, limit int, folded *prometheus.CounterVec, name string) *cappedHistograms[K] {
	return &cappedHistograms[K]{vec: vec, limit: limit, folded: folded.WithLabelValues(name), series: map[K]prometheus.Observer{}}
}

// with returns the series of the label set k, or of its folded set when the family is at its cap.
func (c *cappedHistograms[K]) with(k K) prometheus.Observer {
	c.mu.RLock()
	o, ok := c.series[k]
	c.mu.RUnlock()
	if ok {
		return o
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if o, ok := c.series[k]; ok {
		return o
	}
	if len(c.series) >= c.limit {
		c.folded.Inc()
		k = k.folded()
		if o, ok := c.series[k]; ok {
			return o
		}
		// A folded set may be new: its values are the bridge's own (methods, configured servers,
		// transports) and _OTHER, a bounded set, so it is added past the cap.
	}
	o = c.vec.WithLabelValues(k.values()...)
	c.series[k] = o
	return o
}

// NewMetrics registers the core's metrics with reg. servers are the configured server names.
func NewMetrics(reg prometheus.Registerer, servers []string) *Metrics {
	return newMetrics(reg, servers, MaxLabelSets)
}

// newMetrics is NewMetrics with the cap on label sets per family.
func newMetrics(reg prometheus.Registerer, servers []string, maxLabelSets int) *Metrics {
	m := &Metrics{servers: map[string]bool{}, errorTypes: map[string]bool{"": true}}
	for _, s := range servers {
		m.servers[s] = true
	}
	for _, e := range mcpcore.ErrorTypes() {
		m.errorTypes[e] = true
	}
	folded := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "metric_label_sets_folded_total",
		Help: "Observations whose label set was folded to _OTHER because their metric family had reached its cap of label sets, by metric.",
	}, []string{"metric"})
	const opName, sessionName = "mcp_client_operation_duration_seconds", "mcp_client_session_duration_seconds"
	operation := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    opName,
		Help:    "Duration of MCP requests the bridge sent to upstream servers, until their response (OTel mcp.client.operation.duration).",
		Buckets: durationBuckets,
	}, []string{"mcp_method_name", "gen_ai_tool_name", "gen_ai_prompt_name", "error_type", "mcp_protocol_version", "server", "network_transport"})
	session := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    sessionName,
		Help:    "Lifetime of the bridge's sessions to upstream servers (OTel mcp.client.session.duration).",
		Buckets: sessionBuckets,
	}, []string{"mcp_protocol_version", "error_type", "server", "network_transport"})
	m.operation = newCappedHistograms[operationLabels](operation, maxLabelSets, folded, opName)
	m.session = newCappedHistograms[sessionLabels](session, maxLabelSets, folded, sessionName)
	m.sessions = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "sessions",
		Help: "Open sessions to upstream servers, by server and state (connecting, ready, reconnecting).",
	}, []string{"server", "state"})
	m.pending = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: Namespace, Name: "pending_requests",
		Help: "Server-initiated requests waiting for a host's answer, by kind (sampling, elicitation, roots, authorization).",
	}, []string{"kind"})
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "server_requests_total",
		Help: "Server-initiated requests that ended, by kind and outcome (answered, timed-out, cancelled-by-host, cancelled-by-server, call-ended, session-closed).",
	}, []string{"kind", "outcome"})
	m.requestWait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: Namespace, Name: "server_request_wait_seconds",
		Help:    "How long server-initiated requests were pending, from registration to their end, by kind and outcome.",
		Buckets: waitBuckets,
	}, []string{"kind", "outcome"})
	m.reconnects = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "upstream_reconnects_total",
		Help: "Connections to upstream servers replaced by supervision: reason restart (a stdio server restarted, an HTTP server reconnected) or reinitialize (an HTTP server had lost the session).",
	}, []string{"server", "reason"})
	m.eventsDrop = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: Namespace, Name: "events_dropped_total",
		Help: "Session events a slow host stream or watcher lost (each announced to it by an EventDropped).",
	})
	m.messages = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "upstream_messages_total",
		Help: "JSON-RPC messages exchanged with upstream servers, by transport and direction (sent, received).",
	}, []string{"transport", "direction"})
	m.messageBytes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: Namespace, Name: "upstream_message_bytes_total",
		Help: "Bytes of JSON-RPC messages exchanged with upstream servers, by transport and direction.",
	}, []string{"transport", "direction"})
	reg.MustRegister(operation, session, folded, m.sessions, m.pending, m.requests, m.requestWait, m.reconnects,
		m.eventsDrop, m.messages, m.messageBytes)
	m.listCache = newListCacheCounter(reg)
	m.wire = map[mcpcore.TransportKind][2]wireCounters{}
	for _, t := range []mcpcore.TransportKind{mcpcore.TransportStdio, mcpcore.TransportStreamableHTTP, mcpcore.TransportSSE} {
		var c [2]wireCounters
		for i, dir := range []string{"sent", "received"} {
			c[i] = wireCounters{m.messages.WithLabelValues(string(t), dir), m.messageBytes.WithLabelValues(string(t), dir)}
		}
		m.wire[t] = c
	}
	// Series that exist from the start, so that dashboards and rate() see zeros rather than nothing.
	for _, k := range []mcpcore.RequestKind{mcpcore.KindSampling, mcpcore.KindElicitation, mcpcore.KindRoots, mcpcore.KindAuthorization, mcpcore.KindApproval} {
		m.pending.WithLabelValues(k.String())
	}
	for _, s := range servers {
		for _, st := range []mcpcore.SessionState{mcpcore.StateConnecting, mcpcore.StateReady, mcpcore.StateReconnecting} {
			m.sessions.WithLabelValues(s, st.String())
		}
		m.reconnects.WithLabelValues(s, "restart")
		m.reconnects.WithLabelValues(s, "reinitialize")
	}
	return m
}

// RegisterCoreStats registers counters read from the core's own Stats at each scrape.
func RegisterCoreStats(reg prometheus.Registerer, stats func() mcpcore.Stats) {
	counter := func(name, help string, v func(mcpcore.Stats) uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help},
			func() float64 { return float64(v(stats())) })
	}
	reg.MustRegister(
		counter("upstream_malformed_messages_total", "Messages from upstream servers the bridge could not use: not valid JSON-RPC, nested too deeply, or a result of the wrong shape.",
			func(s mcpcore.Stats) uint64 { return s.MalformedMessages }),
		counter("upstream_oversized_messages_total", "Messages from upstream servers larger than limits.maxMessageBytes, refused.",
			func(s mcpcore.Stats) uint64 { return s.OversizedMessages }),
		counter("stdio_stderr_lines_dropped_total", "Lines of stdio servers' stderr not logged because of the rate bound.",
			func(s mcpcore.Stats) uint64 { return s.StderrLinesDropped }),
		counter("sessions_refused_descriptors_total", "New sessions refused because the process was near its descriptor limit (limits.descriptorReserve).",
			func(s mcpcore.Stats) uint64 { return s.DescriptorRefusals }),
		counter("upstream_notifications_dropped_total", "Progress and log notifications of servers dropped over the rate one session may send.",
			func(s mcpcore.Stats) uint64 { return s.NotificationsDropped }),
		counter("upstream_stream_throttled_total", "Times the bridge stopped reading a server's standalone SSE stream that sent faster than its read budget.",
			func(s mcpcore.Stats) uint64 { return s.StreamThrottled }),
		counter("upstream_large_list_waits_total", "Large tools/list responses (over 1 MiB) that waited for another to be converted: the bridge converts one at a time.",
			func(s mcpcore.Stats) uint64 { return s.LargeListWaits }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: Namespace, Name: "upstream_large_lists_in_flight",
			Help: "Large tools/list responses (over 1 MiB) being read and converted now."},
			func() float64 { return float64(stats().LargeListsHeld) }),
	)
}

func (m *Metrics) server(name string) string {
	if m.servers[name] {
		return name
	}
	return otherServer
}

// errorType is an error type mcpcore.ErrorTypes lists, else _OTHER. The core passes no other; an
// Observer does not trust that.
func (m *Metrics) errorType(et string) string {
	if m.errorTypes[et] {
		return et
	}
	return mcpcore.OtherValue
}

func transportName(t mcpcore.TransportKind) string {
	if t == mcpcore.TransportStdio {
		return "pipe"
	}
	return "tcp"
}

// SessionStateChanged implements mcpcore.Observer.
func (m *Metrics) SessionStateChanged(server string, from, to mcpcore.SessionState) {
	server = m.server(server)
	if from != 0 {
		m.sessions.WithLabelValues(server, from.String()).Dec()
	}
	if to != mcpcore.StateClosed {
		m.sessions.WithLabelValues(server, to.String()).Inc()
	}
}

// SessionEnded implements mcpcore.Observer.
func (m *Metrics) SessionEnded(server string, transport mcpcore.TransportKind, version, errorType string, lifetime time.Duration) {
	m.session.with(sessionLabels{version, m.errorType(errorType), m.server(server), transportName(transport)}).Observe(lifetime.Seconds())
}

// OperationDone implements mcpcore.Observer.
func (m *Metrics) OperationDone(op mcpcore.Operation) {
	var tool, prompt string
	switch op.Method {
	case "tools/call":
		tool = op.Target
	case "prompts/get":
		prompt = op.Target
	}
	m.operation.with(operationLabels{op.Method, tool, prompt, m.errorType(op.ErrorType), op.ProtocolVersion, m.server(op.Server), transportName(op.Transport)}).
		Observe(op.Duration.Seconds())
}

// ServerRequestStarted implements mcpcore.Observer.
func (m *Metrics) ServerRequestStarted(kind mcpcore.RequestKind) {
	m.pending.WithLabelValues(kind.String()).Inc()
}

// ServerRequestEnded implements mcpcore.Observer.
func (m *Metrics) ServerRequestEnded(kind mcpcore.RequestKind, outcome mcpcore.Outcome, waited time.Duration) {
	k, o := kind.String(), outcome.String()
	m.pending.WithLabelValues(k).Dec()
	m.requests.WithLabelValues(k, o).Inc()
	m.requestWait.WithLabelValues(k, o).Observe(waited.Seconds())
}

// Reconnected implements mcpcore.Observer.
func (m *Metrics) Reconnected(server string, transport mcpcore.TransportKind, reinitialized bool) {
	reason := "restart"
	if reinitialized {
		reason = "reinitialize"
	}
	m.reconnects.WithLabelValues(m.server(server), reason).Inc()
}

// EventDropped implements mcpcore.Observer.
func (m *Metrics) EventDropped() { m.eventsDrop.Inc() }

// MessageTransferred implements mcpcore.Observer.
func (m *Metrics) MessageTransferred(transport mcpcore.TransportKind, sent bool, bytes int) {
	i, dir := 1, "received"
	if sent {
		i, dir = 0, "sent"
	}
	if c, ok := m.wire[transport]; ok {
		c[i].messages.Inc()
		c[i].bytes.Add(float64(bytes))
		return
	}
	m.messages.WithLabelValues(string(transport), dir).Inc()
	m.messageBytes.WithLabelValues(string(transport), dir).Add(float64(bytes))
}
