package dev.mcpbridge.client.testing;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.mcpbridge.client.Json;
import dev.mcpbridge.client.McpBridgeClient;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real mcp-bridge process for a test class: the binary scripts/test-java.sh built, on free loopback ports, with
 * a temporary config naming the demo server and (when installed) server-everything. Startup waits on the gRPC
 * health service, not on sleeps.
 *
 * <p>The one harness of the Java tests at the real-binary level: the core client's tests use it, and the
 * framework adapters' test kit (clients/java/frameworks/testkit) gets it from this project's test jar
 * ({@code dev.mcpbridge:mcp-bridge-client:tests}, which holds this package only).
 */
public final class TestBridge implements AutoCloseable {
  static final String BRIDGE_SERVICE = "mcpbridge.v1.BridgeService";

  /** The bridge's temporary directory (config, log, and a state file a test names in it). */
  public final Path dir;
  public final Path log;
  public final int grpcPort;
  public final int httpPort;
  /** Whether the default config has server-everything (node and the package are installed). */
  public final boolean hasEverything;
  private final List<String> cmd;
  private volatile Process process;

  private TestBridge(Path dir, Path log, int grpcPort, int httpPort, boolean hasEverything, List<String> cmd,
      Process process) {
    this.dir = dir;
    this.log = log;
    this.grpcPort = grpcPort;
    this.httpPort = httpPort;
    this.hasEverything = hasEverything;
    this.cmd = cmd;
    this.process = process;
  }

  public static boolean requirePeers() {
    return "1".equals(System.getenv("MCPBRIDGE_REQUIRE_PEERS"))
        || "1".equals(System.getProperty("mcpbridge.requirePeers"));
  }

  /**
   * The bridge binary: MCPBRIDGE_BIN, else -Dmcpbridge.bin (both test scripts and both poms set it), else
   * ../../bin/mcp-bridge from clients/java.
   */
  public static Path binary() {
    String p = System.getenv("MCPBRIDGE_BIN");
    if (p == null || p.isEmpty()) {
      p = System.getProperty("mcpbridge.bin", "../../bin/mcp-bridge");
    }
    return Paths.get(p).toAbsolutePath().normalize();
  }

  /** dist/index.js of @modelcontextprotocol/server-everything, or null if it is not installed. */
  public static Path everythingServer() {
    String nm = System.getenv("MCPBRIDGE_NODE_MODULES");
    if (nm == null || nm.isEmpty()) {
      nm = System.getProperty("mcpbridge.nodeModules", "../../.tools/node/node_modules");
    }
    Path js = Paths.get(nm, "@modelcontextprotocol", "server-everything", "dist", "index.js").toAbsolutePath().normalize();
    return Files.isRegularFile(js) ? js : null;
  }

