// Package telemetry holds the bridge's metrics and tracing set-up (docs/adr/0014): the Prometheus
// collectors that count what the MCP client core tells its mcpcore.Observer, the gRPC server's standard
// metrics, and the OpenTelemetry tracer provider the standard OTEL_* environment variables ask for.
package telemetry

import (
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

// durationBuckets are the OTel MCP conventions' recommended boundaries, in seconds.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}

// sessionBuckets bound mcp.client.session.duration: seconds to a day.
var sessionBuckets = []float64{1, 10, 60, 300, 900, 1800, 3600, 7200, 14400, 28800, 86400}

// waitBuckets bound the wait of pending server requests: a person may take minutes.
var waitBuckets = []float64{0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 120, 300, 600, 1800}

// Metrics is the mcpcore.Observer that keeps the core's facts as Prometheus metrics. Its methods are
// safe for concurrent use and do not block.
type Metrics struct {
	servers map[string]bool // configured server names: the only values of the server label

	operation    *prometheus.HistogramVec
	session      *prometheus.HistogramVec
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

// NewMetrics registers the core's metrics with reg. servers are the configured server names.
func NewMetrics(reg prometheus.Registerer, servers []string) *Metrics {
	m := &Metrics{servers: map[string]bool{}}
	for _, s := range servers {
		m.servers[s] = true
	}
	m.operation = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "mcp_client_operation_duration_seconds",
		Help:    "Duration of MCP requests the bridge sent to upstream servers, until their response (OTel mcp.client.operation.duration).",
		Buckets: durationBuckets,
	}, []string{"mcp_method_name", "gen_ai_tool_name", "gen_ai_prompt_name", "error_type", "mcp_protocol_version", "server", "network_transport"})
	m.session = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "mcp_client_session_duration_seconds",
		Help:    "Lifetime of the bridge's sessions to upstream servers (OTel mcp.client.session.duration).",
		Buckets: sessionBuckets,
	}, []string{"mcp_protocol_version", "error_type", "server", "network_transport"})
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
	reg.MustRegister(m.operation, m.session, m.sessions, m.pending, m.requests, m.requestWait, m.reconnects,
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
	for _, k := range []mcpcore.RequestKind{mcpcore.KindSampling, mcpcore.KindElicitation, mcpcore.KindRoots, mcpcore.KindAuthorization} {
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
		counter("upstream_malformed_messages_total", "Messages from upstream servers that were not valid JSON-RPC and were dropped.",
			func(s mcpcore.Stats) uint64 { return s.MalformedMessages }),
		counter("upstream_oversized_messages_total", "Messages from upstream servers larger than limits.maxMessageBytes, refused.",
			func(s mcpcore.Stats) uint64 { return s.OversizedMessages }),
		counter("stdio_stderr_lines_dropped_total", "Lines of stdio servers' stderr not logged because of the rate bound.",
			func(s mcpcore.Stats) uint64 { return s.StderrLinesDropped }),
	)
}

func (m *Metrics) server(name string) string {
	if m.servers[name] {
		return name
	}
	return otherServer
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
	m.session.WithLabelValues(version, errorType, m.server(server), transportName(transport)).Observe(lifetime.Seconds())
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
	m.operation.WithLabelValues(op.Method, tool, prompt, op.ErrorType, op.ProtocolVersion, m.server(op.Server), transportName(op.Transport)).
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
