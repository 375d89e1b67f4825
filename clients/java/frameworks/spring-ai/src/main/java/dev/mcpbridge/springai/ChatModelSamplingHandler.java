package dev.mcpbridge.springai;

import dev.mcpbridge.client.HostHandler;
import dev.mcpbridge.client.Json;
import dev.mcpbridge.client.Mcp;
import dev.mcpbridge.client.McpContent;
import dev.mcpbridge.client.RequestContext;
import dev.mcpbridge.v1.ContentBlock;
import dev.mcpbridge.v1.CreateMessageRequest;
import dev.mcpbridge.v1.CreateMessageResult;
import dev.mcpbridge.v1.ModelPreferences;
import dev.mcpbridge.v1.Role;
import dev.mcpbridge.v1.SamplingMessage;
import dev.mcpbridge.v1.Tool;
import dev.mcpbridge.v1.ToolUseContent;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.messages.Message;
import org.springframework.ai.chat.messages.SystemMessage;
import org.springframework.ai.chat.messages.ToolResponseMessage;
import org.springframework.ai.chat.messages.UserMessage;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.content.Media;
import org.springframework.ai.model.tool.ToolCallingChatOptions;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.definition.ToolDefinition;
import org.springframework.util.MimeType;

/**
 * Answers MCP {@code sampling/createMessage} with a Spring AI {@link ChatModel}: the request's messages (text,
 * images, tool uses and tool results), system prompt, max tokens, temperature and stop sequences go into a
 * {@link org.springframework.ai.chat.prompt.Prompt}; the server's model preferences pick the model through the
 * host's rule ({@link #modelRule}); the tools the server offers become function definitions the model may call
 * (Spring AI 2 chat models return tool calls to the caller; they become {@code tool_use} blocks with stop reason
 * {@code toolUse}). Subclass it to answer elicitation and the rest too, or use it as the handler of a toolbox:
 *
 * <pre>{@code
 * HostHandler handler = new ChatModelSamplingHandler(chatModel) {
 *   @Override public ElicitResult handleElicitation(ElicitRequest r, RequestContext c) { ... }
 * };
 * }</pre>
 *
 * An optional {@link #review} hook sees (and may change or refuse, by throwing) each request before the model does.
 */
public class ChatModelSamplingHandler implements HostHandler {
  private final ChatModel chatModel;
  private volatile Function<ModelPreferences, String> modelRule = prefs -> null;
  private volatile UnaryOperator<CreateMessageRequest> review = UnaryOperator.identity();

  public ChatModelSamplingHandler(ChatModel chatModel) {
    this.chatModel = Objects.requireNonNull(chatModel, "chatModel");
  }

  /**
   * The host's rule from the server's model preferences (hints, priorities) to a model name; null keeps the
   * chat model's default. The default rule always returns null.
   */
  public ChatModelSamplingHandler modelRule(Function<ModelPreferences, String> rule) {
    this.modelRule = Objects.requireNonNull(rule, "rule");
    return this;
  }

  /**
   * A hook run before each request goes to the model, e.g. to let a person approve or edit it: it returns the
   * request to send, or throws to refuse (the server gets an error).
   */
  public ChatModelSamplingHandler review(UnaryOperator<CreateMessageRequest> review) {
    this.review = Objects.requireNonNull(review, "review");
    return this;
  }

  @Override
  public CreateMessageResult handleSampling(CreateMessageRequest request, RequestContext context) throws Exception {
    return createMessage(request);
  }

  /** Runs one sampling request through the chat model. */
  public CreateMessageResult createMessage(CreateMessageRequest original) {
    CreateMessageRequest request = review.apply(original);
    List<Message> messages = new ArrayList<>();
    if (!request.getSystemPrompt().isEmpty()) {
      messages.add(new SystemMessage(request.getSystemPrompt()));
    }
    for (SamplingMessage m : request.getMessagesList()) {
      messages.addAll(toMessages(m));
    }
    // The chat model's own options type (OpenAiChatModel takes only OpenAiChatOptions), from its defaults.
    ChatOptions defaults = chatModel.getDefaultOptions();
    ChatOptions.Builder<?> options = defaults != null ? defaults.mutate() : ToolCallingChatOptions.builder();
    String model = modelRule.apply(request.getModelPreferences());
    if (model != null) {
      options.model(model);
    }
    if (request.getMaxTokens() > 0) {
      options.maxTokens(request.getMaxTokens());
    }
    if (request.hasTemperature()) {
      options.temperature(request.getTemperature());
    }
    if (request.getStopSequencesCount() > 0) {
      options.stopSequences(List.copyOf(request.getStopSequencesList()));
    }
    boolean toolsOff = request.hasToolChoice()
        && request.getToolChoice().getMode() == dev.mcpbridge.v1.ToolChoiceMode.TOOL_CHOICE_MODE_NONE;
    if (request.getToolsCount() > 0 && !toolsOff) {
      if (!(options instanceof ToolCallingChatOptions.Builder)) {
        throw new IllegalStateException("the sampling request offers tools, and " + chatModel.getClass().getName()
            + " does not take tool callbacks");
      }
      List<ToolCallback> defs = new ArrayList<>();
      for (Tool t : request.getToolsList()) {
        defs.add(new DefinitionOnly(t));
      }
      ((ToolCallingChatOptions.Builder<?>) options).toolCallbacks(defs);
    }
    ChatResponse response = chatModel.call(new org.springframework.ai.chat.prompt.Prompt(messages, options.build()));
    Generation g = response.getResult();
    if (g == null) {
      throw new IllegalStateException("the chat model returned no generation");
    }
    AssistantMessage out = g.getOutput();
    CreateMessageResult.Builder result = CreateMessageResult.newBuilder().setRole(Role.ROLE_ASSISTANT);
    if (out.getText() != null && !out.getText().isEmpty()) {
      result.addContent(Mcp.textBlock(out.getText()));
    }
    for (AssistantMessage.ToolCall call : out.getToolCalls()) {
      String args = call.arguments() == null || call.arguments().isBlank() ? "{}" : call.arguments();
      result.addContent(ContentBlock.newBuilder().setToolUse(ToolUseContent.newBuilder()
          .setId(call.id()).setName(call.name()).setInput(Json.parseStruct(args))));
    }
    if (result.getContentCount() == 0) {
      result.addContent(Mcp.textBlock(""));
    }
    String used = response.getMetadata() != null ? response.getMetadata().getModel() : null;
    result.setModel(used != null && !used.isEmpty() ? used : model != null ? model : "unknown");
    result.setStopReason(stopReason(out, g.getMetadata() == null ? null : g.getMetadata().getFinishReason()));
    return result.build();
  }

