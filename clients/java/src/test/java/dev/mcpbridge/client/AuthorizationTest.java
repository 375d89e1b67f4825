package dev.mcpbridge.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpbridge.v1.AuthorizationRequest;
import dev.mcpbridge.v1.ConnectRequest;
import dev.mcpbridge.v1.CreateMessageRequest;
import dev.mcpbridge.v1.CreateMessageResult;
import dev.mcpbridge.v1.HostCapabilities;
import dev.mcpbridge.v1.ServerRequest;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Authorization requests (upstream OAuth's browser step) against the scripted bridge: raised while openSession
 * waits, before the client knows the session id, and routed to the handler of the openSession in progress.
 */
class AuthorizationTest {
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

  /** Answers with the redirect URL, remembering what it was asked. */
  static class Browser implements HostHandler {
    final BlockingQueue<AuthorizationRequest> seen = new LinkedBlockingQueue<>();
    final BlockingQueue<RequestContext> contexts = new LinkedBlockingQueue<>();

    @Override
    public String handleAuthorization(AuthorizationRequest request, RequestContext context) {
      seen.add(request);
      contexts.add(context);
      return request.getRedirectUrl() + "?code=c&state=" + context.requestId();
    }
  }

  private void opensAndAnswers(String openingSessionId) throws Exception {
    fake.openingSessionId = openingSessionId;
    Browser browser = new Browser();
    McpSession s = client.openSession("secured", browser);
    assertEquals(dev.mcpbridge.v1.SessionState.SESSION_STATE_READY, s.info().getState());
    AuthorizationRequest seen = browser.seen.poll(1, TimeUnit.SECONDS);
    assertEquals("secured", seen.getServerName());
    RequestContext ctx = browser.contexts.poll();
    assertTrue(ctx.session().isEmpty(), "the session is not known while it is created");
    assertEquals(1, fake.connects.get(), "one stream, opened before CreateSession");
    ConnectRequest reply = fake.nextReceived();
    assertEquals(FakeBridge.REDIRECT + "?code=c&state=" + ctx.requestId(),
        reply.getReply().getAnswer().getAuthorization().getRedirectUrl());
    assertTrue(client.hostStream().isAttached(s.id()));
    assertEquals(0, client.hostStream().openings());
    assertEquals(HostCapabilities.getDefaultInstance(), fake.created.poll().getHostCapabilities());
    assertEquals(1, client.hostStream().handlerCalls());
  }

  @Test
  void openSessionAnswersTheAuthorizationItWaitsFor() throws Exception {
    opensAndAnswers("");
  }

  @Test
  void requestsOfSessionDashAreRoutedToo() throws Exception {
    opensAndAnswers("-");
  }

  @Test
  void asyncHandlerAnswers() throws Exception {
    HostHandler h = new HostHandler() {
      @Override
      public CompletionStage<String> handleAuthorizationAsync(AuthorizationRequest request, RequestContext context) {
        return CompletableFuture.supplyAsync(() -> request.getRedirectUrl() + "?code=async");
      }
    };
    assertTrue(Capabilities.handlesAuthorization(h));
    McpSession s = client.openSessionAsync(SessionOptions.forServer("secured-2").handler(h)).get(10, TimeUnit.SECONDS);
    assertEquals("secured-2", s.info().getServer());
    assertEquals(FakeBridge.REDIRECT + "?code=async",
        fake.nextReceived().getReply().getAnswer().getAuthorization().getRedirectUrl());
  }

  @Test
  void withoutTheMethodNoStreamIsOpenedAndNothingIsAnswered() throws Exception {
    HostHandler sampler = new HostHandler() {
      @Override
      public CreateMessageResult handleSampling(CreateMessageRequest r, RequestContext ctx) {
        throw new AssertionError("not called");
      }
    };
    assertFalse(Capabilities.handlesAuthorization(sampler));
    assertFalse(Capabilities.handlesAuthorization(new HostHandler() {}));
    CompletableFuture<McpSession> f = client.openSessionAsync(SessionOptions.forServer("secured").handler(sampler));
    Thread.sleep(300);
    assertFalse(f.isDone());
    assertEquals(0, fake.connects.get());
    assertTrue(fake.received.isEmpty());
    f.cancel(true);
  }

  @Test
  void onlyTheClientOpeningASessionOfThatServerAnswers() throws Exception {
    try (McpBridgeClient other = fake.client()) {
      Browser bystander = new Browser();
      Browser opener = new Browser();
      other.openSession("demo", bystander); // other's stream is open and attached
      McpSession s = client.openSession("secured", opener);
      assertEquals("secured", opener.seen.poll(1, TimeUnit.SECONDS).getServerName());
      assertTrue(bystander.seen.isEmpty(), "a client not opening that server left the request alone");
      assertEquals(0, other.hostStream().handlerCalls());
      // other opens a session of another OAuth server while client's stream is open: each answers its own.
      McpSession s2 = other.openSession("secured-2", bystander);
      assertEquals("secured-2", bystander.seen.poll(1, TimeUnit.SECONDS).getServerName());
      assertTrue(opener.seen.isEmpty());
      assertTrue(s.id() != null && s2.id() != null);
    }
  }

  @Test
  void aStreamThatReconnectsGetsTheRequestAgainAndTheHandlerRunsOnce() throws Exception {
    CompletableFuture<Void> release = new CompletableFuture<>();
    BlockingQueue<String> calls = new LinkedBlockingQueue<>();
    HostHandler slow = new HostHandler() {
      @Override
      public String handleAuthorization(AuthorizationRequest request, RequestContext context) throws Exception {
        calls.add(context.requestId());
        release.get(10, TimeUnit.SECONDS);
        return request.getRedirectUrl() + "?code=c";
      }
    };
    CompletableFuture<McpSession> f = client.openSessionAsync(SessionOptions.forServer("secured").handler(slow));
    assertEquals("auth-s1", calls.poll(10, TimeUnit.SECONDS));
    fake.breakStreams();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (fake.connects.get() < 2 && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    while (client.hostStream().deliveries() < 2 && System.nanoTime() < deadline) {
      Thread.sleep(10); // the new stream got the request again
    }
    assertEquals(2, client.hostStream().deliveries());
    release.complete(null);
    f.get(10, TimeUnit.SECONDS);
    assertEquals(1, client.hostStream().handlerCalls());
    assertTrue(calls.isEmpty());
  }

  @Test
  void stepUpOfAnOpenSessionGoesToItsHandlerAndTheDefaultRefuses() throws Exception {
    Browser browser = new Browser();
    McpSession s = client.openSession("demo", browser);
    fake.push(authorization("r-1", s.id(), "demo"));
    assertEquals("r-1", fake.nextReceived().getReply().getRequestId());
    assertEquals(s, browser.contexts.poll(1, TimeUnit.SECONDS).session().orElseThrow());

    McpSession plain = client.openSession(SessionOptions.forServer("demo").handler(new HostHandler() {}));
    fake.push(authorization("r-2", plain.id(), "demo"));
    ConnectRequest refused = fake.nextReceived();
    assertEquals("r-2", refused.getReply().getRequestId());
    assertEquals(McpError.METHOD_NOT_FOUND, refused.getReply().getAnswer().getError().getCode());
    assertTrue(refused.getReply().getAnswer().getError().getMessage().contains("Method not found"),
        refused.getReply().getAnswer().getError().getMessage());
  }

  @Test
  void requestsOfUnknownSessionsWithNoOpeningAreIgnored() throws Exception {
    Browser browser = new Browser();
    client.openSession("demo", browser);
    fake.publish(dev.mcpbridge.v1.Event.newBuilder().setSessionId("s-unknown")
        .setServerRequest(authorization("r-9", "s-unknown", "demo")).build());
    Thread.sleep(200);
    assertTrue(browser.seen.isEmpty());
    assertTrue(fake.received.isEmpty());
    assertEquals(List.of(), List.copyOf(browser.seen));
    assertEquals(0, client.hostStream().handlerCalls());
  }

  static ServerRequest authorization(String id, String session, String server) {
    return FakeBridge.request(id, session).toBuilder()
        .setAuthorization(AuthorizationRequest.newBuilder().setAuthorizationUrl("http://127.0.0.1:1/authorize")
            .setRedirectUrl(FakeBridge.REDIRECT).setServerName(server))
        .build();
  }
}
