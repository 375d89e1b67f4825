package dev.mcpbridge.client;

import dev.mcpbridge.v1.ContentBlock;
import dev.mcpbridge.v1.CreateMessageRequest;
import dev.mcpbridge.v1.CreateMessageResult;
import dev.mcpbridge.v1.ModelPreferences;
import dev.mcpbridge.v1.SamplingMessage;
import dev.mcpbridge.v1.Tool;
import dev.mcpbridge.v1.ToolChoiceMode;
import dev.mcpbridge.v1.ToolUseContent;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * A sampling request ({@code sampling/createMessage}) in the neutral shape chat-model APIs take, for a host that
 * answers it with its own model: the system prompt, the conversation as turns (a role; text and media parts in
 * order; the tool calls an assistant turn made; the tool results a turn carries), the generation settings, and the
 * tools the server offers the model. The framework adapters (Spring AI, LangChain4j) map this onto their message
 * types instead of reading the request's content blocks themselves; {@link #reply} builds the answer.
 *
 * <p>The mapping: text blocks are text parts; images and audio are media parts; {@code tool_use} blocks are tool
 * calls with their input as JSON text; {@code tool_result} blocks are tool results whose text is the result's text
 * when it is text only and the MCP JSON of its content otherwise; any other block (a resource link, an embedded
 * resource) is a text part holding its MCP JSON. A tool without a description is described by its name, one
 * without an input schema takes an empty object. With tool choice {@code none}, {@link #tools} is empty.
 */
public final class SamplingPrompt {
  /** Who speaks a turn. */
  public enum Role { USER, ASSISTANT }

  /** How the model may use the offered tools: the server did not say, as the model likes, or it must call one. */
  public enum ToolChoice { UNSPECIFIED, AUTO, REQUIRED }

  /** A piece of a turn's content, in order: {@link Text} or {@link Media}. */
  public sealed interface Part permits Text, Media {}

  /** Text. */
  public record Text(String text) implements Part {}

  /** An image or audio clip with its MIME type and raw bytes. */
  public record Media(boolean audio, String mimeType, byte[] data) implements Part {}

  /** A tool call an assistant turn made: the call's id, the tool's name, its arguments as a JSON object. */
  public record ToolCall(String id, String name, String argumentsJson) {}

  /** The answer to a tool call: the id of the call and the result as text. */
  public record ToolResult(String toolUseId, String text) {}

  /** A tool the server offers the model during sampling; the server, not the host, runs it. */
  public record ToolDefinition(String name, String description, Map<String, Object> inputSchema) {
    /** The input schema as JSON text. */
    public String inputSchemaJson() {
      return McpContent.json(inputSchema);
    }
  }

  /**
   * One message of the conversation. A chat API takes its {@link #toolResults} as messages of their own, before
   * the turn's text and media.
   */
  public record Turn(Role role, List<Part> parts, List<ToolCall> toolCalls, List<ToolResult> toolResults) {
    /** The text parts joined by newlines; "" without any. */
    public String text() {
      StringBuilder sb = new StringBuilder();
      for (Part p : parts) {
        if (p instanceof Text t) {
          sb.append(sb.length() > 0 ? "\n" : "").append(t.text());
        }
      }
      return sb.toString();
    }

    /** The media parts, in order. */
    public List<Media> media() {
      List<Media> out = new ArrayList<>();
      for (Part p : parts) {
        if (p instanceof Media m) {
          out.add(m);
        }
      }
      return out;
    }
  }

  private static final Map<String, Object> EMPTY_OBJECT_SCHEMA = Map.of("type", "object", "properties", Map.of());

  private final String systemPrompt;
  private final List<Turn> turns;
  private final Integer maxTokens;
  private final Double temperature;
  private final List<String> stopSequences;
  private final List<ToolDefinition> tools;
  private final ToolChoice toolChoice;
  private final ModelPreferences modelPreferences;

  private SamplingPrompt(String systemPrompt, List<Turn> turns, Integer maxTokens, Double temperature,
      List<String> stopSequences, List<ToolDefinition> tools, ToolChoice toolChoice, ModelPreferences prefs) {
    this.systemPrompt = systemPrompt;
    this.turns = turns;
    this.maxTokens = maxTokens;
    this.temperature = temperature;
    this.stopSequences = stopSequences;
    this.tools = tools;
    this.toolChoice = toolChoice;
    this.modelPreferences = prefs;
  }

  /** The neutral form of a sampling request. */
  public static SamplingPrompt of(CreateMessageRequest request) {
    Objects.requireNonNull(request, "request");
    List<Turn> turns = new ArrayList<>();
    for (SamplingMessage m : request.getMessagesList()) {
      turns.add(turn(m));
    }
    ToolChoiceMode mode = request.hasToolChoice() ? request.getToolChoice().getMode()
        : ToolChoiceMode.TOOL_CHOICE_MODE_UNSPECIFIED;
    List<ToolDefinition> tools = new ArrayList<>();
    if (mode != ToolChoiceMode.TOOL_CHOICE_MODE_NONE) {
      for (Tool t : request.getToolsList()) {
        tools.add(new ToolDefinition(t.getName(), t.getDescription().isEmpty() ? t.getName() : t.getDescription(),
            t.hasInputSchema() && t.getInputSchema().getFieldsCount() > 0 ? Json.toMap(t.getInputSchema())
                : EMPTY_OBJECT_SCHEMA));
      }
    }
    return new SamplingPrompt(request.getSystemPrompt(), List.copyOf(turns),
        request.getMaxTokens() > 0 ? request.getMaxTokens() : null,
        request.hasTemperature() ? request.getTemperature() : null,
        List.copyOf(request.getStopSequencesList()), List.copyOf(tools),
        mode == ToolChoiceMode.TOOL_CHOICE_MODE_REQUIRED ? ToolChoice.REQUIRED
            : mode == ToolChoiceMode.TOOL_CHOICE_MODE_AUTO ? ToolChoice.AUTO : ToolChoice.UNSPECIFIED,
        request.getModelPreferences());
  }

  private static Turn turn(SamplingMessage m) {
    List<Part> parts = new ArrayList<>();
    List<ToolCall> calls = new ArrayList<>();
    List<ToolResult> results = new ArrayList<>();
    for (ContentBlock b : m.getContentList()) {
      switch (b.getContentCase()) {
        case TEXT -> parts.add(new Text(b.getText().getText()));
        case IMAGE -> parts.add(new Media(false, b.getImage().getMimeType(), b.getImage().getData().toByteArray()));
        case AUDIO -> parts.add(new Media(true, b.getAudio().getMimeType(), b.getAudio().getData().toByteArray()));
        case TOOL_USE -> calls.add(new ToolCall(b.getToolUse().getId(), b.getToolUse().getName(),
            McpContent.json(Json.toMap(b.getToolUse().getInput()))));
        case TOOL_RESULT -> {
          List<ContentBlock> content = b.getToolResult().getContentList();
          results.add(new ToolResult(b.getToolResult().getToolUseId(),
              content.stream().allMatch(ContentBlock::hasText) ? Mcp.text(content) : McpContent.toJson(content)));
        }
        default -> parts.add(new Text(McpContent.json(McpContent.toMap(b))));
      }
    }
    Role role = m.getRole() == dev.mcpbridge.v1.Role.ROLE_ASSISTANT ? Role.ASSISTANT : Role.USER;
    return new Turn(role, List.copyOf(parts), List.copyOf(calls), List.copyOf(results));
  }

  /**
   * The answer to a sampling request from what the model returned: its text (null or "" for none), the tool calls
   * it made (their arguments as JSON text; blank means none), the model it used and the MCP stop reason
   * ({@code endTurn}, {@code maxTokens}, {@code toolUse}, …). Without text and calls the content is one empty text
   * block; a null or empty model reads {@code unknown}.
   */
  public static CreateMessageResult reply(String text, List<ToolCall> toolCalls, String model, String stopReason) {
    CreateMessageResult.Builder result = CreateMessageResult.newBuilder().setRole(dev.mcpbridge.v1.Role.ROLE_ASSISTANT);
    if (text != null && !text.isEmpty()) {
      result.addContent(Mcp.textBlock(text));
    }
    for (ToolCall call : toolCalls) {
      String args = call.argumentsJson() == null || call.argumentsJson().isBlank() ? "{}" : call.argumentsJson();
      result.addContent(ContentBlock.newBuilder().setToolUse(ToolUseContent.newBuilder()
          .setId(call.id() == null ? "" : call.id()).setName(call.name()).setInput(Json.parseStruct(args))));
    }
    if (result.getContentCount() == 0) {
      result.addContent(Mcp.textBlock(""));
    }
    result.setModel(model != null && !model.isEmpty() ? model : "unknown");
    result.setStopReason(stopReason);
    return result.build();
  }

  /** The system prompt; "" for none. */
  public String systemPrompt() {
    return systemPrompt;
  }

  /** The conversation, oldest first. */
  public List<Turn> turns() {
    return turns;
  }

  /** The most tokens to generate; null when the request sets none. */
  public Integer maxTokens() {
    return maxTokens;
  }

  /** The sampling temperature; null when the request sets none. */
  public Double temperature() {
    return temperature;
  }

  /** The stop sequences; empty for none. */
  public List<String> stopSequences() {
    return stopSequences;
  }

  /** The tools the model may call; empty when the server offers none or its tool choice is {@code none}. */
  public List<ToolDefinition> tools() {
    return tools;
  }

  /** How the model may use {@link #tools}. */
  public ToolChoice toolChoice() {
    return toolChoice;
  }

  /** The server's model preferences (hints, priorities), for the host's rule that picks a model. */
  public ModelPreferences modelPreferences() {
    return modelPreferences;
  }
}
