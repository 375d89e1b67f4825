package dev.mcpbridge.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;

/**
 * The top-level README's Java blocks compile as copied: each is a whole compilation unit (imports and a
 * class), compiled here against the library. No bridge needed; ExamplesTest runs the quick start.
 */
class ReadmeJavaTest {
  static final Pattern JAVA_BLOCK = Pattern.compile("```java\\n(.*?)```", Pattern.DOTALL);
  static final Pattern PUBLIC_CLASS = Pattern.compile("public\\s+(?:final\\s+)?class\\s+(\\w+)");

  static List<String> javaBlocks(Path markdown) throws Exception {
    Matcher m = JAVA_BLOCK.matcher(Files.readString(markdown, StandardCharsets.UTF_8));
    List<String> blocks = new ArrayList<>();
    while (m.find()) {
      blocks.add(m.group(1));
    }
    return blocks;
  }

  @Test
  void topLevelReadmeJavaBlocksCompile() throws Exception {
    List<String> blocks = javaBlocks(Paths.get("..", "..", "README.md"));
    assertFalse(blocks.isEmpty(), "no ```java block in the top-level README");
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    assertNotNull(javac, "no system Java compiler (run the tests on a JDK)");
    for (String block : blocks) {
      Matcher c = PUBLIC_CLASS.matcher(block);
      assertTrue(c.find(), "a README Java block is not a whole class (imports and a public class):\n" + block);
      Path dir = Files.createTempDirectory("mcpbridge-readme");
      Path src = dir.resolve(c.group(1) + ".java");
      Files.writeString(src, block, StandardCharsets.UTF_8);
      ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
      int rc = javac.run(null, diagnostics, diagnostics,
          "-proc:none", "-d", dir.toString(), "-cp", System.getProperty("java.class.path"), src.toString());
      assertEquals(0, rc, "a README Java block does not compile:\n" + block + "\n"
          + diagnostics.toString(StandardCharsets.UTF_8));
    }
  }

  @Test
  void topLevelReadmeShowsTheQuickStartExample() throws Exception {
    String readme = Files.readString(Paths.get("..", "..", "README.md"), StandardCharsets.UTF_8);
    String quickStart = Files.readString(Paths.get("examples", "QuickStart.java"), StandardCharsets.UTF_8);
    assertTrue(readme.contains(quickStart.strip()), "README.md must show examples/QuickStart.java verbatim");
  }
}
