package dev.mcpbridge.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpbridge.client.testing.TestBridge;
import dev.mcpbridge.v1.CallToolResult;
import dev.mcpbridge.v1.CreateMessageRequest;
import dev.mcpbridge.v1.CreateMessageResult;
import dev.mcpbridge.v1.Delivery;
import dev.mcpbridge.v1.ElicitRequest;
import dev.mcpbridge.v1.ElicitResult;
import dev.mcpbridge.v1.ElicitationMode;
import dev.mcpbridge.v1.Event;
import dev.mcpbridge.v1.HostAnswer;
import dev.mcpbridge.v1.HostCapabilities;
import dev.mcpbridge.v1.RequestOutcome;
import dev.mcpbridge.v1.Root;
import dev.mcpbridge.v1.SamplingCapability;
import dev.mcpbridge.v1.ServerRequest;
import io.grpc.Status;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What the demo server asks of a host — sampling, elicitation (form and URL), roots — answered by HostHandlers
 * over the real bridge, on both protocol eras: 2026-07-28 (negotiated; requests arrive as multi round-trip input
 * requests) and 2025-11-25 (pinned; requests are legacy pushes).
 */
class DemoServerRequestsTest {
  static final String NEGOTIATED = "negotiated";
  static final String LEGACY = "2025-11-25";

  static TestBridge bridge;
  static McpBridgeClient client;

  @BeforeAll
  static void startBridge() throws Exception {
    bridge = TestBridge.start(Map.of("pending", Map.of("elicitationTimeout", "2s")));
    client = bridge.client();
  }

  @AfterAll
  static void stopBridge() {
    if (client != null) {
      client.close();
    }
    if (bridge != null) {
      bridge.close();
    }
  }

  static McpSession open(String version, HostHandler handler) {
    return client.openSession(SessionOptions.forServer("demo").handler(handler)
        .protocolVersion(version.equals(NEGOTIATED) ? "" : version));
  }

  static Delivery expectedDelivery(McpSession s) {
    return s.protocolVersion().equals(LEGACY) ? Delivery.DELIVERY_LEGACY_PUSH : Delivery.DELIVERY_MULTI_ROUND_TRIP;
  }

  /** A host with a canned model and a person who answers from a map. */
  static class CannedHost implements HostHandler {
    final BlockingQueue<RequestContext> contexts = new LinkedBlockingQueue<>();
    volatile ElicitResult elicitAnswer = Mcp.accept(Map.of("name", "Ada", "age", 36));

    @Override
    public CreateMessageResult handleSampling(CreateMessageRequest request, RequestContext ctx) {
      contexts.add(ctx);
      return Mcp.samplingReply("canned-model", "You said: " + Mcp.lastUserText(request));
    }

