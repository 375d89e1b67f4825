package dev.mcpbridge.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpbridge.client.testing.TestBridge;
import dev.mcpbridge.v1.CallToolResult;
import dev.mcpbridge.v1.CompleteResponse;
import dev.mcpbridge.v1.Event;
import dev.mcpbridge.v1.GetPromptResponse;
import dev.mcpbridge.v1.LoggingLevel;
import dev.mcpbridge.v1.ProgressNotification;
import dev.mcpbridge.v1.Prompt;
import dev.mcpbridge.v1.ReadResourceResponse;
import dev.mcpbridge.v1.Resource;
import dev.mcpbridge.v1.ResourceTemplate;
import dev.mcpbridge.v1.Role;
import dev.mcpbridge.v1.Session;
import dev.mcpbridge.v1.SessionState;
import dev.mcpbridge.v1.Tool;
import dev.mcpbridge.v1.Transport;
import dev.mcpbridge.v1.UpstreamServer;
import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Every host operation against the real bridge and its built-in demo MCP server. */
class DemoOperationsTest {
  static TestBridge bridge;
  static McpBridgeClient client;
  McpSession session;
  Events events;

  @BeforeAll
  static void startBridge() throws Exception {
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

  @BeforeEach
  void openSession() {
    events = new Events();
    Events ev = events;
    session = client.openSession("demo", new HostHandler() {
      @Override
      public void onEvent(Event event) {
        ev.add(event);
      }
    });
  }

  @AfterEach
  void closeSession() {
    session.close();
  }

  @Test
  void listsConfiguredServers() {
    List<UpstreamServer> servers = client.listServers();
    UpstreamServer demo = servers.stream().filter(s -> s.getName().equals("demo")).findFirst().orElseThrow();
    assertEquals(Transport.TRANSPORT_STDIO, demo.getTransport());
    assertEquals("demo server for the Java tests", demo.getDescription());
  }

  @Test
  void sessionDescribesTheServer() {
    assertFalse(session.id().isEmpty());
    assertEquals("demo", session.info().getServer());
    assertEquals(SessionState.SESSION_STATE_READY, session.info().getState());
    assertEquals("mcp-bridge-demo", session.serverInfo().getName());
    assertFalse(session.protocolVersion().isEmpty());
    assertTrue(session.serverCapabilities().hasTools());
    assertTrue(session.serverCapabilities().hasResources());
    assertTrue(session.serverCapabilities().hasPrompts());
    assertTrue(session.instructions().contains("Demo server"));
    assertEquals(SessionState.SESSION_STATE_READY, session.refresh().getState());
  }

  @Test
  void sessionsAreListedFetchedAndDeleted() {
    McpSession other = client.openSession("demo");
    Set<String> ids = client.listSessions().stream().map(Session::getSessionId).collect(Collectors.toSet());
    assertTrue(ids.contains(session.id()) && ids.contains(other.id()), ids.toString());
    assertEquals(other.id(), client.getSession(other.id()).getSessionId());
    client.deleteSession(other.id());
    McpBridgeException e = assertThrows(McpBridgeException.class, () -> client.getSession(other.id()));
    assertEquals(Status.Code.NOT_FOUND, e.code());
    McpBridgeException call = assertThrows(McpBridgeException.class, () -> other.ping());
    assertEquals(Status.Code.NOT_FOUND, call.code());
  }

  @Test
  void unknownServerIsNotFound() {
    McpBridgeException e = assertThrows(McpBridgeException.class, () -> client.openSession("no-such-server"));
    assertEquals(Status.Code.NOT_FOUND, e.code());
  }

  @Test
  void listsTools() {
    List<String> names = session.listTools().stream().map(Tool::getName).collect(Collectors.toList());
    assertTrue(names.containsAll(List.of("echo", "add", "long_operation", "sample", "elicit", "elicit_url",
        "list_roots", "structured", "fail", "log", "increment")), names.toString());
    Tool echo = session.listTools().stream().filter(t -> t.getName().equals("echo")).findFirst().orElseThrow();
    assertEquals("object", Json.toMap(echo.getInputSchema()).get("type"));
    assertTrue(echo.getAnnotations().getReadOnlyHint());
  }

  @Test
  void callsTools() {
    assertEquals("hello, bridge", Mcp.text(session.callTool("echo", Map.of("text", "hello, bridge"))));
    CallToolResult sum = session.callTool("add", Map.of("a", 2, "b", 40.5));
    assertFalse(sum.getIsError());
    assertEquals(42.5, Mcp.structuredMap(sum).get("sum"));
    assertEquals("1 + 2 = 3", Mcp.text(session.callToolJson("add", "{\"a\": 1, \"b\": 2}")));
  }

  @Test
  void asyncCallsRunConcurrently() {
    List<CompletableFuture<CallToolResult>> calls = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      calls.add(session.callToolAsync("echo", Map.of("text", "n" + i)));
    }
    for (int i = 0; i < 8; i++) {
      assertEquals("n" + i, Mcp.text(calls.get(i).join()));
    }
  }

