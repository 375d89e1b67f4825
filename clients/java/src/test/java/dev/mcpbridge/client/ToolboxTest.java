package dev.mcpbridge.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpbridge.client.testing.TestBridge;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@link McpToolbox} against the real binary: the demo server and a server whose tools change
 * ({@link ListChangingServer}) as one tool list with valid, distinct names; calls routed to their session; a
 * {@code tools/list_changed} reflected without reopening.
 */
class ToolboxTest {
  static TestBridge bridge;
  static McpBridgeClient client;

  @BeforeAll
  static void start() throws Exception {
    Path classes = Paths.get(ListChangingServer.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    Map<String, Object> changing = Map.of("command", java,
        "args", List.of("-Xmx64m", "-XX:TieredStopAtLevel=1", "-cp", classes.toString(),
            ListChangingServer.class.getName()));
    // Two names that only differ in characters a model API does not accept: the toolbox must still tell them apart.
    bridge = TestBridge.start(Map.of("mcpServers", Map.of("changing", changing,
        "demo", Map.of("command", TestBridge.binary().toString(), "args", List.of("demo-server")),
        "demo.two", Map.of("command", TestBridge.binary().toString(), "args", List.of("demo-server")),
        "demo_two", Map.of("command", TestBridge.binary().toString(), "args", List.of("demo-server")))));
    client = bridge.client();
  }

  @AfterAll
  static void stop() {
    if (client != null) {
      client.close();
    }
    if (bridge != null) {
      bridge.close();
    }
  }

  @Test
  void namesAreValidDistinctAndStable() {
    try (McpToolbox box = McpToolbox.builder(client).servers("demo", "changing", "demo.two", "demo_two").open()) {
      List<ToolboxTool> tools = box.tools();
      Set<String> names = new HashSet<>();
      for (ToolboxTool t : tools) {
        assertTrue(ToolNaming.VALID.matcher(t.name()).matches(), t.name());
        assertTrue(names.add(t.name()), "duplicate name " + t.name());
      }
      Map<String, ToolboxTool> byName = tools.stream().collect(Collectors.toMap(ToolboxTool::name, t -> t));
      assertEquals("demo", byName.get("demo_add").server());
      // demo.two and demo_two would both name their add demo_two_add: both get a hash instead.
      assertEquals("demo.two", byName.get("demo_two_add_" + ToolNaming.hash("demo.two", "add")).server());
      assertEquals("demo_two", byName.get("demo_two_add_" + ToolNaming.hash("demo_two", "add")).server());
      String longName = "changing_" + ListChangingServer.LONG_TOOL;
      ToolboxTool shortened = tools.stream().filter(t -> t.tool().getName().equals(ListChangingServer.LONG_TOOL))
          .findFirst().orElseThrow();
      assertEquals(64, shortened.name().length());
      assertEquals(longName.substring(0, 55) + "_" + ToolNaming.hash("changing", ListChangingServer.LONG_TOOL),
          shortened.name());

      // Calls go to the tool's own session.
      assertEquals("2 + 3 = 5", Mcp.text(box.callTool("demo_add", Map.of("a", 2, "b", 3))));
      assertEquals("called " + ListChangingServer.LONG_TOOL, Mcp.text(box.callToolJson(shortened.name(), "{}")));
      assertThrows(IllegalArgumentException.class, () -> box.callTool("nope", Map.of()));
    }
  }

  @Test
  void listChangedIsReflectedWithoutReopening() throws Exception {
    try (McpToolbox box = McpToolbox.builder(client).servers("changing", "demo").open()) {
      List<String> before = box.tools().stream().map(ToolboxTool::name).collect(Collectors.toList());
      assertTrue(before.contains("changing_add_tool"), before.toString());
      assertTrue(before.contains("demo_echo"), before.toString());
      CompletableFuture<String> changed = new CompletableFuture<>();
      box.onToolsChanged(changed::complete);
      List<McpSession> sessions = box.sessions();

      assertEquals("added fresh", Mcp.text(box.callTool("changing_add_tool", Map.of("name", "fresh"))));
      assertEquals("changing", changed.get(30, TimeUnit.SECONDS));

      List<String> after = box.tools().stream().map(ToolboxTool::name).collect(Collectors.toList());
      assertTrue(after.contains("changing_fresh"), after.toString());
      assertEquals(before.size() + 1, after.size());
      assertEquals(sessions, box.sessions(), "the toolbox reopened its sessions");
      assertEquals("called fresh", Mcp.text(box.callTool("changing_fresh", Map.of())));
    }
  }

  @Test
  void oneHandlerAnswersEverySessionAndCloseClosesAll() throws Exception {
    HostHandler handler = new HostHandler() {
      @Override
      public dev.mcpbridge.v1.CreateMessageResult handleSampling(dev.mcpbridge.v1.CreateMessageRequest r,
          RequestContext c) {
        return Mcp.samplingReply("m", "from " + c.session().map(s -> s.info().getServer()).orElse("?"));
      }
    };
    McpToolbox box = McpToolbox.builder(client).servers("demo", "demo.two").handler(handler)
        .naming(ToolNaming.prefixed("-")).open();
    assertTrue(Mcp.text(box.callTool("demo-sample", Map.of("prompt", "hi"))).contains("from demo"));
    ToolboxTool two = box.tools().stream().filter(t -> t.server().equals("demo.two")
        && t.tool().getName().equals("sample")).findFirst().orElseThrow();
    assertTrue(Mcp.text(box.callTool(two.name(), Map.of("prompt", "hi"))).contains("from demo.two"));
    List<String> ids = box.sessions().stream().map(McpSession::id).collect(Collectors.toList());
    box.close();
    Set<String> open = client.listSessions().stream().map(s -> s.getSessionId()).collect(Collectors.toSet());
    for (String id : ids) {
      assertTrue(!open.contains(id), "session " + id + " still open after close");
    }
  }

  @Test
  void allServersOpensEveryServer() {
    try (McpToolbox box = McpToolbox.builder(client).allServers().open()) {
      Set<String> servers = box.tools().stream().map(ToolboxTool::server).collect(Collectors.toSet());
      assertTrue(servers.containsAll(Set.of("demo", "demo.two", "changing")), servers.toString());
      assertNotNull(box.tool("demo_echo"));
    }
  }

  @Test
  void toolboxOverSessionsTheHostOpened() {
    McpSession s = client.openSession("demo");
    try {
      McpToolbox box = McpToolbox.of(s);
      assertEquals("hi", Mcp.text(box.callTool("echo", Map.of("text", "hi"))));
      box.close(); // does not close the host's session
      assertEquals("hi", Mcp.text(s.callTool("echo", Map.of("text", "hi"))));
    } finally {
      s.close();
    }
  }
}
