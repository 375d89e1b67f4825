package dev.mcpbridge.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpbridge.v1.ConnectRequest;
import dev.mcpbridge.v1.CreateMessageRequest;
import dev.mcpbridge.v1.CreateMessageResult;
import dev.mcpbridge.v1.ElicitAction;
import dev.mcpbridge.v1.ElicitRequest;
import dev.mcpbridge.v1.ElicitResult;
import dev.mcpbridge.v1.ElicitationMode;
import dev.mcpbridge.v1.Event;
import dev.mcpbridge.v1.ListChanged;
import dev.mcpbridge.v1.ListRootsRequest;
import dev.mcpbridge.v1.ProgressNotification;
import dev.mcpbridge.v1.RequestOutcome;
import dev.mcpbridge.v1.Role;
import dev.mcpbridge.v1.Root;
import dev.mcpbridge.v1.SamplingMessage;
import dev.mcpbridge.v1.ServerRequest;
import dev.mcpbridge.v1.SessionState;
import dev.mcpbridge.v1.SessionStateChange;
import io.grpc.Status;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The host stream against a scripted in-process bridge: answers, errors, dedupe, reconnects. */
class HostStreamTest {
  private FakeBridge fake;
  private McpBridgeClient client;

  @BeforeEach
  void setUp() throws Exception {
    fake = new FakeBridge();
    client = fake.client();
  }

  @AfterEach
  void tearDown() {
    client.close();
    fake.close();
  }

  static ServerRequest sampling(String id, String session) {
    return FakeBridge.request(id, session).toBuilder()
        .setSampling(CreateMessageRequest.newBuilder().setMaxTokens(10).addMessages(SamplingMessage.newBuilder()
            .setRole(Role.ROLE_USER).addContent(Mcp.textBlock("hello"))))
        .build();
  }

  static ServerRequest elicitation(String id, String session, ElicitationMode mode) {
    return FakeBridge.request(id, session).toBuilder()
        .setElicitation(ElicitRequest.newBuilder().setMode(mode).setMessage("name?").setUrl("https://example.com"))
        .build();
  }

  static ServerRequest roots(String id, String session) {
    return FakeBridge.request(id, session).toBuilder().setRoots(ListRootsRequest.getDefaultInstance()).build();
  }

  /** A handler that answers everything, remembering what it was asked. */
  static class Recording implements HostHandler {
    final BlockingQueue<String> calls = new LinkedBlockingQueue<>();

    @Override
    public CreateMessageResult handleSampling(CreateMessageRequest r, RequestContext ctx) {
      calls.add("sampling " + ctx.requestId());
      return Mcp.samplingReply("canned", "echo: " + Mcp.lastUserText(r));
    }

    @Override
    public ElicitResult handleElicitation(ElicitRequest r, RequestContext ctx) {
      calls.add("elicit " + ctx.requestId());
      return Mcp.accept(Map.of("name", "Ada"));
    }

    @Override
    public List<Root> listRoots(RequestContext ctx) {
      calls.add("roots " + ctx.requestId());
      return List.of(Mcp.root("file:///work", "work"));
    }
  }

  @Test
  void declaresCapabilitiesAndAnswersEachKind() throws Exception {
    Recording h = new Recording();
    McpSession s = client.openSession("demo", h);
    var created = fake.created.take();
    assertTrue(created.getHostCapabilities().hasSampling());
    assertTrue(created.getHostCapabilities().getElicitation().getForm());
    assertFalse(created.getHostCapabilities().getElicitation().getUrl());
    assertTrue(created.getHostCapabilities().hasRoots());

    fake.push(sampling("r1", s.id()));
    ConnectRequest a = fake.nextReceived();
    assertEquals("r1", a.getReply().getRequestId());
    assertEquals("canned", a.getReply().getAnswer().getSampling().getModel());
    assertEquals("echo: hello", Mcp.text(a.getReply().getAnswer().getSampling().getContentList()));

    fake.push(elicitation("r2", s.id(), ElicitationMode.ELICITATION_MODE_FORM));
    a = fake.nextReceived();
    assertEquals(ElicitAction.ELICIT_ACTION_ACCEPT, a.getReply().getAnswer().getElicitation().getAction());
    assertEquals(Map.of("name", "Ada"), Json.toMap(a.getReply().getAnswer().getElicitation().getContent()));

    fake.push(roots("r3", s.id()));
    a = fake.nextReceived();
    assertEquals("file:///work", a.getReply().getAnswer().getRoots().getRoots(0).getUri());

    // URL mode was not implemented: the handler's default answers -32601.
    fake.push(elicitation("r4", s.id(), ElicitationMode.ELICITATION_MODE_URL));
    a = fake.nextReceived();
    assertEquals(McpError.METHOD_NOT_FOUND, a.getReply().getAnswer().getError().getCode());
  }

