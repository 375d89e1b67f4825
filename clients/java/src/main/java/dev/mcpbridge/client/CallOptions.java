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
  private static final CallOptions NONE = new CallOptions(null, null, null, null, null, false, false);

  private final String callId;
  private final Map<String, ?> meta;
  private final Duration timeout;
  private final Duration taskTtl;
  private final RetryPolicy retry;
  private final boolean resume;
  private final boolean detach;

  private CallOptions(String callId, Map<String, ?> meta, Duration timeout, Duration taskTtl, RetryPolicy retry,
      boolean resume, boolean detach) {
    this.callId = callId;
    this.meta = meta;
    this.timeout = timeout;
    this.taskTtl = taskTtl;
    this.retry = retry;
    this.resume = resume;
    this.detach = detach;
  }

  /**
   * No options: a call id the client makes up ("call-" and a UUID), no _meta, the client's default timeout and
   * retry policy.
   */
  public static CallOptions none() {
    return NONE;
  }

  /**
   * The id the host gives the call, echoed as {@code ServerRequest.origin_call_id} (on requests the bridge can
   * tie to the call: input requests and pushes on the call's own HTTP response stream, not legacy pushes over
   * stdio or SSE) and on progress and log events, so requests can be matched to calls; unique among the
   * session's calls in flight. A tool call lost to UNAVAILABLE is made again under it ({@link RetryPolicy}).
   */
  public CallOptions withCallId(String callId) {
    return new CallOptions(callId, meta, timeout, taskTtl, retry, resume, detach);
  }

  /** MCP {@code _meta} to send with the call. */
  public CallOptions withMeta(Map<String, ?> meta) {
    return new CallOptions(callId, meta, timeout, taskTtl, retry, resume, detach);
  }

  /**
   * A deadline for the call; when it passes the call fails DEADLINE_EXCEEDED and the bridge cancels it upstream.
   * Null uses the client's default. A lost tool call is retried within it.
   */
  public CallOptions withTimeout(Duration timeout) {
    return new CallOptions(callId, meta, timeout, taskTtl, retry, resume, detach);
  }

  /** Ask the server to run a tool call as a task kept for {@code ttl} (2025-11-25 tasks). */
  public CallOptions withTask(Duration ttl) {
    return new CallOptions(callId, meta, timeout, ttl, retry, resume, detach);
  }

  /**
   * How this tool call is retried when it is lost to UNAVAILABLE, instead of the client's policy ({@link
   * McpBridgeClient.Builder#retryPolicy}); {@code RetryPolicy.disabled()} turns retries off for this call.
   */
  public CallOptions withRetry(RetryPolicy retry) {
    return new CallOptions(callId, meta, timeout, taskTtl, retry, resume, detach);
  }

  /**
   * Ask for the outcome of a tool call made before with {@link #withCallId the same call id} (e.g. by a process
   * that died) instead of calling the tool: the bridge returns that call's one outcome, or fails with {@link
   * McpBridgeException#outcomeUnknown()}. Needs the call id: a tool call without one throws
   * IllegalArgumentException.
   */
  public CallOptions withResume(boolean resume) {
    return new CallOptions(callId, meta, timeout, taskTtl, retry, resume, detach);
  }

  /**
   * Let the tool call run to its end on the bridge even if this call ends (its timeout, a dropped connection):
   * resume it later by {@link #withCallId its call id} ({@link #withResume}), or end it with {@link
   * McpSession#cancelCall} (docs/adr/0105-detached-calls.md). Needs the call id: a tool call without one throws
   * IllegalArgumentException.
   */
  public CallOptions withDetach(boolean detach) {
    return new CallOptions(callId, meta, timeout, taskTtl, retry, resume, detach);
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

  /** The retry policy of this call, or null for the client's. */
  public RetryPolicy retry() {
    return retry;
  }

  /** Whether the call runs on when the host's call ends. */
  public boolean detach() {
    return detach;
  }

  /** Whether the call asks for the outcome of an earlier call with its id. */
  public boolean resume() {
    return resume;
  }
}
