package dev.mcpbridge.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpbridge.client.testing.TestBridge;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The README's quick start and the examples/ programs work as written: each is run with the JDK's source
 * launcher against a real bridge (their 127.0.0.1:50051 pointed at the test bridge's port).
 */
class ExamplesTest {
  static TestBridge bridge;

  @BeforeAll
  static void startBridge() throws Exception {
    bridge = TestBridge.start();
  }

  @AfterAll
  static void stopBridge() {
    if (bridge != null) {
      bridge.close();
    }
  }

  static String run(String example) throws Exception {
    String source = Files.readString(Paths.get("examples", example), StandardCharsets.UTF_8)
        .replace("127.0.0.1:50051", bridge.target());
    Path dir = Files.createTempDirectory("mcpbridge-example");
    Path file = dir.resolve(example);
    Files.writeString(file, source, StandardCharsets.UTF_8);
    String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    Path out = dir.resolve("out.txt");
    Process p = new ProcessBuilder(List.of(java, "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
            "-cp", System.getProperty("java.class.path"), file.toString()))
        .redirectErrorStream(true).redirectOutput(out.toFile()).start();
    boolean done = p.waitFor(90, TimeUnit.SECONDS);
    String output = Files.readString(out, StandardCharsets.UTF_8);
    if (!done) {
      p.destroyForcibly();
      throw new AssertionError(example + " did not finish within 90 s:\n" + output);
    }
    assertEquals(0, p.exitValue(), example + " failed:\n" + output);
    return output;
  }

  @Test
  void readmeQuickStartIsTheExample() throws Exception {
    String readme = Files.readString(Paths.get("README.md"), StandardCharsets.UTF_8);
    String quickStart = Files.readString(Paths.get("examples", "QuickStart.java"), StandardCharsets.UTF_8);
    assertTrue(readme.contains(quickStart.strip()), "README.md must show examples/QuickStart.java verbatim");
  }

  @Test
  void quickStart() throws Exception {
    String out = run("QuickStart.java");
    assertEquals(List.of("hi", "Hello from Java!"), out.strip().lines().collect(java.util.stream.Collectors.toList()),
        out);
  }

  @Test
  void samplingHost() throws Exception {
    String out = run("SamplingHost.java");
    assertTrue(out.contains("tool result: A canned answer to \"Write a haiku about bridges\""), out);
    assertTrue(out.contains("refused: ") && out.contains("User rejected sampling request"), out);
  }

  @Test
  void elicitationHost() throws Exception {
    String out = run("ElicitationHost.java");
    assertTrue(out.contains("accepted: name=Ada age=36"), out);
    assertTrue(out.contains("url elicitation: accept"), out);
    assertTrue(out.contains("declined"), out);
  }
}
