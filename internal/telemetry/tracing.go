package telemetry

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// Propagator is the bridge's trace context propagation: W3C Trace Context and Baggage, the formats the
// MCP convention (SEP-414) reserves _meta keys for.
var Propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// Tracing is the bridge's OpenTelemetry tracing: on only when the standard environment variables ask for
// it (see TracingFromEnv).
type Tracing struct {
	// Provider makes spans; nil when tracing is off.
	Provider *sdktrace.TracerProvider
	// Exporter names what is exported to, for the start-up log ("otlp/grpc", "otlp/http"); "" when off.
	Exporter string
}

// TracingFromEnv builds the tracer provider the standard OTEL_* environment variables ask for (getenv
// reads them):
//
//   - OTEL_SDK_DISABLED=true, or OTEL_TRACES_EXPORTER=none: off;
//   - OTEL_TRACES_EXPORTER=otlp: on;
//   - OTEL_TRACES_EXPORTER unset: on when OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
//     is set (unlike the SDK's default of otlp: tracing is off unless asked for);
//   - OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL: grpc or http/protobuf (the
//     default).
//
// The exporters read their endpoint, headers, TLS and timeout settings from the OTEL_EXPORTER_OTLP_*
// variables themselves; the sampler comes from OTEL_TRACES_SAMPLER (default parentbased_always_on), the
// resource from OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (service.name defaults to mcp-bridge), the
// batching from OTEL_BSP_*. Building the exporter does not connect: an unreachable collector costs
// dropped spans and a logged error, never a failed start.
func TracingFromEnv(ctx context.Context, version string, getenv func(string) string) (*Tracing, error) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return &Tracing{}, nil
	}
	exp := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")))
	switch exp {
	case "none":
		return &Tracing{}, nil
	case "":
		if getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
			return &Tracing{}, nil
		}
	case "otlp":
	default:
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: the bridge exports traces with otlp only (or none)", exp)
	}
	proto := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"))
	if proto == "" {
		proto = strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL"))
	}
	var (
		client otlptrace.Client
		name   string
	)
	switch proto {
	case "grpc":
		client, name = otlptracegrpc.NewClient(), "otlp/grpc"
	case "", "http/protobuf":
		client, name = otlptracehttp.NewClient(), "otlp/http"
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%q: use grpc or http/protobuf", proto)
	}
	exporter, err := otlptrace.New(ctx, client)
	if err != nil {
		return nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	res, err := resource.Merge(
		resource.NewSchemaless(semconv.ServiceName("mcp-bridge"), semconv.ServiceVersion(version)),
		resource.Default(), // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
	)
	if err != nil && !errors.Is(err, resource.ErrPartialResource) && !errors.Is(err, resource.ErrSchemaURLConflict) {
		return nil, fmt.Errorf("OTEL resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res))
	return &Tracing{Provider: tp, Exporter: name}, nil
}

// Shutdown flushes the spans not yet exported and stops the exporter, bounded by ctx. It does nothing
// when tracing is off.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil || t.Provider == nil {
		return nil
	}
	return t.Provider.Shutdown(ctx)
}

// ServerOptions are the gRPC server options of tracing: otelgrpc's stats handler (a server span per RPC,
// the host's trace context taken from the metadata) when tracing is on. When it is off, interceptors only
// take the host's trace context, so that the bridge passes it on upstream without spans of its own (and
// without a stats handler, which would make gRPC account for every message).
func (t *Tracing) ServerOptions() []grpc.ServerOption {
	if t != nil && t.Provider != nil {
		return []grpc.ServerOption{grpc.StatsHandler(otelgrpc.NewServerHandler(
			otelgrpc.WithTracerProvider(t.Provider),
			otelgrpc.WithPropagators(Propagator),
			otelgrpc.WithMeterProvider(metricnoop.NewMeterProvider()), // gRPC metrics come from Prometheus
		))}
	}
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(t.UnaryServerInterceptor()),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if ctx := extract(ss.Context()); ctx != ss.Context() {
				ss = &contextStream{ServerStream: ss, ctx: ctx}
			}
			return h(srv, ss)
		}),
	}
}

// UnaryServerInterceptor is tracing for unary calls that do not pass through the gRPC server's transport,
// so that its stats handler does not see them (the REST gateway's in-process calls): with tracing on, a
// server span per call named and attributed as otelgrpc names its own, child of the caller's trace
// context; with tracing off, only the caller's trace context is taken.
func (t *Tracing) UnaryServerInterceptor() grpc.UnaryServerInterceptor {
	if t == nil || t.Provider == nil {
		return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			return h(extract(ctx), req)
		}
	}
	tracer := t.Provider.Tracer("github.com/mcp-bridge/mcp-bridge/internal/telemetry")
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		service, method, _ := strings.Cut(strings.TrimPrefix(info.FullMethod, "/"), "/")
		ctx, span := tracer.Start(extract(ctx), strings.TrimPrefix(info.FullMethod, "/"), trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("rpc.system", "grpc"), attribute.String("rpc.service", service), attribute.String("rpc.method", method)))
		defer span.End()
		resp, err := h(ctx, req)
		st, _ := status.FromError(err)
		span.SetAttributes(attribute.Int64("rpc.grpc.status_code", int64(st.Code())))
		if err != nil {
			span.SetStatus(otelcodes.Error, st.Message())
		}
		return resp, err
	}
}

// extract returns ctx with the W3C trace context of the RPC's metadata, if it has any.
func extract(ctx context.Context) context.Context {
	// ValueFromIncomingContext does not copy the metadata, as FromIncomingContext does: most RPCs carry none.
	if len(metadata.ValueFromIncomingContext(ctx, "traceparent")) == 0 && len(metadata.ValueFromIncomingContext(ctx, "baggage")) == 0 {
		return ctx
	}
	md, _ := metadata.FromIncomingContext(ctx)
	return Propagator.Extract(ctx, metadataCarrier(md))
}

// contextStream is a server stream with another context.
type contextStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *contextStream) Context() context.Context { return s.ctx }

// metadataCarrier reads trace context from gRPC metadata.
type metadataCarrier metadata.MD

func (c metadataCarrier) Get(key string) string {
	if v := metadata.MD(c).Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}
func (c metadataCarrier) Set(key, value string) { metadata.MD(c).Set(key, value) }
func (c metadataCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// TraceHeaders are the HTTP headers of W3C trace context that the REST gateway forwards to the gRPC
// service as metadata of the same names.
var TraceHeaders = []string{"traceparent", "tracestate", "baggage"}
