package dev.mcpbridge.client;

import com.google.protobuf.Any;
import com.google.rpc.ErrorInfo;
import dev.mcpbridge.v1.AttachFailure;
import dev.mcpbridge.v1.AttachedSessions;
import dev.mcpbridge.v1.BridgeServiceGrpc;
import dev.mcpbridge.v1.CallToolRequest;
import dev.mcpbridge.v1.CallToolResponse;
import dev.mcpbridge.v1.CallToolResult;
import dev.mcpbridge.v1.CancelCallRequest;
import dev.mcpbridge.v1.CancelCallResponse;
import dev.mcpbridge.v1.ConnectRequest;
import dev.mcpbridge.v1.ConnectResponse;
import dev.mcpbridge.v1.CreateSessionRequest;
import dev.mcpbridge.v1.CreateSessionResponse;
import dev.mcpbridge.v1.DeleteSessionRequest;
import dev.mcpbridge.v1.DeleteSessionResponse;
import dev.mcpbridge.v1.Event;
import dev.mcpbridge.v1.ListToolsRequest;
import dev.mcpbridge.v1.ListToolsResponse;
import dev.mcpbridge.v1.ProgressNotification;
import dev.mcpbridge.v1.ReplyAck;
import dev.mcpbridge.v1.RequestEnded;
import dev.mcpbridge.v1.RequestOutcome;
import dev.mcpbridge.v1.ServerRequest;
import dev.mcpbridge.v1.Session;
import dev.mcpbridge.v1.SessionState;
import dev.mcpbridge.v1.StreamCallToolRequest;
import dev.mcpbridge.v1.StreamCallToolResponse;
import dev.mcpbridge.v1.Tool;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A scripted, in-process BridgeService for unit tests of the client's plumbing (the host stream above all): it
 * keeps pending server requests, delivers them to attached Connect streams (again after a re-attach), records
 * answers and acknowledges them like the real bridge. Integration tests use the real binary instead.
 */
final class FakeBridge implements AutoCloseable {
  final String name = "fake-bridge-" + System.nanoTime();
  final Server server;
  final Impl impl = new Impl();

  /** Answers and cancellations the fake received, in order. */
  final BlockingQueue<ConnectRequest> received = new LinkedBlockingQueue<>();
  /** CreateSession requests. */
  final BlockingQueue<CreateSessionRequest> created = new LinkedBlockingQueue<>();
  final BlockingQueue<String> deleted = new LinkedBlockingQueue<>();
  final AtomicInteger connects = new AtomicInteger();
  final BlockingQueue<String> cancelledCalls = new LinkedBlockingQueue<>();
  /** CallTool and StreamCallTool requests, in order. */
  final List<com.google.protobuf.Message> toolCalls = new CopyOnWriteArrayList<>();
  final List<String> cancelCalls = new CopyOnWriteArrayList<>(); // CancelCall's call ids, in order
  /** Failures of the next tool call attempts, one per attempt (a stream fails after one progress event). */
  final BlockingQueue<com.google.rpc.Status> callFailures = new LinkedBlockingQueue<>();

  /** A failure as the bridge (a non-empty reason: its ErrorInfo) or the transport (no reason) reports it. */
  static com.google.rpc.Status failure(Status.Code code, String message, String reason) {
    com.google.rpc.Status.Builder st = com.google.rpc.Status.newBuilder().setCode(code.value()).setMessage(message);
    if (!reason.isEmpty()) {
      st.addDetails(Any.pack(ErrorInfo.newBuilder().setReason(reason).setDomain("mcp-bridge").build()));
    }
    return st.build();
  }

  final Map<String, ServerRequest> pending = new LinkedHashMap<>(); // guarded by this
  final Set<String> knownSessions = ConcurrentHashMap.newKeySet();
  final List<HostStreamState> streams = new CopyOnWriteArrayList<>();

  /** How to treat the next replies: null = accept; a Status = refuse with it. */
  volatile Status refuseNextReply;
  /** Drop (do not record or ack) the next reply and break the stream, as if the network lost it. */
  volatile boolean loseNextReply;
  volatile Status connectFailure;
  /** Like connectFailure, with details (e.g. the proxy's REPLICA_UNAVAILABLE). */
  volatile com.google.rpc.Status connectFailureProto;
  volatile Status attachFailure;

