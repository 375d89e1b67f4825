package dev.mcpbridge.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import com.google.rpc.ErrorInfo;
import dev.mcpbridge.v1.CallToolRequest;
import dev.mcpbridge.v1.ProgressNotification;
import dev.mcpbridge.v1.StreamCallToolRequest;
import io.grpc.Status;
import io.grpc.protobuf.StatusProto;
import java.net.ConnectException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The retry of lost tool calls: the policy's arithmetic on a fake clock (no network), and the retry loop against the
 * scripted in-process bridge. The real restart is in ResumeTest.
 */
class RetryTest {
  static final long MS = 1_000_000L;

  static McpBridgeException error(Status.Code code, String message, String reason) {
    return McpBridgeException.from(StatusProto.toStatusRuntimeException(FakeBridge.failure(code, message, reason)));
  }

  static final McpBridgeException DROPPED = error(Status.Code.UNAVAILABLE, "Network closed for unknown reason", "");
  static final McpBridgeException DRAINING = error(Status.Code.UNAVAILABLE, "the bridge is shutting down", "SHUTTING_DOWN");
  static final McpBridgeException REFUSED = McpBridgeException.from(Status.UNAVAILABLE.withDescription("io exception")
      .withCause(new ConnectException("Connection refused: /127.0.0.1:1")).asRuntimeException());

  /** Attempts on a clock the test moves, without jitter. */
  static final class Clocked {
    final AtomicLong now = new AtomicLong(1_000_000 * MS);
    final Retrying.Attempts attempts;

    Clocked(RetryPolicy policy, Duration timeout, boolean resume) {
      attempts = new Retrying.Attempts(policy, timeout, resume, now::get, () -> 0.5);
    }
  }

