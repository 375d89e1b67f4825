package dev.mcpbridge.client;

import java.util.Map;

/**
 * OpenTelemetry context propagation when {@code io.opentelemetry:opentelemetry-api} is on the class path (an
 * optional dependency): each call carries the current context to the bridge as W3C trace context metadata
 * ({@code traceparent}, {@code tracestate}, {@code baggage}), and each server request's handler runs with the
 * request's trace context current. Without OpenTelemetry every method is a no-op; no OpenTelemetry class is
 * loaded (they are referenced only from {@link OtelPropagation}).
 */
final class Otel {
  /** Whether OpenTelemetry's API is on the class path. */
  static final boolean AVAILABLE = present();

  /** A scope that closes without exceptions. */
  interface Scope extends AutoCloseable {
    @Override
    void close();
  }

  private static final Scope NOOP = () -> {};

  private Otel() {}

  private static boolean present() {
    try {
      Class.forName("io.opentelemetry.context.Context", false, Otel.class.getClassLoader());
      Class.forName("io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator", false,
          Otel.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }

  /** The current context as W3C trace context headers; empty without OpenTelemetry or a current span. */
  static Map<String, String> current() {
    return AVAILABLE ? OtelPropagation.current() : Map.of();
  }

  /** Makes {@code traceContext} (a server request's) the current context until the scope closes. */
  static Scope makeCurrent(Map<String, String> traceContext) {
    if (!AVAILABLE || traceContext.isEmpty()) {
      return NOOP;
    }
    return OtelPropagation.makeCurrent(traceContext);
  }
}
