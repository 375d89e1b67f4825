package dev.mcpbridge.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpbridge.client.CallOptions;
import dev.mcpbridge.client.DetachedCalls;
import dev.mcpbridge.client.HostHandler;
import dev.mcpbridge.client.Mcp;
import dev.mcpbridge.client.McpBridgeClient;
import dev.mcpbridge.client.McpBridgeException;
import dev.mcpbridge.client.McpSession;
import dev.mcpbridge.client.McpToolbox;
import dev.mcpbridge.client.RequestContext;
import dev.mcpbridge.client.testing.TestBridge;
import dev.mcpbridge.v1.CallToolResult;
import dev.mcpbridge.v1.ElicitRequest;
import dev.mcpbridge.v1.ElicitResult;
import io.grpc.Status;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The detached-call run both framework tests drive (docs/adr/0105-detached-calls.md): an agent's tool call to the
 * demo server's {@code elicit} tool is cut (its thread interrupted) while the tool waits for the person's answer.
 * With the adapter's {@code detached(calls)} the call goes on in the bridge: the person answers afterwards and
 * {@link #verifyResumed} reads the tool's result by resuming the call, or {@link #verifyCancelled} ends it upstream.
 */
public final class DetachedScenario implements AutoCloseable {
  /** A bound on waits for the other side; never a timing assertion. */
  private static final long WAIT_SECONDS = 30;
  /** The arguments of the elicit call, as a model writes them. */
  public static final String ELICIT_ARGS = "{\"message\":\"Who are you?\"}";

  public final TestBridge bridge;
  public final McpBridgeClient client;
  public final McpSession session;
  public final McpToolbox toolbox;
  public final DetachedCalls calls = new DetachedCalls();
  private final CountDownLatch asked = new CountDownLatch(1);
  private final CountDownLatch goOn = new CountDownLatch(1);

  private DetachedScenario(TestBridge bridge) {
    this.bridge = bridge;
    this.client = bridge.client();
    this.session = client.openSession("demo", new HostHandler() {
      @Override
      public ElicitResult handleElicitation(ElicitRequest request, RequestContext context) throws Exception {
        asked.countDown();
        goOn.await(WAIT_SECONDS, TimeUnit.SECONDS);
        return Mcp.accept(Map.of("name", "Ada", "age", 36));
      }
    });
    this.toolbox = McpToolbox.of(session);
  }

  public static DetachedScenario start() throws Exception {
    TestBridge bridge = TestBridge.start(Map.of("mcpServers", Map.of("demo", TestBridge.demoServer(Map.of())),
        "pending", Map.of("elicitationTimeout", "60s")));
    try {
      return new DetachedScenario(bridge);
    } catch (RuntimeException | Error e) {
      bridge.close();
      throw e;
    }
  }

  /**
   * Runs {@code agentCall} (the adapter calling {@code elicit}) on a thread of its own and interrupts it once the
   * tool asks the person, as a cut agent stream does; returns the id of the call, still listed as running.
   */
  public String cutWhileAsking(Runnable agentCall) throws InterruptedException {
    Thread t = new Thread(() -> {
      try {
        agentCall.run();
      } catch (RuntimeException e) {
        // the adapter reports the cut to the agent as the tool's failure; the agent is gone anyway
      }
    }, "agent-run");
    t.start();
    assertTrue(asked.await(WAIT_SECONDS, TimeUnit.SECONDS), "the elicit tool never asked the person");
    t.interrupt();
    t.join(TimeUnit.SECONDS.toMillis(WAIT_SECONDS));
    assertFalse(t.isAlive(), "the agent's call did not end when its thread was interrupted");
    List<DetachedCalls.Call> running = calls.running();
    assertEquals(1, running.size(), "the cut call is listed: " + running);
    assertEquals("elicit", running.get(0).tool());
    return running.get(0).callId();
  }

  /** The person answers after the cut; resuming the call returns the tool's result; the call leaves the list. */
  public void verifyResumed(String callId) {
    goOn.countDown();
    CallToolResult result = calls.resume(callId, Duration.ofSeconds(WAIT_SECONDS));
    String text = Mcp.text(result);
    assertTrue(text.contains("accepted") && text.contains("Ada"), "the detached call's result: " + text);
    assertEquals(List.of(), calls.running());
  }

  /**
   * Cancelling the cut call ends it upstream: resuming it by its id gives no result (the call was cancelled while
   * the tool ran: CANCELLED, or ABORTED CALL_OUTCOME_UNKNOWN), and it is no longer in flight (a second cancel is
   * NOT_FOUND).
   */
  public void verifyCancelled(String callId) {
    calls.cancel(callId);
    assertEquals(List.of(), calls.running());
    McpBridgeException e = assertThrows(McpBridgeException.class, () -> session.callTool("elicit", Map.of(),
        CallOptions.none().withCallId(callId).withResume(true).withTimeout(Duration.ofSeconds(WAIT_SECONDS))));
    assertEquals(Status.Code.CANCELLED, e.code(), e.toString()); // the host's cancel is the outcome (ADR 0113)
    McpBridgeException again = assertThrows(McpBridgeException.class, () -> session.cancelCall(callId));
    assertEquals(Status.Code.NOT_FOUND, again.code(), again.toString());
  }

  @Override
  public void close() {
    goOn.countDown();
    try {
      toolbox.close();
    } finally {
      try {
        client.close();
      } finally {
        bridge.close();
      }
    }
  }
}
