package dev.mcpbridge.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpbridge.v1.CallToolResult;
import dev.mcpbridge.v1.ProgressNotification;
import dev.mcpbridge.v1.Tool;
import io.grpc.Status;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Unary calls, paging, errors, cancellation and streaming against the scripted in-process bridge. */
class ClientPlumbingTest {
  private FakeBridge fake;
  private McpBridgeClient client;
  private McpSession session;

  @BeforeEach
  void setUp() throws Exception {
    fake = new FakeBridge();
    client = fake.client();
    session = client.openSession("demo");
  }

  @AfterEach
  void tearDown() {
    client.close();
    fake.close();
  }

  @Test
  void sessionWithoutHandlerDeclaresNothingAndIsNotAttached() throws Exception {
    assertEquals(dev.mcpbridge.v1.HostCapabilities.getDefaultInstance(), fake.created.take().getHostCapabilities());
    assertEquals(0, fake.connects.get());
  }

  @Test
  void listsFollowEveryPage() {
    List<Tool> tools = session.listTools();
    assertEquals(List.of("tool0", "tool1", "tool2", "tool3", "tool4", "tool5"),
        tools.stream().map(Tool::getName).collect(Collectors.toList()));
    assertEquals("1", session.listToolsPage("").getNextPageToken());
  }

  @Test
  void argumentsTravelAsJson() {
    CallToolResult r = session.callTool("echo", Map.of("text", "hi"));
    assertEquals("echo {\"text\":\"hi\"}", Mcp.text(r));
    assertEquals("echo {\"n\":1.0}", Mcp.text(session.callToolJson("echo", "{\"n\": 1}")));
  }

  @Test
  void upstreamErrorsCarryTheJsonRpcCode() {
    McpBridgeException e = assertThrows(McpBridgeException.class, () -> session.callTool("upstream_error", Map.of()));
    assertEquals(Status.Code.INVALID_ARGUMENT, e.code());
    assertEquals(-32602, e.jsonRpcCode().getAsInt());
    assertEquals("UPSTREAM_ERROR", e.reason().orElseThrow());
    assertEquals("bad params", e.jsonRpcMessage().orElseThrow());
    CompletableFuture<CallToolResult> f = session.callToolAsync("upstream_error", Map.of());
    McpBridgeException async = assertThrows(McpBridgeException.class, () -> Rpc.await(f));
    assertEquals(Status.Code.INVALID_ARGUMENT, async.code());
  }

  @Test
  void cancellingTheFutureCancelsTheCall() throws Exception {
    CompletableFuture<?> f = session.callToolAsync("hang", Json.toStruct(Map.of()), CallOptions.none().withCallId("c-9"));
    Thread.sleep(100);
    f.cancel(true);
    assertEquals("c-9", fake.cancelledCalls.poll(5, TimeUnit.SECONDS));
  }

  @Test
  void cancellingADerivedFutureCancelsTheCallToo() throws Exception {
    CompletableFuture<CallToolResult> f = session.callToolAsync("hang", Map.of()); // mapped from the response
    CompletableFuture<String> text = f.thenApply(Mcp::text);
    Thread.sleep(100);
    text.cancel(true);
    assertTrue(fake.cancelledCalls.poll(5, TimeUnit.SECONDS) != null);
  }

  @Test
  void timeoutsFailTheCallAndCancelIt() throws Exception {
    McpBridgeException e = assertThrows(McpBridgeException.class, () -> session.callTool("hang", Map.of(),
        CallOptions.none().withCallId("c-t").withTimeout(java.time.Duration.ofMillis(200))));
    assertEquals(Status.Code.DEADLINE_EXCEEDED, e.code());
    assertEquals("c-t", fake.cancelledCalls.poll(5, TimeUnit.SECONDS));
  }

  @Test
  void streamingReportsProgressThenTheResult() {
    List<Double> progress = new ArrayList<>();
    CallToolResult r = session.callToolStreaming("long", Map.of(), new ToolCallListener() {
      @Override public void onProgress(ProgressNotification p) {
        progress.add(p.getProgress());
      }
    });
    assertEquals(List.of(1.0, 2.0, 3.0), progress);
    assertEquals("done", Mcp.text(r));
  }

  @Test
  void unknownServerIsNotFound() {
    McpBridgeException e = assertThrows(McpBridgeException.class, () -> client.openSession("missing"));
    assertEquals(Status.Code.NOT_FOUND, e.code());
  }

  @Test
  void attachedSessionsAreNotDeletedOnClose() throws Exception {
    McpSession opened = client.openSession("demo"); // s2 on the fake
    fake.deleted.clear();
    try (McpBridgeClient other = fake.client()) {
      // FakeBridge has no GetSession; a session object for an existing id is enough here.
      McpSession view = new McpSession(other, opened.info(), List.of());
      assertEquals(opened.id(), view.id());
    }
    assertTrue(fake.deleted.isEmpty(), "another client's close deletes nothing it did not open");
  }

  @Test
  void keepSessionsOnClose() throws Exception {
    McpBridgeClient keeper = McpBridgeClient.builder().channel(fake.channel()).keepSessionsOnClose(true).build();
    keeper.openSession("demo");
    keeper.close();
    assertTrue(fake.deleted.isEmpty());
  }

  @Test
  void closeDeletesOpenedSessions() throws Exception {
    McpSession other = client.openSession("demo");
    other.close();
    assertEquals(other.id(), fake.deleted.poll(5, TimeUnit.SECONDS));
    other.close(); // idempotent
    client.close();
    assertEquals(session.id(), fake.deleted.poll(5, TimeUnit.SECONDS));
    assertTrue(fake.deleted.isEmpty());
  }
}
