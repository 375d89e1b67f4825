package dev.mcpbridge.client;

import java.time.Duration;
import java.util.Objects;

/**
 * How {@link McpSession#callTool} and {@link McpSession#callToolStreaming} retry a tool call lost to
 * {@code UNAVAILABLE}: the connection to the bridge dropped, or the bridge restarted or was draining (reason
 * {@code SHUTTING_DOWN}). The call is made again with the same call id and {@code resume} set, so the bridge
 * returns that call's one outcome instead of running the tool twice: a call waiting between multi round-trip
 * rounds goes on from its kept round after a restart, a completed call's kept result comes back, a call still in
 * flight is joined. When the bridge cannot know whether the tool ran, the call fails with an exception whose
 * {@link McpBridgeException#outcomeUnknown()} is true (ABORTED, reason {@code CALL_OUTCOME_UNKNOWN}).
 *
 * <p>The default: on; waits of 100 ms doubling to 2 s (±20 % jitter) between attempts; retries until the call's
 * deadline ({@link CallOptions#withTimeout} or the client's default timeout), or, for a call without one, for 60 s
 * after the first failure. Not retried: {@code REPLICA_UNAVAILABLE} (the session is lost), {@code
 * UPSTREAM_UNAVAILABLE} (the MCP server, not the bridge, is down), and every other call than a tool call.
 * Immutable; {@code with...} returns a copy.
 *
 * <pre>{@code
 * McpBridgeClient.builder().retryPolicy(RetryPolicy.disabled())                  // off for the client
 * session.callTool("t", args, CallOptions.none().withRetry(RetryPolicy.disabled())); // off for one call
 * }</pre>
 */
public final class RetryPolicy {
  private static final RetryPolicy DEFAULTS =
      new RetryPolicy(true, Duration.ofMillis(100), Duration.ofSeconds(2), 2.0, 0.2, Duration.ofSeconds(60));
  private static final RetryPolicy DISABLED = DEFAULTS.withEnabled(false);

  private final boolean enabled;
  private final Duration initialBackoff;
  private final Duration maxBackoff;
  private final double multiplier;
  private final double jitter;
  private final Duration maxRetryTime;

  private RetryPolicy(boolean enabled, Duration initialBackoff, Duration maxBackoff, double multiplier, double jitter,
      Duration maxRetryTime) {
    if (initialBackoff.isNegative() || initialBackoff.isZero() || maxBackoff.compareTo(initialBackoff) < 0
        || multiplier < 1) {
      throw new IllegalArgumentException("RetryPolicy: need 0 < initialBackoff <= maxBackoff and multiplier >= 1");
    }
    if (jitter < 0 || jitter >= 1 || maxRetryTime.isNegative()) {
      throw new IllegalArgumentException("RetryPolicy: need 0 <= jitter < 1 and maxRetryTime >= 0");
    }
    this.enabled = enabled;
    this.initialBackoff = initialBackoff;
    this.maxBackoff = maxBackoff;
    this.multiplier = multiplier;
    this.jitter = jitter;
    this.maxRetryTime = maxRetryTime;
  }

  /** The default policy (see the class comment). */
  public static RetryPolicy defaults() {
    return DEFAULTS;
  }

  /** No retries: a lost call fails with its UNAVAILABLE error. */
  public static RetryPolicy disabled() {
    return DISABLED;
  }

  /** This policy, on or off. */
  public RetryPolicy withEnabled(boolean enabled) {
    return new RetryPolicy(enabled, initialBackoff, maxBackoff, multiplier, jitter, maxRetryTime);
  }

  /** The wait before the first retry, and between the first retries (bounded by {@code max}). */
  public RetryPolicy withBackoff(Duration initial, Duration max) {
    return new RetryPolicy(enabled, Objects.requireNonNull(initial), Objects.requireNonNull(max), multiplier, jitter,
        maxRetryTime);
  }

  /** The growth factor of the wait (default 2). */
  public RetryPolicy withMultiplier(double multiplier) {
    return new RetryPolicy(enabled, initialBackoff, maxBackoff, multiplier, jitter, maxRetryTime);
  }

  /** Each wait is the backoff times a random factor in [1 - jitter, 1 + jitter] (default 0.2). */
  public RetryPolicy withJitter(double jitter) {
    return new RetryPolicy(enabled, initialBackoff, maxBackoff, multiplier, jitter, maxRetryTime);
  }

  /** For a call without a deadline: how long after its first failure it is retried (default 60 s). */
  public RetryPolicy withMaxRetryTime(Duration maxRetryTime) {
    return new RetryPolicy(enabled, initialBackoff, maxBackoff, multiplier, jitter, Objects.requireNonNull(maxRetryTime));
  }

  /** Whether lost calls are retried. */
  public boolean enabled() {
    return enabled;
  }

  /** The first wait. */
  public Duration initialBackoff() {
    return initialBackoff;
  }

  /** The longest wait. */
  public Duration maxBackoff() {
    return maxBackoff;
  }

  /** The growth factor of the wait. */
  public double multiplier() {
    return multiplier;
  }

  /** The jitter of each wait, a fraction. */
  public double jitter() {
    return jitter;
  }

  /** How long a call without a deadline is retried after its first failure. */
  public Duration maxRetryTime() {
    return maxRetryTime;
  }

  @Override
  public String toString() {
    return enabled ? "RetryPolicy{backoff=" + initialBackoff + ".." + maxBackoff + " x" + multiplier + " ±" + jitter
        + ", maxRetryTime=" + maxRetryTime + "}" : "RetryPolicy{disabled}";
  }
}
