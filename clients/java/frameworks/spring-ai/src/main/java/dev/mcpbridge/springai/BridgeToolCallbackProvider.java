package dev.mcpbridge.springai;

import dev.mcpbridge.client.DetachedCalls;
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
 * the next prompt. {@link #detached} makes every call outlive a cut agent run (docs/adr/0105-detached-calls.md).
 */
public final class BridgeToolCallbackProvider implements ToolCallbackProvider {
  private final McpToolbox toolbox;
  private final DetachedCalls detached;

  private BridgeToolCallbackProvider(McpToolbox toolbox, DetachedCalls detached) {
    this.toolbox = toolbox;
    this.detached = detached;
  }

  /** The tools of a toolbox (several servers, names prefixed as the toolbox names them). */
  public static BridgeToolCallbackProvider of(McpToolbox toolbox) {
    return new BridgeToolCallbackProvider(toolbox, null);
  }

  /** The tools of one or more sessions the host opened, under their own names. */
  public static BridgeToolCallbackProvider of(McpSession... sessions) {
    return new BridgeToolCallbackProvider(McpToolbox.of(sessions), null);
  }

  /**
   * These tools with every call detached and listed in {@code calls}: a long-running tool goes on when the agent's
   * stream is cut (its thread interrupted, a deadline), and the host resumes or cancels it through {@code calls}.
   */
  public BridgeToolCallbackProvider detached(DetachedCalls calls) {
    return new BridgeToolCallbackProvider(toolbox, java.util.Objects.requireNonNull(calls, "calls"));
  }

  public McpToolbox toolbox() {
    return toolbox;
  }

  @Override
  public ToolCallback[] getToolCallbacks() {
    List<ToolboxTool> tools = toolbox.tools();
    ToolCallback[] out = new ToolCallback[tools.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = new BridgeToolCallback(toolbox, tools.get(i), detached);
    }
    return out;
  }
}