  private static String stopReason(AssistantMessage out, String finish) {
    if (!out.getToolCalls().isEmpty()) {
      return "toolUse";
    }
    if (finish == null) {
      return "endTurn";
    }
    switch (finish.toLowerCase(java.util.Locale.ROOT)) {
      case "length":
      case "max_tokens":
        return "maxTokens";
      case "tool_calls":
        return "toolUse";
      case "stop":
      case "end_turn":
        return "endTurn";
      default:
        return finish;
    }
  }

  private static List<Message> toMessages(SamplingMessage m) {
    List<Message> out = new ArrayList<>();
    StringBuilder text = new StringBuilder();
    List<Media> media = new ArrayList<>();
    List<AssistantMessage.ToolCall> calls = new ArrayList<>();
    List<ToolResponseMessage.ToolResponse> results = new ArrayList<>();
    for (ContentBlock b : m.getContentList()) {
      switch (b.getContentCase()) {
        case TEXT:
          text.append(text.length() > 0 ? "\n" : "").append(b.getText().getText());
          break;
        case IMAGE:
          media.add(Media.builder().mimeType(MimeType.valueOf(b.getImage().getMimeType()))
              .data(b.getImage().getData().toByteArray()).build());
          break;
        case AUDIO:
          media.add(Media.builder().mimeType(MimeType.valueOf(b.getAudio().getMimeType()))
              .data(b.getAudio().getData().toByteArray()).build());
          break;
        case TOOL_USE:
          calls.add(new AssistantMessage.ToolCall(b.getToolUse().getId(), "function", b.getToolUse().getName(),
              McpContent.json(Json.toMap(b.getToolUse().getInput()))));
          break;
        case TOOL_RESULT:
          String data = b.getToolResult().getContentList().stream().allMatch(ContentBlock::hasText)
              ? Mcp.text(b.getToolResult().getContentList())
              : McpContent.toJson(b.getToolResult().getContentList());
          results.add(new ToolResponseMessage.ToolResponse(b.getToolResult().getToolUseId(), "", data));
          break;
        default:
          text.append(text.length() > 0 ? "\n" : "").append(McpContent.json(McpContent.toMap(b)));
      }
    }
    if (!results.isEmpty()) {
      out.add(ToolResponseMessage.builder().responses(results).build());
    }
    if (m.getRole() == Role.ROLE_ASSISTANT) {
      if (text.length() > 0 || !calls.isEmpty()) {
        out.add(AssistantMessage.builder().content(text.toString()).toolCalls(calls).build());
      }
    } else if (text.length() > 0 || !media.isEmpty()) {
      out.add(UserMessage.builder().text(text.toString()).media(media).build());
    }
    return out;
  }

  /** A tool the server offers the model during sampling: its definition only; the server runs it, not the host. */
  private static final class DefinitionOnly implements ToolCallback {
    private final ToolDefinition definition;

    DefinitionOnly(Tool t) {
      definition = ToolDefinition.builder().name(t.getName())
          .description(t.getDescription().isEmpty() ? t.getName() : t.getDescription())
          .inputSchema(t.hasInputSchema() && t.getInputSchema().getFieldsCount() > 0
              ? McpContent.json(Json.toMap(t.getInputSchema())) : "{\"type\":\"object\",\"properties\":{}}")
          .build();
    }

    @Override
    public ToolDefinition getToolDefinition() {
      return definition;
    }

    @Override
    public String call(String toolInput) {
      throw new UnsupportedOperationException("a sampling tool is run by the MCP server, not by the host");
    }
  }

  static String base64(byte[] b) {
    return Base64.getEncoder().encodeToString(b);
  }
}
