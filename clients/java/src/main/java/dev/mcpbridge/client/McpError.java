package dev.mcpbridge.client;

import dev.mcpbridge.v1.JsonRpcError;

/**
 * A JSON-RPC error a {@link HostHandler} answers a server request with, e.g. {@code -1 "User rejected sampling
 * request"}. Throw it from a handler method (or complete its future exceptionally with it) to choose the code;
 * any other exception is answered as {@code -32603 Internal error} with the exception's message.
 */
public class McpError extends Exception {
  private static final long serialVersionUID = 1L;

  /** JSON-RPC "Method not found". */
  public static final int METHOD_NOT_FOUND = -32601;
  /** JSON-RPC "Invalid params". */
  public static final int INVALID_PARAMS = -32602;
  /** JSON-RPC "Internal error". */
  public static final int INTERNAL_ERROR = -32603;
  /** MCP's conventional code for a request the user rejected (e.g. sampling). */
  public static final int USER_REJECTED = -1;

  private final int code;
  private final transient Object data;

  /** An error with a JSON-RPC code and message. */
  public McpError(int code, String message) {
    this(code, message, null);
  }

  /** An error with a JSON-RPC code, message and data (any value {@link Json#toValue} accepts). */
  public McpError(int code, String message, Object data) {
    super(message);
    this.code = code;
    this.data = data;
  }

  /** The JSON-RPC error code. */
  public int code() {
    return code;
  }

  /** The error's data, or null. */
  public Object data() {
    return data;
  }

  /** "User rejected" ({@code -1}) with the given message. */
  public static McpError userRejected(String message) {
    return new McpError(USER_REJECTED, message);
  }

  /** "Method not found" ({@code -32601}) for a method the handler does not implement. */
  public static McpError methodNotFound(String method) {
    return new McpError(METHOD_NOT_FOUND, "Method not found: " + method);
  }

  /** This error as the API's JsonRpcError. */
  public JsonRpcError toProto() {
    JsonRpcError.Builder b = JsonRpcError.newBuilder().setCode(code);
    if (getMessage() != null) {
      b.setMessage(getMessage());
    }
    if (data != null) {
      b.setData(Json.toValue(data));
    }
    return b.build();
  }
}
