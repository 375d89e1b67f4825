package dev.mcpbridge.client;

import com.google.protobuf.Timestamp;
import dev.mcpbridge.v1.Delivery;
import dev.mcpbridge.v1.Root;
import dev.mcpbridge.v1.ServerRequest;
import dev.mcpbridge.v1.TextWarning;
import dev.mcpbridge.v1.UrlDestination;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;

/**
 * What a {@link HostHandler} method knows about the server request it answers: which session and host call it
 * came from, how it was delivered and until when the bridge waits for an answer.
 */
public final class RequestContext {
  private final ServerRequest request;
  private final McpSession session;
  private final Executor executor;

  RequestContext(ServerRequest request, McpSession session, Executor executor) {
    this.request = request;
    this.session = session;
    this.executor = executor;
  }

  /** The bridge-wide id of the request. */
  public String requestId() {
    return request.getRequestId();
  }

  /** The session whose server made the request. */
  public String sessionId() {
    return request.getSessionId();
  }

  /** The session object, when this client opened it (always, for sessions opened with a handler). */
  public Optional<McpSession> session() {
    return Optional.ofNullable(session);
  }

  /**
   * The call_id of the host call (CallTool, GetPrompt, ReadResource…) that caused the request, where the bridge
   * knows it: a 2026-07-28 input request, or a push on the call's own Streamable HTTP response stream. Empty for
   * a request of the session (a legacy push over stdio or SSE is not tied to whatever call is in flight).
   */
  public String originCallId() {
    return request.getOriginCallId();
  }

  /** The MCP method of the originating call, e.g. "tools/call"; may be empty. */
  public String originMethod() {
    return request.getOriginMethod();
  }

  /** Tool or prompt name, or resource URI, of the originating call; may be empty. */
  public String originName() {
    return request.getOriginName();
  }

  /** Whether the server pushed the request (handshake era) or returned it in an input_required result. */
  public Delivery delivery() {
    return request.getDelivery();
  }

  /** When the bridge stops waiting and applies its default answer; empty if the bridge gave no deadline. */
  public Optional<Instant> deadline() {
    return request.hasDeadline() ? Optional.of(toInstant(request.getDeadline())) : Optional.empty();
  }

  /**
   * What the bridge found in the request's text that a person may not see as it is — bidi controls, invisible and
   * control characters, mixed scripts, object keys that collide (docs/adr/0091-untrusted-text-and-approval-visibility.md).
   * Show them with the request, and ask for a second confirmation before approving one that has any. Empty when
   * there is none.
   */
  public List<TextWarning> warnings() {
    return request.getWarningsList();
  }

  /** Where the URL of a URL elicitation or an authorization request leads; show its registrable domain first. */
  public Optional<UrlDestination> urlDestination() {
    return request.hasUrlDestination() ? Optional.of(request.getUrlDestination()) : Optional.empty();
  }

  /** The session's current roots as this client knows them (from openSession or the latest setRoots). */
  public List<Root> sessionRoots() {
    return session == null ? List.of() : session.roots();
  }

  /** The whole request as the bridge sent it. */
  public ServerRequest request() {
    return request;
  }

  /**
   * The W3C trace context of the request ({@code traceparent}, {@code tracestate}, {@code baggage}): the
   * bridge's span of it, or the originating call's context; empty when there is none. When OpenTelemetry is on
   * the class path it is the current context while the handler method runs (also in {@link #supplyAsync}), so
   * spans the handler starts continue the bridge's trace.
   */
  public Map<String, String> traceContext() {
    return request.getTraceContextMap();
  }

  /** The executor handler work runs on (the client's handler executor). */
  public Executor executor() {
    return executor;
  }

  /** Runs {@code work} on the handler executor; its exception fails the returned future. */
  public <T> CompletableFuture<T> supplyAsync(Callable<T> work) {
    return CompletableFuture.supplyAsync(
        () -> {
          try (Otel.Scope scope = Otel.makeCurrent(traceContext())) {
            return work.call();
          } catch (RuntimeException e) {
            throw e;
          } catch (Exception e) {
            throw new CompletionException(e);
          }
        },
        executor);
  }

  static Instant toInstant(Timestamp t) {
    return Instant.ofEpochSecond(t.getSeconds(), t.getNanos());
  }

  @Override
  public String toString() {
    return "RequestContext{request=" + requestId() + ", session=" + sessionId() + ", origin=" + originMethod()
        + " " + originName() + "}";
  }
}
