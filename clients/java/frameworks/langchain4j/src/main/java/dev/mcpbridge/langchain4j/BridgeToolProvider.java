package dev.mcpbridge.langchain4j;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.exception.ToolExecutionException;
import dev.langchain4j.service.tool.ToolExecutor;
import dev.langchain4j.service.tool.ToolProvider;
import dev.langchain4j.service.tool.ToolProviderRequest;
import dev.langchain4j.service.tool.ToolProviderResult;
import dev.mcpbridge.client.DetachedCalls;
import dev.mcpbridge.client.McpBridgeException;
import dev.mcpbridge.client.McpContent;
import dev.mcpbridge.client.McpSession;
import dev.mcpbridge.client.McpToolbox;
import dev.mcpbridge.client.ToolboxTool;
import dev.mcpbridge.v1.CallToolResult;
import java.util.function.Predicate;

/**
 * The tools of bridge sessions as a LangChain4j {@link ToolProvider}, in the convention of langchain4j-mcp's
 * {@code McpToolProvider}: {@code AiServices.builder(Assistant.class).chatModel(model).toolProvider(provider)}.
 * Each tool's specification has the toolbox's name for it, the MCP description and the MCP input schema as
 * parameters. A call returns the tool's text (the MCP JSON of its content when it is not text only); a tool error
 * ({@code isError}) and a refusal by the bridge (an approval denied or expired, a policy denial) throw
 * {@link ToolExecutionException} with the reason, which the AI service hands to the model as the tool's answer.
 * The provider is dynamic: each request reads the toolbox's current list, so {@code tools/list_changed} shows.
 * {@link #detached} makes every call outlive a cut agent run (docs/adr/0105-detached-calls.md).
 */
public final class BridgeToolProvider implements ToolProvider {
  private final McpToolbox toolbox;
  private final Predicate<ToolboxTool> filter;
  private final DetachedCalls detached;

  private BridgeToolProvider(McpToolbox toolbox, Predicate<ToolboxTool> filter, DetachedCalls detached) {
    this.toolbox = toolbox;
    this.filter = filter;
    this.detached = detached;
  }

  /** The tools of a toolbox (several servers, names prefixed as the toolbox names them). */
  public static BridgeToolProvider of(McpToolbox toolbox) {
    return new BridgeToolProvider(toolbox, t -> true, null);
  }

  /** The tools of one or more sessions the host opened, under their own names. */
  public static BridgeToolProvider of(McpSession... sessions) {
    return of(McpToolbox.of(sessions));
  }

  /** Only the tools {@code filter} accepts (as McpToolProvider's filter does). */
  public BridgeToolProvider filter(Predicate<ToolboxTool> filter) {
    return new BridgeToolProvider(toolbox, this.filter.and(filter), detached);
  }

  /**
   * These tools with every call detached and listed in {@code calls}: a long-running tool goes on when the agent's
   * stream is cut (its thread interrupted, a deadline), and the host resumes or cancels it through {@code calls}.
   */
  public BridgeToolProvider detached(DetachedCalls calls) {
    return new BridgeToolProvider(toolbox, filter, java.util.Objects.requireNonNull(calls, "calls"));
  }

  public McpToolbox toolbox() {
    return toolbox;
  }

  @Override
  public boolean isDynamic() {
    return true;
  }

  @Override
  public ToolProviderResult provideTools(ToolProviderRequest request) {
    ToolProviderResult.Builder b = ToolProviderResult.builder();
    for (ToolboxTool t : toolbox.tools()) {
      if (!filter.test(t)) {
        continue;
      }
      b.add(specification(t), executor(t));
    }
    return b.build();
  }

  /** The LangChain4j specification of a toolbox tool. */
  public static ToolSpecification specification(ToolboxTool t) {
    return ToolSpecification.builder()
        .name(t.name())
        .description(t.description().isEmpty() ? t.tool().getName() : t.description())
        .parameters(JsonSchemas.toObjectSchema(t.inputSchema()))
        .build();
  }

  private ToolExecutor executor(ToolboxTool t) {
    return (ToolExecutionRequest req, Object memoryId) -> {
      CallToolResult result;
      try {
        result = detached != null ? detached.callJson(toolbox, t.name(), req.arguments())
            : toolbox.callToolJson(t.name(), req.arguments());
      } catch (McpBridgeException e) {
        String why = e.approvalDenied() ? "the call was denied: "
            : e.approvalExpired() ? "nobody approved the call in time: " : "the bridge refused the call: ";
        throw new ToolExecutionException(why + e.getMessage(), e);
      }
      String text = McpContent.forModel(result);
      if (result.getIsError()) {
        throw new ToolExecutionException(text);
      }
      return text;
    };
  }
}
