package dev.mcpbridge.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.mcpbridge.client.testing.TestBridge;
import dev.mcpbridge.v1.AuthorizationRequest;
import dev.mcpbridge.v1.SessionState;
import io.grpc.Status;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Upstream OAuth through the real bridge: OAuth-protected MCP servers (internal/testauth/cmd/oauthpeer, built
 * here with {@code go build} unless MCPBRIDGE_OAUTHPEER / -Dmcpbridge.oauthpeer names a binary) configured with
 * {@code auth: {type: oauth}}. openSession waits for a person; the handler plays the browser — it fetches the
 * authorization URL without following the redirect (the authorization server approves at once) and answers
 * with the Location — and the session becomes ready.
 */
class OAuthIntegrationTest {
  static Process peer;
  static TestBridge bridge;
  static McpBridgeClient client;

  @BeforeAll
  static void start() throws Exception {
    Path bin = oauthpeer();
    peer = new ProcessBuilder(bin.toString(), "-names", "one,two,three")
        .redirectError(ProcessBuilder.Redirect.INHERIT).start();
    BufferedReader out = new BufferedReader(new InputStreamReader(peer.getInputStream(), StandardCharsets.UTF_8));
    String line = out.readLine();
    if (line == null) {
      fail("oauthpeer exited before printing its URLs");
    }
    com.google.protobuf.Struct urls = Json.parseStruct(line).getFieldsOrThrow("servers").getStructValue();
    Map<String, Object> servers = new LinkedHashMap<>();
    for (String name : List.of("one", "two", "three")) {
      servers.put("secured-" + name, Map.of("url", urls.getFieldsOrThrow(name).getStringValue(),
          "auth", Map.of("type", "oauth")));
    }
    bridge = TestBridge.start(Map.of("mcpServers", servers, "oauth", Map.of("authorizationTimeout", "1m")));
    client = bridge.client();
  }

  @AfterAll
  static void stop() throws Exception {
    if (client != null) {
      client.close();
    }
    if (bridge != null) {
      bridge.close();
    }
    if (peer != null) {
      peer.getOutputStream().close(); // oauthpeer stops when its stdin closes
      if (!peer.waitFor(10, TimeUnit.SECONDS)) {
        peer.destroyForcibly();
      }
    }
  }

  /** The oauthpeer binary: given, or built with go; skips (fails with MCPBRIDGE_REQUIRE_PEERS=1) without go. */
  static Path oauthpeer() throws Exception {
    String given = System.getenv("MCPBRIDGE_OAUTHPEER");
    if (given == null || given.isEmpty()) {
      given = System.getProperty("mcpbridge.oauthpeer", "");
    }
    if (!given.isEmpty()) {
      return Paths.get(given).toAbsolutePath();
    }
    Path go = null;
    for (String dir : (System.getenv().getOrDefault("PATH", "") + File.pathSeparator + "/usr/local/go/bin")
        .split(File.pathSeparator)) {
      Path p = Paths.get(dir, "go");
      if (!dir.isEmpty() && Files.isExecutable(p)) {
        go = p;
        break;
      }
    }
    if (go == null) {
      String why = "go not found, so internal/testauth/cmd/oauthpeer cannot be built (or set MCPBRIDGE_OAUTHPEER)";
      if (TestBridge.requirePeers()) {
        fail(why);
      }
      assumeTrue(false, why);
    }
    Path repo = Paths.get("../..").toAbsolutePath().normalize();
    Path out = Files.createTempDirectory("mcpbridge-oauthpeer").resolve("oauthpeer");
    Process build = new ProcessBuilder(go.toString(), "build", "-o", out.toString(), "./internal/testauth/cmd/oauthpeer")
        .directory(repo.toFile()).redirectErrorStream(true).start();
    String log = new String(build.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!build.waitFor(300, TimeUnit.SECONDS) || build.exitValue() != 0) {
      fail("go build oauthpeer failed:\n" + log);
    }
    return out;
  }

  /** Plays the person's browser: GETs the authorization URL and returns where it redirects. */
  static String openWithoutRedirect(String url) throws Exception {
    HttpClient http = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER)
        .connectTimeout(Duration.ofSeconds(10)).build();
    HttpResponse<Void> resp = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10))
        .GET().build(), HttpResponse.BodyHandlers.discarding());
    String loc = resp.headers().firstValue("Location").orElse("");
    assertEquals(302, resp.statusCode(), "authorization endpoint, Location " + loc);
    return loc;
  }

  static class Browser implements HostHandler {
    final BlockingQueue<AuthorizationRequest> seen = new LinkedBlockingQueue<>();

    @Override
    public String handleAuthorization(AuthorizationRequest request, RequestContext context) throws Exception {
      seen.add(request);
      String url = request.getAuthorizationUrl();
      assertTrue(url.contains("code_challenge_method=S256") && url.contains("resource=") && url.contains("state="), url);
      String loc = openWithoutRedirect(url);
      assertTrue(loc.startsWith(request.getRedirectUrl()), loc + " vs " + request.getRedirectUrl());
      return loc;
    }
  }

  @Test
  void openSessionAuthorizesThroughTheHandler() throws Exception {
    Browser browser = new Browser();
    try (McpSession s = client.openSession("secured-one", browser)) {
      assertEquals(SessionState.SESSION_STATE_READY, s.info().getState());
      assertEquals(List.of("secured-one"), browser.seen.stream().map(AuthorizationRequest::getServerName).toList());
      assertEquals("this is one", Mcp.text(s.callTool("whoami", Map.of())));
      // The grant is kept for the principal: the next session asks nobody.
      try (McpSession again = client.openSession("secured-one", browser)) {
        assertEquals("this is one", Mcp.text(again.callTool("whoami", Map.of())));
      }
      assertEquals(1, browser.seen.size());
    }
  }

  @Test
  void asyncHandlerAuthorizes() throws Exception {
    Browser blocking = new Browser();
    HostHandler async = new HostHandler() {
      @Override
      public CompletionStage<String> handleAuthorizationAsync(AuthorizationRequest request, RequestContext context) {
        return context.supplyAsync(() -> blocking.handleAuthorization(request, context));
      }
    };
    McpSession s = client.openSessionAsync(SessionOptions.forServer("secured-two").handler(async))
        .get(90, TimeUnit.SECONDS);
    try (s) {
      assertEquals(SessionState.SESSION_STATE_READY, s.info().getState());
      assertEquals("this is two", Mcp.text(s.callTool("whoami", Map.of())));
      assertEquals(1, blocking.seen.size());
    }
  }

  @Test
  void aRefusedAuthorizationFailsOpenSession() {
    HostHandler refuser = new HostHandler() {
      @Override
      public String handleAuthorization(AuthorizationRequest request, RequestContext context) throws McpError {
        throw new McpError(-1, "the user closed the browser");
      }
    };
    McpBridgeException e = assertThrows(McpBridgeException.class, () -> client.openSession("secured-three", refuser));
    assertNotEquals(Status.Code.DEADLINE_EXCEEDED, e.code());
  }
}
