package dev.mcpbridge.client;

import dev.mcpbridge.v1.ApprovalPending;
import dev.mcpbridge.v1.LoggingMessage;
import dev.mcpbridge.v1.ProgressNotification;
import dev.mcpbridge.v1.RequestEnded;
import dev.mcpbridge.v1.ServerRequest;

/**
 * Receives what a streamed tool call ({@link McpSession#callToolStreaming}) reports before its result. Methods
 * run on a gRPC thread in order; keep them short. Server requests shown here are answered by the session's
 * {@link HostHandler} (or with {@link McpSession#respond}); this listener only observes them.
 */
public interface ToolCallListener {
  /** Progress reported by the server for this call. */
  default void onProgress(ProgressNotification progress) {}

  /** A log message the server sent in the context of this call. */
  default void onLog(LoggingMessage log) {}

  /** A request the server made of the host because of this call. */
  default void onServerRequest(ServerRequest request) {}

  /** A server request of this call ended (also the approval request of {@link #onApprovalPending}). */
  default void onRequestEnded(RequestEnded ended) {}

  /**
   * The call waits for approval (the server's policy names its tool): which rule, who may approve, when it
   * expires, and what the approvers are warned of. Nothing was sent upstream yet; {@link #onRequestEnded} with the
   * same request id follows, then the result, or the call fails with {@link McpBridgeException#approvalDenied()}
   * (and {@link McpBridgeException#approverReason()}) or {@link McpBridgeException#approvalExpired()}.
   */
  default void onApprovalPending(ApprovalPending pending) {}
}