  public static String nodeBinary() {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
      Path p = Paths.get(dir, "node");
      if (Files.isExecutable(p)) {
        return p.toString();
      }
    }
    return null;
  }

  /**
   * A server entry running the built-in demo server ({@code mcp-bridge demo-server}); {@code extra} keys (a tools
   * policy, approvers, restart) are merged in.
   */
  public static Map<String, Object> demoServer(Map<String, Object> extra) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("command", binary().toString());
    m.put("args", List.of("demo-server"));
    m.putAll(extra);
    return m;
  }

  /** Writes a tokens file ({@code token principal} lines) and returns its path, for the config's auth.tokensFile. */
  public static Path tokensFile(Map<String, String> tokenToPrincipal) throws IOException {
    StringBuilder sb = new StringBuilder();
    tokenToPrincipal.forEach((t, p) -> sb.append(t).append(' ').append(p).append('\n'));
    Path f = Files.createTempDirectory("mcpbridge-tokens").resolve("tokens.txt");
    Files.writeString(f, sb.toString(), StandardCharsets.UTF_8);
    return f;
  }

  /** Starts a bridge with the default test config. */
  public static TestBridge start() throws Exception {
    return start(Map.of());
  }

  /**
   * Starts a bridge; {@code extra} are top-level config keys merged over the defaults (e.g. "pending" with
   * shorter timeouts; "mcpServers" replaces the default servers).
   */
  public static TestBridge start(Map<String, Object> extra) throws Exception {
    return start(extra, List.of());
  }

  /**
   * Starts a bridge with {@code extra} config keys and extra command-line {@code flags}; the state file, if the
   * flags name one (--state-file FILE), may be a path in {@link #dir}, e.g. {@code "{dir}/state.db"}.
   */
  public static TestBridge start(Map<String, Object> extra, List<String> flags) throws Exception {
    Path bin = binary();
    if (!Files.isExecutable(bin)) {
      // Loud by default: an integration test that silently does not run is a test that passes by mistake.
      String why = "mcp-bridge binary not found at " + bin + " (run `make build`, or set MCPBRIDGE_BIN; "
          + "-Dmcpbridge.skipIntegration=true skips the integration tests instead)";
      if (requirePeers() || !Boolean.getBoolean("mcpbridge.skipIntegration")) {
        fail(why);
      }
      System.err.println("SKIPPED: " + why);
      assumeTrue(false, why);
    }
    Path dir = Files.createTempDirectory("mcpbridge-java-test");
    Map<String, Object> servers = new LinkedHashMap<>();
    servers.put("demo", demoServer(Map.of("description", "demo server for the Java tests",
        "restart", Map.of("initialBackoff", "50ms", "maxBackoff", "500ms"))));
    Path everything = everythingServer();
    String node = nodeBinary();
    boolean hasEverything = everything != null && node != null;
    if (hasEverything) {
      servers.put("everything", Map.of("command", node, "args", List.of(everything.toString(), "stdio")));
    }
    Map<String, Object> config = new LinkedHashMap<>();
    config.put("mcpServers", servers);
    config.put("sessions", Map.of("idleTimeout", "10m"));
    config.putAll(extra);
    Path cfg = dir.resolve("bridge.json");
    Files.writeString(cfg, Json.toJson(Json.toStruct(config)), StandardCharsets.UTF_8);

    int grpcPort = freePort();
    int httpPort = freePort();
    Path log = dir.resolve("bridge.log");
    List<String> cmd = new ArrayList<>(List.of(bin.toString(), "--config", cfg.toString(),
        "--grpc-addr", "127.0.0.1:" + grpcPort, "--http-addr", "127.0.0.1:" + httpPort, "--log-level", "debug"));
    for (String f : flags) {
      cmd.add(f.replace("{dir}", dir.toString()));
    }
    Process p = launch(cmd, log);
    TestBridge b = new TestBridge(dir, log, grpcPort, httpPort, hasEverything, List.copyOf(cmd), p);
    try {
      b.awaitHealthy();
    } catch (Throwable t) {
      String out = b.logTail();
      b.close();
      throw new AssertionError("mcp-bridge did not become healthy: " + t + "\n--- bridge log ---\n" + out, t);
    }
    return b;
  }

  private static Process launch(List<String> cmd, Path log) throws IOException {
    return new ProcessBuilder(cmd).redirectErrorStream(true)
        .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
  }

  /** SIGKILL, as an OOM kill or a crash would: the bridge gets no chance to drain. */
  public void kill() throws InterruptedException {
    process.destroyForcibly();
    process.waitFor(10, TimeUnit.SECONDS);
  }

  /** SIGTERM: the bridge drains and stops. */
  public void stop() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(15, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      process.waitFor(5, TimeUnit.SECONDS);
    }
  }

  /** Starts the bridge again, stopped with {@link #kill} or {@link #stop}: the same ports, flags and state file. */
  public void startAgain() throws IOException {
    if (process.isAlive()) {
      throw new IllegalStateException("the bridge still runs");
    }
    process = launch(cmd, log);
    try {
      awaitHealthy();
    } catch (RuntimeException e) {
      throw new AssertionError("mcp-bridge did not become healthy again: " + e + "\n--- bridge log ---\n" + logTail(), e);
    }
  }

  public String target() {
    return "127.0.0.1:" + grpcPort;
  }

  /** A client of this bridge without a token. */
  public McpBridgeClient client() {
    return client(null);
  }

  /** A client of this bridge with {@code token} as bearer token (null: none). */
  public McpBridgeClient client(String token) {
    McpBridgeClient.Builder b = McpBridgeClient.builder().target(target()).defaultTimeout(java.time.Duration.ofSeconds(60));
    if (token != null) {
      b.bearerToken(token);
    }
    return b.build();
  }

  /** Waits until grpc.health.v1 reports the BridgeService SERVING (Watch streams each change; no polling). */
  private void awaitHealthy() {
    Process process = this.process;
    ManagedChannel ch = ManagedChannelBuilder.forAddress("127.0.0.1", grpcPort).usePlaintext().build();
    try {
      Iterator<HealthCheckResponse> it = HealthGrpc.newBlockingStub(ch)
          .withWaitForReady()
          .withDeadlineAfter(30, TimeUnit.SECONDS)
          .watch(HealthCheckRequest.newBuilder().setService(BRIDGE_SERVICE).build());
      while (it.hasNext()) {
        if (!process.isAlive()) {
          throw new IllegalStateException("mcp-bridge exited with status " + process.exitValue());
        }
        if (it.next().getStatus() == HealthCheckResponse.ServingStatus.SERVING) {
          return;
        }
      }
      throw new IllegalStateException("health watch ended");
    } finally {
      ch.shutdownNow();
    }
  }

  public String logTail() {
    try {
      List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 80), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  public String logText() {
    try {
      return Files.readString(log, StandardCharsets.UTF_8);
    } catch (IOException e) {
      return "";
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      s.setReuseAddress(true);
      return s.getLocalPort();
    }
  }

  @Override
  public void close() {
    if (process.isAlive()) {
      process.destroy(); // SIGTERM: the bridge drains and stops its stdio servers
      try {
        if (!process.waitFor(15, TimeUnit.SECONDS)) {
          process.destroyForcibly();
          process.waitFor(5, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        process.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
  }
}
