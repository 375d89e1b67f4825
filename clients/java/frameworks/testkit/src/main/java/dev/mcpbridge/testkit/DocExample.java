package dev.mcpbridge.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpbridge.client.testing.TestBridge;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs the Java program of a docs/frameworks page as a reader would copy it: the first {@code ```java} block after
 * "## A running agent", saved as its class's file and run with {@code java -cp <the test class path> File.java},
 * against a real bridge with the demo server and a scripted model that calls {@code demo_add} once and then
 * answers with what the tool said. The model's base URL reaches the program through OPENAI_BASE_URL, as the page
 * says.
 */
public final class DocExample {
  private DocExample() {}

  /** The docs folder: -Dmcpbridge.docs, else ../../../../docs. */
  public static Path docs() {
    return Paths.get(System.getProperty("mcpbridge.docs", "../../../../docs")).toAbsolutePath().normalize();
  }

  /** The page's program. */
  public static String code(Path page) throws IOException {
    String md = Files.readString(page, StandardCharsets.UTF_8);
    int section = md.indexOf("## A running agent");
    assertTrue(section >= 0, page + " has no \"## A running agent\" section");
    int start = md.indexOf("```java\n", section);
    assertTrue(start >= 0, page + " has no java block in \"## A running agent\"");
    start += "```java\n".length();
    return md.substring(start, md.indexOf("```", start));
  }

  /** Runs the page's program (class {@code className}); returns what it printed. Also checks it is the example file. */
  public static String run(Path page, String className, Path exampleFile) throws Exception {
    String code = code(page);
    assertEquals(Files.readString(exampleFile, StandardCharsets.UTF_8), code,
        page + ": the page's program is not " + exampleFile);
    Path dir = Files.createTempDirectory("mcpbridge-doc-example");
    Path src = dir.resolve(className + ".java");
    Files.writeString(src, code, StandardCharsets.UTF_8);
    try (ScriptedModel model = new ScriptedModel(DocExample::reply);
        TestBridge bridge = TestBridge.start(Map.of("mcpServers", Map.of("demo", TestBridge.demoServer(Map.of()))))) {
      String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
      String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
      Path out = dir.resolve("out.txt");
      ProcessBuilder pb = new ProcessBuilder(java, "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
          "-cp", cp, src.toString())
          .redirectErrorStream(true).redirectOutput(out.toFile()).directory(dir.toFile());
      pb.environment().put("OPENAI_BASE_URL", model.baseUrl());
      pb.environment().put("OPENAI_API_KEY", "test-key");
      pb.environment().put("OPENAI_MODEL", "scripted-model");
      pb.environment().put("MCP_BRIDGE_TARGET", bridge.target());
      Process p = pb.start();
      boolean ended = p.waitFor(120, TimeUnit.SECONDS); // a check that it does not hang, not a timing assertion
      String printed = Files.readString(out, StandardCharsets.UTF_8);
      if (!ended) {
        p.destroyForcibly();
        throw new AssertionError("the page's program did not end:\n" + printed);
      }
      assertEquals(0, p.exitValue(), "the page's program failed:\n" + printed);
      assertTrue(model.requests().size() >= 2, "the program did not reach the model twice: " + model.requests());
      return printed;
    }
  }

  static Map<String, Object> reply(Map<String, Object> request) {
    List<Map<String, Object>> ms = ScriptedModel.messages(request);
    for (Map<String, Object> m : ms) {
      if ("tool".equals(m.get("role"))) {
        return ScriptedModel.text("The tool says: " + ScriptedModel.content(m));
      }
    }
    return ScriptedModel.toolCall("call_0", "demo_add", "{\"a\":2,\"b\":3}");
  }
}
