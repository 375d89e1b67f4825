package dev.mcpbridge.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpbridge.client.testing.TestBridge;
import dev.mcpbridge.v1.CallToolResponse;
import dev.mcpbridge.v1.CallToolResult;
import dev.mcpbridge.v1.ElicitRequest;
import dev.mcpbridge.v1.ElicitResult;
import dev.mcpbridge.v1.ServerRequest;
import io.grpc.Status;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Tool calls that outlive a restart of the real bridge, without the host doing anything. Each test starts its own
 * bin/mcp-bridge with a state file on fixed ports, starts a call of the demo server's {@code elicit} tool, kills the
 * bridge (SIGKILL, or SIGTERM for a graceful restart) while the elicitation waits for a person, and starts it again
 * on the same ports and state file. The client calls again with the same call id and {@code resume} on its own:
 * on 2026-07-28 the kept multi round-trip round goes on and the original call returns the tool's result with the
 * answer the handler gave after the restart; on 2025-11-25 the stdio server that pushed the request died with the
 * bridge, and the call fails with {@link McpBridgeException#outcomeUnknown()}.
 */
class ResumeTest {
  private TestBridge bridge;
  private McpBridgeClient client;

  @BeforeEach
  void start() throws Exception {
    bridge = TestBridge.start(Map.of("pending", Map.of("elicitationTimeout", "60s")),
        List.of("--state-file", "{dir}/state.db"));
    client = McpBridgeClient.builder().target(bridge.target())
        .reconnectBackoff(Duration.ofMillis(50), Duration.ofMillis(500)).build();
  }

  @AfterEach
  void stop() {
    if (client != null) {
      client.close();
    }
    if (bridge != null) {
      bridge.close();
    }
  }

  /** Answers elicitations once {@code gate} opens: a person who answers after the restart. */
  static final class GatedHost implements HostHandler {
    final CountDownLatch gate = new CountDownLatch(1);
    final CountDownLatch seen = new CountDownLatch(1);
    final List<String> requests = new CopyOnWriteArrayList<>();

    @Override
    public ElicitResult handleElicitation(ElicitRequest request, RequestContext context) throws Exception {
      requests.add(context.requestId());
      seen.countDown();
      gate.await(60, TimeUnit.SECONDS);
      return Mcp.accept(Map.of("name", "Ada", "age", 36));
    }
  }

  void restart(String how) throws Exception {
    if (how.equals("kill -9")) {
      bridge.kill();
    } else {
      bridge.stop();
    }
    bridge.startAgain();
  }

  static void await(CountDownLatch latch, String what) throws InterruptedException {
    assertTrue(latch.await(20, TimeUnit.SECONDS), what + " did not happen in time");
  }

  @ParameterizedTest
  @ValueSource(strings = {"kill -9", "SIGTERM"})
  void aCallWaitingForAPersonCompletesAcrossARestart(String how) throws Exception {
    GatedHost host = new GatedHost();
    McpSession s = client.openSession(SessionOptions.forServer("demo").handler(host).protocolVersion("2026-07-28"));
    McpSession other = client.openSession(SessionOptions.forServer("demo").protocolVersion("2026-07-28"));
    CompletableFuture<CallToolResponse> call = s.callToolAsync("elicit", Json.toStruct(Map.of("message", "Who are you?")),
        CallOptions.none().withTimeout(Duration.ofSeconds(90)));
    // The same loss, with retries turned off for the call: the host sees it.
    CompletableFuture<CallToolResponse> plain = other.callToolAsync("long_operation",
        Json.toStruct(Map.of("durationSeconds", 30, "steps", 2)), CallOptions.none().withRetry(RetryPolicy.disabled()));
    await(host.seen, "the elicitation");
    restart(how);
    host.gate.countDown(); // the person answers after the restart

    CallToolResponse resp = call.get(60, TimeUnit.SECONDS);
    assertEquals("accepted: name=Ada age=36", Mcp.text(resp.getResult()), resp.toString());
    assertTrue(resp.getCallId().startsWith("call-"), resp.getCallId()); // the id the client made up and resumed
    assertEquals(1, host.requests.size(), "the handler is asked once: the request raised again has the same id");
    ExecutionException lost = assertThrows(ExecutionException.class, () -> plain.get(30, TimeUnit.SECONDS));
    McpBridgeException e = (McpBridgeException) lost.getCause();
    assertEquals(Status.Code.UNAVAILABLE, e.code(), e.toString());
    assertFalse(e.outcomeUnknown());
    assertTrue(e.callId().orElseThrow().startsWith("call-"));
  }

  @Test
  void aPushedCallWhoseServerDiedWithTheBridgeIsOutcomeUnknown() throws Exception {
    GatedHost host = new GatedHost();
    try {
      McpSession s = client.openSession(SessionOptions.forServer("demo").handler(host).protocolVersion("2025-11-25"));
      CompletableFuture<CallToolResult> call = CompletableFuture.supplyAsync(() -> s.callTool("elicit",
          Map.of("message", "Who are you?"), CallOptions.none().withCallId("job-7").withTimeout(Duration.ofSeconds(90))));
      await(host.seen, "the elicitation");
      restart("kill -9");
      ExecutionException failed = assertThrows(ExecutionException.class, () -> call.get(60, TimeUnit.SECONDS));
      McpBridgeException e = (McpBridgeException) failed.getCause();
      assertTrue(e.outcomeUnknown(), e.toString());
      assertEquals(Status.Code.ABORTED, e.code());
      assertEquals("CALL_OUTCOME_UNKNOWN", e.reason().orElseThrow());
      assertEquals("job-7", e.callId().orElseThrow());
      assertFalse(e.sessionLost());
      assertEquals("after", Mcp.text(s.callTool("echo", Map.of("text", "after")))); // the session came back
    } finally {
      host.gate.countDown();
    }
  }

  @Test
  void aStreamedCallIsResumedAcrossARestart() throws Exception {
    GatedHost host = new GatedHost();
    McpSession s = client.openSession(SessionOptions.forServer("demo").handler(host).protocolVersion("2026-07-28"));
    List<String> notices = new CopyOnWriteArrayList<>();
    CompletableFuture<CallToolResult> call = s.callToolStreamingAsync("elicit", Map.of("message", "Who?"),
        CallOptions.none().withCallId("stream-1").withTimeout(Duration.ofSeconds(90)), new ToolCallListener() {
          @Override
          public void onServerRequest(ServerRequest request) {
            notices.add(request.getRequestId());
          }
        });
    await(host.seen, "the elicitation");
    restart("kill -9");
    host.gate.countDown();
    assertEquals("accepted: name=Ada age=36", Mcp.text(call.get(60, TimeUnit.SECONDS)));
    assertEquals(1, host.requests.size());
    // The stream shows the request of the call; the resumed stream may show it again, under the same id.
    assertTrue(notices.stream().allMatch(host.requests.get(0)::equals), notices + " vs " + host.requests);
  }

  @Test
  void aCallMadeWhileTheBridgeIsDownRunsOnceItIsBack() throws Exception {
    McpSession s = client.openSession(SessionOptions.forServer("demo").protocolVersion("2026-07-28"));
    bridge.kill();
    CompletableFuture<CallToolResponse> call = s.callToolAsync("increment", null,
        CallOptions.none().withTimeout(Duration.ofSeconds(60)));
    Thread.sleep(1000); // the call cannot connect, and waits to try again
    assertFalse(call.isDone(), () -> "done early: " + call);
    bridge.startAgain();
    // It never reached the bridge, so it is sent again as a new call, not as a resume (which, for a tool not
    // annotated idempotent, would be CALL_OUTCOME_UNKNOWN); it runs once, on the demo server started anew.
    assertEquals("counter is now 1", Mcp.text(call.get(60, TimeUnit.SECONDS).getResult()));
  }
}
