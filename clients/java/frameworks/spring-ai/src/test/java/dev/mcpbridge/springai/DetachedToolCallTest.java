package dev.mcpbridge.springai;

import dev.mcpbridge.testkit.DetachedScenario;
import org.junit.jupiter.api.Test;
import org.springframework.ai.tool.ToolCallback;

/**
 * {@link BridgeToolCallbackProvider#detached}: a tool call cut off from its agent run (its thread interrupted while
 * the tool waits for the person) goes on in the real bridge; the host resumes it for its result, or cancels it.
 */
class DetachedToolCallTest {
  private static ToolCallback elicit(DetachedScenario s) {
    for (ToolCallback c : BridgeToolCallbackProvider.of(s.toolbox).detached(s.calls).getToolCallbacks()) {
      if (c.getToolDefinition().name().equals("elicit")) {
        return c;
      }
    }
    throw new AssertionError("no elicit tool");
  }

  @Test
  void cutCallGoesOnAndIsResumed() throws Exception {
    try (DetachedScenario s = DetachedScenario.start()) {
      ToolCallback tool = elicit(s);
      s.verifyResumed(s.cutWhileAsking(() -> tool.call(DetachedScenario.ELICIT_ARGS)));
    }
  }

  @Test
  void cutCallIsCancelled() throws Exception {
    try (DetachedScenario s = DetachedScenario.start()) {
      ToolCallback tool = elicit(s);
      s.verifyCancelled(s.cutWhileAsking(() -> tool.call(DetachedScenario.ELICIT_ARGS)));
    }
  }
}