  @Test
  void toolFailuresAreResultsNotExceptions() {
    CallToolResult r = session.callTool("fail", Map.of("message", "it broke"));
    assertTrue(r.getIsError());
    assertEquals("it broke", Mcp.text(r));
  }

  @Test
  void structuredContentFollowsTheOutputSchema() {
    CallToolResult r = session.callTool("structured", Map.of("city", "Lisbon"));
    Map<String, Object> report = Mcp.structuredMap(r);
    assertEquals("Lisbon", report.get("city"));
    assertTrue(report.get("forecast") instanceof List);
    Tool t = session.listTools().stream().filter(x -> x.getName().equals("structured")).findFirst().orElseThrow();
    assertTrue(t.hasOutputSchema());
  }

  @Test
  void argumentsNotMatchingTheSchemaAreAToolError() {
    // MCP: input validation failures are tool execution errors, for the model to read and correct.
    CallToolResult r = session.callTool("add", Map.of("a", "x"));
    assertTrue(r.getIsError());
    assertFalse(Mcp.text(r).isEmpty());
  }

  @Test
  void unknownToolIsInvalidParams() {
    McpBridgeException e = assertThrows(McpBridgeException.class, () -> session.callTool("no_such_tool", Map.of()));
    assertEquals(Status.Code.INVALID_ARGUMENT, e.code());
    assertEquals(-32602, e.jsonRpcCode().orElse(0), e.getMessage());
    assertEquals("UPSTREAM_ERROR", e.reason().orElse(""));
    assertTrue(e.jsonRpcMessage().orElse("").contains("no_such_tool"));
  }

  @Test
  void resourcesAndTemplates() {
    List<String> uris = session.listResources().stream().map(Resource::getUri).collect(Collectors.toList());
    assertTrue(uris.containsAll(List.of("demo://readme", "demo://counter")), uris.toString());
    List<ResourceTemplate> templates = session.listResourceTemplates();
    assertEquals("demo://items/{id}", templates.get(0).getUriTemplate());

    ReadResourceResponse readme = session.readResource("demo://readme");
    assertEquals("text/markdown", readme.getContents(0).getMimeType());
    assertTrue(Mcp.text(readme).startsWith("# mcp-bridge demo server"));
    Map<String, Object> item = Json.toMap(Json.parseStruct(Mcp.text(session.readResource("demo://items/beta"))));
    assertEquals("Beta", item.get("title"));
  }

  @Test
  void missingResourceIsNotFound() {
    McpBridgeException e = assertThrows(McpBridgeException.class, () -> session.readResource("demo://items/omega"));
    assertEquals(Status.Code.NOT_FOUND, e.code(), e.getMessage());
  }

  @Test
  void subscriptionsDeliverResourceUpdates() throws Exception {
    session.subscribe("demo://counter");
    CallToolResult r = session.callTool("increment", Map.of());
    double counter = (Double) Mcp.structuredMap(r).get("counter");
    Event e = events.await(Event::hasResourceUpdated, 10, "resource_updated");
    assertEquals("demo://counter", e.getResourceUpdated().getUri());
    assertEquals(Integer.toString((int) counter), Mcp.text(session.readResource("demo://counter")));
    session.unsubscribe("demo://counter");
  }

  @Test
  void promptsRenderWithArguments() {
    List<Prompt> prompts = session.listPrompts();
    Prompt greet = prompts.stream().filter(p -> p.getName().equals("greet")).findFirst().orElseThrow();
    assertTrue(greet.getArguments(0).getRequired());
    GetPromptResponse r = session.getPrompt("greet", Map.of("name", "Ada", "style", "pirate"));
    assertEquals("A pirate greeting for Ada", r.getDescription());
    assertEquals(Role.ROLE_USER, r.getMessages(0).getRole());
    assertEquals("Write a short pirate greeting for Ada.", r.getMessages(0).getContent().getText().getText());
    McpBridgeException e = assertThrows(McpBridgeException.class, () -> session.getPrompt("greet", Map.of()));
    assertEquals(Status.Code.INVALID_ARGUMENT, e.code());
    assertEquals(-32602, e.jsonRpcCode().orElse(0), e.getMessage());
  }

  @Test
  void completesPromptAndTemplateArguments() {
    CompleteResponse names = session.completePromptArgument("greet", "name", "a");
    assertEquals(List.of("Ada", "Alan"), names.getValuesList());
    CompleteResponse styles = session.completePromptArgument("greet", "style", "", Map.of("name", "Ada"));
    assertEquals(List.of("casual", "formal", "pirate"), styles.getValuesList());
    CompleteResponse ids = session.completeResourceArgument("demo://items/{id}", "id", "g");
    assertEquals(List.of("gamma"), ids.getValuesList());
  }

