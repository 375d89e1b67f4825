package dev.mcpbridge.client;

import dev.mcpbridge.v1.AttachFailure;
import dev.mcpbridge.v1.AttachSessions;
import dev.mcpbridge.v1.AttachedSessions;
import dev.mcpbridge.v1.AuthorizationResponse;
import dev.mcpbridge.v1.BridgeServiceGrpc;
import dev.mcpbridge.v1.CancelServerRequest;
import dev.mcpbridge.v1.ConnectRequest;
import dev.mcpbridge.v1.ConnectResponse;
import dev.mcpbridge.v1.DetachSessions;
import dev.mcpbridge.v1.ElicitationMode;
import dev.mcpbridge.v1.Event;
import dev.mcpbridge.v1.HostAnswer;
import dev.mcpbridge.v1.HostReply;
import dev.mcpbridge.v1.JsonRpcError;
import dev.mcpbridge.v1.ListRootsResult;
import dev.mcpbridge.v1.Reason;
import dev.mcpbridge.v1.ReplyAck;
import dev.mcpbridge.v1.RequestEnded;
import dev.mcpbridge.v1.ServerRequest;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The client's Connect stream: attaches the sessions opened with a handler, runs their handlers for server
 * requests, sends the answers, delivers events, and reconnects with backoff when the stream breaks.
 *
 * <p>Delivery is at least once: after a reconnect the bridge delivers pending requests again. Each request id
 * maps to one {@link Inflight} whose answer future the handler completes once; a request delivered again
 * while its handler runs is ignored, one delivered again after it was answered gets the same answer again
 * (the earlier send may have been lost with the old stream).
 */
final class HostStream {
  private static final Logger LOG = System.getLogger(HostStream.class.getName());
  private static final int MAX_TOMBSTONES = 10_000;
  private static final Duration INFLIGHT_GRACE = Duration.ofMinutes(1);

  /** One session attached to the stream. */
  static final class Binding {
    final McpSession session;
    final HostHandler handler;
    final SerialExecutor events;
    final CompletableFuture<Void> attached = new CompletableFuture<>();

    Binding(McpSession session, HostHandler handler, Executor executor) {
      this.session = session;
      this.handler = handler;
      this.events = new SerialExecutor(executor);
    }
  }

  /**
   * An openSession in progress whose handler answers authorization requests: the bridge raises them while
   * CreateSession waits, before this side knows the session id, and pushes them to every Connect stream of the
   * principal (and again to streams opened later).
   */
  static final class Opening {
    final String server;
    final HostHandler handler;

    Opening(String server, HostHandler handler) {
      this.server = server;
      this.handler = handler;
    }
  }

  /** A server request this client is answering or has answered. */
  private static final class Inflight {
    final ServerRequest request;
    volatile CompletableFuture<?> handlerFuture;
    volatile ConnectRequest answer; // set once the handler finished
    volatile boolean fallbackSent;

    Inflight(ServerRequest request) {
      this.request = request;
    }
  }

  private final BridgeServiceGrpc.BridgeServiceStub stub;
  private final Executor executor;
  private final ScheduledExecutorService scheduler;
  private final Duration initialBackoff;
  private final Duration maxBackoff;