  @Test
  void handlerErrorsBecomeErrorAnswersAndTheStreamLivesOn() throws Exception {
    AtomicInteger n = new AtomicInteger();
    HostHandler h = new HostHandler() {
      @Override
      public CreateMessageResult handleSampling(CreateMessageRequest r, RequestContext ctx) throws Exception {
        switch (n.incrementAndGet()) {
          case 1:
            throw new IllegalStateException("model offline");
          case 2:
            throw McpError.userRejected("User rejected sampling request");
          default:
            return Mcp.samplingReply("m", "fine");
        }
      }
    };
    McpSession s = client.openSession("demo", h);
    fake.push(sampling("e1", s.id()));
    ConnectRequest a = fake.nextReceived();
    assertEquals(McpError.INTERNAL_ERROR, a.getReply().getAnswer().getError().getCode());
    assertEquals("model offline", a.getReply().getAnswer().getError().getMessage());

    fake.push(sampling("e2", s.id()));
    a = fake.nextReceived();
    assertEquals(-1, a.getReply().getAnswer().getError().getCode());
    assertEquals("User rejected sampling request", a.getReply().getAnswer().getError().getMessage());

    fake.push(sampling("e3", s.id()));
    a = fake.nextReceived();
    assertEquals("m", a.getReply().getAnswer().getSampling().getModel());
    assertEquals(1, fake.connects.get(), "the stream never broke");
  }

  @Test
  void asyncAnswersComeWhenTheFutureCompletesAndCancelWithdraws() throws Exception {
    CompletableFuture<ElicitResult> later = new CompletableFuture<>();
    CompletableFuture<ElicitResult> withdrawn = new CompletableFuture<>();
    BlockingQueue<CompletableFuture<ElicitResult>> futures = new LinkedBlockingQueue<>(List.of(later, withdrawn));
    HostHandler h = new HostHandler() {
      @Override
      public CompletionStage<ElicitResult> handleElicitationAsync(ElicitRequest r, RequestContext ctx) {
        return futures.poll();
      }
    };
    McpSession s = client.openSession("demo", h);
    fake.push(elicitation("a1", s.id(), ElicitationMode.ELICITATION_MODE_FORM));
    fake.push(elicitation("a2", s.id(), ElicitationMode.ELICITATION_MODE_FORM));
    assertNull(fake.received.poll(200, TimeUnit.MILLISECONDS), "nothing is answered before the futures complete");

    withdrawn.cancel(false);
    ConnectRequest a = fake.nextReceived();
    assertEquals("a2", a.getCancel().getRequestId());

    new Thread(() -> later.complete(Mcp.decline())).start();
    a = fake.nextReceived();
    assertEquals("a1", a.getReply().getRequestId());
    assertEquals(ElicitAction.ELICIT_ACTION_DECLINE, a.getReply().getAnswer().getElicitation().getAction());
  }

  @Test
  void requestEndedByTheBridgeCancelsTheHandlerFuture() throws Exception {
    CompletableFuture<CreateMessageResult> f = new CompletableFuture<>();
    HostHandler h = new HostHandler() {
      @Override
      public CompletionStage<CreateMessageResult> handleSamplingAsync(CreateMessageRequest r, RequestContext ctx) {
        return f;
      }
    };
    McpSession s = client.openSession("demo", h);
    fake.push(sampling("x1", s.id()));
    waitFor(() -> client.hostStream().handlerCalls() == 1);
    fake.end("x1", s.id(), RequestOutcome.REQUEST_OUTCOME_CANCELLED_BY_SERVER);
    waitFor(f::isCancelled);
    assertNull(fake.received.poll(200, TimeUnit.MILLISECONDS), "an ended request gets no answer");
  }

  @Test
  void pendingRequestsAreRedeliveredAfterAReconnectAndHandledOnce() throws Exception {
    CompletableFuture<CreateMessageResult> f = new CompletableFuture<>();
    AtomicInteger calls = new AtomicInteger();
    HostHandler h = new HostHandler() {
      @Override
      public CompletionStage<CreateMessageResult> handleSamplingAsync(CreateMessageRequest r, RequestContext ctx) {
        calls.incrementAndGet();
        return f;
      }
    };
    McpSession s = client.openSession("demo", h);
    fake.push(sampling("p1", s.id()));
    waitFor(() -> calls.get() == 1);

    fake.breakStreams();
    waitFor(() -> fake.connects.get() >= 2 && !fake.streams.isEmpty() && fake.streams.get(0).attached.contains(s.id()));
    // The bridge delivered p1 again on the new stream; the client knows it and does not call the handler again.
    f.complete(Mcp.samplingReply("late", "answer"));
    ConnectRequest a = fake.nextReceived();
    assertEquals("p1", a.getReply().getRequestId());
    assertEquals("late", a.getReply().getAnswer().getSampling().getModel());
    assertEquals(1, calls.get());
    assertFalse(fake.isPending("p1"));
  }

