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
    return json(out);
  }

  /**
   * JSON text of Java values (maps, lists, strings, numbers, booleans, null), compact and without the HTML
   * escaping of protobuf's printer ({@code =} stays {@code =}): what a model reads should be what the tool said.
   */
  public static String json(Object o) {
    StringBuilder sb = new StringBuilder();
    write(sb, o);
    return sb.toString();
  }

  @SuppressWarnings("unchecked")
  private static void write(StringBuilder sb, Object o) {
    if (o == null) {
      sb.append("null");
    } else if (o instanceof CharSequence) {
      quote(sb, o.toString());
    } else if (o instanceof Double || o instanceof Float) {
      double d = ((Number) o).doubleValue();
      if (d == Math.rint(d) && !Double.isInfinite(d) && Math.abs(d) < 1e15) {
        sb.append((long) d);
      } else if (Double.isNaN(d) || Double.isInfinite(d)) {
        sb.append("null");
      } else {
        sb.append(d);
      }
    } else if (o instanceof Number || o instanceof Boolean) {
      sb.append(o);
    } else if (o instanceof Map) {
      sb.append('{');
      boolean first = true;
      for (Map.Entry<Object, Object> e : ((Map<Object, Object>) o).entrySet()) {
        if (!first) {
          sb.append(',');
        }
        first = false;
        quote(sb, String.valueOf(e.getKey()));
        sb.append(':');
        write(sb, e.getValue());
      }
      sb.append('}');
    } else if (o instanceof Iterable) {
      sb.append('[');
      boolean first = true;
      for (Object x : (Iterable<Object>) o) {
        if (!first) {
          sb.append(',');
        }
        first = false;
        write(sb, x);
      }
      sb.append(']');
    } else {
      quote(sb, o.toString());
    }
  }

  private static void quote(StringBuilder sb, String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"':
          sb.append("\\\"");
          break;
        case '\\':
          sb.append("\\\\");
          break;
        case '\n':
          sb.append("\\n");
          break;
        case '\r':
          sb.append("\\r");
          break;
        case '\t':
          sb.append("\\t");
          break;
        default:
          if (c < 0x20) {
            sb.append(String.format("\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
      }
    }
    sb.append('"');
  }

  /**
   * What a model reads of a tool result, as the MCP adapters of agent frameworks give it: the text when the result
   * is text only, else the MCP JSON array of its content; the structured content as JSON when there is no content.
   */
  public static String forModel(CallToolResult result) {
    List<ContentBlock> content = result.getContentList();
    if (content.isEmpty() && result.hasStructuredContent()) {
      return json(Json.toJava(result.getStructuredContent()));
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
