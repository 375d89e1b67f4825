package dev.mcpbridge.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import dev.mcpbridge.v1.AudioContent;
import dev.mcpbridge.v1.ContentBlock;
import dev.mcpbridge.v1.CreateMessageRequest;
import dev.mcpbridge.v1.CreateMessageResult;
import dev.mcpbridge.v1.ImageContent;
import dev.mcpbridge.v1.ModelHint;
import dev.mcpbridge.v1.ModelPreferences;
import dev.mcpbridge.v1.ResourceLink;
import dev.mcpbridge.v1.Role;
import dev.mcpbridge.v1.SamplingMessage;
import dev.mcpbridge.v1.Tool;
import dev.mcpbridge.v1.ToolChoice;
import dev.mcpbridge.v1.ToolChoiceMode;
import dev.mcpbridge.v1.ToolResultContent;
import dev.mcpbridge.v1.ToolUseContent;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The one mapping of a sampling request to the neutral form both framework adapters take ({@link SamplingPrompt}). */
class SamplingPromptTest {
  private static SamplingMessage message(Role role, ContentBlock... blocks) {
    return SamplingMessage.newBuilder().setRole(role).addAllContent(List.of(blocks)).build();
  }

  @Test
  void mapsTurnsPartsToolsAndSettings() {
    byte[] png = {1, 2, 3};
    byte[] wav = {4, 5};
    CreateMessageRequest request = CreateMessageRequest.newBuilder()
        .setSystemPrompt("Be brief.")
        .setMaxTokens(20)
        .setTemperature(0.5)
        .addStopSequences("END")
        .setModelPreferences(ModelPreferences.newBuilder().addHints(ModelHint.newBuilder().setName("small")))
        .addMessages(message(Role.ROLE_USER, Mcp.textBlock("Look:"),
            ContentBlock.newBuilder().setImage(ImageContent.newBuilder().setMimeType("image/png")
                .setData(ByteString.copyFrom(png))).build(),
            Mcp.textBlock("and listen"),
            ContentBlock.newBuilder().setAudio(AudioContent.newBuilder().setMimeType("audio/wav")
                .setData(ByteString.copyFrom(wav))).build(),
            ContentBlock.newBuilder().setResourceLink(ResourceLink.newBuilder().setUri("file:///a.txt")
                .setName("a")).build()))
        .addMessages(message(Role.ROLE_ASSISTANT, Mcp.textBlock("Checking."),
            ContentBlock.newBuilder().setToolUse(ToolUseContent.newBuilder().setId("call-1").setName("weather")
                .setInput(Json.toStruct(Map.of("city", "Paris")))).build()))
        .addMessages(message(Role.ROLE_USER,
            ContentBlock.newBuilder().setToolResult(ToolResultContent.newBuilder().setToolUseId("call-1")
                .addContent(Mcp.textBlock("sunny")).addContent(Mcp.textBlock("20 C"))).build(),
            ContentBlock.newBuilder().setToolResult(ToolResultContent.newBuilder().setToolUseId("call-2")
                .addContent(ContentBlock.newBuilder().setImage(ImageContent.newBuilder().setMimeType("image/png")
                    .setData(ByteString.copyFrom(png))))).build()))
        .addTools(Tool.newBuilder().setName("weather").setDescription("The weather in a city.")
            .setInputSchema(Json.toStruct(Map.of("type", "object", "properties",
                Map.of("city", Map.of("type", "string"))))))
        .addTools(Tool.newBuilder().setName("bare"))
        .setToolChoice(ToolChoice.newBuilder().setMode(ToolChoiceMode.TOOL_CHOICE_MODE_REQUIRED))
        .build();

    SamplingPrompt p = SamplingPrompt.of(request);

    assertEquals("Be brief.", p.systemPrompt());
    assertEquals(20, p.maxTokens());
    assertEquals(0.5, p.temperature());
    assertEquals(List.of("END"), p.stopSequences());
    assertEquals("small", p.modelPreferences().getHints(0).getName());
    assertEquals(3, p.turns().size());

    SamplingPrompt.Turn user = p.turns().get(0);
    assertEquals(SamplingPrompt.Role.USER, user.role());
    assertEquals(5, user.parts().size());
    assertEquals("Look:\nand listen\n" + McpContent.json(McpContent.toMap(request.getMessages(0).getContent(4))),
        user.text());
    List<SamplingPrompt.Media> media = user.media();
    assertEquals(2, media.size());
    assertEquals("image/png", media.get(0).mimeType());
    assertArrayEquals(png, media.get(0).data());
    assertTrue(media.get(1).audio());
    assertArrayEquals(wav, media.get(1).data());
    assertTrue(user.toolCalls().isEmpty() && user.toolResults().isEmpty());

    SamplingPrompt.Turn assistant = p.turns().get(1);
    assertEquals(SamplingPrompt.Role.ASSISTANT, assistant.role());
    assertEquals("Checking.", assistant.text());
    assertEquals(List.of(new SamplingPrompt.ToolCall("call-1", "weather", "{\"city\":\"Paris\"}")),
        assistant.toolCalls());

    SamplingPrompt.Turn results = p.turns().get(2);
    assertEquals("", results.text());
    assertEquals(new SamplingPrompt.ToolResult("call-1", "sunny\n20 C"), results.toolResults().get(0));
    assertEquals("call-2", results.toolResults().get(1).toolUseId());
    assertTrue(results.toolResults().get(1).text().startsWith("[{\"type\":\"image\""),
        "a result that is not text only is its MCP JSON: " + results.toolResults().get(1).text());

    assertEquals(SamplingPrompt.ToolChoice.REQUIRED, p.toolChoice());
    assertEquals(2, p.tools().size());
    assertEquals("The weather in a city.", p.tools().get(0).description());
    assertEquals(Map.of("type", "object", "properties", Map.of("city", Map.of("type", "string"))),
        Json.toMap(Json.parseStruct(p.tools().get(0).inputSchemaJson())));
    assertEquals("bare", p.tools().get(1).description(), "a tool without a description is described by its name");
    assertEquals(Map.of("type", "object", "properties", Map.of()), p.tools().get(1).inputSchema());
  }

