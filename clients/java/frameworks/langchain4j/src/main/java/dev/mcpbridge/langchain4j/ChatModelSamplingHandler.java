package dev.mcpbridge.langchain4j;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.data.message.AiMessage;
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
import dev.mcpbridge.v1.ToolChoiceMode;
import dev.mcpbridge.v1.ToolUseContent;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * Answers MCP {@code sampling/createMessage} with a LangChain4j {@link ChatModel}: messages (text, images, tool uses
 * and tool results), system prompt, max tokens, temperature and stop sequences go into a {@link ChatRequest}; the
 * server's model preferences pick the model name through the host's rule ({@link #modelRule}); the tools the
 * server offers become tool specifications (with its tool choice), and tool calls the model makes come back as
 * {@code tool_use} blocks with stop reason {@code toolUse}. Subclass it to answer elicitation and the rest too, or
 * give it to a toolbox as its handler. An optional {@link #review} hook sees (and may change or refuse) each
 * request before the model does.
 */
public class ChatModelSamplingHandler implements HostHandler {
  private final ChatModel chatModel;
  private volatile Function<ModelPreferences, String> modelRule = prefs -> null;
  private volatile UnaryOperator<CreateMessageRequest> review = UnaryOperator.identity();

  public ChatModelSamplingHandler(ChatModel chatModel) {
    this.chatModel = Objects.requireNonNull(chatModel, "chatModel");
  }

  /** The host's rule from model preferences to a model name; null keeps the chat model's default. */
  public ChatModelSamplingHandler modelRule(Function<ModelPreferences, String> rule) {
    this.modelRule = Objects.requireNonNull(rule, "rule");
    return this;
  }

  /** A hook run before each request goes to the model: returns the request to send, or throws to refuse. */
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
    List<ChatMessage> messages = new ArrayList<>();
    if (!request.getSystemPrompt().isEmpty()) {
      messages.add(SystemMessage.from(request.getSystemPrompt()));
    }
    for (SamplingMessage m : request.getMessagesList()) {
      messages.addAll(toMessages(m));
    }
    DefaultChatRequestParameters.Builder<?> p = ChatRequestParameters.builder();
    String model = modelRule.apply(request.getModelPreferences());
    if (model != null) {
      p.modelName(model);
    }
    if (request.getMaxTokens() > 0) {
      p.maxOutputTokens(request.getMaxTokens());
    }
    if (request.hasTemperature()) {
      p.temperature(request.getTemperature());
    }
    if (request.getStopSequencesCount() > 0) {
      p.stopSequences(List.copyOf(request.getStopSequencesList()));
    }
    ToolChoiceMode mode = request.hasToolChoice() ? request.getToolChoice().getMode()
        : ToolChoiceMode.TOOL_CHOICE_MODE_UNSPECIFIED;
    if (request.getToolsCount() > 0 && mode != ToolChoiceMode.TOOL_CHOICE_MODE_NONE) {
      List<ToolSpecification> specs = new ArrayList<>();
      for (Tool t : request.getToolsList()) {
        specs.add(ToolSpecification.builder().name(t.getName())
            .description(t.getDescription().isEmpty() ? t.getName() : t.getDescription())
            .parameters(JsonSchemas.toObjectSchema(Json.toMap(t.getInputSchema()))).build());
      }
      p.toolSpecifications(specs);
      if (mode == ToolChoiceMode.TOOL_CHOICE_MODE_REQUIRED) {
        p.toolChoice(ToolChoice.REQUIRED);
      } else if (mode == ToolChoiceMode.TOOL_CHOICE_MODE_AUTO) {
        p.toolChoice(ToolChoice.AUTO);
      }
    }
    ChatResponse response = chatModel.chat(ChatRequest.builder().messages(messages).parameters(p.build()).build());
    AiMessage out = response.aiMessage();
    CreateMessageResult.Builder result = CreateMessageResult.newBuilder().setRole(Role.ROLE_ASSISTANT);
    if (out.text() != null && !out.text().isEmpty()) {
      result.addContent(Mcp.textBlock(out.text()));
    }
    if (out.hasToolExecutionRequests()) {
      for (ToolExecutionRequest call : out.toolExecutionRequests()) {
        String args = call.arguments() == null || call.arguments().isBlank() ? "{}" : call.arguments();
        result.addContent(ContentBlock.newBuilder().setToolUse(ToolUseContent.newBuilder()
            .setId(call.id() == null ? "" : call.id()).setName(call.name()).setInput(Json.parseStruct(args))));
      }
    }
    if (result.getContentCount() == 0) {
      result.addContent(Mcp.textBlock(""));
    }
    String used = response.modelName();
    result.setModel(used != null && !used.isEmpty() ? used : model != null ? model : "unknown");
    result.setStopReason(stopReason(out, response.finishReason()));
    return result.build();
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

  private static List<ChatMessage> toMessages(SamplingMessage m) {
    List<ChatMessage> out = new ArrayList<>();
    List<Content> contents = new ArrayList<>();
    StringBuilder text = new StringBuilder();
    List<ToolExecutionRequest> calls = new ArrayList<>();
    for (ContentBlock b : m.getContentList()) {
      switch (b.getContentCase()) {
        case TEXT:
          contents.add(TextContent.from(b.getText().getText()));
          text.append(text.length() > 0 ? "\n" : "").append(b.getText().getText());
          break;
        case IMAGE:
          contents.add(ImageContent.from(Base64.getEncoder().encodeToString(b.getImage().getData().toByteArray()),
              b.getImage().getMimeType()));
          break;
        case TOOL_USE:
          calls.add(ToolExecutionRequest.builder().id(b.getToolUse().getId()).name(b.getToolUse().getName())
              .arguments(McpContent.json(Json.toMap(b.getToolUse().getInput()))).build());
          break;
        case TOOL_RESULT:
          String data = b.getToolResult().getContentList().stream().allMatch(ContentBlock::hasText)
              ? Mcp.text(b.getToolResult().getContentList())
              : McpContent.toJson(b.getToolResult().getContentList());
          out.add(ToolExecutionResultMessage.from(b.getToolResult().getToolUseId(), "", data));
          break;
        default:
          String j = McpContent.json(McpContent.toMap(b));
          contents.add(TextContent.from(j));
          text.append(text.length() > 0 ? "\n" : "").append(j);
      }
    }
    if (m.getRole() == Role.ROLE_ASSISTANT) {
      if (!calls.isEmpty()) {
        out.add(AiMessage.from(text.toString(), calls));
      } else if (text.length() > 0) {
        out.add(AiMessage.from(text.toString()));
      }
    } else if (!contents.isEmpty()) {
      out.add(UserMessage.from(contents));
    }
    return out;
  }
}