  @Test
  void logLevelFiltersLogMessages() throws Exception {
    session.setLogLevel(LoggingLevel.LOGGING_LEVEL_ERROR);
    session.callTool("log", Map.of("message", "filtered"));
    List<LoggingLevel> levels = new ArrayList<>();
    while (true) {
      Event e = events.await(Event::hasLog, 10, "log");
      levels.add(e.getLog().getLevel());
      assertEquals("demo", e.getLog().getLogger());
      if (e.getLog().getLevel() == LoggingLevel.LOGGING_LEVEL_EMERGENCY) {
        break;
      }
    }
    assertEquals(List.of(LoggingLevel.LOGGING_LEVEL_ERROR, LoggingLevel.LOGGING_LEVEL_CRITICAL,
        LoggingLevel.LOGGING_LEVEL_ALERT, LoggingLevel.LOGGING_LEVEL_EMERGENCY), levels);
  }

  @Test
  void pingMeasuresLatency() {
    try (McpSession legacy = client.openSession(SessionOptions.forServer("demo").protocolVersion("2025-11-25"))) {
      assertEquals("2025-11-25", legacy.protocolVersion());
      Duration d = legacy.ping();
      assertFalse(d.isNegative());
      assertTrue(d.compareTo(Duration.ofSeconds(10)) < 0);
      legacy.pingAsync().join();
    }
  }

  @Test
  void streamedToolCallReportsProgressThenResult() {
    List<Double> progress = Collections.synchronizedList(new ArrayList<>());
    List<String> callIds = Collections.synchronizedList(new ArrayList<>());
    CallToolResult r = session.callToolStreaming("long_operation", Map.of("durationSeconds", 0.3, "steps", 3),
        CallOptions.none().withCallId("stream-1"), new ToolCallListener() {
          @Override public void onProgress(ProgressNotification p) {
            progress.add(p.getProgress());
            callIds.add(p.getCallId());
            assertEquals(3.0, p.getTotal());
          }
        });
    assertEquals(List.of(1.0, 2.0, 3.0), progress);
    assertTrue(callIds.stream().allMatch("stream-1"::equals), callIds.toString());
    assertTrue(Mcp.text(r).startsWith("long operation finished: 3 steps"));
  }

  @Test
  void cancellingACallCancelsItUpstream() throws Exception {
    java.util.concurrent.CountDownLatch started = new java.util.concurrent.CountDownLatch(1);
    CompletableFuture<CallToolResult> f = session.callToolStreamingAsync("long_operation",
        Map.of("durationSeconds", 60, "steps", 600), CallOptions.none(), new ToolCallListener() {
          @Override public void onProgress(ProgressNotification p) {
            started.countDown();
          }
        });
    assertTrue(started.await(10, TimeUnit.SECONDS), "the operation reported progress");
    assertTrue(f.cancel(true));
    assertTrue(f.isCancelled());
    // The session stays usable.
    assertEquals("still here", Mcp.text(session.callTool("echo", Map.of("text", "still here"))));
  }

  @Test
  void deadlineExceededFailsTheCall() {
    McpBridgeException e = assertThrows(McpBridgeException.class, () -> session.callTool("long_operation",
        Map.of("durationSeconds", 30, "steps", 30), CallOptions.none().withTimeout(Duration.ofMillis(300))));
    assertEquals(Status.Code.DEADLINE_EXCEEDED, e.code());
    assertEquals("ok", Mcp.text(session.callTool("echo", Map.of("text", "ok"))));
  }

  @Test
  void watchEventsStreamsTheSameEvents() throws Exception {
    Events watched = new Events();
    try (McpSession.EventWatch w = session.watchEvents(true, watched::add)) {
      session.subscribe("demo://counter");
      // WatchEvents may attach after the call below was made; repeat until an update shows up on the watch.
      Event e = null;
      for (int i = 0; i < 20 && e == null; i++) {
        session.callTool("increment", Map.of());
        try {
          e = watched.await(Event::hasResourceUpdated, 1, "resource_updated");
        } catch (AssertionError notYet) {
          // try again
        }
      }
      assertTrue(e != null && e.getResourceUpdated().getUri().equals("demo://counter"));
      assertTrue(e.getSequence() > 0);
    }
  }

  @Test
  void closedSessionEndsWithSessionClosedState() throws Exception {
    McpSession s = client.openSession("demo");
    Events watched = new Events();
    McpSession.EventWatch w = s.watchEvents(false, watched::add);
    assertEquals("x", Mcp.text(s.callTool("echo", Map.of("text", "x"))));
    s.close();
    w.done().handle((v, e) -> null).get(10, TimeUnit.SECONDS);
    s.close(); // idempotent
  }
}
