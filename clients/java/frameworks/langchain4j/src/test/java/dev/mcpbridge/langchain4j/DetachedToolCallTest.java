package dev.mcpbridge.langchain4j;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.service.tool.ToolExecutor;
import dev.langchain4j.service.tool.ToolProviderRequest;
import dev.mcpbridge.testkit.DetachedScenario;
import org.junit.jupiter.api.Test;

/**
 * {@link BridgeToolProvider#detached}: a tool call cut off from its agent run (its thread interrupted while the
 * tool waits for the person) goes on in the real bridge; the host resumes it for its result, or cancels it.
 */
class DetachedToolCallTest {
  private static ToolExecutor elicit(DetachedScenario s) {
    return BridgeToolProvider.of(s.toolbox).detached(s.calls)
        .provideTools(new ToolProviderRequest("memory", UserMessage.from("hi")))
        .toolExecutorByName("elicit");
  }

  private static ToolExecutionRequest request() {
    return ToolExecutionRequest.builder().id("c1").name("elicit").arguments(DetachedScenario.ELICIT_ARGS).build();
  }

  @Test
  void cutCallGoesOnAndIsResumed() throws Exception {
    try (DetachedScenario s = DetachedScenario.start()) {
      ToolExecutor tool = elicit(s);
      s.verifyResumed(s.cutWhileAsking(() -> tool.execute(request(), "memory")));
    }
  }

  @Test
  void cutCallIsCancelled() throws Exception {
    try (DetachedScenario s = DetachedScenario.start()) {
      ToolExecutor tool = elicit(s);
      s.verifyCancelled(s.cutWhileAsking(() -> tool.execute(request(), "memory")));
    }
  }
}
