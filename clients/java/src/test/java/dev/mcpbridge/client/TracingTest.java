package dev.mcpbridge.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpbridge.client.testing.TestBridge;
import dev.mcpbridge.v1.CallToolResult;
import dev.mcpbridge.v1.CreateMessageRequest;
import dev.mcpbridge.v1.CreateMessageResult;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.Scope;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * OpenTelemetry context through the real bridge: the caller's current span goes to the bridge with the call, the
 * bridge passes it on upstream and back on the sampling request the call raises, and the handler runs with that
 * context current.
 */
class TracingTest {
  static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
  static final String SPAN_ID = "00f067aa0ba902b7";

  static TestBridge bridge;
  static McpBridgeClient client;

  @BeforeAll
  static void startBridge() throws Exception {
    bridge = TestBridge.start(Map.of());
    client = bridge.client();
  }

  @AfterAll
  static void stopBridge() {
    if (client != null) {
      client.close();
    }
    if (bridge != null) {
      bridge.close();
    }
  }

  @Test
  void theCallersSpanReachesTheSamplingHandler() throws Exception {
    assertTrue(Otel.AVAILABLE);
    BlockingQueue<Object[]> seen = new LinkedBlockingQueue<>();
    HostHandler host = new HostHandler() {
      @Override
      public CreateMessageResult handleSampling(CreateMessageRequest request, RequestContext ctx) {
        seen.add(new Object[] {ctx.traceContext(), Span.current().getSpanContext()});
        return Mcp.samplingReply("m", "traced");
      }
    };
    SpanContext caller = SpanContext.create(TRACE_ID, SPAN_ID, TraceFlags.getSampled(), TraceState.getDefault());
    try (McpSession s = client.openSession(SessionOptions.forServer("demo").handler(host))) {
      CallToolResult r;
      try (Scope scope = Context.current().with(Span.wrap(caller)).makeCurrent()) {
        r = s.callTool("sample", Map.of("prompt", "hi"));
      }
      assertFalse(r.getIsError(), Mcp.text(r));
    }
    Object[] got = seen.take();
    @SuppressWarnings("unchecked")
    Map<String, String> tc = (Map<String, String>) got[0];
    SpanContext inHandler = (SpanContext) got[1];
    // This bridge does not trace: the request carries the call's own context, which the handler continues.
    assertEquals("00-" + TRACE_ID + "-" + SPAN_ID + "-01", tc.get("traceparent"));
    assertEquals(TRACE_ID, inHandler.getTraceId());
    assertEquals(SPAN_ID, inHandler.getSpanId());
    assertTrue(inHandler.isRemote());
  }

  @Test
  void withoutACurrentSpanNothingIsSent() {
    assertTrue(Otel.current().isEmpty());
  }
}
