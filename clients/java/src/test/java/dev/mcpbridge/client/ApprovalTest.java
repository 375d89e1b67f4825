package dev.mcpbridge.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpbridge.client.testing.TestBridge;
import dev.mcpbridge.v1.ApprovalDecision;
import dev.mcpbridge.v1.ApprovalPending;
import dev.mcpbridge.v1.ApprovalRequest;
import dev.mcpbridge.v1.CreateMessageRequest;
import dev.mcpbridge.v1.CreateMessageResult;
import dev.mcpbridge.v1.TextWarning;
import dev.mcpbridge.v1.TextWarningKind;
import io.grpc.Status;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Approvals (docs/adr/0080-approvals.md) against the real binary: an approver host decides tool calls that need
 * approval through {@link McpBridgeClient#serveApprovals} and {@link HostHandler#handleApproval}; callers see
 * {@link McpBridgeException#approvalDenied()} and {@link McpBridgeException#approvalExpired()}.
 */
class ApprovalTest {
  static TestBridge bridge;
  static McpBridgeClient alice;
  static McpBridgeClient bob;
  static McpBridgeClient eve;

  /** Approves echo calls unless their text says "deny"; records what it was shown. */
  static final class Approver implements HostHandler {
    final List<ApprovalRequest> seen = new CopyOnWriteArrayList<>();
    final List<List<TextWarning>> warnings = new CopyOnWriteArrayList<>();

    @Override
    public ApprovalDecision handleApproval(ApprovalRequest request, RequestContext context) {
      warnings.add(context.warnings());
      seen.add(request);
      String text = request.getArguments().getFieldsOrThrow("text").getStringValue();
      return text.contains("deny") ? Mcp.deny("not this text") : Mcp.approve("looks fine");
    }
  }

  static final Approver bobApprover = new Approver();
  static final Approver eveApprover = new Approver();

  @BeforeAll
  static void startBridge() throws Exception {
    Path tokens = Files.createTempDirectory("mcpbridge-approvals").resolve("tokens.txt");
    Files.writeString(tokens, "tok-alice alice\ntok-bob bob\ntok-eve eve\ntok-carol carol\n");
    String bin = TestBridge.binary().toString();
    Map<String, Object> gated = Map.of("command", bin, "args", List.of("demo-server"),
        "tools", Map.of("approve", List.of("echo")), "approvers", Map.of("principals", List.of("bob")),
        "approvalExpiry", "1h");
    Map<String, Object> fast = Map.of("command", bin, "args", List.of("demo-server"),
        "tools", Map.of("approve", List.of("echo")), "approvers", Map.of("principals", List.of("carol")),
        "approvalExpiry", "200ms"); // carol never serves approvals here
    Map<String, Object> carols = Map.of("command", bin, "args", List.of("demo-server"),
        "tools", Map.of("approve", List.of("echo")), "approvers", Map.of("principals", List.of("carol")));
    bridge = TestBridge.start(Map.of("auth", Map.of("tokensFile", tokens.toString()),
        "mcpServers", Map.of("gated", gated, "gated-fast", fast, "gated-carol", carols)));
    alice = client("tok-alice");
    bob = client("tok-bob");
    eve = client("tok-eve");
    eve.serveApprovals(eveApprover); // not an approver: the bridge never shows it an approval
    bob.serveApprovals(bobApprover);
  }

  static McpBridgeClient client(String token) {
    return McpBridgeClient.builder().target(bridge.target()).bearerToken(token)
        .defaultTimeout(Duration.ofSeconds(30)).build();
  }

  @AfterAll
  static void stopBridge() {
    for (McpBridgeClient c : new McpBridgeClient[] {alice, bob, eve}) {
      if (c != null) {
        c.close();
      }
    }
    if (bridge != null) {
      bridge.close();
    }
  }

  @Test
  void approvedCallsRunWithTheApprovedArguments() throws Exception {
    McpSession session = alice.openSession("gated");
    try {
      assertEquals("héllo \"x\"", Mcp.text(session.callTool("echo", Map.of("text", "héllo \"x\""))));
      ApprovalRequest req = bobApprover.seen.get(bobApprover.seen.size() - 1);
      assertEquals("alice", req.getCaller());
      assertEquals("gated", req.getServerName());
      assertEquals("echo", req.getTool());
      assertEquals("echo", req.getRule());
      assertEquals("{\"text\":\"héllo \\\"x\\\"\"}", req.getCanonicalArguments());
      byte[] sum = MessageDigest.getInstance("SHA-256").digest(req.getCanonicalArguments().getBytes(StandardCharsets.UTF_8));
      assertEquals(HexFormat.of().formatHex(sum), req.getArgumentsSha256());
      assertTrue(eveApprover.seen.isEmpty(), "a principal that is not an approver was shown an approval");

      // Tools the policy does not name need no approval.
      int n = bobApprover.seen.size();
      assertEquals("2 + 3 = 5", Mcp.text(session.callTool("add", Map.of("a", 2, "b", 3))));
      assertEquals(n, bobApprover.seen.size());
    } finally {
      session.close();
    }
  }

  @Test
  void deniedCallsFailApprovalDenied() {
    McpSession session = alice.openSession("gated");
    try {
      McpBridgeException e = assertThrows(McpBridgeException.class,
          () -> session.callTool("echo", Map.of("text", "please deny")));
      assertEquals(Status.Code.PERMISSION_DENIED, e.code());
      assertTrue(e.approvalDenied(), e.toString());
      assertTrue(e.getMessage().contains("not this text"), e.getMessage());
    } finally {
      session.close();
    }
  }

  @Test
  void unansweredApprovalsExpire() {
    McpSession session = alice.openSession("gated-fast");
    try {
      McpBridgeException e = assertThrows(McpBridgeException.class,
          () -> session.callTool("echo", Map.of("text", "nobody decides in time")));
      assertEquals(Status.Code.DEADLINE_EXCEEDED, e.code());
      assertTrue(e.approvalExpired(), e.toString());
    } finally {
      session.close();
    }
  }

  @Test
  void serveApprovalsOnAnOpenStreamDeliversThosePending() throws Exception {
    Approver late = new Approver();
    try (McpBridgeClient carol = client("tok-carol")) {
      // carol's host stream is open already (a session with a handler), before anything is pending.
      McpSession own = carol.openSession("gated", new HostHandler() {
        @Override
        public CreateMessageResult handleSampling(CreateMessageRequest r, RequestContext ctx) {
          return Mcp.samplingReply("m", "unused");
        }
      });
      McpSession session = alice.openSession("gated-carol");
      try {
        CompletableFuture<String> call = CompletableFuture.supplyAsync(
            () -> Mcp.text(session.callTool("echo", Map.of("text", "pending first"))));
        HttpClient http = HttpClient.newHttpClient();
        HttpRequest list = HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + bridge.httpPort + "/v1/sessions/approvals/requests"))
            .header("Authorization", "Bearer tok-carol").build();
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!http.send(list, HttpResponse.BodyHandlers.ofString()).body().contains("pending first")) {
          assertTrue(System.nanoTime() < deadline, "the approval request never became pending");
          Thread.sleep(20); // polling the bridge, bounded by the deadline
        }
        carol.serveApprovals(late);
        assertEquals("pending first", call.get(30, TimeUnit.SECONDS));
        assertEquals(1, late.seen.size());
      } finally {
        session.close();
        own.close();
      }
    }
  }

  @Test
  void serveApprovalsNeedsAHandler() {
    assertThrows(IllegalArgumentException.class, () -> alice.serveApprovals(new HostHandler() {}));
  }

  /**
   * Issue 30: the bridge's untrusted-text warnings reach a Java approver's handler, the caller's listener is told
   * the call waits (rule, approvers, expiry), and a denial carries the approver's reason and name.
   */
  @Test
  void warningsReachTheApproverAndTheCallerIsTold() {
    McpSession session = alice.openSession("gated");
    try {
      List<ApprovalPending> pending = new CopyOnWriteArrayList<>();
      McpBridgeException e = assertThrows(McpBridgeException.class,
          () -> session.callToolStreaming("echo", Map.of("text", "please deny \u202e1000000", "to\u200b", "mallory"),
              new ToolCallListener() {
                @Override
                public void onApprovalPending(ApprovalPending p) {
                  pending.add(p);
                }
              }));
      assertTrue(e.approvalDenied(), e.toString());
      assertEquals("not this text", e.approverReason().orElseThrow());
      assertEquals("bob", e.approvalDecidedBy().orElseThrow());
      assertEquals(1, pending.size());
      ApprovalPending p = pending.get(0);
      assertEquals("echo", p.getRule());
      assertEquals(List.of("bob"), p.getApprovers().getPrincipalsList());
      assertTrue(p.hasExpireTime());
      assertEquals(p.getRequestId(), e.approvalRequestId().orElseThrow());

      List<TextWarning> ws = bobApprover.warnings.get(bobApprover.warnings.size() - 1);
      assertTrue(ws.stream().anyMatch(w -> w.getPath().equals("approval.arguments.text")
          && w.getKind() == TextWarningKind.TEXT_WARNING_KIND_BIDI_CONTROL && w.getCodePointsList().equals(List.of("U+202E"))), ws.toString());
      assertTrue(ws.stream().anyMatch(w -> w.getPath().equals("approval.arguments[\"to\\u200b\"]")
          && w.getKind() == TextWarningKind.TEXT_WARNING_KIND_INVISIBLE && w.getInKey()), ws.toString());
    } finally {
      session.close();
    }
  }

  @Test
  void expirySaysWhen() {
    McpSession session = alice.openSession("gated-fast");
    try {
      McpBridgeException e = assertThrows(McpBridgeException.class,
          () -> session.callTool("echo", Map.of("text", "nobody decides in time either")));
      assertTrue(e.approvalExpired(), e.toString());
      assertTrue(e.approvalExpireTime().isPresent(), e.toString());
    } finally {
      session.close();
    }
  }
}
