package dev.mcpbridge.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpbridge.client.testing.TestBridge;
import dev.mcpbridge.v1.AuthenticationMethod;
import dev.mcpbridge.v1.CreateMessageRequest;
import dev.mcpbridge.v1.CreateMessageResult;
import dev.mcpbridge.v1.GetIdentityResponse;
import dev.mcpbridge.v1.HostAnswer;
import dev.mcpbridge.v1.Session;
import io.grpc.Status;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Bearer tokens: the client sends them, and a session belongs to the principal that opened it. */
class AuthTest {
  static TestBridge bridge;
  static McpBridgeClient alice;
  static McpBridgeClient bob;

  @BeforeAll
  static void startBridge() throws Exception {
    Path tokens = Files.createTempDirectory("mcpbridge-tokens").resolve("tokens.json");
    Files.writeString(tokens, "{\"alice\": \"tok-alice-4f1c9e\", \"bob\": \"tok-bob-77a2d0\"}");
    bridge = TestBridge.start(Map.of("auth", Map.of("tokensFile", tokens.toString())));
    alice = client("tok-alice-4f1c9e");
    bob = client("tok-bob-77a2d0");
  }

  static McpBridgeClient client(String token) {
    return McpBridgeClient.builder().target(bridge.target()).bearerToken(token)
        .defaultTimeout(Duration.ofSeconds(30)).build();
  }

  @AfterAll
  static void stopBridge() {
    for (McpBridgeClient c : new McpBridgeClient[] {alice, bob}) {
      if (c != null) {
        c.close();
      }
    }
    if (bridge != null) {
      bridge.close();
    }
  }

  @Test
  void withoutATokenCallsAreUnauthenticated() {
    try (McpBridgeClient anonymous = McpBridgeClient.connect(bridge.target());
        McpBridgeClient wrong = client("not-a-token")) {
      assertEquals(Status.Code.UNAUTHENTICATED,
          assertThrows(McpBridgeException.class, anonymous::listServers).code());
      assertEquals(Status.Code.UNAUTHENTICATED,
          assertThrows(McpBridgeException.class, wrong::listServers).code());
    }
  }

  @Test
  void getIdentitySaysWhoTheCallerIs() {
    GetIdentityResponse me = alice.getIdentity();
    assertEquals("alice", me.getPrincipal());
    assertEquals(AuthenticationMethod.AUTHENTICATION_METHOD_TOKEN, me.getAuthentication());
    assertEquals(false, me.getApprover());
    try (McpBridgeClient wrong = client("not-a-token")) {
      assertEquals(Status.Code.UNAUTHENTICATED,
          assertThrows(McpBridgeException.class, wrong::getIdentity).code());
    }
  }

  @Test
  void sessionsBelongToTheirPrincipal() {
    McpSession mine = alice.openSession("demo", new HostHandler() {
      @Override
      public CreateMessageResult handleSampling(CreateMessageRequest r, RequestContext ctx) {
        return Mcp.samplingReply("alice-model", "alice answers");
      }
    });
    try {
      assertEquals("alice answers", Mcp.text(mine.callTool("sample", Map.of("prompt", "hi"))));
      assertTrue(alice.listSessions().stream().map(Session::getSessionId).collect(Collectors.toSet())
          .contains(mine.id()));
      assertTrue(bob.listSessions().stream().noneMatch(s -> s.getSessionId().equals(mine.id())));
      assertEquals(Status.Code.NOT_FOUND,
          assertThrows(McpBridgeException.class, () -> bob.getSession(mine.id())).code());
      assertEquals(Status.Code.NOT_FOUND,
          assertThrows(McpBridgeException.class, () -> bob.attachSession(mine.id(), null)).code());
      assertEquals(Status.Code.NOT_FOUND,
          assertThrows(McpBridgeException.class, () -> bob.deleteSession(mine.id())).code());
      assertEquals("still mine", Mcp.text(mine.callTool("echo", Map.of("text", "still mine"))));
    } finally {
      mine.close();
    }
  }

  @Test
  void anotherPrincipalCannotAnswerForASession() throws Exception {
    // Alice's session declares sampling but has no handler; Bob tries to answer its request.
    McpSession mine = alice.openSession(SessionOptions.forServer("demo").capabilities(
        dev.mcpbridge.v1.HostCapabilities.newBuilder()
            .setSampling(dev.mcpbridge.v1.SamplingCapability.getDefaultInstance()).build()));
    try (McpBridgeClient bobView = client("tok-bob-77a2d0")) {
      Events events = new Events();
      McpSession.EventWatch watch = mine.watchEvents(true, events::add);
      var call = mine.callToolAsync("sample", Map.of("prompt", "whose?"));
      String id = events.await(dev.mcpbridge.v1.Event::hasServerRequest, 10, "server_request")
          .getServerRequest().getRequestId();
      watch.close();
      HostAnswer answer = HostAnswer.newBuilder().setSampling(Mcp.samplingReply("bob", "bob answers")).build();
      McpSession fake = new McpSession(bobView, Session.newBuilder().setSessionId(mine.id()).build(), java.util.List.of());
      assertEquals(Status.Code.NOT_FOUND, assertThrows(McpBridgeException.class, () -> fake.respond(id, answer)).code());
      mine.respond(id, HostAnswer.newBuilder().setSampling(Mcp.samplingReply("alice", "alice answers")).build());
      assertEquals("alice answers", Mcp.text(call.get(10, java.util.concurrent.TimeUnit.SECONDS)));
    } finally {
      mine.close();
    }
  }
}
