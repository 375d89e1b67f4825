package telemetry

import (
	"context"
	"strings"
	"testing"

	otelcodes "go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

func TestTracingFromEnv(t *testing.T) {
	cases := []struct {
		name    string
		env     map[string]string
		want    string // Exporter; "" is off
		wantErr string
	}{
		{"nothing set", nil, "", ""},
		{"endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, "otlp/http", ""},
		{"traces endpoint, grpc", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "otlp/grpc", ""},
		{"traces protocol wins", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, "otlp/http", ""},
		{"exporter otlp without endpoint", map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, "otlp/http", ""},
		{"exporter none", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, "", ""},
		{"sdk disabled", map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, "", ""},
		{"unknown exporter", map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, "", `OTEL_TRACES_EXPORTER="zipkin"`},
		{"unknown protocol", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, "", `OTEL_EXPORTER_OTLP_PROTOCOL="http/json"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"} {
				t.Setenv(k, tc.env[k]) // the exporters read them too
			}
			tr, err := TracingFromEnv(context.Background(), "test", func(k string) string { return tc.env[k] })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Shutdown(context.Background())
			if tr.Exporter != tc.want || (tr.Provider != nil) != (tc.want != "") {
				t.Errorf("exporter %q (provider %v), want %q", tr.Exporter, tr.Provider != nil, tc.want)
			}
		})
	}
}

func TestUnaryServerInterceptor(t *testing.T) {
	const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	in := metadata.NewIncomingContext(context.Background(), metadata.Pairs("traceparent", traceparent))
	info := &grpc.UnaryServerInfo{FullMethod: "/mcpbridge.v1.BridgeService/CallTool"}

	t.Run("tracing off takes the caller's context", func(t *testing.T) {
		var got trace.SpanContext
		_, _ = (&Tracing{}).UnaryServerInterceptor()(in, nil, info, func(ctx context.Context, _ any) (any, error) {
			got = trace.SpanContextFromContext(ctx)
			return nil, nil
		})
		if got.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || got.SpanID().String() != "00f067aa0ba902b7" || !got.IsRemote() {
			t.Errorf("handler's span context = %v", got)
		}
	})
	t.Run("tracing on makes a server span under it", func(t *testing.T) {
		rec := tracetest.NewSpanRecorder()
		tr := &Tracing{Provider: sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))}
		var got trace.SpanContext
		_, err := tr.UnaryServerInterceptor()(in, nil, info, func(ctx context.Context, _ any) (any, error) {
			got = trace.SpanContextFromContext(ctx)
			return nil, status.Error(codes.NotFound, "no such session")
		})
		if status.Code(err) != codes.NotFound {
			t.Fatalf("err = %v", err)
		}
		spans := rec.Ended()
		if len(spans) != 1 {
			t.Fatalf("%d spans", len(spans))
		}
		s := spans[0]
		if s.Name() != "mcpbridge.v1.BridgeService/CallTool" || s.SpanKind() != trace.SpanKindServer || s.Parent().SpanID().String() != "00f067aa0ba902b7" ||
			s.SpanContext().SpanID() != got.SpanID() || s.Status().Code != otelcodes.Error {
			t.Errorf("span %s kind %v parent %v status %v; handler saw %v", s.Name(), s.SpanKind(), s.Parent(), s.Status(), got)
		}
	})
}
