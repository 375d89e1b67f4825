package dev.mcpbridge.springai;

import dev.mcpbridge.client.McpSession;
import dev.mcpbridge.client.McpToolbox;
import dev.mcpbridge.client.ToolboxTool;
import java.util.List;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.ToolCallbackProvider;

/**
 * The tools of bridge sessions as a Spring AI {@link ToolCallbackProvider}, for {@code ChatClient.builder(model)
 * .defaultToolCallbacks(provider)} or {@code chatClient.prompt().toolCallbacks(provider)}. Each
 * {@link #getToolCallbacks()} reads the toolbox's current list, so a server's {@code tools/list_changed} shows on
 * the next prompt.
 */
public final class BridgeToolCallbackProvider implements ToolCallbackProvider {
  private final McpToolbox toolbox;

  private BridgeToolCallbackProvider(McpToolbox toolbox) {
    this.toolbox = toolbox;
  }

  /** The tools of a toolbox (several servers, names prefixed as the toolbox names them). */
  public static BridgeToolCallbackProvider of(McpToolbox toolbox) {
    return new BridgeToolCallbackProvider(toolbox);
  }

  /** The tools of one or more sessions the host opened, under their own names. */
  public static BridgeToolCallbackProvider of(McpSession... sessions) {
    return new BridgeToolCallbackProvider(McpToolbox.of(sessions));
  }

  public McpToolbox toolbox() {
    return toolbox;
  }

  @Override
  public ToolCallback[] getToolCallbacks() {
    List<ToolboxTool> tools = toolbox.tools();
    ToolCallback[] out = new ToolCallback[tools.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = new BridgeToolCallback(toolbox, tools.get(i));
    }
    return out;
  }
}
