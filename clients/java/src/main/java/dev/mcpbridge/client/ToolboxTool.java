package dev.mcpbridge.client;

import dev.mcpbridge.v1.Tool;
import java.util.Map;

/**
 * One tool of a {@link McpToolbox}: the name the model sees, and where calls go (the server, its session, the
 * MCP tool).
 */
public final class ToolboxTool {
  private final String name;
  private final String server;
  private final McpSession session;
  private final Tool tool;

  ToolboxTool(String name, String server, McpSession session, Tool tool) {
    this.name = name;
    this.server = server;
    this.session = session;
    this.tool = tool;
  }

  /** The name for the model: unique in the toolbox, matching {@code ^[a-zA-Z0-9_-]{1,64}$}. */
  public String name() {
    return name;
  }

  /** The configured server the tool belongs to. */
  public String server() {
    return server;
  }

  /** The session calls go to. */
  public McpSession session() {
    return session;
  }

  /** The MCP tool as its server lists it (its own name, description, input schema, annotations). */
  public Tool tool() {
    return tool;
  }

  /** The tool's description ("" if it has none). */
  public String description() {
    return tool.getDescription();
  }

  /** The tool's input schema as JSON, {@code {"type":"object"}} if the server gave none. */
  public String inputSchemaJson() {
    if (!tool.hasInputSchema() || tool.getInputSchema().getFieldsCount() == 0) {
      return "{\"type\":\"object\",\"properties\":{}}";
    }
    return McpContent.json(Json.toMap(tool.getInputSchema()));
  }

  /** The tool's input schema as Java values. */
  public Map<String, Object> inputSchema() {
    return Json.toMap(tool.getInputSchema());
  }

  @Override
  public String toString() {
    return name + " (" + server + "/" + tool.getName() + ")";
  }
}
