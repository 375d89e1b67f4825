package dev.mcpbridge.springai;

import dev.mcpbridge.client.DetachedCalls;
import dev.mcpbridge.client.McpBridgeException;
import dev.mcpbridge.client.McpContent;
import dev.mcpbridge.client.McpToolbox;
import dev.mcpbridge.client.ToolboxTool;
import dev.mcpbridge.v1.CallToolResult;
import org.springframework.ai.chat.model.ToolContext;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.definition.ToolDefinition;
import org.springframework.ai.tool.execution.ToolExecutionException;

/**
 * One bridge tool as a Spring AI {@link ToolCallback}: the definition carries the toolbox's name for it, the MCP
 * description and the MCP input schema; a call goes through the bridge to the tool's session. As Spring AI's own
 * MCP tool callbacks do, the result is the JSON array of the MCP content blocks, and a tool error ({@code isError})
 * throws {@link ToolExecutionException}; so does a refusal by the bridge (an approval denied or expired, a policy
 * denial), whose message carries the reason, so that Spring AI hands it to the model as the tool's answer. With
 * {@link DetachedCalls}, each call is detached and listed there, so that it goes on when the agent's run is cut.
 */
public final class BridgeToolCallback implements ToolCallback {
  private final McpToolbox toolbox;
  private final ToolboxTool tool;
  private final ToolDefinition definition;
  private final DetachedCalls detached;

  public BridgeToolCallback(McpToolbox toolbox, ToolboxTool tool) {
    this(toolbox, tool, null);
  }

  /** A callback whose calls are detached and listed in {@code detached} (null: calls end with the agent's run). */
  public BridgeToolCallback(McpToolbox toolbox, ToolboxTool tool, DetachedCalls detached) {
    this.toolbox = toolbox;
    this.tool = tool;
    this.detached = detached;
    this.definition = ToolDefinition.builder()
        .name(tool.name())
        .description(tool.description().isEmpty() ? tool.tool().getName() : tool.description())
        .inputSchema(tool.inputSchemaJson())
        .build();
  }

  @Override
  public ToolDefinition getToolDefinition() {
    return definition;
  }

  /** The toolbox tool this callback calls. */
  public ToolboxTool tool() {
    return tool;
  }

  @Override
  public String call(String toolInput) {
    return call(toolInput, null);
  }

  @Override
  public String call(String toolInput, ToolContext toolContext) {
    CallToolResult result;
    try {
      result = detached != null ? detached.callJson(toolbox, tool.name(), toolInput)
          : toolbox.callToolJson(tool.name(), toolInput);
    } catch (McpBridgeException e) {
      String why = e.approvalDenied() ? "the call was denied: "
          : e.approvalExpired() ? "nobody approved the call in time: " : "the bridge refused the call: ";
      throw new ToolExecutionException(definition, new IllegalStateException(why + e.getMessage(), e));
    }
    if (result.getIsError()) {
      throw new ToolExecutionException(definition,
          new IllegalStateException("Error calling tool: " + McpContent.toJson(result)));
    }
    return McpContent.toJson(result);
  }

  @Override
  public String toString() {
    return "BridgeToolCallback[" + tool + "]";
  }
}