  @Test
  void backoffDoublesFrom100msAndIsCapped() {
    Clocked c = new Clocked(RetryPolicy.defaults(), null, false);
    List<Long> waits = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      long d = c.attempts.retryAfterNanos(DROPPED);
      waits.add(d / MS);
      c.now.addAndGet(d);
    }
    assertEquals(List.of(100L, 200L, 400L, 800L, 1600L, 2000L, 2000L, 2000L), waits);
  }

  @Test
  void jitterStaysWithinItsBounds() {
    for (double r : new double[] {0.0, 1.0}) {
      Retrying.Attempts a = new Retrying.Attempts(RetryPolicy.defaults(), null, false, System::nanoTime, () -> r);
      long d = a.retryAfterNanos(DROPPED);
      assertTrue(d >= 80 * MS && d <= 120 * MS, "wait " + d);
    }
  }

  @ParameterizedTest
  @CsvSource({
    "UNAVAILABLE, '', true",
    "UNAVAILABLE, SHUTTING_DOWN, true",
    "UNAVAILABLE, SESSION_MOVED, true",
    "UNAVAILABLE, STATE_STORE_UNAVAILABLE, true",
    "UNAVAILABLE, NO_REPLICA_AVAILABLE, true",
    "UNAVAILABLE, WRONG_REPLICA, false",
    "ALREADY_EXISTS, CALL_ID_USED, false",
    "ABORTED, CALL_OUTCOME_EVICTED, false",
    "UNAVAILABLE, REPLICA_UNAVAILABLE, false",
    "UNAVAILABLE, UPSTREAM_UNAVAILABLE, false",
    "UNAVAILABLE, IDENTITY_PROVIDER_UNAVAILABLE, false",
    "DEADLINE_EXCEEDED, '', false",
    "CANCELLED, '', false",
    "ABORTED, CALL_OUTCOME_UNKNOWN, false",
    "INVALID_ARGUMENT, '', false",
  })
  void whichErrorsAreRetried(Status.Code code, String reason, boolean retried) {
    McpBridgeException e = error(code, "x", reason);
    assertEquals(retried, Retrying.retryable(e));
    assertEquals(retried, new Clocked(RetryPolicy.defaults(), null, false).attempts.retryAfterNanos(e) >= 0);
  }

  @Test
  void resumeOnlyAfterAnAttemptThatMayHaveReachedTheBridge() {
    Clocked c = new Clocked(RetryPolicy.defaults(), null, false);
    assertTrue(Retrying.neverSent(REFUSED));
    assertFalse(Retrying.neverSent(DROPPED));
    assertFalse(Retrying.neverSent(DRAINING));
    c.attempts.retryAfterNanos(REFUSED);
    assertFalse(c.attempts.resume(), "it never left the client: send it as a new call");
    c.attempts.retryAfterNanos(DROPPED);
    assertTrue(c.attempts.resume(), "it may have run: ask for its one outcome from now on");
    c.attempts.retryAfterNanos(REFUSED);
    assertTrue(c.attempts.resume());
    assertTrue(new Clocked(RetryPolicy.defaults(), null, true).attempts.resume(), "a host's resume is kept");
  }

  @Test
  void retriesStopBeforeTheDeadline() {
    Clocked c = new Clocked(RetryPolicy.defaults(), Duration.ofSeconds(1), false);
    assertEquals(1000 * MS, c.attempts.remainingNanos());
    long total = 0;
    for (long d; (d = c.attempts.retryAfterNanos(DROPPED)) >= 0; ) {
      total += d;
      c.now.addAndGet(d);
    }
    assertEquals(700, total / MS, "0.1 + 0.2 + 0.4 s; the next wait (0.8 s) would pass the deadline");
    c.now.addAndGet(5000 * MS);
    assertEquals(0, c.attempts.remainingNanos());
  }

  @Test
  void withoutADeadlineRetriesStopAfterMaxRetryTime() {
    Clocked c = new Clocked(RetryPolicy.defaults().withMaxRetryTime(Duration.ofSeconds(10)), null, false);
    assertEquals(-1, c.attempts.remainingNanos());
    c.now.addAndGet(1000_000 * MS); // a long first attempt: the window starts at the first failure
    while (true) {
      long d = c.attempts.retryAfterNanos(DROPPED);
      if (d < 0) {
        break;
      }
      c.now.addAndGet(d);
    }
    assertEquals(8, c.attempts.retries(), "0.1 + 0.2 + 0.4 + 0.8 + 1.6 + 3 * 2 = 9.1 s; one more passes 10 s");
  }

  @Test
  void aDisabledPolicyNeverRetriesAndBadPoliciesAreRefused() {
    Clocked c = new Clocked(RetryPolicy.disabled(), null, false);
    assertEquals(-1, c.attempts.retryAfterNanos(DROPPED));
    assertFalse(c.attempts.resume());
    assertFalse(RetryPolicy.disabled().enabled());
    assertTrue(RetryPolicy.defaults().enabled());
    assertThrows(IllegalArgumentException.class, () -> RetryPolicy.defaults().withBackoff(Duration.ZERO, Duration.ofSeconds(1)));
    assertThrows(IllegalArgumentException.class, () -> RetryPolicy.defaults().withBackoff(Duration.ofSeconds(3), Duration.ofSeconds(1)));
    assertThrows(IllegalArgumentException.class, () -> RetryPolicy.defaults().withJitter(1.5));
  }

  @Test
  void callIdsAndTheTypedError() {
    String a = Retrying.newCallId();
    assertTrue(a.startsWith("call-") && a.length() == "call-".length() + 32, a);
    assertFalse(a.equals(Retrying.newCallId()));
    McpBridgeException unknown = error(Status.Code.ABORTED, "unknown", "CALL_OUTCOME_UNKNOWN");
    assertTrue(unknown.outcomeUnknown());
    assertFalse(unknown.sessionLost());
    assertFalse(error(Status.Code.ABORTED, "refused", "INPUT_REFUSED").outcomeUnknown());
  }

  // ---- the client, against the scripted bridge ----

  private FakeBridge fake;
  private McpBridgeClient client;
  static final RetryPolicy FAST = RetryPolicy.defaults().withBackoff(Duration.ofMillis(10), Duration.ofMillis(50));

  @BeforeEach
  void setUp() throws Exception {
    fake = new FakeBridge();
    client = McpBridgeClient.builder().channel(fake.channel()).retryPolicy(FAST).build();
  }

  @AfterEach
  void tearDown() {
    client.close();
    fake.close();
  }

  static List<String> attempts(FakeBridge fake) {
    List<String> out = new ArrayList<>();
    for (com.google.protobuf.Message m : fake.toolCalls) {
      if (m instanceof CallToolRequest r) {
        out.add(r.getCallId() + " " + r.getResume());
      } else if (m instanceof StreamCallToolRequest r) {
        out.add(r.getCallId() + " " + r.getResume());
      }
    }
    return out;
  }

  @Test
  void aLostCallIsCalledAgainWithTheSameIdAndResume() {
    McpSession s = client.openSession("demo");
    fake.callFailures.add(FakeBridge.failure(Status.Code.UNAVAILABLE, "the bridge is shutting down", "SHUTTING_DOWN"));
    fake.callFailures.add(FakeBridge.failure(Status.Code.UNAVAILABLE, "Network closed", ""));
    assertEquals("resume=true", Mcp.text(s.callTool("resume", Map.of(), CallOptions.none().withTimeout(Duration.ofSeconds(10)))));
    List<String> got = attempts(fake);
    String id = got.get(0).split(" ")[0];
    assertTrue(id.startsWith("call-"), id);
    assertEquals(List.of(id + " false", id + " true", id + " true"), got);
  }

  @Test
  void theHostsCallIdIsKeptAndAnUnknownOutcomeIsTyped() {
    McpSession s = client.openSession("demo");
    fake.callFailures.add(FakeBridge.failure(Status.Code.UNAVAILABLE, "Network closed", ""));
    fake.callFailures.add(FakeBridge.failure(Status.Code.ABORTED, "outcome unknown", "CALL_OUTCOME_UNKNOWN"));
    McpBridgeException e = assertThrows(McpBridgeException.class,
        () -> s.callTool("resume", Map.of(), CallOptions.none().withCallId("job-1")));
    assertTrue(e.outcomeUnknown(), e.toString());
    assertEquals("job-1", e.callId().orElseThrow());
    assertEquals(List.of("job-1 false", "job-1 true"), attempts(fake));
  }

  @Test
  void retriesCanBeTurnedOffForAClientOrACall() {
    McpSession s = client.openSession("demo");
    fake.callFailures.add(FakeBridge.failure(Status.Code.UNAVAILABLE, "Network closed", ""));
    McpBridgeException e = assertThrows(McpBridgeException.class,
        () -> s.callTool("resume", Map.of(), CallOptions.none().withRetry(RetryPolicy.disabled())));
    assertEquals(Status.Code.UNAVAILABLE, e.code());
    assertTrue(e.callId().orElseThrow().startsWith("call-"));
    assertEquals(1, fake.toolCalls.size());
    try (McpBridgeClient off = McpBridgeClient.builder().channel(fake.channel()).retryPolicy(RetryPolicy.disabled()).build()) {
      McpSession s2 = off.openSession("demo");
      fake.callFailures.add(FakeBridge.failure(Status.Code.UNAVAILABLE, "Network closed", ""));
      assertThrows(McpBridgeException.class, () -> s2.callTool("resume", Map.of()));
      fake.callFailures.add(FakeBridge.failure(Status.Code.UNAVAILABLE, "Network closed", ""));
      assertEquals("resume=true", Mcp.text(s2.callTool("resume", Map.of(), CallOptions.none().withRetry(FAST))));
    }
  }

  @Test
  void aLostSessionIsNotRetried() {
    McpSession s = client.openSession("demo");
    fake.callFailures.add(FakeBridge.failure(Status.Code.UNAVAILABLE, "replica gone", "REPLICA_UNAVAILABLE"));
    McpBridgeException e = assertThrows(McpBridgeException.class, () -> s.callTool("resume", Map.of()));
    assertTrue(e.sessionLost());
    assertEquals(1, fake.toolCalls.size());
  }

  @Test
  void retriesEndAtTheDeadline() {
    McpSession s = client.openSession("demo");
    for (int i = 0; i < 1000; i++) {
      fake.callFailures.add(FakeBridge.failure(Status.Code.UNAVAILABLE, "Network closed", ""));
    }
    long start = System.nanoTime();
    McpBridgeException e = assertThrows(McpBridgeException.class, () -> s.callTool("resume", Map.of(),
        CallOptions.none().withTimeout(Duration.ofMillis(500)).withRetry(FAST.withBackoff(Duration.ofMillis(50), Duration.ofMillis(50)))));
    long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    assertTrue(e.code() == Status.Code.UNAVAILABLE || e.code() == Status.Code.DEADLINE_EXCEEDED, e.toString());
    assertTrue(ms < 3000, "took " + ms + " ms");
    assertTrue(fake.toolCalls.size() >= 3 && fake.toolCalls.size() <= 12, "attempts: " + fake.toolCalls.size());
  }

  @Test
  void cancellingTheFutureStopsTheRetries() throws Exception {
    McpSession s = client.openSession("demo");
    for (int i = 0; i < 1000; i++) {
      fake.callFailures.add(FakeBridge.failure(Status.Code.UNAVAILABLE, "Network closed", ""));
    }
    CompletableFuture<?> f = s.callToolAsync("resume", null, CallOptions.none()
        .withRetry(FAST.withBackoff(Duration.ofMillis(20), Duration.ofMillis(20))));
    Thread.sleep(150);
    f.cancel(true);
    int n = fake.toolCalls.size();
    Thread.sleep(200);
    assertTrue(fake.toolCalls.size() <= n + 1, "retries went on after cancel: " + n + " → " + fake.toolCalls.size());
  }

  @Test
  void aStreamIsOpenedAgainWithResumeAndMayRepeatEvents() {
    McpSession s = client.openSession("demo");
    fake.callFailures.add(FakeBridge.failure(Status.Code.UNAVAILABLE, "Network closed", ""));
    List<ProgressNotification> progress = new ArrayList<>();
    var result = s.callToolStreaming("resume", Map.of(), CallOptions.none().withCallId("s-1"), new ToolCallListener() {
      @Override
      public void onProgress(ProgressNotification p) {
        progress.add(p);
      }
    });
    assertEquals("resume=true", Mcp.text(result));
    assertEquals(1, progress.size());
    assertEquals(List.of("s-1 false", "s-1 true"), attempts(fake));
  }

  @Test
  void aStreamThatFailsForGoodCarriesItsCallId() {
    McpSession s = client.openSession("demo");
    fake.callFailures.add(com.google.rpc.Status.newBuilder().setCode(Status.Code.ABORTED.value()).setMessage("unknown")
        .addDetails(Any.pack(ErrorInfo.newBuilder().setReason("CALL_OUTCOME_UNKNOWN").build())).build());
    McpBridgeException e = assertThrows(McpBridgeException.class,
        () -> s.callToolStreaming("resume", Map.of(), CallOptions.none().withCallId("s-2").withResume(true), null));
    assertTrue(e.outcomeUnknown());
    assertEquals("s-2", e.callId().orElseThrow());
    assertEquals(List.of("s-2 true"), attempts(fake));
  }

  @Test
  void detachAndCancelCall() {
    McpSession s = client.openSession("demo");
    s.callTool("resume", Map.of(), CallOptions.none().withCallId("d-1").withDetach(true));
    assertTrue(((CallToolRequest) fake.toolCalls.get(0)).getDetach());
    assertThrows(IllegalArgumentException.class, () -> s.callToolAsync("resume", null, CallOptions.none().withDetach(true)));
    s.cancelCall("d-1");
    McpBridgeException e = assertThrows(McpBridgeException.class, () -> s.cancelCall("never"));
    assertEquals(Status.Code.NOT_FOUND, e.code());
    assertEquals("CALL_NOT_FOUND", e.reason().orElseThrow());
    assertEquals(List.of("d-1", "never"), fake.cancelCalls);
  }

  /**
   * DetachedCalls (the framework adapters' registry): every call detached with an id of its own; a call cut off
   * (DEADLINE_EXCEEDED, CANCELLED) stays listed for resume or cancel; a returned call, an error that is the call's
   * outcome (NOT_FOUND, an expired approval) and a cancelled one leave the list.
   */
  @Test
  void detachedCallsListOnlyTheCallsCutOff() {
    McpSession s = client.openSession("demo");
    DetachedCalls calls = new DetachedCalls();
    try (McpToolbox box = McpToolbox.of(s)) {
      calls.callJson(box, "tool0", "{}");
      assertEquals(List.of(), calls.running());
      Object[][] failures = {
        {Status.Code.DEADLINE_EXCEEDED, "", true},
        {Status.Code.CANCELLED, "", true},
        {Status.Code.NOT_FOUND, "SESSION_NOT_FOUND", false},
        {Status.Code.DEADLINE_EXCEEDED, "APPROVAL_EXPIRED", false},
      };
      for (Object[] f : failures) {
        fake.callFailures.add(com.google.rpc.Status.newBuilder().setCode(((Status.Code) f[0]).value()).setMessage("m")
            .addDetails(Any.pack(ErrorInfo.newBuilder().setReason((String) f[1]).setDomain("mcp-bridge").build()))
            .build());
        assertThrows(McpBridgeException.class, () -> calls.callJson(box, "tool0", "{}"));
        String id = ((CallToolRequest) fake.toolCalls.get(fake.toolCalls.size() - 1)).getCallId();
        assertEquals(f[2], calls.running().stream().anyMatch(c -> c.callId().equals(id)), f[0] + " " + f[1]);
      }
      List<String> ids = new ArrayList<>();
      for (Object r : fake.toolCalls) {
        assertTrue(((CallToolRequest) r).getDetach());
        ids.add(((CallToolRequest) r).getCallId());
      }
      assertEquals(ids.size(), new java.util.HashSet<>(ids).size(), "each call has an id of its own: " + ids);
      List<DetachedCalls.Call> running = calls.running();
      assertEquals(2, running.size());
      calls.resume(running.get(0).callId());
      assertTrue(((CallToolRequest) fake.toolCalls.get(fake.toolCalls.size() - 1)).getResume());
      calls.cancel(running.get(1).callId());
      assertEquals(List.of(), calls.running());
      assertEquals(List.of(running.get(1).callId()), fake.cancelCalls);
      assertThrows(IllegalArgumentException.class, () -> calls.resume(running.get(0).callId()));
    }
  }

  @Test
  void aResumeNeedsACallId() {
    McpSession s = client.openSession("demo");
    assertThrows(IllegalArgumentException.class, () -> s.callToolAsync("resume", null, CallOptions.none().withResume(true)));
    assertTrue(fake.toolCalls.isEmpty());
  }
}
