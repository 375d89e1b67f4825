package dev.mcpbridge.client;

import dev.mcpbridge.v1.BridgeServiceGrpc;
import dev.mcpbridge.v1.CreateSessionRequest;
import dev.mcpbridge.v1.DeleteSessionRequest;
import dev.mcpbridge.v1.GetIdentityRequest;
import dev.mcpbridge.v1.GetIdentityResponse;
import dev.mcpbridge.v1.GetSessionRequest;
import dev.mcpbridge.v1.HostCapabilities;
import dev.mcpbridge.v1.Implementation;
import dev.mcpbridge.v1.ListPendingRequestsRequest;
import dev.mcpbridge.v1.ListServersRequest;
import dev.mcpbridge.v1.ListSessionsRequest;
import dev.mcpbridge.v1.ListSessionsResponse;
import dev.mcpbridge.v1.Session;
import dev.mcpbridge.v1.UpstreamServer;
import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ClientInterceptors;
import io.grpc.ForwardingClientCall;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.stub.MetadataUtils;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A connection to an mcp-bridge: opens sessions to the MCP servers the bridge is configured with, and keeps one
 * host stream (gRPC {@code Connect}) on which the sessions' {@link HostHandler}s answer what the servers ask.
 *
 * <pre>{@code
 * try (McpBridgeClient client = McpBridgeClient.connect("127.0.0.1:50051")) {
 *   McpSession session = client.openSession("demo", new HostHandler() {
 *     @Override public CreateMessageResult handleSampling(CreateMessageRequest req, RequestContext ctx) {
 *       return Mcp.samplingReply("my-model", "Hello!");
 *     }
 *   });
 *   System.out.println(Mcp.text(session.callTool("echo", Map.of("text", "hi"))));
 * }
 * }</pre>
 *
 * <p>Every operation has a blocking form, which throws {@link McpBridgeException}, and an {@code ...Async} form
 * returning a {@link CompletableFuture} that fails with it; cancelling such a future cancels the call (an MCP
 * cancellation upstream). The client is thread-safe. {@link #close()} detaches the host stream, deletes the
 * sessions this client opened (unless {@link Builder#keepSessionsOnClose}) and shuts the channel down.
 */
public final class McpBridgeClient implements AutoCloseable {
  private static final Logger LOG = System.getLogger(McpBridgeClient.class.getName());

  private final ManagedChannel ownedChannel;
  private final Channel channel;
  private final Duration defaultTimeout;
  private final RetryPolicy retryPolicy;
  private final Duration attachTimeout;
  private final boolean keepSessionsOnClose;
  private final Implementation clientInfo;
  private final Executor handlerExecutor;
  private final ExecutorService ownedHandlerExecutor;
  private final ScheduledExecutorService scheduler;
  private final BridgeServiceGrpc.BridgeServiceStub asyncStub;
  private final HostStream hostStream;
  // Behind a proxy in front of several replicas, a session is served by the replica named in its id, and its
  // server requests come on a host stream to that replica: one per replica, routed by the id of the session that
  // opened it. Sessions of a bridge without replicas use hostStream.
  private final ConcurrentHashMap<String, HostStream> replicaHostStreams = new ConcurrentHashMap<>();
  private final Duration initialBackoff;
  private final Duration maxBackoff;
  private final java.util.Set<String> opened = ConcurrentHashMap.newKeySet(); // deleted on close
  private volatile boolean closed;

  private McpBridgeClient(Builder b) {
    if (b.channel != null) {
      this.ownedChannel = null;
      this.channel = b.channel;
    } else {
      ManagedChannelBuilder<?> cb = ManagedChannelBuilder.forTarget(Objects.requireNonNull(b.target, "target"));
      if (b.tls) {
        cb.useTransportSecurity();
      } else {
        cb.usePlaintext();
      }
      cb.maxInboundMessageSize(b.maxInboundMessageBytes);
      this.ownedChannel = cb.build();
      this.channel = ownedChannel;
    }
    Channel ch = channel;
    if (b.bearerToken != null) {
      ch = ClientInterceptors.intercept(ch, new BearerInterceptor(b.bearerToken));
    }
    if (Otel.AVAILABLE) {
      ch = ClientInterceptors.intercept(ch, new TraceContextInterceptor());
    }
    this.defaultTimeout = b.defaultTimeout;
    this.retryPolicy = b.retryPolicy;
    this.attachTimeout = b.attachTimeout;
    this.keepSessionsOnClose = b.keepSessionsOnClose;
    this.clientInfo = b.clientInfo;
    if (b.handlerExecutor != null) {
      this.handlerExecutor = b.handlerExecutor;
      this.ownedHandlerExecutor = null;
    } else {
      this.ownedHandlerExecutor = Executors.newCachedThreadPool(daemonThreads("mcp-bridge-handler"));
      this.handlerExecutor = ownedHandlerExecutor;
    }
    this.scheduler = Executors.newSingleThreadScheduledExecutor(daemonThreads("mcp-bridge-reconnect"));
    this.asyncStub = BridgeServiceGrpc.newStub(ch);
    this.hostStream = new HostStream(asyncStub, handlerExecutor, scheduler, b.initialBackoff, b.maxBackoff);
    this.initialBackoff = b.initialBackoff;
    this.maxBackoff = b.maxBackoff;
  }

  /** A client for the bridge at {@code target} ("host:port", or any gRPC target), plaintext, no token. */
  public static McpBridgeClient connect(String target) {
    return builder().target(target).build();
  }

  /** A builder for a client with more options. */
  public static Builder builder() {
    return new Builder();
  }

  // ---- who am I, servers and sessions ----

  /**
   * Who this client's caller is, as the bridge sees it (GetIdentity): its principal, groups, how it authenticated
   * ({@code AUTHENTICATION_METHOD_NONE}, {@code _TOKEN}, {@code _OIDC}, {@code _MTLS}) and the servers whose
   * approval requests it may decide.
   *
   * @throws McpBridgeException UNAUTHENTICATED when the bridge does not accept the client's token
   */
  public GetIdentityResponse getIdentity() {
    return Rpc.await(getIdentityAsync());
  }

  /** Async form of {@link #getIdentity()}. */
  public CompletableFuture<GetIdentityResponse> getIdentityAsync() {
    return Rpc.<GetIdentityRequest, GetIdentityResponse>unary(
        stub(null)::getIdentity, GetIdentityRequest.getDefaultInstance());
  }

  /** The upstream servers the bridge is configured with. */
  public List<UpstreamServer> listServers() {
    return Rpc.await(listServersAsync());
  }

  /** Async form of {@link #listServers()}. */
  public CompletableFuture<List<UpstreamServer>> listServersAsync() {
    return Rpc.<ListServersRequest, dev.mcpbridge.v1.ListServersResponse>unary(
            stub(null)::listServers, ListServersRequest.getDefaultInstance())
        .thenApply(r -> r.getServersList());
  }

  /**
   * Decides tool calls that need approval (docs/adr/0080-approvals.md) with {@code handler.handleApproval}: the
   * bridge delivers the approval requests this client's principal may decide — of any session, not only this
   * client's — on its host stream, which this opens if it is not open yet; those pending now are delivered at
   * once. Without it, a client leaves approval requests pending for another approver.
   *
   * @throws IllegalArgumentException if the handler does not override handleApproval (or its async form)
   */
  public void serveApprovals(HostHandler handler) {
    if (!Capabilities.handlesApproval(handler)) {
      throw new IllegalArgumentException("serveApprovals needs a HostHandler that overrides handleApproval");
    }
    hostStream.serveApprovals(handler);
    // Those pending already: a stream that was open before did not replay them.
    Rpc.await(Rpc.<ListPendingRequestsRequest, dev.mcpbridge.v1.ListPendingRequestsResponse>unary(
            stub(null)::listPendingRequests, ListPendingRequestsRequest.newBuilder().setSessionId("approvals").build()))
        .getRequestsList().forEach(hostStream::deliver);
  }

  /** Opens a session to a configured server without a handler: it declares no client capabilities. */
  public McpSession openSession(String server) {
    return openSession(SessionOptions.forServer(server));
  }

  /**
   * Opens a session to a configured server whose requests {@code handler} answers; the session declares the
   * capabilities the handler implements. Returns once the session is READY and attached to the host stream.
   */
  public McpSession openSession(String server, HostHandler handler) {
    return openSession(SessionOptions.forServer(server).handler(handler));
  }

  /** Opens a session as {@code options} say. */
  public McpSession openSession(SessionOptions options) {
    return Rpc.await(openSessionAsync(options));
  }

  /** Async form of {@link #openSession(SessionOptions)}. */
  public CompletableFuture<McpSession> openSessionAsync(SessionOptions options) {
    ensureOpen();
    HostCapabilities caps = options.effectiveCapabilities();
    CreateSessionRequest.Builder req = CreateSessionRequest.newBuilder()
        .setServer(options.server())
        .setHostCapabilities(caps)
        .addAllRoots(options.roots())
        .setProtocolVersion(options.protocolVersion());
    Implementation info = options.clientInfo() != null ? options.clientInfo() : clientInfo;
    if (info != null) {
      req.setClientInfo(info);
    }
    HostHandler handler = options.handler();
    if (handler == null && options.explicitCapabilities() == null && !options.roots().isEmpty()) {
      handler = new HostHandler() {}; // answers roots requests from the session's list
    }
    HostHandler h = handler;
    // An upstream server that requires OAuth makes CreateSession wait for a person: the bridge raises an
    // authorization request before this side knows the session id and pushes it to every host stream of the
    // principal. Open the stream first and route such requests for this server to this handler until the
    // session is attached.
    HostStream.Opening opening =
        Capabilities.handlesAuthorization(h) ? hostStream.beginOpening(options.server(), h) : null;
    CompletableFuture<McpSession> result = createAndAttach(req.build(), options, h);
    if (opening != null) {
      result.whenComplete((s, e) -> hostStream.endOpening(opening));
    }
    return result;
  }

  private CompletableFuture<McpSession> createAndAttach(
      CreateSessionRequest request, SessionOptions options, HostHandler h) {
    return Rpc.<CreateSessionRequest, dev.mcpbridge.v1.CreateSessionResponse>unary(stub(null)::createSession, request)
        .thenCompose(resp -> {
          McpSession s = new McpSession(this, resp.getSession(), options.roots());
          opened.add(s.id());
          if (h == null) {
            return CompletableFuture.completedFuture(s);
          }
          return hostStreamFor(s.id()).attach(s, h)
              .orTimeout(attachTimeout.toMillis(), TimeUnit.MILLISECONDS)
              .handle((v, err) -> {
                if (err == null) {
                  return CompletableFuture.completedFuture(s);
                }
                // Without its handler the session would leave the server's requests unanswered: delete it.
                Throwable cause = err instanceof java.util.concurrent.CompletionException && err.getCause() != null
                    ? err.getCause() : err;
                McpBridgeException e = cause instanceof TimeoutException
                    ? new McpBridgeException(io.grpc.Status.Code.DEADLINE_EXCEEDED,
                        "DEADLINE_EXCEEDED: session " + s.id() + " not attached to the host stream within "
                            + attachTimeout, null, cause)
                    : McpBridgeException.from(cause);
                return s.closeAsync().handle((x, y) -> (McpSession) null)
                    .thenCompose(x -> CompletableFuture.<McpSession>failedFuture(e));
              })
              .thenCompose(f -> f);
        });
  }

  /**
   * A session object for an existing session of this principal (e.g. one another client or process opened),
   * attached to the host stream with {@code handler} if it is not null. Its capabilities were fixed when it was
   * created. Closing this client does not delete it (close the returned session to do that).
   */
  public McpSession attachSession(String sessionId, HostHandler handler) {
    Session info = getSession(sessionId);
    McpSession s = new McpSession(this, info, info.getRootsList());
    if (handler != null) {
      Rpc.await(hostStreamFor(s.id()).attach(s, handler).orTimeout(attachTimeout.toMillis(), TimeUnit.MILLISECONDS)
          .exceptionally(e -> {
            throw new java.util.concurrent.CompletionException(e instanceof java.util.concurrent.CompletionException
                && e.getCause() instanceof TimeoutException
                ? new McpBridgeException(io.grpc.Status.Code.DEADLINE_EXCEEDED, "DEADLINE_EXCEEDED: attach timed out", null, e)
                : e);
          }));
    }
    return s;
  }

  /** A session's current state. */
  public Session getSession(String sessionId) {
    return Rpc.await(getSessionAsync(sessionId));
  }

  /** Async form of {@link #getSession}. */
  public CompletableFuture<Session> getSessionAsync(String sessionId) {
    return Rpc.<GetSessionRequest, dev.mcpbridge.v1.GetSessionResponse>unary(
            stub(null, sessionId)::getSession, GetSessionRequest.newBuilder().setSessionId(sessionId).build())
        .thenApply(r -> r.getSession());
  }

  /** All of this principal's sessions on the bridge, newest first (every page). */
  public List<Session> listSessions() {
    return Rpc.await(listSessionsAsync());
  }

  /** Async form of {@link #listSessions()}. */
  public CompletableFuture<List<Session>> listSessionsAsync() {
    return Paging.all(
        token -> Rpc.<ListSessionsRequest, ListSessionsResponse>unary(
            stub(null)::listSessions, ListSessionsRequest.newBuilder().setPageToken(token).build()),
        ListSessionsResponse::getSessionsList,
        ListSessionsResponse::getNextPageToken);
  }

  /** Closes a session by id (see {@link McpSession#close()}). */
  public void deleteSession(String sessionId) {
    Rpc.await(deleteSessionAsync(sessionId));
  }

  /** Async form of {@link #deleteSession}. */
  public CompletableFuture<Void> deleteSessionAsync(String sessionId) {
    hostStreamFor(sessionId).detach(sessionId);
    forget(sessionId);
    return Rpc.<DeleteSessionRequest, dev.mcpbridge.v1.DeleteSessionResponse>unary(
            stub(null, sessionId)::deleteSession, DeleteSessionRequest.newBuilder().setSessionId(sessionId).build())
        .thenApply(r -> null);
  }

  // ---- plumbing ----

  /**
   * The generated async stub on this client's channel (with its bearer token), for RPCs this class does not
   * wrap. Use {@code BridgeServiceGrpc.newBlockingStub(client.channel())} style access via {@link #channel()}.
   */
  public BridgeServiceGrpc.BridgeServiceStub asyncStub() {
    return asyncStub;
  }

  /** The channel, with the bearer token interceptor if one was configured. */
  public Channel channel() {
    return asyncStub.getChannel();
  }

  /** The executor handler methods run on. */
  public Executor handlerExecutor() {
    return handlerExecutor;
  }

  /** How this client retries tool calls lost to UNAVAILABLE (see {@link RetryPolicy}). */
  public RetryPolicy retryPolicy() {
    return retryPolicy;
  }

  /** The timeout a unary call with {@code timeout} (null: none given) gets: it, or the default one, or null. */
  Duration effectiveTimeout(Duration timeout) {
    return timeout != null ? timeout : defaultTimeout;
  }

  /** {@link #stub(Duration, String)} with an absolute deadline (null: none), the same for every retry of a call. */
  BridgeServiceGrpc.BridgeServiceStub stubUntil(io.grpc.Deadline deadline, String sessionId) {
    return routed(deadline == null ? asyncStub : asyncStub.withDeadline(deadline), sessionId);
  }

  ScheduledExecutorService scheduler() {
    return scheduler;
  }

  /**
   * Before a retry: a channel whose connection failed waits out gRPC's reconnect backoff (up to 2 minutes) before
   * it tries again; a retried call should find the bridge as soon as it listens again.
   */
  void resetConnectBackoff() {
    if (channel instanceof ManagedChannel mc) {
      mc.resetConnectBackoff();
    }
  }

  BridgeServiceGrpc.BridgeServiceStub stub(Duration timeout) {
    Duration t = timeout != null ? timeout : defaultTimeout;
    return t == null ? asyncStub : asyncStub.withDeadlineAfter(t.toNanos(), TimeUnit.NANOSECONDS);
  }

  /** A stub for server streams: only an explicit timeout applies, never the default one. */
  BridgeServiceGrpc.BridgeServiceStub streamStub(Duration timeout) {
    return timeout == null ? asyncStub : asyncStub.withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS);
  }

  /**
   * The metadata key that carries the session id of every call naming a session, for a proxy in front of the
   * replicas of a shared bridge to route the call to the replica that owns the session (docs/scaling.md).
   */
  public static final String ROUTING_KEY = "mcpbridge-session";

  private static final Metadata.Key<String> ROUTING_HEADER = Metadata.Key.of(ROUTING_KEY, Metadata.ASCII_STRING_MARSHALLER);

  /** {@link #stub(Duration)} for a call naming {@code sessionId}: the routing key is set. */
  BridgeServiceGrpc.BridgeServiceStub stub(Duration timeout, String sessionId) {
    return routed(stub(timeout), sessionId);
  }

  /** {@link #streamStub(Duration)} for a call naming {@code sessionId}: the routing key is set. */
  BridgeServiceGrpc.BridgeServiceStub streamStub(Duration timeout, String sessionId) {
    return routed(streamStub(timeout), sessionId);
  }

  private static BridgeServiceGrpc.BridgeServiceStub routed(BridgeServiceGrpc.BridgeServiceStub stub, String sessionId) {
    if (sessionId == null || sessionId.isEmpty()) {
      return stub;
    }
    Metadata md = new Metadata();
    md.put(ROUTING_HEADER, sessionId);
    return stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(md));
  }

  /**
   * The replica named in a session id "s-REPLICA.RANDOM"; "" for an id of a bridge without replicas. The client's
   * one reading of the session id format, which the bridge owns (mcpcore/ids.go): no other code of the client looks
   * inside a session id. It is needed because a proxy routes each session's calls by the replica in its id
   * (docs/scaling.md), so the session's host stream must go the same way; the bridge's own mcpbridge-replica
   * header names the replica that answered, which after a takeover is not the one the proxy routes to. RoutingTest
   * checks it against ids the real bridge mints.
   */
  static String sessionReplica(String sessionId) {
    if (sessionId == null || !sessionId.startsWith("s-")) {
      return "";
    }
    int dot = sessionId.indexOf('.', 2);
    return dot > 2 ? sessionId.substring(2, dot) : "";
  }

  HostStream hostStream() {
    return hostStream;
  }

  /** The host stream that carries the server requests of {@code sessionId}: the one to its replica. */
  HostStream hostStreamFor(String sessionId) {
    String replica = sessionReplica(sessionId);
    if (replica.isEmpty()) {
      return hostStream;
    }
    // A stream whose replica died has ended: a new session on a replica of that name gets a new one.
    return replicaHostStreams.compute(replica, (r, old) -> old != null && !old.ended() ? old
        : new HostStream(routed(asyncStub, sessionId), handlerExecutor, scheduler, initialBackoff, maxBackoff, r));
  }

  void forget(String sessionId) {
    opened.remove(sessionId);
  }

  private void ensureOpen() {
    if (closed) {
      throw new IllegalStateException("McpBridgeClient is closed");
    }
  }

  /**
   * Detaches the host stream, deletes the sessions this client opened (unless configured to keep them), and
   * shuts the channel down if the client created it.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    hostStream.close();
    replicaHostStreams.values().forEach(HostStream::close);
    if (!keepSessionsOnClose) {
      List<CompletableFuture<?>> deletes = new ArrayList<>();
      for (String id : List.copyOf(opened)) {
        deletes.add(Rpc.<DeleteSessionRequest, dev.mcpbridge.v1.DeleteSessionResponse>unary(
                stub(Duration.ofSeconds(5), id)::deleteSession, DeleteSessionRequest.newBuilder().setSessionId(id).build())
            .exceptionally(e -> {
              LOG.log(Level.DEBUG, "mcp-bridge: deleting session {0} on close failed: {1}", id, e.getMessage());
              return null;
            }));
      }
      try {
        CompletableFuture.allOf(deletes.toArray(new CompletableFuture<?>[0])).get(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (Exception e) {
        LOG.log(Level.DEBUG, "mcp-bridge: deleting sessions on close: {0}", e.toString());
      }
    }
    opened.clear();
    scheduler.shutdownNow();
    if (ownedChannel != null) {
      ownedChannel.shutdown();
      try {
        if (!ownedChannel.awaitTermination(5, TimeUnit.SECONDS)) {
          ownedChannel.shutdownNow();
        }
      } catch (InterruptedException e) {
        ownedChannel.shutdownNow();
        Thread.currentThread().interrupt();
      }
    }
    if (ownedHandlerExecutor != null) {
      ownedHandlerExecutor.shutdownNow();
    }
  }

  private static ThreadFactory daemonThreads(String prefix) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }

  /** Adds "authorization: Bearer <token>" to every call. */
  private static final class BearerInterceptor implements ClientInterceptor {
    private static final Metadata.Key<String> AUTHORIZATION =
        Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
    private final String value;

    BearerInterceptor(String token) {
      this.value = "Bearer " + token;
    }

    @Override
    public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(
        MethodDescriptor<ReqT, RespT> method, CallOptions callOptions, Channel next) {
      return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, callOptions)) {
        @Override
        public void start(Listener<RespT> responseListener, Metadata headers) {
          headers.put(AUTHORIZATION, value);
          super.start(responseListener, headers);
        }
      };
    }
  }

  /**
   * Adds the current OpenTelemetry context (W3C traceparent, tracestate, baggage) to every call, when
   * OpenTelemetry is on the class path: the bridge continues the caller's trace upstream.
   */
  private static final class TraceContextInterceptor implements ClientInterceptor {
    @Override
    public <ReqT, RespT> ClientCall<ReqT, RespT> interceptCall(
        MethodDescriptor<ReqT, RespT> method, CallOptions callOptions, Channel next) {
      Map<String, String> tc = Otel.current();
      return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, callOptions)) {
        @Override
        public void start(Listener<RespT> responseListener, Metadata headers) {
          tc.forEach((k, v) -> headers.put(Metadata.Key.of(k, Metadata.ASCII_STRING_MARSHALLER), v));
          super.start(responseListener, headers);
        }
      };
    }
  }

  /** Options of a {@link McpBridgeClient}. */
  public static final class Builder {
    private String target = "127.0.0.1:50051";
    private ManagedChannel channel;
    private boolean tls;
    private String bearerToken;
    private Duration defaultTimeout;
    private RetryPolicy retryPolicy = RetryPolicy.defaults();
    private Duration attachTimeout = Duration.ofSeconds(30);
    private Duration initialBackoff = Duration.ofMillis(100);
    private Duration maxBackoff = Duration.ofSeconds(5);
    private boolean keepSessionsOnClose;
    private Executor handlerExecutor;
    private Implementation clientInfo;
    private int maxInboundMessageBytes = 16 << 20;

    private Builder() {}

    /** The bridge's gRPC address: "host:port", "unix:///path/to.sock" or any gRPC target. Default 127.0.0.1:50051. */
    public Builder target(String target) {
      this.target = target;
      return this;
    }

    /** Use this channel (TLS, mTLS, custom settings) instead of making one; the client does not shut it down. */
    public Builder channel(ManagedChannel channel) {
      this.channel = channel;
      return this;
    }

    /** Use TLS with the JVM's trust store (default: plaintext, as for the bridge's loopback default). */
    public Builder useTransportSecurity() {
      this.tls = true;
      return this;
    }

    /** Send this bearer token with every call (the bridge's auth.tokensFile). */
    public Builder bearerToken(String token) {
      this.bearerToken = token;
      return this;
    }

    /**
     * Deadline of every call that does not set its own; default none (server requests may wait for a person).
     */
    public Builder defaultTimeout(Duration timeout) {
      this.defaultTimeout = timeout;
      return this;
    }

    /**
     * How tool calls lost to UNAVAILABLE (the connection dropped, the bridge restarted or is draining) are made again
     * with the same call id; default {@link RetryPolicy#defaults()}, {@link RetryPolicy#disabled()} turns it off.
     */
    public Builder retryPolicy(RetryPolicy policy) {
      this.retryPolicy = Objects.requireNonNull(policy);
      return this;
    }

    /** How long openSession waits for the host stream to attach a new session; default 30 s. */
    public Builder attachTimeout(Duration timeout) {
      this.attachTimeout = Objects.requireNonNull(timeout);
      return this;
    }

    /** Backoff of host stream reconnects: first delay, doubling up to max, with jitter. Default 100 ms … 5 s. */
    public Builder reconnectBackoff(Duration initial, Duration max) {
      this.initialBackoff = Objects.requireNonNull(initial);
      this.maxBackoff = Objects.requireNonNull(max);
      return this;
    }

    /** Leave the sessions this client opened open on the bridge when it closes (default: delete them). */
    public Builder keepSessionsOnClose(boolean keep) {
      this.keepSessionsOnClose = keep;
      return this;
    }

    /** Run handler methods on this executor instead of the client's own pool of daemon threads. */
    public Builder handlerExecutor(Executor executor) {
      this.handlerExecutor = executor;
      return this;
    }

    /** The clientInfo the bridge announces to servers for this client's sessions (default: the bridge's own). */
    public Builder clientInfo(String name, String version) {
      this.clientInfo = Implementation.newBuilder().setName(name).setVersion(version).build();
      return this;
    }

    /** Largest message the client accepts from the bridge; default 16 MiB, the bridge's own default. */
    public Builder maxInboundMessageBytes(int bytes) {
      this.maxInboundMessageBytes = bytes;
      return this;
    }

    /** The client. */
    public McpBridgeClient build() {
      return new McpBridgeClient(this);
    }
  }
}
