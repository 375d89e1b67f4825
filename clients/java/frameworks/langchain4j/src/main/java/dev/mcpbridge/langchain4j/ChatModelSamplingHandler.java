package dev.mcpbridge.langchain4j;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.data.message.AudioContent;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.Content;
import dev.langchain4j.data.message.ImageContent;
import dev.langchain4j.data.message.SystemMessage;
import dev.langchain4j.data.message.TextContent;
import dev.langchain4j.data.message.ToolExecutionResultMessage;
import dev.langchain4j.data.message.UserMessage;
import dev.langchain4j.model.chat.ChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.request.ChatRequestParameters;
import dev.langchain4j.model.chat.request.DefaultChatRequestParameters;
import dev.langchain4j.model.chat.request.ToolChoice;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.output.FinishReason;
import dev.mcpbridge.client.ModelSamplingHandler;
import dev.mcpbridge.client.SamplingPrompt;
import dev.mcpbridge.v1.CreateMessageResult;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Objects;

/**
 * Answers MCP {@code sampling/createMessage} with a LangChain4j {@link ChatModel}: messages (text, images, tool uses
 * and tool results), system prompt, max tokens, temperature and stop sequences go into a {@link ChatRequest}; the
 * server's model preferences pick the model name through the host's rule ({@link #modelRule}); the tools the
 * server offers become tool specifications (with its tool choice), and tool calls the model makes come back as
 * {@code tool_use} blocks with stop reason {@code toolUse}. Subclass it to answer elicitation and the rest too, or
 * give it to a toolbox as its handler. An optional {@link #review} hook sees (and may change or refuse) each
 * request before the model does.
 */
public class ChatModelSamplingHandler extends ModelSamplingHandler<ChatModelSamplingHandler> {
  private final ChatModel chatModel;

  public ChatModelSamplingHandler(ChatModel chatModel) {
    this.chatModel = Objects.requireNonNull(chatModel, "chatModel");
  }

  /** Runs one sampling request through the chat model; {@code model} is the model rule's choice (null: default). */
  @Override
  protected CreateMessageResult complete(SamplingPrompt prompt, String model) {
    List<ChatMessage> messages = new ArrayList<>();
    if (!prompt.systemPrompt().isEmpty()) {
      messages.add(SystemMessage.from(prompt.systemPrompt()));
    }
    for (SamplingPrompt.Turn turn : prompt.turns()) {
      messages.addAll(toMessages(turn));
    }
    DefaultChatRequestParameters.Builder<?> p = ChatRequestParameters.builder();
    if (model != null) {
      p.modelName(model);
    }
    if (prompt.maxTokens() != null) {
      p.maxOutputTokens(prompt.maxTokens());
    }
    if (prompt.temperature() != null) {
      p.temperature(prompt.temperature());
    }
    if (!prompt.stopSequences().isEmpty()) {
      p.stopSequences(prompt.stopSequences());
    }
    if (!prompt.tools().isEmpty()) {
      List<ToolSpecification> specs = new ArrayList<>();
      for (SamplingPrompt.ToolDefinition t : prompt.tools()) {
        specs.add(ToolSpecification.builder().name(t.name()).description(t.description())
            .parameters(JsonSchemas.toObjectSchema(t.inputSchema())).build());
      }
      p.toolSpecifications(specs);
      if (prompt.toolChoice() == SamplingPrompt.ToolChoice.REQUIRED) {
        p.toolChoice(ToolChoice.REQUIRED);
      } else if (prompt.toolChoice() == SamplingPrompt.ToolChoice.AUTO) {
        p.toolChoice(ToolChoice.AUTO);
      }
    }
    ChatResponse response = chatModel.chat(ChatRequest.builder().messages(messages).parameters(p.build()).build());
    AiMessage out = response.aiMessage();
    List<SamplingPrompt.ToolCall> calls = new ArrayList<>();
    if (out.hasToolExecutionRequests()) {
      for (ToolExecutionRequest call : out.toolExecutionRequests()) {
        calls.add(new SamplingPrompt.ToolCall(call.id(), call.name(), call.arguments()));
      }
    }
    String used = response.modelName();
    return SamplingPrompt.reply(out.text(), calls, used != null && !used.isEmpty() ? used : model,
        stopReason(out, response.finishReason()));
  }

  private static String stopReason(AiMessage out, FinishReason finish) {
    if (out.hasToolExecutionRequests() || finish == FinishReason.TOOL_EXECUTION) {
      return "toolUse";
    }
    if (finish == FinishReason.LENGTH) {
      return "maxTokens";
    }
    return "endTurn";
  }

  /** A turn as LangChain4j messages: its tool results first (a message each), then its text and media. */
  private static List<ChatMessage> toMessages(SamplingPrompt.Turn turn) {
    List<ChatMessage> out = new ArrayList<>();
    for (SamplingPrompt.ToolResult r : turn.toolResults()) {
      out.add(ToolExecutionResultMessage.from(r.toolUseId(), "", r.text()));
    }
    String text = turn.text();
    if (turn.role() == SamplingPrompt.Role.ASSISTANT) {
      if (!turn.toolCalls().isEmpty()) {
        List<ToolExecutionRequest> calls = new ArrayList<>();
        for (SamplingPrompt.ToolCall c : turn.toolCalls()) {
          calls.add(ToolExecutionRequest.builder().id(c.id()).name(c.name()).arguments(c.argumentsJson()).build());
        }
        out.add(AiMessage.from(text, calls));
      } else if (!text.isEmpty()) {
        out.add(AiMessage.from(text));
      }
      return out;
    }
    List<Content> contents = new ArrayList<>();
    for (SamplingPrompt.Part part : turn.parts()) {
      if (part instanceof SamplingPrompt.Text t) {
        contents.add(TextContent.from(t.text()));
      } else if (part instanceof SamplingPrompt.Media m) {
        String data = Base64.getEncoder().encodeToString(m.data());
        contents.add(m.audio() ? AudioContent.from(data, m.mimeType()) : ImageContent.from(data, m.mimeType()));
      }
    }
    if (!contents.isEmpty()) {
      out.add(UserMessage.from(contents));
    }
    return out;
  }
}