  /**
   * Servers whose sessions need a person's OAuth authorization while CreateSession waits, as the bridge does for
   * an upstream with {@code auth: {type: oauth}}: the request goes to every Connect stream (attached to any
   * session or none, and to streams that connect while it is pending); CreateSession returns once it is
   * answered with a redirect URL starting with {@link #REDIRECT}, fails otherwise.
   */
  static final Set<String> OAUTH_SERVERS = Set.of("secured", "secured-2");
  static final String REDIRECT = "http://127.0.0.1/mcp-bridge/oauth/callback";
  /** The session id authorization requests carry; "" = the id the session will have. */
  volatile String openingSessionId = "";
  /** Authorization requests of sessions being created → what to do with the answer. */
  final Map<String, java.util.function.Consumer<ConnectRequest>> opening = new ConcurrentHashMap<>();

  /** Prefix of the session ids the fake makes: "s" gives s1, s2...; "s-r1." ids of replica r1. */
  volatile String idPrefix = "s";
  /** "method routing-key" of every call, the key being the mcpbridge-session metadata ("" when absent). */
  final BlockingQueue<String> routing = new LinkedBlockingQueue<>();

  FakeBridge() throws Exception {
    io.grpc.Metadata.Key<String> key = io.grpc.Metadata.Key.of("mcpbridge-session", io.grpc.Metadata.ASCII_STRING_MARSHALLER);
    io.grpc.ServerInterceptor recordRouting = new io.grpc.ServerInterceptor() {
      @Override
      public <Q, R> io.grpc.ServerCall.Listener<Q> interceptCall(
          io.grpc.ServerCall<Q, R> call, io.grpc.Metadata headers, io.grpc.ServerCallHandler<Q, R> next) {
        String v = headers.get(key);
        routing.add(call.getMethodDescriptor().getBareMethodName() + " " + (v == null ? "" : v));
        return next.startCall(call, headers);
      }
    };
    server = InProcessServerBuilder.forName(name)
        .addService(io.grpc.ServerInterceptors.intercept(impl, recordRouting)).build().start();
  }

  private final List<ManagedChannel> channels = new CopyOnWriteArrayList<>();

  ManagedChannel channel() {
    ManagedChannel ch = InProcessChannelBuilder.forName(name).build();
    channels.add(ch);
    return ch;
  }

  McpBridgeClient client() {
    return McpBridgeClient.builder()
        .channel(channel())
        .reconnectBackoff(java.time.Duration.ofMillis(20), java.time.Duration.ofMillis(200))
        .attachTimeout(java.time.Duration.ofSeconds(10))
        .build();
  }

  /** Parks a server request and delivers it to the streams attached to its session. */
  void push(ServerRequest r) {
    List<HostStreamState> targets = new ArrayList<>();
    synchronized (this) { // atomic with attach: a request is delivered once per attachment
      pending.put(r.getRequestId(), r);
      for (HostStreamState s : streams) {
        if (s.attached.contains(r.getSessionId())) {
          targets.add(s);
        }
      }
    }
    Event e = Event.newBuilder().setSessionId(r.getSessionId()).setServerRequest(r).build();
    for (HostStreamState s : targets) {
      s.send(ConnectResponse.newBuilder().setEvent(e).build());
    }
  }

  /** Sends an event to the streams attached to its session. */
  void publish(Event e) {
    for (HostStreamState s : streams) {
      if (s.attached.contains(e.getSessionId())) {
        s.send(ConnectResponse.newBuilder().setEvent(e).build());
      }
    }
  }

  /** Ends a pending request as the bridge would (server cancelled, timed out…). */
  void end(String requestId, String sessionId, RequestOutcome outcome) {
    synchronized (this) {
      pending.remove(requestId);
    }
    publish(Event.newBuilder().setSessionId(sessionId)
        .setRequestEnded(RequestEnded.newBuilder().setRequestId(requestId).setSessionId(sessionId).setOutcome(outcome))
        .build());
  }

  /** Breaks every Connect stream with UNAVAILABLE, like a lost connection. */
  void breakStreams() {
    for (HostStreamState s : streams) {
      s.fail(Status.UNAVAILABLE.withDescription("fake network failure"));
    }
  }

  ConnectRequest nextReceived() throws InterruptedException {
    ConnectRequest r = received.poll(10, TimeUnit.SECONDS);
    if (r == null) {
      throw new AssertionError("the fake bridge received nothing within 10 s");
    }
    return r;
  }

