package dev.mcpbridge.client;

import io.opentelemetry.api.baggage.propagation.W3CBaggagePropagator;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import java.util.HashMap;
import java.util.Map;

/** The OpenTelemetry side of {@link Otel}; loaded only when OpenTelemetry's API is on the class path. */
final class OtelPropagation {
  /** W3C Trace Context and Baggage: the formats the bridge and the MCP convention (SEP-414) use. */
  private static final TextMapPropagator W3C = TextMapPropagator.composite(
      W3CTraceContextPropagator.getInstance(), W3CBaggagePropagator.getInstance());

  private static final TextMapGetter<Map<String, String>> MAP_GETTER = new TextMapGetter<>() {
    @Override
    public Iterable<String> keys(Map<String, String> carrier) {
      return carrier.keySet();
    }

    @Override
    public String get(Map<String, String> carrier, String key) {
      return carrier == null ? null : carrier.get(key);
    }
  };

  private OtelPropagation() {}

  static Map<String, String> current() {
    Map<String, String> out = new HashMap<>();
    W3C.inject(Context.current(), out, (carrier, k, v) -> carrier.put(k, v));
    return out;
  }

  static Otel.Scope makeCurrent(Map<String, String> traceContext) {
    io.opentelemetry.context.Scope scope = W3C.extract(Context.current(), traceContext, MAP_GETTER).makeCurrent();
    return scope::close;
  }
}
