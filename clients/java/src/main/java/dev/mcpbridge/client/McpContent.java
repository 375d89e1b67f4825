package dev.mcpbridge.client;

import dev.mcpbridge.v1.CallToolResult;
import dev.mcpbridge.v1.ContentBlock;
import dev.mcpbridge.v1.ResourceContents;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Content blocks in MCP's own JSON shape ({@code {"type":"text","text":…}}, {@code {"type":"image","data":…,
 * "mimeType":…}}, …), the form agent frameworks hand a tool's result to a model in. Images and audio keep their
 * base64 data.
 */
public final class McpContent {
  private McpContent() {}

  /** The content of a tool result as an MCP JSON array, e.g. {@code [{"type":"text","text":"2 + 3 = 5"}]}. */
  public static String toJson(CallToolResult result) {
    return toJson(result.getContentList());
  }

  /** Content blocks as an MCP JSON array. */
  public static String toJson(List<ContentBlock> content) {
    List<Object> out = new ArrayList<>();
    for (ContentBlock b : content) {
      out.add(toMap(b));
    }
    return Json.toJson(Json.toValue(out));
  }

  /**
   * What a model reads of a tool result, as the MCP adapters of agent frameworks give it: the text when the result
   * is text only, else the MCP JSON array of its content; the structured content as JSON when there is no content.
   */
  public static String forModel(CallToolResult result) {
    List<ContentBlock> content = result.getContentList();
    if (content.isEmpty() && result.hasStructuredContent()) {
      return Json.toJson(result.getStructuredContent());
    }
    if (!content.isEmpty() && content.stream().allMatch(ContentBlock::hasText)) {
      return Mcp.text(content);
    }
    return toJson(content);
  }

  /** One content block as MCP JSON values. */
  public static Map<String, Object> toMap(ContentBlock b) {
    Map<String, Object> m = new LinkedHashMap<>();
    switch (b.getContentCase()) {
      case TEXT:
        m.put("type", "text");
        m.put("text", b.getText().getText());
        break;
      case IMAGE:
        m.put("type", "image");
        m.put("data", Base64.getEncoder().encodeToString(b.getImage().getData().toByteArray()));
        m.put("mimeType", b.getImage().getMimeType());
        break;
      case AUDIO:
        m.put("type", "audio");
        m.put("data", Base64.getEncoder().encodeToString(b.getAudio().getData().toByteArray()));
        m.put("mimeType", b.getAudio().getMimeType());
        break;
      case RESOURCE_LINK:
        m.put("type", "resource_link");
        m.put("uri", b.getResourceLink().getUri());
        m.put("name", b.getResourceLink().getName());
        if (!b.getResourceLink().getDescription().isEmpty()) {
          m.put("description", b.getResourceLink().getDescription());
        }
        if (!b.getResourceLink().getMimeType().isEmpty()) {
          m.put("mimeType", b.getResourceLink().getMimeType());
        }
        break;
      case RESOURCE:
        ResourceContents r = b.getResource().getResource();
        Map<String, Object> rm = new LinkedHashMap<>();
        rm.put("uri", r.getUri());
        if (!r.getMimeType().isEmpty()) {
          rm.put("mimeType", r.getMimeType());
        }
        if (r.hasBlob()) {
          rm.put("blob", Base64.getEncoder().encodeToString(r.getBlob().toByteArray()));
        } else {
          rm.put("text", r.getText());
        }
        m.put("type", "resource");
        m.put("resource", rm);
        break;
      case TOOL_USE:
        m.put("type", "tool_use");
        m.put("id", b.getToolUse().getId());
        m.put("name", b.getToolUse().getName());
        m.put("input", Json.toMap(b.getToolUse().getInput()));
        break;
      case TOOL_RESULT:
        List<Object> inner = new ArrayList<>();
        for (ContentBlock c : b.getToolResult().getContentList()) {
          inner.add(toMap(c));
        }
        m.put("type", "tool_result");
        m.put("toolUseId", b.getToolResult().getToolUseId());
        m.put("content", inner);
        if (b.getToolResult().getIsError()) {
          m.put("isError", true);
        }
        break;
      default:
        m.put("type", "unknown");
    }
    return m;
  }
}
