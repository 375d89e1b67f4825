package dev.mcpbridge.testkit;

import static org.junit.jupiter.api.Assertions.fail;

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
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real mcp-bridge process (the binary {@code make build} writes, or -Dmcpbridge.bin / MCPBRIDGE_BIN) on free
 * loopback ports with a temporary config. Startup waits on the gRPC health service.
 */
public final class TestBridge implements AutoCloseable {
  private final Process process;
  private final Path log;
  private final int grpcPort;

  private TestBridge(Process process, Path log, int grpcPort) {
    this.process = process;
    this.log = log;
    this.grpcPort = grpcPort;
  }

  /** The bridge binary. */
  public static Path binary() {
    String p = System.getenv("MCPBRIDGE_BIN");
    if (p == null || p.isEmpty()) {
      p = System.getProperty("mcpbridge.bin", "../../../../bin/mcp-bridge");
    }
    return Paths.get(p).toAbsolutePath().normalize();
  }

  /** A server entry running the built-in demo server; {@code extra} keys (tools policy, approvers) merged in. */
  public static Map<String, Object> demoServer(Map<String, Object> extra) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("command", binary().toString());
    m.put("args", List.of("demo-server"));
    m.putAll(extra);
    return m;
  }

  /** Starts a bridge whose config is {@code config} (top-level keys: mcpServers, auth, …). */
  public static TestBridge start(Map<String, Object> config) throws Exception {
    Path bin = binary();
    if (!Files.isExecutable(bin)) {
      fail("mcp-bridge binary not found at " + bin + " (run `make build`, or set MCPBRIDGE_BIN)");
    }
    Path dir = Files.createTempDirectory("mcpbridge-frameworks");
    Map<String, Object> cfg = new LinkedHashMap<>(config);
    cfg.putIfAbsent("sessions", Map.of("idleTimeout", "10m"));
    Path file = dir.resolve("bridge.json");
    Files.writeString(file, Json.toJson(Json.toStruct(cfg)), StandardCharsets.UTF_8);
    int grpc = freePort();
    int http = freePort();
    Path log = dir.resolve("bridge.log");
    Process p = new ProcessBuilder(bin.toString(), "--config", file.toString(), "--grpc-addr", "127.0.0.1:" + grpc,
        "--http-addr", "127.0.0.1:" + http, "--log-level", "debug")
        .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile())).start();
    TestBridge b = new TestBridge(p, log, grpc);
    try {
      b.awaitHealthy();
    } catch (RuntimeException e) {
      String tail = b.logTail();
      b.close();
      throw new AssertionError("mcp-bridge did not become healthy: " + e + "\n" + tail, e);
    }
    return b;
  }

  /** Writes a tokens file ({@code token principal} lines) and returns its path, for the config's auth.tokensFile. */
  public static String tokensFile(Map<String, String> tokenToPrincipal) throws IOException {
    StringBuilder sb = new StringBuilder();
    tokenToPrincipal.forEach((t, p) -> sb.append(t).append(' ').append(p).append('\n'));
    Path f = Files.createTempDirectory("mcpbridge-tokens").resolve("tokens.txt");
    Files.writeString(f, sb.toString());
    return f.toString();
  }

  public String target() {
    return "127.0.0.1:" + grpcPort;
  }

  /** A client of this bridge, with {@code token} as bearer token (null: none). */
  public McpBridgeClient client(String token) {
    McpBridgeClient.Builder b = McpBridgeClient.builder().target(target()).defaultTimeout(Duration.ofSeconds(60));
    if (token != null) {
      b.bearerToken(token);
    }
    return b.build();
  }

  private void awaitHealthy() {
    ManagedChannel ch = ManagedChannelBuilder.forAddress("127.0.0.1", grpcPort).usePlaintext().build();
    try {
      Iterator<HealthCheckResponse> it = HealthGrpc.newBlockingStub(ch).withWaitForReady()
          .withDeadlineAfter(30, TimeUnit.SECONDS)
          .watch(HealthCheckRequest.newBuilder().setService("mcpbridge.v1.BridgeService").build());
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
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e + ")";
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  @Override
  public void close() {
    process.destroy();
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
