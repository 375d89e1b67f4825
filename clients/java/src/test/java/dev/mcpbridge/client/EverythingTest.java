package dev.mcpbridge.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.mcpbridge.client.testing.TestBridge;
import dev.mcpbridge.v1.CallToolResult;
import dev.mcpbridge.v1.CompleteResponse;
import dev.mcpbridge.v1.CreateMessageRequest;
import dev.mcpbridge.v1.CreateMessageResult;
import dev.mcpbridge.v1.Delivery;
import dev.mcpbridge.v1.ElicitRequest;
import dev.mcpbridge.v1.ElicitResult;
import dev.mcpbridge.v1.Event;
import dev.mcpbridge.v1.GetPromptResponse;
import dev.mcpbridge.v1.GetTaskResponse;
import dev.mcpbridge.v1.Task;
import dev.mcpbridge.v1.TaskStatus;
import dev.mcpbridge.v1.LoggingLevel;
import dev.mcpbridge.v1.ProgressNotification;
import dev.mcpbridge.v1.ReadResourceResponse;
import dev.mcpbridge.v1.Resource;
import dev.mcpbridge.v1.Root;
import dev.mcpbridge.v1.Tool;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The Java client against a real MCP server written by others: {@code @modelcontextprotocol/server-everything}
 * (the TypeScript SDK, handshake era, so server requests arrive as legacy pushes). Skipped when it is not
 * installed (`make node-tools`), unless MCPBRIDGE_REQUIRE_PEERS=1.
 */
class EverythingTest {
  static TestBridge bridge;
  static McpBridgeClient client;
  McpSession session;
  Host host;

