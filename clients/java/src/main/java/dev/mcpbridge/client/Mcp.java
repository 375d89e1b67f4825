package dev.mcpbridge.client;

import dev.mcpbridge.v1.ApprovalDecision;
import dev.mcpbridge.v1.CallToolResult;
import dev.mcpbridge.v1.ContentBlock;
import dev.mcpbridge.v1.CreateMessageRequest;
import dev.mcpbridge.v1.CreateMessageResult;
import dev.mcpbridge.v1.ElicitAction;
import dev.mcpbridge.v1.ElicitResult;
import dev.mcpbridge.v1.Event;
import dev.mcpbridge.v1.ReadResourceResponse;
import dev.mcpbridge.v1.ResourceContents;
import dev.mcpbridge.v1.Role;
import dev.mcpbridge.v1.Root;
import dev.mcpbridge.v1.SamplingMessage;
import dev.mcpbridge.v1.TextContent;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** Small helpers for the MCP messages a host reads and writes most: text content, answers, roots. */
public final class Mcp {
  private Mcp() {}

  /** The text blocks of a tool result, joined with newlines ("" if it has none). */
  public static String text(CallToolResult result) {
    return text(result.getContentList());
  }

  /** The text blocks of a list of content blocks, joined with newlines. */
  public static String text(List<ContentBlock> content) {
    return content.stream()
        .filter(ContentBlock::hasText)
        .map(b -> b.getText().getText())
        .collect(Collectors.joining("\n"));
  }

  /** The text contents of a read resource, joined with newlines. */
  public static String text(ReadResourceResponse response) {
    return response.getContentsList().stream()
        .filter(ResourceContents::hasText)
        .map(ResourceContents::getText)
        .collect(Collectors.joining("\n"));
  }

  /** The text of the last user message of a sampling request ("" if none), a common input for a model. */
  public static String lastUserText(CreateMessageRequest request) {
    String text = "";
    for (SamplingMessage m : request.getMessagesList()) {
      if (m.getRole() == Role.ROLE_USER) {
        text = text(m.getContentList());
      }
    }
    return text;
  }

  /**
   * The structured content of a tool result as Java values (usually a {@code Map<String, Object>}), or null if
   * it has none.
   */
  public static Object structured(CallToolResult result) {
    return result.hasStructuredContent() ? Json.toJava(result.getStructuredContent()) : null;
  }

  /** The structured content of a tool result as a map; empty if it is absent or not an object. */
  @SuppressWarnings("unchecked")
  public static Map<String, Object> structuredMap(CallToolResult result) {
    Object o = structured(result);
    return o instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
  }

  /** An approval of a tool call that needs one; the library adds the request's arguments_sha256. */
  public static ApprovalDecision approve(String reason) {
    return ApprovalDecision.newBuilder().setApprove(true).setReason(reason == null ? "" : reason).build();
  }

  /** A denial of a tool call that needs approval: the caller gets PERMISSION_DENIED APPROVAL_DENIED with the reason. */
  public static ApprovalDecision deny(String reason) {
    return ApprovalDecision.newBuilder().setApprove(false).setReason(reason == null ? "" : reason).build();
  }

  /** A text content block. */
  public static ContentBlock textBlock(String text) {
    return ContentBlock.newBuilder().setText(TextContent.newBuilder().setText(text)).build();
  }

  /** A sampling answer: an assistant text message from {@code model}, stop reason "endTurn". */
  public static CreateMessageResult samplingReply(String model, String text) {
    return CreateMessageResult.newBuilder()
        .setRole(Role.ROLE_ASSISTANT)
        .addContent(textBlock(text))
        .setModel(model)
        .setStopReason("endTurn")
        .build();
  }

  /** An elicitation answer: the user accepted with these values (matching the requested schema). */
  public static ElicitResult accept(Map<String, ?> content) {
    return ElicitResult.newBuilder().setAction(ElicitAction.ELICIT_ACTION_ACCEPT).setContent(Json.toStruct(content)).build();
  }

  /** An elicitation answer without content: accept (URL mode: the user agreed to open the URL). */
  public static ElicitResult accept() {
    return ElicitResult.newBuilder().setAction(ElicitAction.ELICIT_ACTION_ACCEPT).build();
  }

  /** An elicitation answer: the user explicitly declined. */
  public static ElicitResult decline() {
    return ElicitResult.newBuilder().setAction(ElicitAction.ELICIT_ACTION_DECLINE).build();
  }

  /** An elicitation answer: the user dismissed the request without choosing. */
  public static ElicitResult cancel() {
    return ElicitResult.newBuilder().setAction(ElicitAction.ELICIT_ACTION_CANCEL).build();
  }

  /** A root with a name. */
  public static Root root(String uri, String name) {
    Root.Builder b = Root.newBuilder().setUri(uri);
    if (name != null) {
      b.setName(name);
    }
    return b.build();
  }

  /**
   * MCP's method name for an event that is a notification ("notifications/progress", …), or null for the
   * bridge's own events (server requests, request endings, session state, dropped events).
   */
  public static String notificationMethod(Event event) {
    switch (event.getPayloadCase()) {
      case PROGRESS:
        return "notifications/progress";
      case LOG:
        return "notifications/message";
      case TOOLS_LIST_CHANGED:
        return "notifications/tools/list_changed";
      case PROMPTS_LIST_CHANGED:
        return "notifications/prompts/list_changed";
      case RESOURCES_LIST_CHANGED:
        return "notifications/resources/list_changed";
      case RESOURCE_UPDATED:
        return "notifications/resources/updated";
      case ELICITATION_COMPLETE:
        return "notifications/elicitation/complete";
      case TASK_STATUS:
        return "notifications/tasks/status";
      case CANCELLED:
        return "notifications/cancelled";
      default:
        return null;
    }
  }
}
