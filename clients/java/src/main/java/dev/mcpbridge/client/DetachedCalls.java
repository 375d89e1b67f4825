package dev.mcpbridge.client;

import dev.mcpbridge.v1.CallToolResult;
import io.grpc.Status;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Tool calls that outlive the agent run that made them (docs/adr/0105-detached-calls.md), for the framework
 * adapters (Spring AI's {@code BridgeToolCallbackProvider.detached}, LangChain4j's {@code
 * BridgeToolProvider.detached}): each call they make through {@link #callJson} has a call id of its own and is
 * detached, so that a long-running tool goes on when the agent's stream is cut (the calling thread interrupted,
 * the call's deadline passed). {@link #running} lists the calls whose host side ended before the tool did;
 * {@link #resume} joins one and returns its result (its outcome, once it has ended); {@link #cancel} ends one
 * upstream. A call that returned, or failed with the bridge's or the tool's own error, leaves the list.
 *
 * <p>Thread-safe: one instance may serve every tool of an agent and the host's code that resumes or cancels.
 */
public final class DetachedCalls {
  /** A detached call: its id, the tool's name in the toolbox, the MCP tool's name and its session. */
  public record Call(String callId, String tool, String mcpName, McpSession session) {}

  private final Map<String, Call> calls = new LinkedHashMap<>(); // guarded by itself

  /**
   * Calls the tool the toolbox names {@code name} with arguments as a JSON object, detached, and lists it until
   * it ends.
   *
   * @throws IllegalArgumentException if the toolbox has no tool of that name
   */
  public CallToolResult callJson(McpToolbox toolbox, String name, String argumentsJson) {
    ToolboxTool t = toolbox.tool(name);
    if (t == null) {
      throw new IllegalArgumentException("no tool named " + name + " in this toolbox");
    }
    String json = argumentsJson == null || argumentsJson.isBlank() ? "{}" : argumentsJson;
    Call c = new Call(Retrying.newCallId(), name, t.tool().getName(), t.session());
    synchronized (calls) {
      calls.put(c.callId(), c);
    }
    return run(c, json, false, null);
  }

  /** The calls in flight or cut off from their agent run, oldest first. */
  public List<Call> running() {
    synchronized (calls) {
      return List.copyOf(calls.values());
    }
  }

  /** Joins the call {@code callId} and returns its result, or throws its error; the client's timeout bounds it. */
  public CallToolResult resume(String callId) {
    return resume(callId, null);
  }

  /**
   * Joins the call {@code callId} within {@code timeout} (null: the client's default) and returns its result, or
   * throws its error. A resume cut off in turn leaves the call listed.
   *
   * @throws IllegalArgumentException for a call not listed
   */
  public CallToolResult resume(String callId, Duration timeout) {
    return run(require(callId), "{}", true, timeout);
  }

  /**
   * Ends the call {@code callId} upstream, as the agent's own cancellation would have without detach; it leaves
   * the list. A call that has already ended fails NOT_FOUND ({@code CALL_NOT_FOUND}) and stays listed, so that
   * {@link #resume} can still read its outcome.
   */
  public void cancel(String callId) {
    Call c = require(callId);
    c.session().cancelCall(callId);
    forget(callId);
  }

  private CallToolResult run(Call c, String json, boolean resume, Duration timeout) {
    CallOptions o = CallOptions.none().withCallId(c.callId()).withDetach(true).withResume(resume);
    if (timeout != null) {
      o = o.withTimeout(timeout);
    }
    CallToolResult result;
    try {
      result = Rpc.await(c.session().callToolAsync(c.mcpName(), Json.parseStruct(json), o)).getResult();
    } catch (McpBridgeException e) {
      if (!cut(e)) {
        forget(c.callId());
      }
      throw e;
    } catch (RuntimeException e) {
      forget(c.callId());
      throw e;
    }
    forget(c.callId());
    return result;
  }

  /**
   * Whether {@code e} ended only the host's side of a call (an interrupt, a cancellation, a deadline), so that a
   * detached call goes on in the bridge; an approval that expired is an outcome, not a cut.
   */
  static boolean cut(McpBridgeException e) {
    return !e.approvalExpired()
        && (e.code() == Status.Code.CANCELLED || e.code() == Status.Code.DEADLINE_EXCEEDED);
  }

  private Call require(String callId) {
    synchronized (calls) {
      Call c = calls.get(callId);
      if (c == null) {
        throw new IllegalArgumentException("no detached call " + callId);
      }
      return c;
    }
  }

  private void forget(String callId) {
    synchronized (calls) {
      calls.remove(callId);
    }
  }
}
