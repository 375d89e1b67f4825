package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/mcp-bridge/mcp-bridge/internal/assembly"
	"github.com/mcp-bridge/mcp-bridge/internal/config"
	"github.com/mcp-bridge/mcp-bridge/internal/telemetry"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
	"github.com/mcp-bridge/mcp-bridge/server/healthz"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// observability is the bridge's metrics and tracing (docs/adr/0014): one Prometheus registry served at
// /metrics, the core's Observer, the gRPC server's standard metrics, and the tracer provider the OTEL_*
// environment asks for.
type observability struct {
	registry *prometheus.Registry
	core     *telemetry.Metrics
	grpc     *grpcprom.ServerMetrics
	tracing  *telemetry.Tracing
}

// newObservability builds the registry and the tracer provider. getenv reads the OTEL_* variables. With
// tracing on, the provider and the W3C propagator also become OpenTelemetry's globals (for libraries that
// use them), and OpenTelemetry's own errors (an unreachable collector) go to logger.
func newObservability(ctx context.Context, cfg *config.Config, getenv func(string) string, logger *slog.Logger) (*observability, error) {
	tr, err := telemetry.TracingFromEnv(ctx, buildVersion(), getenv)
	if err != nil {
		return nil, err
	}
	// OpenTelemetry's own errors go to the bridge's log whether tracing is on or not: the W3C propagator
	// also reads hosts' baggage headers, and its default handler writes a plain-text line to stderr, which
	// breaks --log-format json (issue 31).
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { logger.Warn("opentelemetry", "error", err) }))
	if tr.Provider != nil {
		otel.SetTracerProvider(tr.Provider)
		otel.SetTextMapPropagator(telemetry.Propagator)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: telemetry.Namespace, Name: "build_info", Help: "The bridge's version; always 1.",
			ConstLabels: prometheus.Labels{"version": buildVersion()},
		}, func() float64 { return 1 }),
	)
	gm := grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram(
		grpcprom.WithHistogramBuckets([]float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300}),
	))
	reg.MustRegister(gm)
	return &observability{registry: reg, core: telemetry.NewMetrics(reg, cfg.ServerNames()), grpc: gm, tracing: tr}, nil
}

// envOr is os.Getenv, for newObservability.
func envOr(key string) string { return os.Getenv(key) }

// assemblyOptions sets the core's Observer and tracer provider, and the registry of the service's metrics.
func (o *observability) assemblyOptions(opts *assembly.Options) {
	if o == nil {
		return
	}
	opts.Observer = o.core
	opts.Metrics = o.registry
	if o.tracing.Provider != nil {
		opts.TracerProvider = o.tracing.Provider
	}
}

// serverOptions are the gRPC server's: the Prometheus interceptors outermost (they see every RPC, the
// ones authentication refuses too), then tracing's (a stats handler, or the interceptors that take a
// host's trace context when tracing is off).
func (o *observability) serverOptions() []grpc.ServerOption {
	return append([]grpc.ServerOption{
		grpc.ChainUnaryInterceptor(o.grpc.UnaryServerInterceptor()),
		grpc.ChainStreamInterceptor(o.grpc.StreamServerInterceptor()),
	}, o.tracing.ServerOptions()...)
}

// inprocInterceptors are the unary interceptors of calls that reach the service without the gRPC server's
// transport (the REST gateway's in-process unary calls): the Prometheus metrics, and tracing's interceptor,
// which stands in for the stats handler those calls do not pass. They go before the service's own.
func (o *observability) inprocInterceptors() []grpc.UnaryServerInterceptor {
	return []grpc.UnaryServerInterceptor{o.grpc.UnaryServerInterceptor(), o.tracing.UnaryServerInterceptor()}
}

// registerService adds what only the service knows (attached host streams) and zero series for every
// method of the gRPC server.
func (o *observability) registerService(svc any, srv *grpc.Server) {
	if hs, ok := svc.(interface{ HostStreams() int64 }); ok {
		o.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: telemetry.Namespace, Name: "host_streams",
			Help: "Host streams attached to sessions: sessions a Connect stream attached to, and WatchEvents watchers.",
		}, func() float64 { return float64(hs.HostStreams()) }))
	}
	if ah, ok := svc.(interface{ ApprovalHistoryRecords() int }); ok { // docs/adr/0091
		o.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: telemetry.Namespace, Name: "approval_history_records",
			Help: "Approval requests that ended, kept in the bounded approval history (ListApprovalHistory).",
		}, func() float64 { return float64(ah.ApprovalHistoryRecords()) }))
	}
	if ws, ok := svc.(interface{ WatchStreamsRefused() uint64 }); ok {
		o.registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace: telemetry.Namespace, Name: "watch_streams_refused_total",
			Help: "WatchEvents streams refused because the principal held limits.maxEventStreamsPerPrincipal.",
		}, func() float64 { return float64(ws.WatchStreamsRefused()) }))
	}
	if st, ok := svc.(interface{ CoreStats() mcpcore.Stats }); ok {
		telemetry.RegisterCoreStats(o.registry, st.CoreStats)
	}
	if ks, ok := svc.(interface{ KeptStats() mcpcore.KeptStats }); ok {
		telemetry.RegisterKeptResults(o.registry, ks.KeptStats)
	}
	o.grpc.InitializeMetrics(srv)
}