  synchronized boolean isPending(String id) {
    return pending.containsKey(id);
  }

  @Override
  public void close() {
    channels.forEach(ManagedChannel::shutdownNow);
    server.shutdownNow();
  }

  static ServerRequest request(String id, String session) {
    return ServerRequest.newBuilder().setRequestId(id).setSessionId(session).build();
  }

  /** One Connect stream as the fake sees it. */
  final class HostStreamState implements StreamObserver<ConnectRequest> {
    final ServerCallStreamObserver<ConnectResponse> out;
    final Set<String> attached = ConcurrentHashMap.newKeySet();
    private boolean done;

    HostStreamState(StreamObserver<ConnectResponse> out) {
      this.out = (ServerCallStreamObserver<ConnectResponse>) out;
    }

    synchronized void send(ConnectResponse m) {
      if (!done) {
        try {
          out.onNext(m);
        } catch (RuntimeException ignored) {
          done = true;
        }
      }
    }

    synchronized void fail(Status s) {
      if (!done) {
        done = true;
        streams.remove(this);
        out.onError(s.asRuntimeException());
      }
    }

    @Override
    public void onNext(ConnectRequest m) {
      switch (m.getActionCase()) {
        case ATTACH: {
          AttachedSessions.Builder ack = AttachedSessions.newBuilder();
          List<String> ok = new ArrayList<>();
          List<ServerRequest> again;
          synchronized (FakeBridge.this) {
            for (String id : m.getAttach().getSessionIdsList()) {
              if (attachFailure != null || !knownSessions.contains(id)) {
                Status st = attachFailure != null ? attachFailure : Status.NOT_FOUND.withDescription("no session " + id);
                ack.addFailures(AttachFailure.newBuilder().setSessionId(id)
                    .setStatus(com.google.rpc.Status.newBuilder().setCode(st.getCode().value()).setMessage(
                        st.getDescription() == null ? "" : st.getDescription())));
              } else {
                attached.add(id);
                ok.add(id);
              }
            }
            again = new ArrayList<>(pending.values());
          }
          ack.addAllSessionIds(attached);
          send(ConnectResponse.newBuilder().setAttached(ack).build());
          for (ServerRequest r : again) {
            if (ok.contains(r.getSessionId())) {
              send(ConnectResponse.newBuilder()
                  .setEvent(Event.newBuilder().setSessionId(r.getSessionId()).setServerRequest(r)).build());
            }
          }
          break;
        }
        case DETACH:
          attached.removeAll(m.getDetach().getSessionIdsList());
          send(ConnectResponse.newBuilder().setAttached(AttachedSessions.newBuilder().addAllSessionIds(attached)).build());
          break;
        case REPLY:
        case CANCEL: {
          String id = m.hasReply() ? m.getReply().getRequestId() : m.getCancel().getRequestId();
          if (loseNextReply) {
            loseNextReply = false;
            fail(Status.UNAVAILABLE.withDescription("reply lost"));
            return;
          }
          Status refuse = refuseNextReply;
          if (refuse != null) {
            refuseNextReply = null;
            received.add(m);
            send(ConnectResponse.newBuilder().setReplyAck(ReplyAck.newBuilder().setRequestId(id).setAccepted(false)
                .setError(com.google.rpc.Status.newBuilder().setCode(refuse.getCode().value())
                    .setMessage(refuse.getDescription() == null ? "" : refuse.getDescription()))).build());
            return;
          }
          ServerRequest r;
          synchronized (FakeBridge.this) {
            r = pending.remove(id);
          }
          received.add(m);
          if (r == null) {
            send(ConnectResponse.newBuilder().setReplyAck(ReplyAck.newBuilder().setRequestId(id).setAccepted(false)
                .setError(com.google.rpc.Status.newBuilder().setCode(Status.Code.FAILED_PRECONDITION.value())
                    .setMessage("request already ended"))).build());
            return;
          }
          send(ConnectResponse.newBuilder().setReplyAck(ReplyAck.newBuilder().setRequestId(id).setAccepted(true)).build());
          RequestOutcome outcome = m.hasReply() ? RequestOutcome.REQUEST_OUTCOME_ANSWERED
              : RequestOutcome.REQUEST_OUTCOME_CANCELLED_BY_HOST;
          java.util.function.Consumer<ConnectRequest> done = opening.remove(id);
          if (done != null) {
            Event ended = Event.newBuilder().setSessionId(r.getSessionId()).setRequestEnded(RequestEnded.newBuilder()
                .setRequestId(id).setSessionId(r.getSessionId()).setOutcome(outcome)).build();
            for (HostStreamState s : streams) {
              s.send(ConnectResponse.newBuilder().setEvent(ended).build());
            }
            done.accept(m);
          } else {
            end(id, r.getSessionId(), outcome);
          }
          break;
        }
        default:
          break;
      }
    }

