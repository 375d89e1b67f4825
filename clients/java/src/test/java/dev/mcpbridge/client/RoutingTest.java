package dev.mcpbridge.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpbridge.client.testing.TestBridge;
import dev.mcpbridge.v1.BridgeServiceGrpc;
import dev.mcpbridge.v1.CreateSessionRequest;
import dev.mcpbridge.v1.CreateSessionResponse;
import dev.mcpbridge.v1.DeleteSessionRequest;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.stub.MetadataUtils;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Behind a proxy in front of several bridge replicas (docs/scaling.md), every call naming a session carries its id
 * in the mcpbridge-session metadata, and the server requests of a replica's sessions come on a Connect stream
 * routed to that replica.
 */
class RoutingTest {
  @Test
  void sessionReplica() {
    assertEquals("r1", McpBridgeClient.sessionReplica("s-r1.ABCDEF"));
    assertEquals("mcp-bridge-0", McpBridgeClient.sessionReplica("s-mcp-bridge-0.ABCDEF"));
    assertEquals("", McpBridgeClient.sessionReplica("s-ABCDEF"));
    assertEquals("", McpBridgeClient.sessionReplica("s-.ABC"));
    assertEquals("", McpBridgeClient.sessionReplica("s1"));
  }

  /**
   * The client owns no session id format: its one parse ({@link McpBridgeClient#sessionReplica}) must name, for an
   * id the real bridge minted (mcpcore/ids.go owns the format), the replica the bridge itself names in the
   * mcpbridge-replica header of the same answer; and the client routes the session's host stream by it.
   */
  @Test
  void sessionReplicaReadsTheBridgesFormat() throws Exception {
    String replica = "mcp-bridge-0";
    try (TestBridge bridge = TestBridge.start(Map.of("sessions", Map.of("idleTimeout", "10m", "replica", replica)))) {
      AtomicReference<Metadata> headers = new AtomicReference<>();
      AtomicReference<Metadata> trailers = new AtomicReference<>();
      ManagedChannel ch = ManagedChannelBuilder.forTarget(bridge.target()).usePlaintext().build();
      try {
        BridgeServiceGrpc.BridgeServiceBlockingStub stub = BridgeServiceGrpc.newBlockingStub(ch)
            .withInterceptors(MetadataUtils.newCaptureMetadataInterceptor(headers, trailers))
            .withDeadlineAfter(60, TimeUnit.SECONDS);
        CreateSessionResponse resp = stub.createSession(CreateSessionRequest.newBuilder().setServer("demo").build());
        String header = headers.get().get(Metadata.Key.of("mcpbridge-replica", Metadata.ASCII_STRING_MARSHALLER));
        assertEquals(replica, header);
        assertEquals(header, McpBridgeClient.sessionReplica(resp.getSession().getSessionId()));
        stub.deleteSession(DeleteSessionRequest.newBuilder().setSessionId(resp.getSession().getSessionId()).build());
      } finally {
        ch.shutdownNow();
      }
      try (McpBridgeClient client = bridge.client();
          McpSession session = client.openSession("demo", new HostHandler() {})) {
        assertTrue(client.hostStreamFor(session.id()) != client.hostStream(),
            "the session's requests come on the stream to its replica");
      }
    }
  }

  @Test
  void sessionLost() {
    for (String reason : List.of("REPLICA_UNAVAILABLE", "SESSION_CLOSED", "SESSION_NOT_FOUND", "UPSTREAM_UNAVAILABLE")) {
      com.google.rpc.Status st = com.google.rpc.Status.newBuilder().setCode(io.grpc.Status.Code.UNAVAILABLE.value())
          .setMessage("m").addDetails(com.google.protobuf.Any.pack(com.google.rpc.ErrorInfo.newBuilder()
              .setReason(reason).setDomain("mcp-bridge").build())).build();
      McpBridgeException e = McpBridgeException.from(io.grpc.protobuf.StatusProto.toStatusRuntimeException(st));
      assertEquals(!reason.equals("UPSTREAM_UNAVAILABLE"), e.sessionLost(), reason);
    }
  }

  @Test
  void retryAfterReadsRetryInfo() {
    // An MCP server that refused the call as busy said when to retry: UNAVAILABLE with RetryInfo.
    com.google.rpc.Status.Builder st = com.google.rpc.Status.newBuilder().setCode(io.grpc.Status.Code.UNAVAILABLE.value())
        .setMessage("m").addDetails(com.google.protobuf.Any.pack(com.google.rpc.ErrorInfo.newBuilder()
            .setReason("UPSTREAM_UNAVAILABLE").setDomain("mcp-bridge").build()));
    McpBridgeException without = McpBridgeException.from(io.grpc.protobuf.StatusProto.toStatusRuntimeException(st.build()));
    assertEquals(java.util.Optional.empty(), without.retryAfter());
    st.addDetails(com.google.protobuf.Any.pack(com.google.rpc.RetryInfo.newBuilder()
        .setRetryDelay(com.google.protobuf.Duration.newBuilder().setSeconds(7).setNanos(500_000_000)).build()));
    McpBridgeException with = McpBridgeException.from(io.grpc.protobuf.StatusProto.toStatusRuntimeException(st.build()));
    assertEquals(java.util.Optional.of(java.time.Duration.ofMillis(7500)), with.retryAfter());
    assertEquals("UPSTREAM_UNAVAILABLE", with.reason().orElse(""));
  }

  @Test
  void aHostStreamWhoseReplicaDiedEnds() throws Exception {
    try (FakeBridge fake = new FakeBridge()) {
      fake.idPrefix = "s-r1.";
      try (McpBridgeClient client = fake.client()) {
        McpSession s = client.openSession("demo", new HostHandler() {});
        HostStream stream = client.hostStreamFor(s.id());
        assertTrue(stream.isAttached(s.id()));
        // The proxy answers for the dead replica from now on.
        fake.connectFailureProto = com.google.rpc.Status.newBuilder().setCode(io.grpc.Status.Code.UNAVAILABLE.value())
            .setMessage("the bridge replica that owned this session is gone")
            .addDetails(com.google.protobuf.Any.pack(com.google.rpc.ErrorInfo.newBuilder()
                .setReason("REPLICA_UNAVAILABLE").setDomain("mcp-bridge").build())).build();
        fake.breakStreams();
        HostStreamTest.waitFor(stream::ended);
        assertTrue(!stream.isAttached(s.id()), "the lost session is forgotten");
        // A new session on a replica of that name (a restarted pod) gets a new stream.
        fake.connectFailureProto = null;
        McpSession again = client.openSession("demo", new HostHandler() {});
        HostStream next = client.hostStreamFor(again.id());
        assertTrue(next != stream && !next.ended() && next.isAttached(again.id()));
      }
    }
  }

  @Test
  void everySessionCallCarriesTheRoutingKey() throws Exception {
    try (FakeBridge fake = new FakeBridge()) {
      fake.idPrefix = "s-r1.";
      try (McpBridgeClient client = fake.client()) {
        McpSession s = client.openSession("demo", new HostHandler() {});
        s.listTools();
        s.callTool("echo", java.util.Map.of("text", "x"));
        s.close();
        List<String> seen = new ArrayList<>();
        fake.routing.drainTo(seen);
        assertTrue(seen.contains("CreateSession "), seen.toString());
        for (String m : List.of("ListTools", "CallTool", "DeleteSession", "Connect")) {
          assertTrue(seen.contains(m + " " + s.id()), m + " without the routing key: " + seen);
        }
      }
    }
  }
}