// registerConnGate registers the HTTP listener's connection metrics.
func (o *observability) registerConnGate(g *connGate) {
	o.registry.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: telemetry.Namespace, Name: "http_connections",
			Help: "Connections the HTTP listener holds (limits.maxHTTPConnections caps them).",
		}, func() float64 { return float64(g.open()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Namespace: telemetry.Namespace, Name: "http_connections_closed_at_limit_total",
			Help: "HTTP connections closed to stay within limits.maxHTTPConnections: the quietest one, or the new one when every connection had a request in flight.",
		}, func() float64 { return float64(g.evicted.Load()) }),
	)
}

// handler serves the registry in the Prometheus text format (or OpenMetrics when asked for).
func (o *observability) handler(logger *slog.Logger) http.Handler {
	return promhttp.HandlerFor(o.registry, promhttp.HandlerOpts{
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		EnableOpenMetrics: true,
	})
}

// shutdown flushes the spans not yet exported.
func (o *observability) shutdown(ctx context.Context, logger *slog.Logger) {
	if err := o.tracing.Shutdown(ctx); err != nil {
		logger.Warn("flushing traces", "error", err)
	}
}

// hidesHealth reports whether the health of the configured server name is kept off the views that ask no
// token (assembly.HidesHealth).
func (b *bridge) hidesHealth(name string) bool { return assembly.HidesHealth(b.cfg, name) }

// readyz is /readyz (healthz.Ready): on the admin listener (operator) with every server's health, on the API
// listener without the servers hidesHealth keeps from it; with the state store's health on both.
func (b *bridge) readyz(operator bool) http.Handler {
	o := healthz.ReadyOptions{Service: bridgeServiceName, Core: b.svc.Core(), Replica: b.cfg.Sessions.Replica}
	if sh, ok := b.svc.(interface{ StateHealth() func() error }); ok {
		o.Store = sh.StateHealth() // nil when nothing outlives the process (internal/assembly)
	}
	if !operator {
		o.Hide = b.hidesHealth
	}
	if b.reload != nil {
		o.Config = b.reload.status
	}
	return healthz.Ready(healthpb.NewHealthClient(b.gwConn), o)
}

// apiMetrics is the handler of GET /metrics on the API's HTTP listener: the metrics, or when
// authentication is configured a 404 that says where they are.
func (b *bridge) apiMetrics() http.Handler {
	if !assembly.OperatorOnly(b.cfg) {
		return b.obs.handler(b.logger)
	}
	if b.adminLn == nil {
		b.logger.Warn("authentication is configured, so /metrics is served only on the admin listener, which is off: set listen.admin (--admin-addr) to scrape the bridge")
	}
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_ = json.NewEncoder(w).Encode(map[string]any{
			"code":    5, // google.rpc.Code NOT_FOUND, as the other unknown paths
			"message": "with authentication configured, metrics are served on the admin listener (listen.admin), not on the API",
		})
	})
}

// serveAdmin serves /metrics, /healthz and /readyz (with every server's health) on the admin listener
// (plain HTTP, no authentication: bind it to an address only the scraper and the operator reach) until
// shutdown closes it.
func (b *bridge) serveAdmin() {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", b.obs.handler(b.logger))
	mux.HandleFunc("GET /healthz", b.healthz)
	mux.Handle("GET /readyz", b.readyz(true))
	b.admin = &http.Server{Handler: b.door(mux), ReadHeaderTimeout: httpReadHeaderTimeout, IdleTimeout: httpIdleTimeout, ErrorLog: slog.NewLogLogger(b.logger.Handler(), slog.LevelWarn)}
	b.serving.Go(func() {
		if err := b.admin.Serve(b.adminLn); !errors.Is(err, http.ErrServerClosed) {
			b.reportServeErr(fmt.Errorf("admin server: %w", err))
		}
	})
}