    @Override
    public void onError(Throwable t) {
      synchronized (this) {
        done = true;
      }
      streams.remove(this);
    }

    @Override
    public void onCompleted() {
      synchronized (this) {
        if (!done) {
          done = true;
          out.onCompleted();
        }
      }
      streams.remove(this);
    }
  }

  final class Impl extends BridgeServiceGrpc.BridgeServiceImplBase {
    private final AtomicInteger ids = new AtomicInteger();

    @Override
    public StreamObserver<ConnectRequest> connect(StreamObserver<ConnectResponse> responseObserver) {
      connects.incrementAndGet();
      Status f = connectFailure;
      if (f != null || connectFailureProto != null) {
        responseObserver.onError(f != null ? f.asRuntimeException() : StatusProto.toStatusRuntimeException(connectFailureProto));
        return new StreamObserver<>() {
          @Override public void onNext(ConnectRequest value) {}
          @Override public void onError(Throwable t) {}
          @Override public void onCompleted() {}
        };
      }
      HostStreamState s = new HostStreamState(responseObserver);
      List<ServerRequest> replay = new ArrayList<>();
      synchronized (FakeBridge.this) {
        streams.add(s);
        for (ServerRequest r : pending.values()) {
          if (opening.containsKey(r.getRequestId())) {
            replay.add(r);
          }
        }
      }
      for (ServerRequest r : replay) {
        s.send(ConnectResponse.newBuilder()
            .setEvent(Event.newBuilder().setSessionId(r.getSessionId()).setServerRequest(r)).build());
      }
      return s;
    }

    @Override
    public void createSession(CreateSessionRequest request, StreamObserver<CreateSessionResponse> out) {
      created.add(request);
      if (request.getServer().equals("missing")) {
        out.onError(Status.NOT_FOUND.withDescription("no server missing").asRuntimeException());
        return;
      }
      String id = idPrefix + ids.incrementAndGet();
      if (OAUTH_SERVERS.contains(request.getServer())) {
        String rid = "auth-" + id;
        String sid = openingSessionId.isEmpty() ? id : openingSessionId;
        ServerRequest r = ServerRequest.newBuilder().setRequestId(rid).setSessionId(sid)
            .setAuthorization(dev.mcpbridge.v1.AuthorizationRequest.newBuilder()
                .setAuthorizationUrl("http://127.0.0.1:1/authorize?state=" + rid).setRedirectUrl(REDIRECT)
                .setServerName(request.getServer()))
            .build();
        opening.put(rid, answer -> {
          if (answer.hasReply() && answer.getReply().getAnswer().getAuthorization().getRedirectUrl().startsWith(REDIRECT)) {
            ready(id, request, out);
          } else {
            out.onError(Status.UNAUTHENTICATED.withDescription("authorization of " + request.getServer() + " failed")
                .asRuntimeException());
          }
        });
        List<HostStreamState> targets;
        synchronized (FakeBridge.this) {
          pending.put(rid, r);
          targets = new ArrayList<>(streams);
        }
        Event e = Event.newBuilder().setSessionId(sid).setServerRequest(r).build();
        for (HostStreamState s : targets) {
          s.send(ConnectResponse.newBuilder().setEvent(e).build());
        }
        return; // answered when the authorization is
      }
      ready(id, request, out);
    }

    private void ready(String id, CreateSessionRequest request, StreamObserver<CreateSessionResponse> out) {
      knownSessions.add(id);
      out.onNext(CreateSessionResponse.newBuilder().setSession(Session.newBuilder().setSessionId(id)
          .setServer(request.getServer()).setState(SessionState.SESSION_STATE_READY).setProtocolVersion("2025-11-25")
          .setHostCapabilities(request.getHostCapabilities()).addAllRoots(request.getRootsList())).build());
      out.onCompleted();
    }