  @BeforeAll
  static void startBridge() throws Exception {
    if (TestBridge.everythingServer() == null || TestBridge.nodeBinary() == null) {
      String why = "@modelcontextprotocol/server-everything or node not found (run `make node-tools`)";
      if (TestBridge.requirePeers()) {
        fail(why + " and MCPBRIDGE_REQUIRE_PEERS=1");
      }
      assumeTrue(false, why);
    }
    bridge = TestBridge.start();
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

  /** A host that samples with a canned model, answers elicitations from a map, exposes two roots. */
  static final class Host implements HostHandler {
    final Events events = new Events();
    final BlockingQueue<RequestContext> asked = new LinkedBlockingQueue<>();
    volatile ElicitResult elicitAnswer = Mcp.accept(Map.of("name", "Ada Lovelace", "check", true, "integer", 7));
    volatile List<Root> roots = List.of(Mcp.root("file:///home/ada", "home"), Mcp.root("file:///srv/data", "data"));

    @Override
    public CreateMessageResult handleSampling(CreateMessageRequest request, RequestContext ctx) {
      asked.add(ctx);
      return Mcp.samplingReply("canned-model", "canned reply to: " + Mcp.lastUserText(request));
    }

    @Override
    public ElicitResult handleElicitation(ElicitRequest request, RequestContext ctx) {
      asked.add(ctx);
      return elicitAnswer;
    }

    @Override
    public List<Root> listRoots(RequestContext ctx) {
      asked.add(ctx);
      return roots;
    }

    @Override
    public void onEvent(Event event) throws Exception {
      events.add(event);
    }
  }

  @BeforeEach
  void open() {
    host = new Host();
    session = client.openSession("everything", host);
  }

  @AfterEach
  void close() {
    session.close();
  }

  @Test
  void handshakeAndCapabilities() {
    assertEquals("2025-11-25", session.protocolVersion()); // the TypeScript SDK's newest; the bridge fell back
    assertFalse(session.serverInfo().getName().isEmpty());
    assertTrue(session.serverCapabilities().hasTools());
    assertTrue(session.serverCapabilities().hasPrompts());
    assertTrue(session.serverCapabilities().hasResources());
  }

  @Test
  void toolsFollowTheDeclaredCapabilities() {
    Set<String> withHandler = session.listTools().stream().map(Tool::getName).collect(Collectors.toSet());
    assertTrue(withHandler.containsAll(Set.of("echo", "get-sum", "trigger-sampling-request",
        "trigger-elicitation-request", "get-roots-list")), withHandler.toString());
    try (McpSession bare = client.openSession("everything")) {
      Set<String> without = bare.listTools().stream().map(Tool::getName).collect(Collectors.toSet());
      assertTrue(without.contains("echo"));
      assertFalse(without.contains("trigger-sampling-request"), without.toString());
      assertFalse(without.contains("trigger-elicitation-request"), without.toString());
      assertFalse(without.contains("get-roots-list"), without.toString());
    }
  }

  @Test
  void callsTools() {
    assertEquals("Echo: hi there", Mcp.text(session.callTool("echo", Map.of("message", "hi there"))));
    CallToolResult sum = session.callTool("get-sum", Map.of("a", 19, "b", 23));
    assertTrue(Mcp.text(sum).contains("42"), Mcp.text(sum));
    CallToolResult structured = session.callTool("get-structured-content", Map.of("location", "New York"));
    assertTrue(structured.hasStructuredContent());
    assertTrue(Mcp.structuredMap(structured).containsKey("temperature"), Mcp.structuredMap(structured).toString());
    CallToolResult image = session.callTool("get-tiny-image", Map.of());
    assertTrue(image.getContentList().stream().anyMatch(b -> b.hasImage() && b.getImage().getData().size() > 0));
  }

  @Test
  void samplingIsALegacyPush() throws Exception {
    CallToolResult r = session.callTool("trigger-sampling-request", Map.of("prompt", "tell me a joke", "maxTokens", 50),
        CallOptions.none().withCallId("joke-1"));
    assertFalse(r.getIsError(), Mcp.text(r));
    assertTrue(Mcp.text(r).contains("canned reply to:"), Mcp.text(r));
    assertTrue(Mcp.text(r).contains("canned-model"), Mcp.text(r));
    RequestContext ctx = host.asked.poll(5, TimeUnit.SECONDS);
    assertEquals(Delivery.DELIVERY_LEGACY_PUSH, ctx.delivery());
    // server-everything runs over stdio here: a legacy push on stdio belongs to the session, not to the call in
    // flight, so the bridge gives it no origin.
    assertEquals("", ctx.originCallId());
    assertEquals("", ctx.originName());
    assertEquals(50, ctx.request().getSampling().getMaxTokens());
  }

  @Test
  void elicitationAcceptDeclineCancel() {
    CallToolResult accepted = session.callTool("trigger-elicitation-request", Map.of());
    assertFalse(accepted.getIsError(), Mcp.text(accepted));
    assertTrue(Mcp.text(accepted).contains("Ada Lovelace"), Mcp.text(accepted));

    host.elicitAnswer = Mcp.decline();
    assertTrue(Mcp.text(session.callTool("trigger-elicitation-request", Map.of())).contains("declined"));
    host.elicitAnswer = Mcp.cancel();
    assertTrue(Mcp.text(session.callTool("trigger-elicitation-request", Map.of())).contains("cancelled"));
  }

  @Test
  void rootsFromTheHandlerAndTheirChanges() throws Exception {
    String text = Mcp.text(session.callTool("get-roots-list", Map.of()));
    assertTrue(text.contains("file:///home/ada") && text.contains("file:///srv/data"), text);

    // setRoots makes the bridge send roots/list_changed; the server asks again and sees the new list.
    host.roots = List.of(Mcp.root("file:///elsewhere", "elsewhere"));
    session.setRoots(host.roots);
    String after = "";
    for (int i = 0; i < 50 && !after.contains("file:///elsewhere"); i++) {
      after = Mcp.text(session.callTool("get-roots-list", Map.of()));
    }
    assertTrue(after.contains("file:///elsewhere"), after);
  }

  @Test
  void promptsAndCompletion() {
    List<String> names = session.listPrompts().stream().map(p -> p.getName()).collect(Collectors.toList());
    assertTrue(names.containsAll(List.of("simple-prompt", "args-prompt", "completable-prompt")), names.toString());
    GetPromptResponse r = session.getPrompt("args-prompt", Map.of("city", "Paris", "state", "Texas"));
    assertEquals("What's weather in Paris, Texas?", Mcp.text(List.of(r.getMessages(0).getContent())));
    CompleteResponse dept = session.completePromptArgument("completable-prompt", "department", "S");
    assertTrue(dept.getValuesList().containsAll(List.of("Sales", "Support")), dept.getValuesList().toString());
    CompleteResponse lead = session.completePromptArgument("completable-prompt", "name", "",
        Map.of("department", "Engineering"));
    assertEquals(List.of("Alice", "Bob", "Charlie"), lead.getValuesList());
  }

  @Test
  void resourcesPagesTemplatesAndBlobs() {
    List<Resource> all = session.listResources();
    assertFalse(all.isEmpty());
    assertEquals(all.size(), all.stream().map(Resource::getUri).distinct().count(), "pages do not overlap");
    assertFalse(session.listResourceTemplates().isEmpty());
    ReadResourceResponse text = session.readResource("demo://resource/dynamic/text/1");
    assertTrue(Mcp.text(text).startsWith("Resource 1:"), Mcp.text(text));
    ReadResourceResponse blob = session.readResource("demo://resource/dynamic/blob/2");
    assertTrue(blob.getContents(0).hasBlob());
    assertTrue(blob.getContents(0).getBlob().toStringUtf8().startsWith("Resource 2:"));
  }

  @Test
  void progressOfALongOperation() {
    List<Double> progress = Collections.synchronizedList(new ArrayList<>());
    CallToolResult r = session.callToolStreaming("trigger-long-running-operation", Map.of("duration", 1, "steps", 4),
        new ToolCallListener() {
          @Override public void onProgress(ProgressNotification p) {
            progress.add(p.getProgress());
          }
        });
    assertFalse(r.getIsError(), Mcp.text(r));
    assertEquals(List.of(1.0, 2.0, 3.0, 4.0), progress);
  }

  @Test
  void subscriptionUpdatesAndLogMessages() throws Exception {
    session.subscribe("demo://resource/dynamic/text/1");
    session.callTool("toggle-subscriber-updates", Map.of());
    Event updated = host.events.await(Event::hasResourceUpdated, 20, "resource_updated");
    assertEquals("demo://resource/dynamic/text/1", updated.getResourceUpdated().getUri());
    session.callTool("toggle-subscriber-updates", Map.of());
    session.unsubscribe("demo://resource/dynamic/text/1");

    session.setLogLevel(LoggingLevel.LOGGING_LEVEL_DEBUG);
    session.callTool("toggle-simulated-logging", Map.of());
    Event log = host.events.await(Event::hasLog, 20, "log");
    assertTrue(log.getLog().getLevel() != LoggingLevel.LOGGING_LEVEL_UNSPECIFIED);
    session.callTool("toggle-simulated-logging", Map.of());
  }

  /** Polls a task at the server's suggested interval until it leaves WORKING / INPUT_REQUIRED. */
  private GetTaskResponse awaitTask(String taskId) throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (true) {
      GetTaskResponse t = session.getTask(taskId);
      TaskStatus st = t.getTask().getStatus();
      if (st != TaskStatus.TASK_STATUS_WORKING && st != TaskStatus.TASK_STATUS_INPUT_REQUIRED) {
        return t;
      }
      assertTrue(System.nanoTime() < end, "task still " + st + " after 30 s");
      long ms = t.getTask().hasPollInterval() ? t.getTask().getPollInterval().getSeconds() * 1000
          + t.getTask().getPollInterval().getNanos() / 1_000_000 : 500;
      Thread.sleep(Math.max(100, Math.min(ms, 1000))); // the server's poll interval: tasks are polled by design
    }
  }