  private final Map<String, Binding> bindings = new ConcurrentHashMap<>();
  private final Map<String, Inflight> inflight = new ConcurrentHashMap<>();
  private final List<Opening> openings = new CopyOnWriteArrayList<>();
  /** Decides the approval requests pushed to this stream (serveApprovals); null leaves them pending. */
  private volatile HostHandler approver;
  private final Map<String, Boolean> tombstones = new LinkedHashMap<>(16, 0.75f, false) {
    private static final long serialVersionUID = 1L;

    @Override
    protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
      return size() > MAX_TOMBSTONES;
    }
  };

  private final Object lock = new Object();
  private Call current; // guarded by lock
  private boolean started; // guarded by lock
  private boolean closed; // guarded by lock
  private final String replica; // the bridge replica this stream goes to; "" for a bridge without replicas
  private int failures; // guarded by lock; consecutive stream failures without a message
  private final AtomicInteger connects = new AtomicInteger();
  private final AtomicInteger handlerCalls = new AtomicInteger();
  private final AtomicInteger deliveries = new AtomicInteger();

  HostStream(
      BridgeServiceGrpc.BridgeServiceStub stub,
      Executor executor,
      ScheduledExecutorService scheduler,
      Duration initialBackoff,
      Duration maxBackoff) {
    this(stub, executor, scheduler, initialBackoff, maxBackoff, "");
  }

  /**
   * A host stream to one replica of a shared bridge ({@code replica} non-empty): when the proxy reports the
   * replica gone (REPLICA_UNAVAILABLE), its sessions are lost, and the stream forgets them and ends ({@link
   * #ended()}) instead of reconnecting.
   */
  HostStream(
      BridgeServiceGrpc.BridgeServiceStub stub,
      Executor executor,
      ScheduledExecutorService scheduler,
      Duration initialBackoff,
      Duration maxBackoff,
      String replica) {
    this.replica = replica;
    this.stub = stub;
    this.executor = executor;
    this.scheduler = scheduler;
    this.initialBackoff = initialBackoff;
    this.maxBackoff = maxBackoff;
  }

  /** Attaches a session; the future completes when the bridge confirms the attach. */
  CompletableFuture<Void> attach(McpSession session, HostHandler handler) {
    Binding b = new Binding(session, handler, executor);
    bindings.put(session.id(), b);
    synchronized (lock) {
      if (closed) {
        b.attached.completeExceptionally(new IllegalStateException("client closed"));
        return b.attached;
      }
      if (!started) {
        started = true;
        connectLocked(); // attaches every binding, this one included
      } else if (current != null) {
        current.send(ConnectRequest.newBuilder()
            .setAttach(AttachSessions.newBuilder().addSessionIds(session.id()))
            .build());
      }
      // else: a reconnect is scheduled and will attach it
    }
    return b.attached;
  }

  /**
   * Registers an openSession in progress: until {@link #endOpening}, authorization requests for {@code server}
   * of sessions this client does not hold go to {@code handler}. Opens the stream (attached to nothing) if it
   * is not open yet.
   */
  Opening beginOpening(String server, HostHandler handler) {
    Opening o = new Opening(server, handler);
    openings.add(o);
    synchronized (lock) {
      if (!closed && !started) {
        started = true;
        connectLocked();
      }
    }
    return o;
  }

  /**
   * Routes the approval requests the bridge pushes to this stream (those the principal may decide, of any
   * session) to {@code handler}, and opens the stream (attached to nothing) if it is not open yet.
   */
  void serveApprovals(HostHandler handler) {
    approver = handler;
    synchronized (lock) {
      if (!closed && !started) {
        started = true;
        connectLocked();
      }
    }
  }

  /** Delivers a server request listed rather than pushed (serveApprovals); one already known is not run again. */
  void deliver(ServerRequest r) {
    onServerRequest(r);
  }

  void endOpening(Opening o) {
    openings.remove(o);
  }

  /** How many openSession calls with an authorization handler are in progress. */
  int openings() {
    return openings.size();
  }

  /** Detaches a session; its pending requests stay pending on the bridge. */
  void detach(String sessionId) {
    Binding b = bindings.remove(sessionId);
    if (b == null) {
      return;
    }
    b.attached.cancel(false);
    synchronized (lock) {
      if (current != null) {
        current.send(ConnectRequest.newBuilder()
            .setDetach(DetachSessions.newBuilder().addSessionIds(sessionId))
            .build());
      }
    }
    inflight.values().removeIf(f -> {
      if (f.request.getSessionId().equals(sessionId)) {
        cancelHandler(f);
        return true;
      }
      return false;
    });
  }

  boolean isAttached(String sessionId) {
    return bindings.containsKey(sessionId);
  }

  /** How many times the stream was opened (1 after the first attach, more after reconnects). */
  int connects() {
    return connects.get();
  }

  /** How many times a handler method was started for a server request. */
  int handlerCalls() {
    return handlerCalls.get();
  }

  /** How many server requests the stream delivered, redeliveries included. */
  int deliveries() {
    return deliveries.get();
  }

  /** Breaks the current stream as a network failure would; the stream reconnects. For tests. */
  void breakConnection() {
    Call c;
    synchronized (lock) {
      c = current;
    }
    if (c != null) {
      c.cancel("connection broken for a test");
    }
  }

  /** Whether the stream stopped for good: closed, or its replica died. */
  boolean ended() {
    synchronized (lock) {
      return closed;
    }
  }

  void close() {
    Call c;
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      c = current;
      current = null;
    }
    if (c != null) {
      c.halfCloseAndCancelSoon();
    }
    for (Binding b : bindings.values()) {
      b.attached.cancel(false);
    }
    for (Inflight f : inflight.values()) {
      cancelHandler(f);
    }
    inflight.clear();
  }

  // ---- connection management ----

  private void connectLocked() {
    if (closed) {
      return;
    }
    Call c = new Call();
    current = c;
    connects.incrementAndGet();
    try {
      stub.connect(c);
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "mcp-bridge host stream could not start", e);
      current = null;
      scheduleReconnectLocked();
      return;
    }
    List<String> ids = new ArrayList<>(bindings.keySet());
    if (!ids.isEmpty()) {
      c.send(ConnectRequest.newBuilder().setAttach(AttachSessions.newBuilder().addAllSessionIds(ids)).build());
    }
    sweepInflight();
  }

  private void scheduleReconnectLocked() {
    if (closed) {
      return;
    }
    long base = initialBackoff.toMillis() << Math.min(failures, 20);
    long delay = Math.min(Math.max(base, 1), maxBackoff.toMillis());
    delay = (long) (delay * (0.8 + 0.4 * ThreadLocalRandom.current().nextDouble()));
    failures++;
    LOG.log(Level.DEBUG, "mcp-bridge host stream reconnects in {0} ms", delay);
    scheduler.schedule(
        () -> {
          synchronized (lock) {
            if (current == null) {
              connectLocked();
            }
          }
        },
        delay,
        TimeUnit.MILLISECONDS);
  }

  private void onCallEnded(Call c, Throwable error) {
    synchronized (lock) {
      if (current != c) {
        return;
      }
      current = null;
      if (closed) {
        return;
      }
      Status status = error == null ? Status.OK : Status.fromThrowable(error);
      LOG.log(
          Level.INFO,
          "mcp-bridge host stream ended ({0}); reconnecting",
          error == null ? "closed by the bridge" : status.getCode() + " " + status.getDescription());
      McpBridgeException failure = error == null ? null : McpBridgeException.from(error);
      if (!replica.isEmpty() && failure != null && failure.reason().orElse("").equals(Reason.REPLICA_UNAVAILABLE.name())) {
        // The replica is gone, and its sessions with it: forget them and end (McpBridgeClient.hostStreamFor opens
        // a new stream for a new session on a replica of that name).
        LOG.log(Level.WARNING, "mcp-bridge host stream to replica {0}: its sessions are lost ({1})", replica,
            failure.getMessage());
        closed = true;
        for (Binding b : bindings.values()) {
          b.attached.completeExceptionally(failure);
        }
        bindings.clear();
        return;
      }
      if (isPermanent(status.getCode()) || (failure != null && failure.reason().orElse("").equals(Reason.REPLICA_UNAVAILABLE.name()))) {
        // The bridge refuses the stream itself (no Connect, bad credentials), or the replica it goes to is gone
        // with its sessions: sessions waiting for their first attach fail instead of waiting forever.
        // Reconnecting goes on, at the backoff's pace.
        McpBridgeException e = failure;
        for (Binding b : bindings.values()) {
          b.attached.completeExceptionally(e);
        }
      }
      scheduleReconnectLocked();
    }
  }

  private static boolean isPermanent(Status.Code code) {
    return code == Status.Code.UNIMPLEMENTED
        || code == Status.Code.UNAUTHENTICATED
        || code == Status.Code.PERMISSION_DENIED
        || code == Status.Code.INVALID_ARGUMENT;
  }

  /** Forgets answered requests whose deadline is long past (their end was never seen, e.g. lost with a stream). */
  private void sweepInflight() {
    Instant cutoff = Instant.now().minus(INFLIGHT_GRACE);
    inflight.values().removeIf(f -> f.answer != null && f.request.hasDeadline()
        && RequestContext.toInstant(f.request.getDeadline()).isBefore(cutoff));
  }

  // ---- inbound ----

  private void onMessage(ConnectResponse msg) {
    switch (msg.getMessageCase()) {
      case EVENT:
        onEvent(msg.getEvent());
        break;
      case REPLY_ACK:
        onAck(msg.getReplyAck());
        break;
      case ATTACHED:
        onAttached(msg.getAttached());
        break;
      default:
        LOG.log(Level.DEBUG, "mcp-bridge host stream: unknown message {0}", msg.getMessageCase());
    }
  }

  private void onAttached(AttachedSessions a) {
    for (String id : a.getSessionIdsList()) {
      Binding b = bindings.get(id);
      if (b != null) {
        b.attached.complete(null);
      }
    }
    for (AttachFailure f : a.getFailuresList()) {
      Binding b = bindings.get(f.getSessionId());
      if (b == null) {
        continue;
      }
      McpBridgeException e = new McpBridgeException(
          Status.fromCodeValue(f.getStatus().getCode()).getCode(),
          "attach " + f.getSessionId() + " failed: " + f.getStatus().getMessage(), f.getStatus(), null);
      if (!b.attached.completeExceptionally(e)) {
        // It was attached before (a re-attach after a reconnect failed): the session is gone on the bridge.
        LOG.log(Level.WARNING, "mcp-bridge: session {0} could not be re-attached ({1}); dropping its handler",
            f.getSessionId(), f.getStatus().getMessage());
        bindings.remove(f.getSessionId(), b);
      }
    }
  }

  private void onEvent(Event e) {
    if (e.hasServerRequest()) {
      onServerRequest(e.getServerRequest());
      return;
    }
    if (e.hasRequestEnded()) {
      onRequestEnded(e.getRequestEnded());
    }
    Binding b = bindings.get(e.getSessionId());
    if (b == null) {
      return;
    }
    b.events.execute(() -> {
      try {
        b.handler.onEvent(e);
      } catch (Throwable t) {
        LOG.log(Level.WARNING, "mcp-bridge: host handler failed on a " + e.getPayloadCase() + " event of session "
            + e.getSessionId(), t);
      }
    });
  }

  private void onRequestEnded(RequestEnded ended) {
    String id = ended.getRequestId();
    tombstone(id);
    Inflight f = inflight.remove(id);
    if (f != null) {
      cancelHandler(f);
    }
  }

  private void onAck(ReplyAck ack) {
    String id = ack.getRequestId();
    if (ack.getAccepted()) {
      tombstone(id);
      inflight.remove(id);
      return;
    }
    Status.Code code = Status.fromCodeValue(ack.getError().getCode()).getCode();
    Inflight f = inflight.get(id);
    if (code == Status.Code.INVALID_ARGUMENT && f != null && !f.fallbackSent) {
      // The handler's answer does not fit the request (wrong kind, content not matching the schema). Tell the
      // server with an error rather than leave it waiting until the deadline.
      LOG.log(Level.WARNING, "mcp-bridge refused the answer to request {0}: {1}; answering with an error",
          id, ack.getError().getMessage());
      f.fallbackSent = true;
      ConnectRequest err = reply(id, HostAnswer.newBuilder().setError(JsonRpcError.newBuilder()
          .setCode(McpError.INTERNAL_ERROR)
          .setMessage("host answer refused by mcp-bridge: " + ack.getError().getMessage())).build());
      f.answer = err;
      send(err);
      return;
    }
    LOG.log(code == Status.Code.FAILED_PRECONDITION ? Level.DEBUG : Level.WARNING,
        "mcp-bridge refused the answer to request {0}: {1} {2}", id, code, ack.getError().getMessage());
    tombstone(id);
    if (f != null) {
      inflight.remove(id, f);
    }
  }

  private void onServerRequest(ServerRequest r) {
    deliveries.incrementAndGet();
    String id = r.getRequestId();
    if (isTombstoned(id)) {
      return;
    }
    Inflight fresh = new Inflight(r);
    Inflight existing = inflight.putIfAbsent(id, fresh);
    if (existing != null) {
      // Delivered again (after a reconnect): the handler runs once; resend an answer the old stream may have lost.
      ConnectRequest answer = existing.answer;
      if (answer != null) {
        LOG.log(Level.DEBUG, "mcp-bridge: request {0} delivered again; resending its answer", id);
        send(answer);
      }
      return;
    }
    Binding b = r.hasApproval() ? null : bindings.get(r.getSessionId());
    // An approval request reaches every stream of an approver, whatever sessions it holds: it goes to the
    // client's approval handler, or stays pending for another approver — never refused by a session handler.
    HostHandler handler = r.hasApproval() ? approver : b != null ? b.handler : openingHandler(r);
    if (handler == null) {
      inflight.remove(id, fresh); // not ours (any more)
      return;
    }
    handlerCalls.incrementAndGet();
    RequestContext ctx = new RequestContext(r, b != null ? b.session : null, executor);
    CompletableFuture<HostAnswer> answer;
    try (Otel.Scope scope = Otel.makeCurrent(r.getTraceContextMap())) {
      answer = invoke(handler, r, ctx);
    } catch (Throwable t) {
      answer = CompletableFuture.failedFuture(t);
    }
    fresh.handlerFuture = answer;
    answer.whenComplete((a, err) -> finish(fresh, a, err));
  }

  /**
   * The handler of the openSession in progress that an authorization request of a session this client does not
   * hold (the one being created, or "-") belongs to; null if none.
   */
  private HostHandler openingHandler(ServerRequest r) {
    if (!r.hasAuthorization()) {
      return null;
    }
    for (Opening o : openings) {
      if (o.server.equals(r.getAuthorization().getServerName())) {
        return o.handler;
      }
    }
    return null;
  }

  private static CompletableFuture<HostAnswer> invoke(HostHandler h, ServerRequest r, RequestContext ctx) {
    switch (r.getPayloadCase()) {
      case SAMPLING:
        return map(h.handleSamplingAsync(r.getSampling(), ctx), res -> HostAnswer.newBuilder().setSampling(res).build());
      case ELICITATION:
        if (r.getElicitation().getMode() == ElicitationMode.ELICITATION_MODE_URL) {
          return map(h.handleUrlElicitationAsync(r.getElicitation(), ctx),
              res -> HostAnswer.newBuilder().setElicitation(res).build());
        }
        return map(h.handleElicitationAsync(r.getElicitation(), ctx),
            res -> HostAnswer.newBuilder().setElicitation(res).build());
      case ROOTS:
        return map(h.listRootsAsync(ctx),
            roots -> HostAnswer.newBuilder().setRoots(ListRootsResult.newBuilder().addAllRoots(roots)).build());
      case AUTHORIZATION:
        return map(h.handleAuthorizationAsync(r.getAuthorization(), ctx), url -> {
          if (url.isEmpty()) {
            throw new IllegalArgumentException("handleAuthorization returned an empty redirect URL");
          }
          return HostAnswer.newBuilder().setAuthorization(AuthorizationResponse.newBuilder().setRedirectUrl(url))
              .build();
        });
      case APPROVAL:
        return map(h.handleApprovalAsync(r.getApproval(), ctx), d -> {
          if (d.getApprove() && d.getArgumentsSha256().isEmpty()) {
            d = d.toBuilder().setArgumentsSha256(r.getApproval().getArgumentsSha256()).build();
          }
          return HostAnswer.newBuilder().setApproval(d).build();
        });
      default:
        return CompletableFuture.failedFuture(McpError.methodNotFound("unknown server request " + r.getPayloadCase()));
    }
  }

  private static <T> CompletableFuture<HostAnswer> map(
      CompletionStage<T> stage, java.util.function.Function<T, HostAnswer> f) {
    if (stage == null) {
      return CompletableFuture.failedFuture(new NullPointerException("handler returned a null future"));
    }
    CompletableFuture<T> src = stage.toCompletableFuture();
    CompletableFuture<HostAnswer> out = src.thenApply(v -> {
      if (v == null) {
        throw new NullPointerException("handler returned null");
      }
      return f.apply(v);
    });
    // Cancelling the mapped future (the request ended) cancels the handler's own future too.
    out.whenComplete((v, e) -> {
      if (out.isCancelled()) {
        src.cancel(false);
      }
    });
    return out;
  }

  private void finish(Inflight f, HostAnswer answer, Throwable err) {
    String id = f.request.getRequestId();
    if (isTombstoned(id) || inflight.get(id) != f) {
      return; // ended meanwhile (server cancelled, deadline, session closed): nothing to send
    }
    ConnectRequest msg;
    if (err == null) {
      msg = reply(id, answer);
    } else {
      Throwable cause = unwrap(err);
      if (cause instanceof CancellationException) {
        msg = ConnectRequest.newBuilder()
            .setCancel(CancelServerRequest.newBuilder().setRequestId(id).setReason("withdrawn by the host handler"))
            .build();
      } else {
        JsonRpcError e = cause instanceof McpError m
            ? m.toProto()
            : JsonRpcError.newBuilder().setCode(McpError.INTERNAL_ERROR).setMessage(describe(cause)).build();
        if (!(cause instanceof McpError)) {
          LOG.log(Level.WARNING, "mcp-bridge: host handler failed on request " + id + " ("
              + f.request.getPayloadCase() + "); answering with an error", cause);
        }
        msg = reply(id, HostAnswer.newBuilder().setError(e).build());
      }
    }
    f.answer = msg;
    send(msg);
  }

  private static String describe(Throwable t) {
    String m = t.getMessage();
    return m == null || m.isEmpty() ? t.getClass().getSimpleName() : m;
  }

  private static Throwable unwrap(Throwable t) {
    while (t instanceof CompletionException && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  private static ConnectRequest reply(String id, HostAnswer answer) {
    return ConnectRequest.newBuilder().setReply(HostReply.newBuilder().setRequestId(id).setAnswer(answer)).build();
  }

  private void cancelHandler(Inflight f) {
    CompletableFuture<?> h = f.handlerFuture;
    if (h != null && !h.isDone()) {
      h.cancel(false);
    }
  }

  private void send(ConnectRequest msg) {
    Call c;
    synchronized (lock) {
      c = current;
    }
    if (c == null) {
      LOG.log(Level.DEBUG, "mcp-bridge host stream is down; the answer is sent again when the request is redelivered");
      return;
    }
    c.send(msg);
  }

  private void tombstone(String id) {
    synchronized (tombstones) {
      tombstones.put(id, Boolean.TRUE);
    }
  }

  private boolean isTombstoned(String id) {
    synchronized (tombstones) {
      return tombstones.containsKey(id);
    }
  }

  /** One Connect call. */
  private final class Call implements ClientResponseObserver<ConnectRequest, ConnectResponse> {
    private ClientCallStreamObserver<ConnectRequest> requests;
    private boolean done; // guarded by this

    @Override
    public void beforeStart(ClientCallStreamObserver<ConnectRequest> requestStream) {
      this.requests = requestStream;
    }

    synchronized void send(ConnectRequest msg) {
      if (done || requests == null) {
        return;
      }
      try {
        requests.onNext(msg);
      } catch (RuntimeException e) {
        LOG.log(Level.DEBUG, "mcp-bridge host stream: send failed", e);
      }
    }

    synchronized void cancel(String reason) {
      if (requests != null && !done) {
        requests.cancel(reason, null);
      }
    }

    synchronized void halfCloseAndCancelSoon() {
      if (requests != null && !done) {
        try {
          requests.onCompleted();
        } catch (RuntimeException ignored) {
          // already closed
        }
        // The bridge ends the stream when the host half-closes; cancel it if it has not within 2 s. (Not on the
        // client's scheduler, which close() shuts down.)
        ClientCallStreamObserver<ConnectRequest> r = requests;
        CompletableFuture.delayedExecutor(2, TimeUnit.SECONDS).execute(() -> {
          synchronized (Call.this) {
            if (!done) {
              r.cancel("client closed", null);
            }
          }
        });
      }
    }

    @Override
    public void onNext(ConnectResponse value) {
      synchronized (lock) {
        failures = 0;
      }
      try {
        onMessage(value);
      } catch (RuntimeException e) {
        LOG.log(Level.WARNING, "mcp-bridge host stream: failed to handle a message", e);
      }
    }

    @Override
    public void onError(Throwable t) {
      synchronized (this) {
        done = true;
      }
      onCallEnded(this, t);
    }

    @Override
    public void onCompleted() {
      synchronized (this) {
        done = true;
      }
      onCallEnded(this, null);
    }
  }
}
