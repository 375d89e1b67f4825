package dev.mcpbridge.client;

import dev.mcpbridge.v1.Reason;
import io.grpc.Status;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.net.ConnectException;
import java.util.Locale;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.DoubleSupplier;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * The retry of tool calls lost to UNAVAILABLE, with the same call id and {@code resume}, within the call's deadline
 * (see {@link RetryPolicy}): the policy's arithmetic ({@link Attempts}) and the asynchronous loop ({@link #run}).
 */
final class Retrying {
  private static final Logger LOG = System.getLogger(Retrying.class.getName());

  /**
   * ErrorInfo reasons of the UNAVAILABLE errors that are retried: none (the transport's own: the connection dropped
   * or could not be made, or a proxy answered), the bridge draining for a shutdown or restart, the session moving
   * between replicas (SESSION_MOVED: retry through the proxy) and the replicas' shared state store not answering for
   * a moment (STATE_STORE_UNAVAILABLE), and the proxy finding no replica up while they restart
   * (NO_REPLICA_AVAILABLE, deploy/haproxy: "retry; the session is kept"): the errors the bridge says to retry. Not
   * WRONG_REPLICA (the proxy is misconfigured).
   */
  static final Set<String> RETRY_REASONS =
      Set.of("", Reason.SHUTTING_DOWN.name(), Reason.SESSION_MOVED.name(), Reason.STATE_STORE_UNAVAILABLE.name(),
          Reason.NO_REPLICA_AVAILABLE.name());

  private Retrying() {}

  /** A call id for a call the host gave none: "call-" and a random UUID (hex). */
  static String newCallId() {
    return "call-" + UUID.randomUUID().toString().replace("-", "");
  }

  /** Whether a failed attempt of a tool call is retried. */
  static boolean retryable(McpBridgeException e) {
    return e.code() == Status.Code.UNAVAILABLE && RETRY_REASONS.contains(e.reason().orElse(""));
  }

  /**
   * Whether an attempt certainly never reached the bridge: the transport could not connect. Such an attempt cannot
   * have run anything, so the next one need not ask for a lost call's outcome (which would be CALL_OUTCOME_UNKNOWN
   * for a call the bridge never saw).
   */
  static boolean neverSent(McpBridgeException e) {
    if (e.code() != Status.Code.UNAVAILABLE || e.reason().isPresent()) {
      return false;
    }
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof ConnectException) {
        return true;
      }
      String m = t.getMessage() == null ? "" : t.getMessage().toLowerCase(Locale.ROOT);
      if (m.contains("connection refused") || m.contains("failed to connect")) {
        return true;
      }
      if (t.getCause() == t) {
        break;
      }
    }
    return false;
  }

  /** The retry state of one tool call. Clock in nanoseconds and random source are parameters for tests. */
  static final class Attempts {
    private final RetryPolicy policy;
    private final LongSupplier clock;
    private final DoubleSupplier random;
    private final boolean hasDeadline;
    private final long deadline;
    private long giveUpAt;
    private boolean giveUpSet;
    private double backoffNanos;
    private volatile boolean resume;
    private int retries;

    Attempts(RetryPolicy policy, java.time.Duration timeout, boolean resume, LongSupplier clock, DoubleSupplier random) {
      this.policy = policy;
      this.clock = clock;
      this.random = random;
      long now = clock.getAsLong();
      this.hasDeadline = timeout != null;
      this.deadline = hasDeadline ? now + timeout.toNanos() : 0;
      this.giveUpAt = deadline;
      this.giveUpSet = hasDeadline;
      this.backoffNanos = policy.initialBackoff().toNanos();
      this.resume = resume;
    }

    Attempts(RetryPolicy policy, java.time.Duration timeout, boolean resume) {
      this(policy, timeout, resume, System::nanoTime, Math::random);
    }

    /** Whether the next attempt asks for the outcome of a call that may have been made before. */
    boolean resume() {
      return resume;
    }

    /** The attempt reached the bridge (it answered something): a retry must resume, never run the call anew. */
    void reached() {
      resume = true;
    }

    /** Retries so far. */
    synchronized int retries() {
      return retries;
    }

    /** Nanoseconds left until the call's deadline; -1 without one. */
    long remainingNanos() {
      return hasDeadline ? Math.max(deadline - clock.getAsLong(), 0) : -1;
    }

    /** Nanoseconds to wait before the next attempt after {@code e}, or -1 to give up and fail with it. */
    synchronized long retryAfterNanos(McpBridgeException e) {
      if (!policy.enabled() || !retryable(e)) {
        return -1;
      }
      if (!neverSent(e)) {
        resume = true;
      }
      long now = clock.getAsLong();
      if (!giveUpSet) {
        giveUpAt = now + policy.maxRetryTime().toNanos();
        giveUpSet = true;
      }
      double j = policy.jitter();
      long delay = (long) (backoffNanos * (1 - j + 2 * j * random.getAsDouble()));
      if (now + delay - giveUpAt >= 0) {
        return -1;
      }
      backoffNanos = Math.min(backoffNanos * policy.multiplier(), policy.maxBackoff().toNanos());
      retries++;
      return delay;
    }
  }

  /**
   * Runs {@code attempt} (given whether to resume) until it succeeds or fails for good, waiting on {@code scheduler}
   * between attempts and running {@code beforeRetry} before each retry. Cancelling the returned future cancels the
   * attempt in flight and stops the retries. A failure carries {@code callId}.
   */
  static <T> CompletableFuture<T> run(Attempts attempts, String callId, ScheduledExecutorService scheduler,
      Runnable beforeRetry, Function<Boolean, CompletableFuture<T>> attempt) {
    Rpc.CallFuture<T> result = new Rpc.CallFuture<>();
    AtomicReference<Future<?>> current = new AtomicReference<>();
    result.onCancel(() -> {
      Future<?> f = current.get();
      if (f != null) {
        f.cancel(true);
      }
    });
    next(attempts, callId, scheduler, beforeRetry, attempt, result, current);
    return result;
  }

  private static <T> void next(Attempts attempts, String callId, ScheduledExecutorService scheduler,
      Runnable beforeRetry, Function<Boolean, CompletableFuture<T>> attempt, Rpc.CallFuture<T> result,
      AtomicReference<Future<?>> current) {
    if (result.isDone()) {
      return;
    }
    CompletableFuture<T> f = attempt.apply(attempts.resume());
    current.set(f);
    if (result.isDone()) { // cancelled meanwhile
      f.cancel(true);
      return;
    }
    f.whenComplete((v, err) -> {
      if (err == null) {
        result.complete(v);
        return;
      }
      McpBridgeException e = McpBridgeException.from(unwrap(err));
      e.setCallId(callId);
      long delay = attempts.retryAfterNanos(e);
      if (delay < 0 || result.isDone()) {
        result.completeExceptionally(e);
        return;
      }
      LOG.log(Level.INFO, "mcp-bridge: tool call {0} lost ({1}); calling again in {2} ms to resume it", callId,
          e.getMessage(), TimeUnit.NANOSECONDS.toMillis(delay));
      try {
        current.set(scheduler.schedule(() -> {
          try {
            beforeRetry.run();
          } catch (RuntimeException ignored) {
            // only a hint to the channel
          }
          next(attempts, callId, scheduler, beforeRetry, attempt, result, current);
        }, delay, TimeUnit.NANOSECONDS));
      } catch (RejectedExecutionException closed) { // the client is closing
        result.completeExceptionally(e);
      }
    });
  }

  private static Throwable unwrap(Throwable t) {
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }
}
