package dev.mcpbridge.client;

import dev.mcpbridge.v1.HostCapabilities;
import dev.mcpbridge.v1.Implementation;
import dev.mcpbridge.v1.Root;
import java.util.List;

/**
 * What {@link McpBridgeClient#openSession(SessionOptions)} opens: a configured server, the handler that answers
 * its requests, the session's roots, and optionally a protocol version, client info or explicit capabilities.
 *
 * <pre>{@code
 * McpSession s = client.openSession(SessionOptions.forServer("demo")
 *     .handler(myHandler)
 *     .roots(List.of(Mcp.root("file:///work", "work"))));
 * }</pre>
 */
public final class SessionOptions {
  private final String server;
  private final HostHandler handler;
  private final List<Root> roots;
  private final String protocolVersion;
  private final Implementation clientInfo;
  private final HostCapabilities capabilities;

  private SessionOptions(String server, HostHandler handler, List<Root> roots, String protocolVersion,
      Implementation clientInfo, HostCapabilities capabilities) {
    this.server = server;
    this.handler = handler;
    this.roots = roots;
    this.protocolVersion = protocolVersion;
    this.clientInfo = clientInfo;
    this.capabilities = capabilities;
  }

  /** Options for a session to the configured server {@code server} (see {@link McpBridgeClient#listServers}). */
  public static SessionOptions forServer(String server) {
    return new SessionOptions(server, null, List.of(), "", null, null);
  }

  /**
   * The handler that answers the session's server requests and hears its notifications; its overridden methods
   * are the capabilities the session declares. Without one the session declares none and is not attached to the
   * host stream.
   */
  public SessionOptions handler(HostHandler handler) {
    return new SessionOptions(server, handler, roots, protocolVersion, clientInfo, capabilities);
  }

  /** The session's initial roots; giving any declares the roots capability, answered from this list. */
  public SessionOptions roots(List<Root> roots) {
    return new SessionOptions(server, handler, List.copyOf(roots), protocolVersion, clientInfo, capabilities);
  }

  /** An MCP protocol version to use, e.g. "2025-11-25"; empty negotiates. */
  public SessionOptions protocolVersion(String protocolVersion) {
    return new SessionOptions(server, handler, roots, protocolVersion == null ? "" : protocolVersion, clientInfo,
        capabilities);
  }

  /** The clientInfo the bridge announces to the server on the host's behalf. */
  public SessionOptions clientInfo(Implementation clientInfo) {
    return new SessionOptions(server, handler, roots, protocolVersion, clientInfo, capabilities);
  }

  /**
   * Capabilities to declare instead of the handler's {@link HostHandler#capabilities()}. With no handler, the
   * session is not attached to the host stream: answer its requests with {@link McpSession#respond} (e.g. after
   * {@link McpSession#watchEvents} or {@link McpSession#pendingRequests}).
   */
  public SessionOptions capabilities(HostCapabilities capabilities) {
    return new SessionOptions(server, handler, roots, protocolVersion, clientInfo, capabilities);
  }

  public String server() {
    return server;
  }

  public HostHandler handler() {
    return handler;
  }

  public List<Root> roots() {
    return roots;
  }

  public String protocolVersion() {
    return protocolVersion;
  }

  public Implementation clientInfo() {
    return clientInfo;
  }

  /** The capabilities given with {@link #capabilities(HostCapabilities)}, or null. */
  public HostCapabilities explicitCapabilities() {
    return capabilities;
  }

  /**
   * The capabilities the session declares: the explicit ones, else the handler's, plus roots when the session
   * has initial roots.
   */
  public HostCapabilities effectiveCapabilities() {
    HostCapabilities caps = capabilities != null
        ? capabilities
        : handler != null ? handler.capabilities() : HostCapabilities.getDefaultInstance();
    if (caps == null) {
      caps = HostCapabilities.getDefaultInstance();
    }
    if (capabilities == null && !roots.isEmpty() && !caps.hasRoots()) {
      caps = caps.toBuilder().setRoots(dev.mcpbridge.v1.RootsCapability.newBuilder().setListChanged(true)).build();
    }
    return caps;
  }
}
