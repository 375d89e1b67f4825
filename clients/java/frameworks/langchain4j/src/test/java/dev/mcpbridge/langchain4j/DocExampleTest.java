package dev.mcpbridge.langchain4j;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpbridge.testkit.DocExample;
import java.nio.file.Paths;
import org.junit.jupiter.api.Test;

/** docs/frameworks/java-langchain4j.md's program runs as copied, against the real bridge and a scripted model. */
class DocExampleTest {
  @Test
  void pageProgramRunsAsCopied() throws Exception {
    String out = DocExample.run(DocExample.docs().resolve("frameworks/java-langchain4j.md"), "LangChain4jAgent",
        Paths.get("examples/LangChain4jAgent.java"));
    assertTrue(out.contains("The tool says:") && out.contains("2 + 3 = 5"), out);
  }
}
