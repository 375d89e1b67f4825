package dev.mcpbridge.springai;

import dev.mcpbridge.client.ModelSamplingHandler;
import dev.mcpbridge.client.SamplingPrompt;
import dev.mcpbridge.v1.CreateMessageResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
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
public class ChatModelSamplingHandler extends ModelSamplingHandler<ChatModelSamplingHandler> {
  private final ChatModel chatModel;

  public ChatModelSamplingHandler(ChatModel chatModel) {
    this.chatModel = Objects.requireNonNull(chatModel, "chatModel");
  }

  /** Runs one sampling request through the chat model; {@code model} is the model rule's choice (null: default). */
  @Override
  protected CreateMessageResult complete(SamplingPrompt prompt, String model) {
    List<Message> messages = new ArrayList<>();
    if (!prompt.systemPrompt().isEmpty()) {
      messages.add(new SystemMessage(prompt.systemPrompt()));
    }
    for (SamplingPrompt.Turn turn : prompt.turns()) {
      messages.addAll(toMessages(turn));
    }
    // The chat model's own options type (OpenAiChatModel takes only OpenAiChatOptions), from its defaults.
    ChatOptions defaults = chatModel.getDefaultOptions();
    ChatOptions.Builder<?> options = defaults != null ? defaults.mutate() : ToolCallingChatOptions.builder();
    if (model != null) {
      options.model(model);
    }
    if (prompt.maxTokens() != null) {
      options.maxTokens(prompt.maxTokens());
    }
    if (prompt.temperature() != null) {
      options.temperature(prompt.temperature());
    }
    if (!prompt.stopSequences().isEmpty()) {
      options.stopSequences(prompt.stopSequences());
    }
    if (!prompt.tools().isEmpty()) {
      if (!(options instanceof ToolCallingChatOptions.Builder)) {
        throw new IllegalStateException("the sampling request offers tools, and " + chatModel.getClass().getName()
            + " does not take tool callbacks");
      }
      List<ToolCallback> defs = new ArrayList<>();
      for (SamplingPrompt.ToolDefinition t : prompt.tools()) {
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
    List<SamplingPrompt.ToolCall> calls = new ArrayList<>();
    for (AssistantMessage.ToolCall call : out.getToolCalls()) {
      calls.add(new SamplingPrompt.ToolCall(call.id(), call.name(), call.arguments()));
    }
    String used = response.getMetadata() != null ? response.getMetadata().getModel() : null;
    return SamplingPrompt.reply(out.getText(), calls, used != null && !used.isEmpty() ? used : model,
        stopReason(out, g.getMetadata() == null ? null : g.getMetadata().getFinishReason()));
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

  /** A turn as Spring AI messages: its tool results first (one tool response message), then its text and media. */
  private static List<Message> toMessages(SamplingPrompt.Turn turn) {
    List<Message> out = new ArrayList<>();
    if (!turn.toolResults().isEmpty()) {
      List<ToolResponseMessage.ToolResponse> results = new ArrayList<>();
      for (SamplingPrompt.ToolResult r : turn.toolResults()) {
        results.add(new ToolResponseMessage.ToolResponse(r.toolUseId(), "", r.text()));
      }
      out.add(ToolResponseMessage.builder().responses(results).build());
    }
    String text = turn.text();
    if (turn.role() == SamplingPrompt.Role.ASSISTANT) {
      if (!text.isEmpty() || !turn.toolCalls().isEmpty()) {
        List<AssistantMessage.ToolCall> calls = new ArrayList<>();
        for (SamplingPrompt.ToolCall c : turn.toolCalls()) {
          calls.add(new AssistantMessage.ToolCall(c.id(), "function", c.name(), c.argumentsJson()));
        }
        out.add(AssistantMessage.builder().content(text).toolCalls(calls).build());
      }
    } else {
      List<Media> media = new ArrayList<>();
      for (SamplingPrompt.Media m : turn.media()) {
        media.add(Media.builder().mimeType(MimeType.valueOf(m.mimeType())).data(m.data()).build());
      }
      if (!text.isEmpty() || !media.isEmpty()) {
        out.add(UserMessage.builder().text(text).media(media).build());
      }
    }
    return out;
  }

  /** A tool the server offers the model during sampling: its definition only; the server runs it, not the host. */
  private static final class DefinitionOnly implements ToolCallback {
    private final ToolDefinition definition;

    DefinitionOnly(SamplingPrompt.ToolDefinition t) {
      definition = ToolDefinition.builder().name(t.name()).description(t.description())
          .inputSchema(t.inputSchemaJson()).build();
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
}