    @Override
    public ElicitResult handleElicitation(ElicitRequest request, RequestContext ctx) {
      contexts.add(ctx);
      return elicitAnswer;
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {NEGOTIATED, LEGACY})
  void samplingIsAnsweredByTheHandler(String version) throws Exception {
    CannedHost host = new CannedHost();
    try (McpSession s = open(version, host)) {
      assertTrue(s.info().getHostCapabilities().hasSampling());
      CallToolResult r = s.callTool("sample", Map.of("prompt", "hello model", "maxTokens", 20),
          CallOptions.none().withCallId("call-sample-1"));
      assertFalse(r.getIsError(), Mcp.text(r));
      assertEquals("You said: hello model", Mcp.text(r));
      assertEquals("canned-model", Mcp.structuredMap(r).get("model"));

      RequestContext ctx = host.contexts.poll(5, TimeUnit.SECONDS);
      assertEquals(s.id(), ctx.sessionId());
      if (s.protocolVersion().equals(LEGACY)) {
        // A legacy push over stdio belongs to the session: the bridge cannot tie it to a call with certainty.
        assertEquals("", ctx.originCallId());
        assertEquals("", ctx.originName());
        assertEquals("", ctx.originMethod());
      } else {
        // An input request comes back in the call's own result: its origin is certain.
        assertEquals("call-sample-1", ctx.originCallId());
        assertEquals("sample", ctx.originName());
        assertEquals("tools/call", ctx.originMethod());
      }
      assertEquals(expectedDelivery(s), ctx.delivery());
      assertEquals(20, ctx.request().getSampling().getMaxTokens());
      assertTrue(ctx.deadline().orElseThrow().isAfter(Instant.now()));
      assertEquals(s, ctx.session().orElseThrow());
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {NEGOTIATED, LEGACY})
  void elicitationAcceptDeclineCancel(String version) {
    CannedHost host = new CannedHost();
    try (McpSession s = open(version, host)) {
      assertTrue(s.info().getHostCapabilities().getElicitation().getForm());
      CallToolResult accepted = s.callTool("elicit", Map.of());
      assertEquals("accepted: name=Ada age=36", Mcp.text(accepted));
      assertEquals(Map.of("name", "Ada", "age", 36.0), Mcp.structuredMap(accepted).get("content"));

      host.elicitAnswer = Mcp.decline();
      assertEquals("declined", Mcp.text(s.callTool("elicit", Map.of())));
      host.elicitAnswer = Mcp.cancel();
      assertEquals("cancelled", Mcp.text(s.callTool("elicit", Map.of())));
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {NEGOTIATED, LEGACY})
  void elicitationContentNotMatchingTheSchemaIsRefused(String version) {
    CannedHost host = new CannedHost();
    host.elicitAnswer = Mcp.accept(Map.of("name", "Ada", "age", "very old"));
    try (McpSession s = open(version, host)) {
      // The bridge refuses the answer (INVALID_ARGUMENT ack); the client answers with an error instead, so the
      // call ends now rather than at the elicitation deadline.
      long start = System.nanoTime();
      McpBridgeException err = null;
      CallToolResult r = null;
      try {
        r = s.callTool("elicit", Map.of());
      } catch (McpBridgeException e) {
        err = e;
      }
      assertTrue(err != null || r.getIsError() || !Mcp.text(r).startsWith("accepted"),
          "a refused answer must not be accepted: " + (r == null ? err : Mcp.text(r)));
      if (!s.protocolVersion().equals(LEGACY)) {
        // An error answer to an input request is the host refusing input: the bridge fails the call itself.
        assertTrue(err != null, "the call must fail: " + (r == null ? "" : Mcp.text(r)));
        assertEquals(Status.Code.ABORTED, err.code(), err.toString());
        assertEquals("INPUT_REFUSED", err.reason().orElse(""), err.toString());
      }
      assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10));
      // The session carries on.
      host.elicitAnswer = Mcp.decline();
      assertEquals("declined", Mcp.text(s.callTool("elicit", Map.of())));
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {NEGOTIATED, LEGACY})
  void urlElicitationAndItsCompletion(String version) throws Exception {
    Events events = new Events();
    AtomicReference<ElicitRequest> asked = new AtomicReference<>();
    HostHandler h = new HostHandler() {
      @Override
      public ElicitResult handleUrlElicitation(ElicitRequest request, RequestContext ctx) {
        asked.set(request);
        return Mcp.accept();
      }

      @Override
      public void handleNotification(String method, Event event) {
        events.add(event);
      }
    };
    try (McpSession s = open(version, h)) {
      assertTrue(s.info().getHostCapabilities().getElicitation().getUrl());
      CallToolResult r = s.callTool("elicit_url", Map.of("url", "https://example.com/consent"));
      assertEquals("url elicitation: accept", Mcp.text(r), Mcp.text(r));
      assertEquals(ElicitationMode.ELICITATION_MODE_URL, asked.get().getMode());
      assertEquals("https://example.com/consent", asked.get().getUrl());
      Event done = events.await(Event::hasElicitationComplete, 10, "elicitation_complete");
      assertEquals(asked.get().getElicitationId(), done.getElicitationComplete().getElicitationId());
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {NEGOTIATED, LEGACY})
  void rootsFromTheHandler(String version) {
    HostHandler h = new HostHandler() {
      @Override
      public List<Root> listRoots(RequestContext ctx) {
        return List.of(Mcp.root("file:///home/ada/project", "project"), Mcp.root("file:///tmp", null));
      }
    };
    try (McpSession s = open(version, h)) {
      assertTrue(s.info().getHostCapabilities().hasRoots());
      CallToolResult r = s.callTool("list_roots", Map.of());
      assertEquals("2 root(s)\nproject: file:///home/ada/project\nfile:///tmp", Mcp.text(r));
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {NEGOTIATED, LEGACY})
  void rootsFromTheSessionAndSetRoots(String version) {
    SessionOptions o = SessionOptions.forServer("demo").roots(List.of(Mcp.root("file:///one", "one")))
        .protocolVersion(version.equals(NEGOTIATED) ? "" : version);
    try (McpSession s = client.openSession(o)) {
      assertEquals("1 root(s)\none: file:///one", Mcp.text(s.callTool("list_roots", Map.of())));
      List<Root> now = s.setRoots(List.of(Mcp.root("file:///two", "two"), Mcp.root("file:///three", "three")));
      assertEquals(2, now.size());
      assertEquals(2, s.refresh().getRootsCount());
      assertEquals("2 root(s)\ntwo: file:///two\nthree: file:///three", Mcp.text(s.callTool("list_roots", Map.of())));
    }
  }

  @Test
  void undeclaredCapabilitiesNeverReachTheHost() {
    AtomicInteger calls = new AtomicInteger();
    HostHandler onlyElicitation = new HostHandler() {
      @Override
      public ElicitResult handleElicitation(ElicitRequest r, RequestContext ctx) {
        calls.incrementAndGet();
        return Mcp.decline();
      }
    };
    try (McpSession s = open(NEGOTIATED, onlyElicitation)) {
      assertFalse(s.info().getHostCapabilities().hasSampling());
      CallToolResult r = s.callTool("sample", Map.of("prompt", "hi"));
      assertTrue(r.getIsError());
      assertTrue(Mcp.text(r).contains("did not declare the sampling capability"), Mcp.text(r));
      CallToolResult roots = s.callTool("list_roots", Map.of());
      assertTrue(roots.getIsError(), Mcp.text(roots));
      assertEquals(0, calls.get());
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {NEGOTIATED, LEGACY})
  void handlerErrorsAnswerTheServerAndTheStreamLivesOn(String version) {
    AtomicInteger n = new AtomicInteger();
    HostHandler h = new HostHandler() {
      @Override
      public CreateMessageResult handleSampling(CreateMessageRequest request, RequestContext ctx) throws Exception {
        switch (n.incrementAndGet()) {
          case 1:
            throw new IllegalStateException("the model is offline");
          case 2:
            throw McpError.userRejected("User rejected sampling request");
          default:
            return Mcp.samplingReply("m", "back online");
        }
      }
    };
    try (McpSession s = open(version, h)) {
      for (String expected : List.of("the model is offline", "User rejected sampling request")) {
        String outcome;
        try {
          CallToolResult r = s.callTool("sample", Map.of("prompt", "hi"));
          assertTrue(r.getIsError(), Mcp.text(r));
          outcome = Mcp.text(r);
        } catch (McpBridgeException e) {
          outcome = e.getMessage();
        }
        assertTrue(outcome.contains(expected), outcome);
      }
      assertEquals("back online", Mcp.text(s.callTool("sample", Map.of("prompt", "hi"))));
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {NEGOTIATED, LEGACY})
  void asyncAnswersDoNotBlockOtherWork(String version) throws Exception {
    BlockingQueue<CompletableFuture<CreateMessageResult>> pending = new LinkedBlockingQueue<>();
    HostHandler h = new HostHandler() {
      @Override
      public CompletionStage<CreateMessageResult> handleSamplingAsync(CreateMessageRequest r, RequestContext ctx) {
        CompletableFuture<CreateMessageResult> f = new CompletableFuture<>();
        pending.add(f);
        return f; // answered later, from another thread
      }
    };
    try (McpSession s = open(version, h)) {
      CompletableFuture<CallToolResult> sampled = s.callToolAsync("sample", Map.of("prompt", "take your time"));
      CompletableFuture<CreateMessageResult> answer = pending.poll(10, TimeUnit.SECONDS);
      assertTrue(answer != null, "the handler was asked");
      // While the request waits for its answer, the session and the bridge carry on.
      assertEquals("meanwhile", Mcp.text(s.callTool("echo", Map.of("text", "meanwhile"))));
      try (McpSession other = client.openSession("demo")) {
        assertEquals("other", Mcp.text(other.callTool("echo", Map.of("text", "other"))));
      }
      assertFalse(sampled.isDone());
      new Thread(() -> answer.complete(Mcp.samplingReply("slow-model", "finally"))).start();
      CallToolResult r = sampled.get(10, TimeUnit.SECONDS);
      assertEquals("finally", Mcp.text(r));
      assertEquals("slow-model", Mcp.structuredMap(r).get("model"));
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {NEGOTIATED, LEGACY})
  void aWithdrawnElicitationIsCancelled(String version) {
    HostHandler h = new HostHandler() {
      @Override
      public CompletionStage<ElicitResult> handleElicitationAsync(ElicitRequest r, RequestContext ctx) {
        CompletableFuture<ElicitResult> f = new CompletableFuture<>();
        f.cancel(false); // the user closed the dialog
        return f;
      }
    };
    try (McpSession s = open(version, h)) {
      assertEquals("cancelled", Mcp.text(s.callTool("elicit", Map.of())));
    }
  }

  @Test
  void unansweredElicitationTimesOutAsCancel() throws Exception {
    CompletableFuture<ElicitResult> never = new CompletableFuture<>();
    HostHandler h = new HostHandler() {
      @Override
      public CompletionStage<ElicitResult> handleElicitationAsync(ElicitRequest r, RequestContext ctx) {
        return never;
      }
    };
    try (McpSession s = open(NEGOTIATED, h)) {
      // The bridge's elicitationTimeout (2 s in this test's config) applies the default answer: cancel.
      assertEquals("cancelled", Mcp.text(s.callTool("elicit", Map.of())));
      HostStreamTest.waitFor(never::isCancelled);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {NEGOTIATED, LEGACY})
  void endingTheCallEndsItsRequests(String version) throws Exception {
    CompletableFuture<CreateMessageResult> handlerFuture = new CompletableFuture<>();
    CountDownLatch asked = new CountDownLatch(1);
    HostHandler h = new HostHandler() {
      @Override
      public CompletionStage<CreateMessageResult> handleSamplingAsync(CreateMessageRequest r, RequestContext ctx) {
        asked.countDown();
        return handlerFuture;
      }
    };
    try (McpSession s = open(version, h)) {
      CompletableFuture<CallToolResult> call = s.callToolAsync("sample", Map.of("prompt", "never mind"));
      assertTrue(asked.await(10, TimeUnit.SECONDS));
      call.cancel(true);
      // The bridge ends the request (call ended / cancelled by server) and the client cancels the handler's future.
      HostStreamTest.waitFor(handlerFuture::isCancelled);
      assertEquals("ok", Mcp.text(s.callTool("echo", Map.of("text", "ok"))));
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {NEGOTIATED, LEGACY})
  void restStyleHostAnswersWithRespondToRequest(String version) throws Exception {
    // No handler: the session declares sampling explicitly and answers through WatchEvents + RespondToRequest.
    SessionOptions o = SessionOptions.forServer("demo")
        .capabilities(HostCapabilities.newBuilder().setSampling(SamplingCapability.getDefaultInstance()).build())
        .protocolVersion(version.equals(NEGOTIATED) ? "" : version);
    try (McpSession s = client.openSession(o)) {
      assertFalse(client.hostStream().isAttached(s.id()));
      Events events = new Events();
      try (McpSession.EventWatch w = s.watchEvents(true, events::add)) {
        CompletableFuture<CallToolResult> call = s.callToolAsync("sample", Map.of("prompt", "by hand"));
        ServerRequest req = events.await(Event::hasServerRequest, 10, "server_request").getServerRequest();
        assertEquals("by hand", Mcp.text(req.getSampling().getMessages(0).getContentList()));
        assertEquals(List.of(req.getRequestId()),
            s.pendingRequests().stream().map(ServerRequest::getRequestId).collect(java.util.stream.Collectors.toList()));

        McpBridgeException wrongKind = assertThrows(McpBridgeException.class,
            () -> s.respond(req.getRequestId(), HostAnswer.newBuilder().setElicitation(Mcp.decline()).build()));
        assertEquals(Status.Code.INVALID_ARGUMENT, wrongKind.code());

        s.respond(req.getRequestId(), HostAnswer.newBuilder().setSampling(Mcp.samplingReply("manual", "by hand too")).build());
        assertEquals("by hand too", Mcp.text(call.get(10, TimeUnit.SECONDS)));
        Event ended = events.await(Event::hasRequestEnded, 10, "request_ended");
        assertEquals(RequestOutcome.REQUEST_OUTCOME_ANSWERED, ended.getRequestEnded().getOutcome());

        McpBridgeException late = assertThrows(McpBridgeException.class,
            () -> s.respond(req.getRequestId(), HostAnswer.newBuilder().setSampling(Mcp.samplingReply("x", "y")).build()));
        assertEquals(Status.Code.FAILED_PRECONDITION, late.code());
        McpBridgeException unknown = assertThrows(McpBridgeException.class,
            () -> s.respond("no-such-request", HostAnswer.newBuilder().setSampling(Mcp.samplingReply("x", "y")).build()));
        assertEquals(Status.Code.NOT_FOUND, unknown.code());
      }
    }
  }

  @Test
  void manyConcurrentRequestsAreEachAnsweredOnce() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    HostHandler h = new HostHandler() {
      @Override
      public CreateMessageResult handleSampling(CreateMessageRequest request, RequestContext ctx) {
        calls.incrementAndGet();
        return Mcp.samplingReply("m", "re: " + Mcp.lastUserText(request));
      }
    };
    try (McpSession s = open(NEGOTIATED, h)) {
      List<CompletableFuture<CallToolResult>> all = new java.util.ArrayList<>();
      for (int i = 0; i < 10; i++) {
        all.add(s.callToolAsync("sample", Map.of("prompt", "p" + i)));
      }
      for (int i = 0; i < 10; i++) {
        assertEquals("re: p" + i, Mcp.text(all.get(i).get(30, TimeUnit.SECONDS)));
      }
      assertEquals(10, calls.get());
    }
  }
}