  @Test
  void anAnswerLostWithTheStreamIsSentAgainOnRedelivery() throws Exception {
    Recording h = new Recording();
    McpSession s = client.openSession("demo", h);
    fake.loseNextReply = true; // the first answer dies with the connection
    fake.push(sampling("l1", s.id()));
    ConnectRequest a = fake.nextReceived();
    assertEquals("l1", a.getReply().getRequestId());
    assertEquals(1, h.calls.size(), "the handler ran once");
    assertTrue(fake.connects.get() >= 2);
  }

  @Test
  void aRefusedAnswerIsReplacedByAnError() throws Exception {
    Recording h = new Recording();
    McpSession s = client.openSession("demo", h);
    fake.refuseNextReply = Status.INVALID_ARGUMENT.withDescription("content does not match the requested schema");
    fake.push(elicitation("v1", s.id(), ElicitationMode.ELICITATION_MODE_FORM));
    ConnectRequest first = fake.nextReceived();
    assertTrue(first.getReply().getAnswer().hasElicitation());
    ConnectRequest fallback = fake.nextReceived();
    assertEquals(McpError.INTERNAL_ERROR, fallback.getReply().getAnswer().getError().getCode());
    assertTrue(fallback.getReply().getAnswer().getError().getMessage().contains("requested schema"));
  }

  @Test
  void notificationsArriveInOrderAndAFailingHandlerDoesNotStopThem() throws Exception {
    BlockingQueue<String> seen = new LinkedBlockingQueue<>();
    HostHandler h = new HostHandler() {
      @Override
      public void handleNotification(String method, Event event) {
        seen.add(method + (event.hasProgress() ? " " + (int) event.getProgress().getProgress() : ""));
        if (event.hasProgress() && event.getProgress().getProgress() == 2) {
          throw new IllegalStateException("handler bug");
        }
      }

      @Override
      public void onSessionState(String sessionId, SessionStateChange change) {
        seen.add("state " + change.getState());
      }
    };
    McpSession s = client.openSession("demo", h);
    for (int i = 1; i <= 5; i++) {
      fake.publish(Event.newBuilder().setSessionId(s.id()).setSequence(i)
          .setProgress(ProgressNotification.newBuilder().setProgress(i)).build());
    }
    fake.publish(Event.newBuilder().setSessionId(s.id()).setToolsListChanged(ListChanged.getDefaultInstance()).build());
    fake.publish(Event.newBuilder().setSessionId(s.id())
        .setSessionState(SessionStateChange.newBuilder().setState(SessionState.SESSION_STATE_RECONNECTING)).build());
    List<String> want = List.of("notifications/progress 1", "notifications/progress 2", "notifications/progress 3",
        "notifications/progress 4", "notifications/progress 5", "notifications/tools/list_changed",
        "state SESSION_STATE_RECONNECTING");
    for (String w : want) {
      assertEquals(w, seen.poll(5, TimeUnit.SECONDS));
    }
  }

  @Test
  void slowHandlersDoNotBlockOthers() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    HostHandler h = new HostHandler() {
      @Override
      public CreateMessageResult handleSampling(CreateMessageRequest r, RequestContext ctx) throws Exception {
        if (ctx.requestId().equals("slow")) {
          release.await(); // a person thinking, on a handler thread
        }
        return Mcp.samplingReply("m", ctx.requestId());
      }
    };
    McpSession s = client.openSession("demo", h);
    fake.push(sampling("slow", s.id()));
    fake.push(sampling("fast", s.id()));
    assertEquals("fast", fake.nextReceived().getReply().getRequestId());
    release.countDown();
    assertEquals("slow", fake.nextReceived().getReply().getRequestId());
  }

  @Test
  void sessionWithRootsButNoHandlerAnswersFromItsRoots() throws Exception {
    McpSession s = client.openSession(SessionOptions.forServer("demo").roots(List.of(Mcp.root("file:///a", "a"))));
    assertTrue(fake.created.take().getHostCapabilities().hasRoots());
    fake.push(roots("o1", s.id()));
    assertEquals("file:///a", fake.nextReceived().getReply().getAnswer().getRoots().getRoots(0).getUri());
  }

  @Test
  void attachFailureFailsOpenSessionAndDeletesTheSession() throws Exception {
    fake.attachFailure = Status.PERMISSION_DENIED.withDescription("nope");
    McpBridgeException e = assertThrows(McpBridgeException.class, () -> client.openSession("demo", new Recording()));
    assertEquals(Status.Code.PERMISSION_DENIED, e.code());
    assertEquals("s1", fake.deleted.poll(5, TimeUnit.SECONDS));
  }

  @Test
  void aBridgeWithoutConnectFailsOpenSession() throws Exception {
    fake.connectFailure = Status.UNIMPLEMENTED.withDescription("no Connect");
    McpBridgeException e = assertThrows(McpBridgeException.class, () -> client.openSession("demo", new Recording()));
    assertEquals(Status.Code.UNIMPLEMENTED, e.code());
  }

  static void waitFor(java.util.function.BooleanSupplier cond) throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (!cond.getAsBoolean()) {
      if (System.nanoTime() > end) {
        throw new AssertionError("condition not met within 10 s");
      }
      Thread.sleep(10);
    }
  }
}
