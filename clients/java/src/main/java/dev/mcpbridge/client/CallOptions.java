package dev.mcpbridge.client;

import java.time.Duration;
import java.util.Map;

/**
 * Options of one call that can cause server requests (CallTool, StreamCallTool, GetPrompt, ReadResource): the
 * host's call id, MCP {@code _meta}, a timeout, and for tools a task TTL. Immutable; {@code with...} returns a
 * copy.
 *
 * <pre>{@code
 * session.callTool("long_operation", args, CallOptions.none().withCallId("job-7").withTimeout(Duration.ofMinutes(2)));
 * }</pre>
 */
public final class CallOptions {
  private static final CallOptions NONE = new CallOptions(null, null, null, null);

  private final String callId;
  private final Map<String, ?> meta;
  private final Duration timeout;
  private final Duration taskTtl;

  private CallOptions(String callId, Map<String, ?> meta, Duration timeout, Duration taskTtl) {
    this.callId = callId;
    this.meta = meta;
    this.timeout = timeout;
    this.taskTtl = taskTtl;
  }

  /** No options: the bridge picks the call id, no _meta, the client's default timeout. */
  public static CallOptions none() {
    return NONE;
  }

  /**
   * The id the host gives the call, echoed as {@code ServerRequest.origin_call_id} (on requests the bridge can
   * tie to the call: input requests and pushes on the call's own HTTP response stream, not legacy pushes over
   * stdio or SSE) and on progress and log events, so requests can be matched to calls; unique among the
   * session's calls in flight.
   */
  public CallOptions withCallId(String callId) {
    return new CallOptions(callId, meta, timeout, taskTtl);
  }

  /** MCP {@code _meta} to send with the call. */
  public CallOptions withMeta(Map<String, ?> meta) {
    return new CallOptions(callId, meta, timeout, taskTtl);
  }

  /**
   * A deadline for the call; when it passes the call fails DEADLINE_EXCEEDED and the bridge cancels it upstream.
   * Null uses the client's default.
   */
  public CallOptions withTimeout(Duration timeout) {
    return new CallOptions(callId, meta, timeout, taskTtl);
  }

  /** Ask the server to run a tool call as a task kept for {@code ttl} (2025-11-25 tasks). */
  public CallOptions withTask(Duration ttl) {
    return new CallOptions(callId, meta, timeout, ttl);
  }

  /** The call id, or null. */
  public String callId() {
    return callId;
  }

  /** The _meta, or null. */
  public Map<String, ?> meta() {
    return meta;
  }

  /** The timeout, or null. */
  public Duration timeout() {
    return timeout;
  }

  /** The task TTL, or null (not a task). */
  public Duration taskTtl() {
    return taskTtl;
  }
}