    @Override
    public void deleteSession(DeleteSessionRequest request, StreamObserver<DeleteSessionResponse> out) {
      deleted.add(request.getSessionId());
      if (!knownSessions.remove(request.getSessionId())) {
        out.onError(Status.NOT_FOUND.asRuntimeException());
        return;
      }
      out.onNext(DeleteSessionResponse.getDefaultInstance());
      out.onCompleted();
    }

    @Override
    public void listTools(ListToolsRequest request, StreamObserver<ListToolsResponse> out) {
      int page = request.getPageToken().isEmpty() ? 0 : Integer.parseInt(request.getPageToken());
      ListToolsResponse.Builder b = ListToolsResponse.newBuilder();
      for (int i = 0; i < 2; i++) {
        b.addTools(Tool.newBuilder().setName("tool" + (page * 2 + i)));
      }
      if (page < 2) {
        b.setNextPageToken(Integer.toString(page + 1));
      }
      out.onNext(b.build());
      out.onCompleted();
    }

    @Override
    public void cancelCall(CancelCallRequest request, StreamObserver<CancelCallResponse> out) {
      cancelCalls.add(request.getCallId());
      boolean known = toolCalls.stream().anyMatch(m -> m instanceof CallToolRequest r && r.getCallId().equals(request.getCallId())
          || m instanceof StreamCallToolRequest r2 && r2.getCallId().equals(request.getCallId()));
      if (!known) {
        out.onError(StatusProto.toStatusRuntimeException(failure(Status.Code.NOT_FOUND, "no such call", "CALL_NOT_FOUND")));
        return;
      }
      out.onNext(CancelCallResponse.getDefaultInstance());
      out.onCompleted();
    }

    @Override
    public void callTool(CallToolRequest request, StreamObserver<CallToolResponse> out) {
      toolCalls.add(request);
      com.google.rpc.Status failure = callFailures.poll();
      if (failure != null) {
        out.onError(StatusProto.toStatusRuntimeException(failure));
        return;
      }
      switch (request.getName()) {
        case "resume":
          out.onNext(CallToolResponse.newBuilder().setCallId(request.getCallId())
              .setResult(CallToolResult.newBuilder().addContent(Mcp.textBlock("resume=" + request.getResume())))
              .build());
          out.onCompleted();
          return;
        case "upstream_error": {
          com.google.rpc.Status st = com.google.rpc.Status.newBuilder()
              .setCode(Status.Code.INVALID_ARGUMENT.value()).setMessage("bad params")
              .addDetails(Any.pack(ErrorInfo.newBuilder().setReason("UPSTREAM_ERROR").setDomain("mcp-bridge")
                  .putMetadata("jsonrpcCode", "-32602").putMetadata("jsonrpcMessage", "bad params").build()))
              .build();
          out.onError(StatusProto.toStatusRuntimeException(st));
          return;
        }
        case "hang":
          Context.current().addListener(ctx -> cancelledCalls.add(request.getCallId()), Runnable::run);
          return; // never answers
        default:
          out.onNext(CallToolResponse.newBuilder().setCallId(request.getCallId())
              .setResult(CallToolResult.newBuilder().addContent(Mcp.textBlock(request.getName() + " "
                  + Json.toJson(request.getArguments())))).build());
          out.onCompleted();
      }
    }

    @Override
    public void streamCallTool(StreamCallToolRequest request, StreamObserver<StreamCallToolResponse> out) {
      toolCalls.add(request);
      com.google.rpc.Status failure = callFailures.poll();
      if (failure != null) {
        out.onNext(StreamCallToolResponse.newBuilder().setCallId(request.getCallId())
            .setProgress(ProgressNotification.newBuilder().setProgress(toolCalls.size())).build());
        out.onError(StatusProto.toStatusRuntimeException(failure));
        return;
      }
      if (request.getName().equals("resume")) {
        out.onNext(StreamCallToolResponse.newBuilder().setCallId(request.getCallId())
            .setResult(CallToolResult.newBuilder().addContent(Mcp.textBlock("resume=" + request.getResume()))).build());
        out.onCompleted();
        return;
      }
      for (int i = 1; i <= 3; i++) {
        out.onNext(StreamCallToolResponse.newBuilder().setCallId("c")
            .setProgress(ProgressNotification.newBuilder().setProgress(i).setTotal(3)).build());
      }
      out.onNext(StreamCallToolResponse.newBuilder().setCallId("c")
          .setResult(CallToolResult.newBuilder().addContent(Mcp.textBlock("done"))).build());
      out.onCompleted();
    }
  }
}
