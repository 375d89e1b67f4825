package dev.mcpbridge.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpbridge.client.testing.TestBridge;
import dev.mcpbridge.v1.CallToolResult;
import dev.mcpbridge.v1.CreateMessageRequest;
import dev.mcpbridge.v1.CreateMessageResult;
import dev.mcpbridge.v1.ElicitRequest;
import dev.mcpbridge.v1.ElicitResult;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The host stream across real connection failures: the host client reaches the bridge through a TCP proxy that
 * drops its connections; the tool call that causes the server request runs on a second, direct client, so it
 * keeps waiting while the host reconnects. Pending requests are delivered again after the reconnect and the
 * handler runs once per request.
 */
class ReconnectTest {
  static TestBridge bridge;
  static McpBridgeClient caller;
  TcpProxy proxy;
  McpBridgeClient host;

  @BeforeAll
  static void startBridge() throws Exception {
    bridge = TestBridge.start();
    caller = bridge.client();
  }

  @AfterAll
  static void stopBridge() {
    if (caller != null) {
      caller.close();
    }
    if (bridge != null) {
      bridge.close();
    }
  }

  @BeforeEach
  void startProxy() throws Exception {
    proxy = new TcpProxy(bridge.grpcPort);
    host = McpBridgeClient.builder().target(proxy.target())
        .reconnectBackoff(Duration.ofMillis(50), Duration.ofMillis(500))
        .defaultTimeout(Duration.ofSeconds(30))
        .build();
  }

  @AfterEach
  void stopProxy() {
    proxy.refuse(false);
    host.close();
    proxy.close();
  }

  /** A sampling handler whose answers the test gives, through futures. */
  static final class Deferred implements HostHandler {
    final AtomicInteger calls = new AtomicInteger();
    final BlockingQueue<CompletableFuture<CreateMessageResult>> futures = new LinkedBlockingQueue<>();

    @Override
    public CompletionStage<CreateMessageResult> handleSamplingAsync(CreateMessageRequest r, RequestContext ctx) {
      calls.incrementAndGet();
      CompletableFuture<CreateMessageResult> f = new CompletableFuture<>();
      futures.add(f);
      return f;
    }

    CompletableFuture<CreateMessageResult> next() throws InterruptedException {
      CompletableFuture<CreateMessageResult> f = futures.poll(15, TimeUnit.SECONDS);
      if (f == null) {
        throw new AssertionError("the handler was not asked within 15 s");
      }
      return f;
    }
  }

  @Test
  void aRequestPendingAcrossADroppedConnectionIsRedeliveredAndAnsweredOnce() throws Exception {
    Deferred handler = new Deferred();
    McpSession hostSession = host.openSession("demo", handler);
    McpSession callerView = caller.attachSession(hostSession.id(), null);

    CompletableFuture<CallToolResult> call = callerView.callToolAsync("sample", Map.of("prompt", "survive this"));
    CompletableFuture<CreateMessageResult> answer = handler.next();
    int deliveries = host.hostStream().deliveries();

    proxy.dropAll(); // the network fails under the host stream
    HostStreamTest.waitFor(() -> host.hostStream().deliveries() > deliveries); // redelivered after re-attach
    assertTrue(host.hostStream().connects() >= 2);
    assertFalse(call.isDone());

    answer.complete(Mcp.samplingReply("patient-model", "still here"));
    CallToolResult r = call.get(20, TimeUnit.SECONDS);
    assertEquals("still here", Mcp.text(r));
    assertEquals(1, handler.calls.get(), "the handler ran once for the request");

    // The new stream works for new requests too.
    CompletableFuture<CallToolResult> again = callerView.callToolAsync("sample", Map.of("prompt", "and again"));
    handler.next().complete(Mcp.samplingReply("m", "fresh"));
    assertEquals("fresh", Mcp.text(again.get(20, TimeUnit.SECONDS)));
  }

  @Test
  void anAnswerGivenWhileDisconnectedIsSentAfterTheReconnect() throws Exception {
    Deferred handler = new Deferred();
    McpSession hostSession = host.openSession("demo", handler);
    McpSession callerView = caller.attachSession(hostSession.id(), null);

    CompletableFuture<CallToolResult> call = callerView.callToolAsync("sample", Map.of("prompt", "offline answer"));
    CompletableFuture<CreateMessageResult> answer = handler.next();
    int connects = host.hostStream().connects();

    proxy.refuse(true);
    proxy.dropAll();
    HostStreamTest.waitFor(() -> host.hostStream().connects() > connects); // it is trying, and failing
    answer.complete(Mcp.samplingReply("m", "answered offline")); // nowhere to send it yet
    assertFalse(call.isDone());

    proxy.refuse(false);
    assertEquals("answered offline", Mcp.text(call.get(20, TimeUnit.SECONDS)));
    assertEquals(1, handler.calls.get());
  }

  @Test
  void aHumanAnswersAfterSeveralDrops() throws Exception {
    BlockingQueue<CompletableFuture<ElicitResult>> asks = new LinkedBlockingQueue<>();
    AtomicInteger calls = new AtomicInteger();
    HostHandler person = new HostHandler() {
      @Override
      public CompletionStage<ElicitResult> handleElicitationAsync(ElicitRequest r, RequestContext ctx) {
        calls.incrementAndGet();
        CompletableFuture<ElicitResult> f = new CompletableFuture<>();
        asks.add(f);
        return f;
      }
    };
    McpSession hostSession = host.openSession("demo", person);
    McpSession callerView = caller.attachSession(hostSession.id(), null);
    CompletableFuture<CallToolResult> call = callerView.callToolAsync("elicit", Map.of());
    CompletableFuture<ElicitResult> ask = asks.poll(15, TimeUnit.SECONDS);
    for (int i = 0; i < 3; i++) {
      int deliveries = host.hostStream().deliveries();
      proxy.dropAll();
      HostStreamTest.waitFor(() -> host.hostStream().deliveries() > deliveries);
    }
    ask.complete(Mcp.accept(Map.of("name", "Grace")));
    assertEquals("accepted: name=Grace", Mcp.text(call.get(20, TimeUnit.SECONDS)));
    assertEquals(1, calls.get());
  }
}