  @Test
  void serverDeclaresTasks() {
    assertTrue(session.serverCapabilities().getTasks().getToolCall(), session.serverCapabilities().toString());
  }

  @Test
  void toolsRunAsTasksAndCanBeCancelled() throws Exception {
    CallToolResult started = session.callTool("simulate-research-query", Map.of("topic", "bridges"),
        CallOptions.none().withTask(java.time.Duration.ofMinutes(5)));
    assertTrue(started.hasTask(), started.toString());
    String taskId = started.getTask().getTaskId();
    assertEquals(TaskStatus.TASK_STATUS_COMPLETED, awaitTask(taskId).getTask().getStatus());

    CallToolResult other = session.callTool("simulate-research-query", Map.of("topic", "tunnels"),
        CallOptions.none().withTask(java.time.Duration.ofMinutes(5)));
    Task cancelled = session.cancelTask(other.getTask().getTaskId());
    assertEquals(TaskStatus.TASK_STATUS_CANCELLED, cancelled.getStatus());
    McpBridgeException again = assertThrows(McpBridgeException.class, () -> session.cancelTask(taskId));
    assertTrue(again.code() == io.grpc.Status.Code.FAILED_PRECONDITION
        || again.code() == io.grpc.Status.Code.INVALID_ARGUMENT, again.toString());
  }

  @Test
  void completedTaskCarriesItsResult() throws Exception {
    CallToolResult started = session.callTool("simulate-research-query", Map.of("topic", "bridges"),
        CallOptions.none().withTask(java.time.Duration.ofMinutes(5)));
    GetTaskResponse done = awaitTask(started.getTask().getTaskId());
    assertTrue(done.hasResult(), done.toString());
    assertTrue(Mcp.text(done.getResult()).contains("Research Report: bridges"), Mcp.text(done.getResult()));
  }

  @Test
  void pingRoundTrips() {
    assertFalse(session.ping().isNegative());
  }
}
