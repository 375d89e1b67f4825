package dev.mcpbridge.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** {@link ToolNaming#fit}: names model APIs accept, the same for the same tools, different for different ones. */
class ToolNamingTest {
  @Test
  void validNamesStayAsTheyAre() {
    assertEquals("demo_add", ToolNaming.fit(ToolNaming.serverPrefix().name("demo", "add"), "demo", "add", false));
    assertEquals("demo__add", ToolNaming.fit(ToolNaming.prefixed("__").name("demo", "add"), "demo", "add", false));
    assertEquals("add", ToolNaming.fit(ToolNaming.toolName().name("demo", "add"), "demo", "add", false));
  }

  @Test
  void invalidCharactersBecomeUnderscores() {
    assertEquals("my_server_get_thing_", ToolNaming.fit("my.server_get/thing?", "my.server", "get/thing?", false));
    assertEquals("caf__x", ToolNaming.fit("café x", "s", "café x", false));
  }

  @Test
  void longAndEmptyNamesGetAHash() {
    String tool = "x".repeat(100);
    String name = ToolNaming.fit("srv_" + tool, "srv", tool, false);
    assertEquals(64, name.length());
    assertTrue(name.endsWith("_" + ToolNaming.hash("srv", tool)), name);
    assertEquals(name, ToolNaming.fit("srv_" + tool, "srv", tool, false), "not deterministic");
    String empty = ToolNaming.fit("", "srv", "", false);
    assertTrue(ToolNaming.VALID.matcher(empty).matches(), empty);
    String other = ToolNaming.fit("srv_" + tool, "srv2", tool, false);
    assertNotEquals(name, other);
  }

  @Test
  void forcedHashesTellCollidingToolsApart() {
    String a = ToolNaming.fit("demo_two_add", "demo.two", "add", true);
    String b = ToolNaming.fit("demo_two_add", "demo_two", "add", true);
    assertNotEquals(a, b);
    assertTrue(ToolNaming.VALID.matcher(a).matches() && ToolNaming.VALID.matcher(b).matches());
    assertEquals(8, ToolNaming.hash("a", "b").length());
    assertNotEquals(ToolNaming.hash("a_b", "c"), ToolNaming.hash("a", "b_c"));
  }
}
