package dev.mcpbridge.springai;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpbridge.client.Json;
import dev.mcpbridge.client.Mcp;
import dev.mcpbridge.client.McpToolbox;
import dev.mcpbridge.client.RequestContext;
import dev.mcpbridge.testkit.AgentScenario;
import dev.mcpbridge.testkit.ScriptedModel;
import dev.mcpbridge.v1.ContentBlock;
import dev.mcpbridge.v1.CreateMessageRequest;
import dev.mcpbridge.v1.CreateMessageResult;
import dev.mcpbridge.v1.ElicitRequest;
import dev.mcpbridge.v1.ElicitResult;
import dev.mcpbridge.v1.ModelHint;
import dev.mcpbridge.v1.ModelPreferences;
import dev.mcpbridge.v1.Role;
import dev.mcpbridge.v1.SamplingMessage;
import dev.mcpbridge.v1.Tool;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.openai.OpenAiChatModel;
import org.springframework.ai.openai.OpenAiChatOptions;

/**
 * A Spring AI {@link ChatClient} with the bridge's tools, driven by a scripted OpenAI-compatible model server,
 * through the real bridge binary and the demo server: add, echo, elicit (the host's handler answers), sample (the
 * sampling adapter answers with the same model server), and an approval-gated echo approved once and denied once.
 */
class SpringAiAgentTest {
  static OpenAiChatModel chatModel(String baseUrl) {
    return OpenAiChatModel.builder()
        .options(OpenAiChatOptions.builder().baseUrl(baseUrl).apiKey("test-key").model(AgentScenario.MODEL)
            .maxRetries(0).build())
        .build();
  }

  @Test
  void chatClientUsesBridgeToolsSamplingElicitationAndApprovals() throws Exception {
    try (AgentScenario scenario = AgentScenario.start()) {
      OpenAiChatModel model = chatModel(scenario.model.baseUrl());
      ChatModelSamplingHandler handler = new ChatModelSamplingHandler(model) {
        @Override
        public ElicitResult handleElicitation(ElicitRequest request, RequestContext context) {
          return scenario.elicit(request);
        }
      };
      try (McpToolbox toolbox = McpToolbox.builder(scenario.app).servers("demo", "gated").handler(handler).open()) {
        ChatClient chat = ChatClient.builder(model)
            .defaultToolCallbacks(BridgeToolCallbackProvider.of(toolbox))
            .build();
        String answer = chat.prompt().user("Try every tool once.").call().content();
        scenario.verify(answer);
      }
    }
  }

  @Test
  void samplingMapsToolsPreferencesAndStopSequences() throws Exception {
    try (ScriptedModel server = new ScriptedModel(r -> ScriptedModel.toolCall("t1", "lookup", "{\"q\":\"x\"}"))) {
      ChatModelSamplingHandler handler = new ChatModelSamplingHandler(chatModel(server.baseUrl()))
          .modelRule(prefs -> prefs.getHintsCount() > 0 && prefs.getHints(0).getName().contains("small")
              ? "small-model" : null)
          .review(r -> r.toBuilder().setMaxTokens(r.getMaxTokens() + 3).build()); // a person raised the limit
      CreateMessageRequest req = CreateMessageRequest.newBuilder()
          .addMessages(SamplingMessage.newBuilder().setRole(Role.ROLE_USER).addContent(Mcp.textBlock("look x up")))
          .setModelPreferences(ModelPreferences.newBuilder().addHints(ModelHint.newBuilder().setName("a-small-one")))
          .setMaxTokens(30).setTemperature(0.25).addStopSequences("END")
          .addTools(Tool.newBuilder().setName("lookup").setDescription("Looks things up")
              .setInputSchema(Json.parseStruct("{\"type\":\"object\",\"properties\":{\"q\":{\"type\":\"string\"}}}")))
          .build();
      CreateMessageResult res = handler.createMessage(req);
      assertEquals("toolUse", res.getStopReason());
      ContentBlock use = res.getContentList().stream().filter(ContentBlock::hasToolUse).findFirst().orElseThrow();
      assertEquals("lookup", use.getToolUse().getName());
      assertEquals("t1", use.getToolUse().getId());
      assertEquals("x", use.getToolUse().getInput().getFieldsOrThrow("q").getStringValue());

      Map<String, Object> sent = server.requests().get(0);
      assertEquals("small-model", sent.get("model"));
      assertEquals(List.of("lookup"), ScriptedModel.toolNames(sent));
      assertEquals(0.25, ((Number) sent.get("temperature")).doubleValue());
      Object stop = sent.get("stop"); // OpenAI takes one stop sequence as a string or a list
      assertTrue("END".equals(stop) || List.of("END").equals(stop), "stop: " + stop);
      Object max = sent.containsKey("max_completion_tokens") ? sent.get("max_completion_tokens") : sent.get("max_tokens");
      assertEquals(33.0, ((Number) max).doubleValue(), sent.toString());
      assertTrue(ScriptedModel.content(ScriptedModel.messages(sent).get(0)).contains("look x up"));
    }
  }
}