  @Test
  void unsetSettingsAndToolChoiceNone() {
    CreateMessageRequest request = CreateMessageRequest.newBuilder()
        .addMessages(message(Role.ROLE_USER, Mcp.textBlock("hi")))
        .addTools(Tool.newBuilder().setName("t"))
        .setToolChoice(ToolChoice.newBuilder().setMode(ToolChoiceMode.TOOL_CHOICE_MODE_NONE))
        .build();
    SamplingPrompt p = SamplingPrompt.of(request);
    assertEquals("", p.systemPrompt());
    assertNull(p.maxTokens());
    assertNull(p.temperature());
    assertTrue(p.stopSequences().isEmpty());
    assertTrue(p.tools().isEmpty(), "tool choice none offers no tools");
    assertEquals(SamplingPrompt.ToolChoice.UNSPECIFIED,
        SamplingPrompt.of(request.toBuilder().clearToolChoice().build()).toolChoice());
    assertEquals(1, SamplingPrompt.of(request.toBuilder().clearToolChoice().build()).tools().size());
  }

  /** The one path of the adapters' handlers: review first, then the neutral prompt, the model rule, complete. */
  @Test
  void modelSamplingHandlerReviewsThenAsksTheRuleThenCompletes() throws Exception {
    class Handler extends ModelSamplingHandler<Handler> {
      SamplingPrompt seen;
      String seenModel;

      @Override
      protected CreateMessageResult complete(SamplingPrompt prompt, String model) {
        seen = prompt;
        seenModel = model;
        return SamplingPrompt.reply(prompt.turns().get(0).text(), List.of(), model, "endTurn");
      }
    }
    Handler h = new Handler()
        .review(r -> r.toBuilder().setSystemPrompt("reviewed").build())
        .modelRule(prefs -> prefs.getHintsCount() > 0 ? "model-for-" + prefs.getHints(0).getName() : null);
    CreateMessageResult r = h.handleSampling(CreateMessageRequest.newBuilder()
        .addMessages(message(Role.ROLE_USER, Mcp.textBlock("hi")))
        .setModelPreferences(ModelPreferences.newBuilder().addHints(ModelHint.newBuilder().setName("small")))
        .build(), null);
    assertEquals("reviewed", h.seen.systemPrompt());
    assertEquals("model-for-small", h.seenModel);
    assertEquals("hi", r.getContent(0).getText().getText());
    assertEquals("model-for-small", r.getModel());
    RuntimeException refused = new IllegalStateException("no");
    h.review(req -> {
      throw refused;
    });
    assertEquals(refused, org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
        () -> h.createMessage(CreateMessageRequest.getDefaultInstance())));
  }

  @Test
  void reply() {
    CreateMessageResult r = SamplingPrompt.reply("Paris.", List.of(
        new SamplingPrompt.ToolCall("c1", "lookup", "{\"q\":\"x\"}"),
        new SamplingPrompt.ToolCall(null, "noargs", " ")), "gpt-x", "toolUse");
    assertEquals(Role.ROLE_ASSISTANT, r.getRole());
    assertEquals("Paris.", r.getContent(0).getText().getText());
    assertEquals("c1", r.getContent(1).getToolUse().getId());
    assertEquals(Map.of("q", "x"), Json.toMap(r.getContent(1).getToolUse().getInput()));
    assertEquals("", r.getContent(2).getToolUse().getId());
    assertEquals(0, r.getContent(2).getToolUse().getInput().getFieldsCount());
    assertEquals("gpt-x", r.getModel());
    assertEquals("toolUse", r.getStopReason());

    CreateMessageResult empty = SamplingPrompt.reply(null, List.of(), "", "endTurn");
    assertEquals(1, empty.getContentCount());
    assertEquals("", empty.getContent(0).getText().getText());
    assertEquals("unknown", empty.getModel());
  }
}
