package dev.mcpbridge.client;

import dev.mcpbridge.v1.ApprovalDecision;
import dev.mcpbridge.v1.ApprovalRequest;
import dev.mcpbridge.v1.AuthorizationRequest;
import dev.mcpbridge.v1.CreateMessageRequest;
import dev.mcpbridge.v1.CreateMessageResult;
import dev.mcpbridge.v1.ElicitRequest;
import dev.mcpbridge.v1.ElicitResult;
import dev.mcpbridge.v1.Event;
import dev.mcpbridge.v1.HostCapabilities;
import dev.mcpbridge.v1.Root;
import dev.mcpbridge.v1.SessionStateChange;
import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * What a host does when an upstream MCP server asks something of it — sampling, elicitation, roots; and the
 * bridge's own authorization requests (upstream OAuth) — and what it
 * hears of the server's notifications. Every method has a default, so a handler overrides only what it
 * supports; <b>the methods it overrides are the capabilities the session declares</b> (see
 * {@link #capabilities()}), and the bridge answers requests for the others with {@code -32601 Method not found}
 * without bothering the host.
 *
 * <h2>Answering now or later</h2>
 *
 * Each request kind has a plain method ({@link #handleSampling}) and an {@code ...Async} one
 * ({@link #handleSamplingAsync}) returning a {@link CompletionStage}. Override one of the two:
 *
 * <ul>
 *   <li>the plain method runs on the client's handler executor (a pool of daemon threads, or the executor
 *       given to {@link McpBridgeClient.Builder#handlerExecutor}), so it may block — e.g. wait for a person —
 *       without holding up pings, other requests or other sessions;
 *   <li>the async method is called on a stream thread and must not block; return a future and complete it
 *       whenever the answer is known, from any thread (a UI callback, an HTTP client's future…).
 * </ul>
 *
 * A handler that throws, or whose future fails, answers the server with a JSON-RPC error: the code of an
 * {@link McpError}, or {@code -32603} with the exception's message; it is logged and the stream carries on. A
 * future that is <i>cancelled</i> withdraws the request instead (the bridge answers as if a user dismissed it:
 * elicitation cancel, otherwise an error). When the bridge ends a request before the handler answered (the
 * server cancelled it, its deadline passed, the session closed), the handler's future is cancelled.
 *
 * <p>Server requests are delivered at least once: after the host stream reconnects, requests still pending are
 * delivered again, and the client recognizes them by id: a handler is never called twice for one request.
 *
 * <h2>Notifications</h2>
 *
 * {@link #onEvent} sees every event of the session except server requests, in order, one at a time per
 * session, on the handler executor. Its default passes MCP notifications to {@link #handleNotification} with
 * the MCP method name, and session state changes to {@link #onSessionState}. An exception thrown there is
 * logged and ignored.
 */
public interface HostHandler {

  /**
   * Answers a sampling request ({@code sampling/createMessage}): run an LLM completion, after asking the user if
   * the application wants a human in the loop. Return the sampled message; throw {@link McpError} (e.g.
   * {@link McpError#userRejected}) to refuse. Overriding it (or {@link #handleSamplingAsync}) declares the
   * sampling capability.
   */
  default CreateMessageResult handleSampling(CreateMessageRequest request, RequestContext context)
      throws Exception {
    throw McpError.methodNotFound("sampling/createMessage");
  }

  /** Asynchronous form of {@link #handleSampling}; the default runs it on the handler executor. */
  default CompletionStage<CreateMessageResult> handleSamplingAsync(
      CreateMessageRequest request, RequestContext context) {
    return context.supplyAsync(() -> handleSampling(request, context));
  }

  /**
   * Answers a form-mode elicitation ({@code elicitation/create}): ask the user for the values of
   * {@code request.getRequestedSchema()} and return {@link Mcp#accept}, {@link Mcp#decline} or
   * {@link Mcp#cancel}. Overriding it (or {@link #handleElicitationAsync}) declares elicitation (form).
   */
  default ElicitResult handleElicitation(ElicitRequest request, RequestContext context) throws Exception {
    throw McpError.methodNotFound("elicitation/create");
  }

  /** Asynchronous form of {@link #handleElicitation}; the default runs it on the handler executor. */
  default CompletionStage<ElicitResult> handleElicitationAsync(ElicitRequest request, RequestContext context) {
    return context.supplyAsync(() -> handleElicitation(request, context));
  }

  /**
   * Answers a URL-mode elicitation: send the user to {@code request.getUrl()} and return accept (the user agreed
   * to go), decline or cancel; completion is reported later by a {@code notifications/elicitation/complete}.
   * Overriding it (or {@link #handleUrlElicitationAsync}) declares elicitation (url).
   */
  default ElicitResult handleUrlElicitation(ElicitRequest request, RequestContext context) throws Exception {
    throw McpError.methodNotFound("elicitation/create (url mode)");
  }

  /** Asynchronous form of {@link #handleUrlElicitation}; the default runs it on the handler executor. */
  default CompletionStage<ElicitResult> handleUrlElicitationAsync(
      ElicitRequest request, RequestContext context) {
    return context.supplyAsync(() -> handleUrlElicitation(request, context));
  }

  /**
   * Answers a roots request ({@code roots/list}) with the roots the host exposes now. The default answers the
   * session's roots as this client knows them (given to openSession or set with {@link McpSession#setRoots}).
   * Overriding it (or {@link #listRootsAsync}) declares the roots capability; so does opening a session with
   * roots.
   */
  default List<Root> listRoots(RequestContext context) throws Exception {
    return context.sessionRoots();
  }

  /** Asynchronous form of {@link #listRoots}; the default runs it on the handler executor. */
  default CompletionStage<List<Root>> listRootsAsync(RequestContext context) {
    return context.supplyAsync(() -> listRoots(context));
  }

  /**
   * Has a person authorize the bridge at an upstream server's OAuth authorization server (the bridge's own
   * request, not the server's): show or open {@code request.getAuthorizationUrl()} and return the URL the
   * browser was redirected to (it starts with {@code request.getRedirectUrl()}). Throw {@link McpError} to
   * refuse. Called while {@link McpBridgeClient#openSession} waits for a server that requires OAuth — the
   * session has no id on this side yet: {@link RequestContext#session()} is empty and
   * {@code request.getServerName()} names the server — and when a call of an open session needs more scopes.
   * Declares no MCP capability; a handler that does not override it (or {@link #handleAuthorizationAsync})
   * leaves the authorization of sessions it opens to others (the request stays pending until it times out) and
   * answers step-up requests of its sessions with {@code -32601 Method not found}.
   */
  default String handleAuthorization(AuthorizationRequest request, RequestContext context) throws Exception {
    throw McpError.methodNotFound("authorization");
  }

  /** Asynchronous form of {@link #handleAuthorization}; the default runs it on the handler executor. */
  default CompletionStage<String> handleAuthorizationAsync(AuthorizationRequest request, RequestContext context) {
    return context.supplyAsync(() -> handleAuthorization(request, context));
  }

  /**
   * Decides a tool call that needs approval (the bridge's own request, docs/adr/0080-approvals.md): show a person
   * {@code request.getTool()}, {@code request.getArguments()} and {@code request.getCaller()}, and return
   * {@link Mcp#approve} or {@link Mcp#deny}. Only an approval sends the call upstream, with exactly
   * {@code request.getCanonicalArguments()}; the library fills in the request's {@code arguments_sha256} when an
   * approval leaves it empty. Called only for a handler given to {@link McpBridgeClient#serveApprovals}, with the
   * approval requests of any session that the client's principal may decide ({@link RequestContext#session()} is
   * empty: the session is the caller's). Throwing denies the call. Declares no MCP capability.
   */
  default ApprovalDecision handleApproval(ApprovalRequest request, RequestContext context) throws Exception {
    throw McpError.methodNotFound("approval");
  }

  /** Asynchronous form of {@link #handleApproval}; the default runs it on the handler executor. */
  default CompletionStage<ApprovalDecision> handleApprovalAsync(ApprovalRequest request, RequestContext context) {
    return context.supplyAsync(() -> handleApproval(request, context));
  }

  /**
   * Called for an MCP notification of a session: {@code method} is MCP's name ({@code notifications/progress},
   * {@code notifications/message}, {@code notifications/tools/list_changed},
   * {@code notifications/prompts/list_changed}, {@code notifications/resources/list_changed},
   * {@code notifications/resources/updated}, {@code notifications/elicitation/complete},
   * {@code notifications/tasks/status}, {@code notifications/cancelled}) and {@code event} holds its typed
   * payload ({@code event.getProgress()}, {@code event.getLog()}, …). Does nothing by default.
   */
  default void handleNotification(String method, Event event) throws Exception {}

  /** Called when a session's state changes (e.g. RECONNECTING after a server crash, CLOSED). Does nothing by default. */
  default void onSessionState(String sessionId, SessionStateChange change) throws Exception {}

  /**
   * Called for every event of the session except server requests (which go to the handle methods). The
   * default passes notifications to {@link #handleNotification} and state changes to {@link #onSessionState}.
   */
  default void onEvent(Event event) throws Exception {
    String method = Mcp.notificationMethod(event);
    if (method != null) {
      handleNotification(method, event);
    } else if (event.hasSessionState()) {
      onSessionState(event.getSessionId(), event.getSessionState());
    }
  }

  /**
   * The client capabilities sessions opened with this handler declare. The default derives them from the
   * methods this handler's class overrides (by reflection): sampling, elicitation form and url, roots (with
   * {@code listChanged}, since {@link McpSession#setRoots} announces changes). Override it to declare more
   * precisely, e.g. {@code sampling.tools}:
   *
   * <pre>{@code
   * @Override public HostCapabilities capabilities() {
   *   return HostHandler.super.capabilities().toBuilder()
   *       .setSampling(SamplingCapability.newBuilder().setTools(true)).build();
   * }
   * }</pre>
   */
  default HostCapabilities capabilities() {
    return Capabilities.detect(this);
  }
}
