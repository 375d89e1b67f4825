package dev.mcpbridge.client;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.BadRequest;
import com.google.rpc.ErrorInfo;
import com.google.rpc.RetryInfo;
import dev.mcpbridge.v1.Reason;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * A call to the bridge failed: the gRPC status, and what the bridge said about it. When an upstream MCP server
 * answered with a JSON-RPC error, {@link #jsonRpcCode()} and {@link #errorInfo()} carry it (the bridge maps
 * invalid params to INVALID_ARGUMENT, method not found to UNIMPLEMENTED, resource not found to NOT_FOUND, an
 * unreachable server to UNAVAILABLE). Bad input from the host carries {@link #fieldViolations()}.
 *
 * <p>A tool that fails is not an exception: its result has {@code isError} set.
 */
public class McpBridgeException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** The ErrorInfo reason of a resumed tool call whose outcome the bridge cannot know ({@link #outcomeUnknown()}). */
  public static final String CALL_OUTCOME_UNKNOWN = Reason.CALL_OUTCOME_UNKNOWN.name();

  private final Status.Code code;
  private final transient com.google.rpc.Status details;
  private volatile String callId;

  McpBridgeException(Status.Code code, String message, com.google.rpc.Status details, Throwable cause) {
    super(message, cause);
    this.code = code;
    this.details = details;
  }

  /** Wraps a gRPC failure (a StatusRuntimeException or StatusException); other throwables become UNKNOWN. */
  public static McpBridgeException from(Throwable t) {
    if (t instanceof McpBridgeException e) {
      return e;
    }
    Status status = Status.fromThrowable(t);
    com.google.rpc.Status details = StatusProto.fromThrowable(t);
    String desc = status.getDescription();
    String message = status.getCode() + (desc == null || desc.isEmpty() ? "" : ": " + desc);
    if (status.getCode() == Status.Code.UNKNOWN && !(t instanceof StatusRuntimeException)
        && !(t instanceof io.grpc.StatusException)) {
      message = "UNKNOWN: " + t;
    }
    return new McpBridgeException(status.getCode(), message, details, t);
  }

  /** The gRPC status code. */
  public Status.Code code() {
    return code;
  }

  /** The full google.rpc.Status the bridge sent, if it sent details. */
  public Optional<com.google.rpc.Status> statusDetails() {
    return Optional.ofNullable(details);
  }

  /** The google.rpc.ErrorInfo detail, if any. */
  public Optional<ErrorInfo> errorInfo() {
    return detail(ErrorInfo.class);
  }

  /** The field violations of a google.rpc.BadRequest detail (bad input from the host); empty if none. */
  public List<BadRequest.FieldViolation> fieldViolations() {
    return detail(BadRequest.class).map(BadRequest::getFieldViolationsList).orElse(List.of());
  }

  /**
   * The JSON-RPC error code of the upstream error, when the bridge reported one in ErrorInfo metadata (key
   * {@code jsonrpcCode}).
   */
  public OptionalInt jsonRpcCode() {
    Optional<ErrorInfo> info = errorInfo();
    if (info.isEmpty()) {
      return OptionalInt.empty();
    }
    Map<String, String> md = info.get().getMetadataMap();
    for (String key : new String[] {"jsonrpcCode", "jsonrpc_code"}) {
      String v = md.get(key);
      if (v != null) {
        try {
          return OptionalInt.of(Integer.parseInt(v.trim()));
        } catch (NumberFormatException ignored) {
          // not a number; try the next key
        }
      }
    }
    return OptionalInt.empty();
  }

  /** The upstream JSON-RPC error message, when the bridge reported one (ErrorInfo metadata jsonrpcMessage). */
  public Optional<String> jsonRpcMessage() {
    return errorInfo().map(i -> i.getMetadataMap().get("jsonrpcMessage"));
  }

  /**
   * How long to wait before trying again ({@code google.rpc.RetryInfo}): the caller's rate limit ({@code
   * RESOURCE_EXHAUSTED}), or an MCP server that refused the call as busy ({@code UNAVAILABLE} {@code
   * UPSTREAM_UNAVAILABLE}, its HTTP {@code Retry-After}); empty when the bridge did not say.
   */
  public Optional<java.time.Duration> retryAfter() {
    return detail(RetryInfo.class)
        .filter(RetryInfo::hasRetryDelay)
        .map(r -> java.time.Duration.ofSeconds(r.getRetryDelay().getSeconds(), r.getRetryDelay().getNanos()));
  }

  /** The ErrorInfo reason, e.g. "UPSTREAM_ERROR", "SESSION_NOT_FOUND"; empty if the bridge sent none. */
  public Optional<String> reason() {
    return errorInfo().map(ErrorInfo::getReason).filter(r -> !r.isEmpty());
  }

  /**
   * Whether the session the call named is gone for good, so that the host should create a new one: the bridge
   * replica that owned it died ({@code REPLICA_UNAVAILABLE}, answered by the proxy in front of the replicas), or it
   * was closed or is unknown ({@code SESSION_CLOSED}, {@code SESSION_NOT_FOUND}).
   */
  public boolean sessionLost() {
    return reason().map(r -> r.equals(Reason.REPLICA_UNAVAILABLE.name()) || r.equals(Reason.SESSION_CLOSED.name()) || r.equals(Reason.SESSION_NOT_FOUND.name()))
        .orElse(false);
  }

  /**
   * Whether this is a tool call whose outcome cannot be known: the call was lost (the connection dropped, the bridge
   * restarted) while it was in flight upstream, the client called again with the same call id to get its outcome
   * ({@link RetryPolicy}), and the bridge could not tell whether the tool ran — ABORTED with reason {@code
   * CALL_OUTCOME_UNKNOWN}. The tool may or may not have run: the host decides whether to call it again (with a new
   * call id). Such a failure is never retried.
   */
  public boolean outcomeUnknown() {
    return code == Status.Code.ABORTED && reason().map(CALL_OUTCOME_UNKNOWN::equals).orElse(false);
  }

  /**
   * The call id of the tool call that failed ({@link McpSession#callTool} and {@link McpSession#callToolStreaming}
   * set it, whether the host gave the id or the client made one up); empty for other calls.
   */
  public Optional<String> callId() {
    return Optional.ofNullable(callId);
  }

  void setCallId(String callId) {
    this.callId = callId;
  }

  /**
   * Whether an approver denied the call (PERMISSION_DENIED, reason {@code APPROVAL_DENIED}; the message carries
   * the approver's reason). Nothing was sent upstream.
   */
  public boolean approvalDenied() {
    return code() == Status.Code.PERMISSION_DENIED && reason().filter(Reason.APPROVAL_DENIED.name()::equals).isPresent();
  }

  /**
   * Whether the call's approval expired before anyone decided (DEADLINE_EXCEEDED, reason {@code APPROVAL_EXPIRED}).
   * Nothing was sent upstream.
   */
  public boolean approvalExpired() {
    return code() == Status.Code.DEADLINE_EXCEEDED && reason().filter(Reason.APPROVAL_EXPIRED.name()::equals).isPresent();
  }

  /**
   * The approver's reason of a denied call (ErrorInfo metadata {@code approverReason}); empty unless {@link
   * #approvalDenied()}.
   */
  public Optional<String> approverReason() {
    return approvalDenied() ? errorInfo().map(i -> i.getMetadataMap().get("approverReason")) : Optional.empty();
  }

  /** The approver that denied the call (ErrorInfo metadata {@code decidedBy}); empty when not known. */
  public Optional<String> approvalDecidedBy() {
    return approvalDenied() ? errorInfo().map(i -> i.getMetadataMap().get("decidedBy")) : Optional.empty();
  }

  /** The id of the approval request of a denied or expired call (ErrorInfo metadata {@code approvalRequestId}). */
  public Optional<String> approvalRequestId() {
    return approvalDenied() || approvalExpired()
        ? errorInfo().map(i -> i.getMetadataMap().get("approvalRequestId")) : Optional.empty();
  }

  /** When the approval request of a denied or expired call expires or expired (ErrorInfo metadata {@code expireTime}). */
  public Optional<java.time.Instant> approvalExpireTime() {
    if (!approvalDenied() && !approvalExpired()) {
      return Optional.empty();
    }
    return errorInfo().map(i -> i.getMetadataMap().get("expireTime")).map(java.time.Instant::parse);
  }

  /**
   * Whether a call resumed by its call id carried other arguments than the call submitted for approval
   * (FAILED_PRECONDITION, reason {@code APPROVAL_ARGUMENTS_CHANGED}). Nothing was sent upstream.
   */
  public boolean approvalArgumentsChanged() {
    return code() == Status.Code.FAILED_PRECONDITION
        && reason().filter(Reason.APPROVAL_ARGUMENTS_CHANGED.name()::equals).isPresent();
  }

  private <T extends com.google.protobuf.Message> Optional<T> detail(Class<T> type) {
    if (details == null) {
      return Optional.empty();
    }
    for (Any any : details.getDetailsList()) {
      if (any.is(type)) {
        try {
          return Optional.of(any.unpack(type));
        } catch (InvalidProtocolBufferException e) {
          return Optional.empty();
        }
      }
    }
    return Optional.empty();
  }
}
