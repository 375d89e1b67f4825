package dev.mcpbridge.client;

import dev.mcpbridge.v1.ApprovalDecision;
import dev.mcpbridge.v1.ApprovalRequest;
import dev.mcpbridge.v1.AuthorizationRequest;
import dev.mcpbridge.v1.CallToolResult;
import dev.mcpbridge.v1.CreateMessageRequest;
import dev.mcpbridge.v1.CreateMessageResult;
import dev.mcpbridge.v1.ElicitRequest;
import dev.mcpbridge.v1.ElicitResult;
import dev.mcpbridge.v1.Event;
import dev.mcpbridge.v1.HostCapabilities;
import dev.mcpbridge.v1.Root;
import dev.mcpbridge.v1.Tool;
import dev.mcpbridge.v1.UpstreamServer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * Several bridge sessions as one set of tools for a model: one merged tool list with names that are unique and fit
 * model APIs ({@code ^[a-zA-Z0-9_-]{1,64}$}, see {@link ToolNaming}), each call routed to its session, one
 * {@link HostHandler} answering every session's requests, and all sessions closed together.
 *
 * <pre>{@code
 * try (McpToolbox toolbox = McpToolbox.builder(client).servers("github", "jira").handler(handler).open()) {
 *   for (ToolboxTool t : toolbox.tools()) { ... t.name(), t.description(), t.inputSchemaJson() ... }
 *   CallToolResult r = toolbox.callToolJson("github_search", "{\"q\":\"bridge\"}");
 * }
 * }</pre>
 *
 * <p>A toolbox the builder opened keeps each session's tool list until the server announces
 * {@code notifications/tools/list_changed}; the next {@link #tools()} lists that server's tools again. A toolbox
 * over sessions the host opened itself ({@link #of}) cannot see their notifications, so it lists their tools on
 * every {@link #tools()}. Framework adapters (the mcp-bridge-spring-ai and mcp-bridge-langchain4j artifacts) take a
 * toolbox. Thread-safe.
 */
public final class McpToolbox implements AutoCloseable {
  private final List<Member> members;
  private final ToolNaming naming;
  private final boolean ownsSessions;
  private final List<Consumer<String>> listeners = new CopyOnWriteArrayList<>();
  private final Object lock = new Object();
  private Map<String, ToolboxTool> byName = Map.of();
  private List<ToolboxTool> merged;

  /**
   * One session of the toolbox, with its cached tool list: listed again when null, or when the server announced a
   * change ({@code changes}) after the list was taken ({@code listedAt}), so a change that lands while the list is
   * being taken is not lost.
   */
  private static final class Member {
    final String server;
    volatile McpSession session;
    volatile List<Tool> tools;
    final boolean cache;
    final java.util.concurrent.atomic.AtomicLong changes = new java.util.concurrent.atomic.AtomicLong();
    long listedAt = -1; // guarded by the toolbox's lock

    Member(String server, McpSession session, boolean cache) {
      this.server = server;
      this.session = session;
      this.cache = cache;
    }
  }

  private McpToolbox(List<Member> members, ToolNaming naming, boolean ownsSessions) {
    this.members = members;
    this.naming = naming;
    this.ownsSessions = ownsSessions;
  }

  /** A builder that opens sessions on {@code client}. */
  public static Builder builder(McpBridgeClient client) {
    return new Builder(client);
  }

  /**
   * A toolbox over sessions the host opened (and keeps owning: {@link #close} does not close them); tools keep
   * their own names ({@link ToolNaming#toolName()}), made unique across sessions with a hash when they collide.
   */
  public static McpToolbox of(McpSession... sessions) {
    return of(ToolNaming.toolName(), List.of(sessions));
  }

  /** A toolbox over sessions the host opened, named with {@code naming}. */
  public static McpToolbox of(ToolNaming naming, List<McpSession> sessions) {
    List<Member> ms = new ArrayList<>();
    for (McpSession s : sessions) {
      ms.add(new Member(s.info().getServer(), s, false));
    }
    return new McpToolbox(ms, Objects.requireNonNull(naming, "naming"), false);
  }

  /** The toolbox's sessions, in the order the servers were given. */
  public List<McpSession> sessions() {
    List<McpSession> out = new ArrayList<>();
    for (Member m : members) {
      out.add(m.session);
    }
    return out;
  }

  /**
   * The merged tool list, in server order and then each server's order. Lists the tools of the sessions whose
   * list is not cached or changed since.
   */
  public List<ToolboxTool> tools() {
    synchronized (lock) {
      boolean changed = merged == null;
      for (Member m : members) {
        long seen = m.changes.get();
        if (m.tools == null || !m.cache || m.listedAt != seen) {
          m.tools = List.copyOf(m.session.listTools());
          m.listedAt = seen;
          changed = true;
        }
      }
      if (changed) {
        rebuild();
      }
      return merged;
    }
  }

  /** The tool the model knows as {@code name}, or null. */
  public ToolboxTool tool(String name) {
    synchronized (lock) {
      ToolboxTool t = byName.get(name);
      if (t == null) {
        tools(); // a name from a list the model saw after a change the toolbox has not listed yet
        t = byName.get(name);
      }
      return t;
    }
  }

  /**
   * Calls the tool the model knows as {@code name} on its session. A tool error comes back as a result with
   * {@code isError}; the bridge's refusals (an approval denied or expired, a policy denial) throw
   * {@link McpBridgeException}.
   *
   * @throws IllegalArgumentException if the toolbox has no tool of that name
   */
  public CallToolResult callTool(String name, Map<String, ?> arguments) {
    return callTool(name, arguments, CallOptions.none());
  }

  /** {@link #callTool(String, Map)} with options (a call id, a timeout, _meta, a task). */
  public CallToolResult callTool(String name, Map<String, ?> arguments, CallOptions options) {
    ToolboxTool t = require(name);
    return t.session().callTool(t.tool().getName(), arguments == null ? Map.of() : arguments, options);
  }

  /** {@link #callTool(String, Map)} with the arguments as a JSON object, as a model writes them. */
  public CallToolResult callToolJson(String name, String argumentsJson) {
    ToolboxTool t = require(name);
    String json = argumentsJson == null || argumentsJson.isBlank() ? "{}" : argumentsJson;
    return t.session().callToolJson(t.tool().getName(), json);
  }

  private ToolboxTool require(String name) {
    ToolboxTool t = tool(name);
    if (t == null) {
      throw new IllegalArgumentException("no tool named " + name + " in this toolbox");
    }
    return t;
  }

  /** Lists every session's tools again on the next {@link #tools()}. */
  public void invalidate() {
    synchronized (lock) {
      for (Member m : members) {
        m.tools = null;
      }
    }
  }

  /**
   * Calls {@code listener} with the server's name when a server of this toolbox announces that its tools changed
   * (only for sessions the builder opened). Called on the handler executor; {@link #tools()} lists the new tools.
   */
  public void onToolsChanged(Consumer<String> listener) {
    listeners.add(Objects.requireNonNull(listener, "listener"));
  }

  private void rebuild() {
    // Names as the naming gives them, fitted; a name two tools would share gets a hash, in both.
    List<String[]> raw = new ArrayList<>(); // server, tool, fitted name
    List<ToolboxTool> pending = new ArrayList<>();
    Map<String, Integer> counts = new HashMap<>();
    List<McpSession> sessions = new ArrayList<>();
    List<Tool> tools = new ArrayList<>();
    for (Member m : members) {
      for (Tool t : m.tools) {
        String fitted = ToolNaming.fit(naming.name(m.server, t.getName()), m.server, t.getName(), false);
        raw.add(new String[] {m.server, t.getName(), fitted});
        counts.merge(fitted, 1, Integer::sum);
        sessions.add(m.session);
        tools.add(t);
      }
    }
    Map<String, ToolboxTool> index = new LinkedHashMap<>();
    for (int i = 0; i < raw.size(); i++) {
      String[] r = raw.get(i);
      String name = r[2];
      if (counts.get(name) > 1) {
        name = ToolNaming.fit(naming.name(r[0], r[1]), r[0], r[1], true);
      }
      if (index.containsKey(name)) { // the same tool listed twice by one server: keep the first
        continue;
      }
      ToolboxTool tt = new ToolboxTool(name, r[0], sessions.get(i), tools.get(i));
      index.put(name, tt);
      pending.add(tt);
    }
    byName = index;
    merged = List.copyOf(pending);
  }

  private void toolsChanged(String sessionId) {
    for (Member m : members) {
      if (m.session != null && m.session.id().equals(sessionId)) {
        m.changes.incrementAndGet(); // the next tools() lists again
        for (Consumer<String> l : listeners) {
          l.accept(m.server);
        }
      }
    }
  }

  /** Closes the sessions the builder opened (not those given to {@link #of}). */
  @Override
  public void close() {
    if (!ownsSessions) {
      return;
    }
    RuntimeException first = null;
    for (Member m : members) {
      try {
        if (m.session != null) {
          m.session.close();
        }
      } catch (RuntimeException e) {
        if (first == null) {
          first = e;
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }

  /** Opens a {@link McpToolbox}. */
  public static final class Builder {
    private final McpBridgeClient client;
    private final List<String> servers = new ArrayList<>();
    private boolean allServers;
    private HostHandler handler = new HostHandler() {};
    private ToolNaming naming = ToolNaming.serverPrefix();
    private List<Root> roots = List.of();

    private Builder(McpBridgeClient client) {
      this.client = Objects.requireNonNull(client, "client");
    }

    /** The servers to open sessions to, by their configured names. */
    public Builder servers(String... names) {
      return servers(List.of(names));
    }

    /** The servers to open sessions to, by their configured names. */
    public Builder servers(List<String> names) {
      servers.addAll(names);
      return this;
    }

    /** Every server the client's principal may use (the bridge's ListServers), in its order. */
    public Builder allServers() {
      allServers = true;
      return this;
    }

    /**
     * The handler answering every session's requests (sampling, elicitation, roots, …); {@link
     * RequestContext#session()} tells which session asks. It declares the sessions' capabilities.
     */
    public Builder handler(HostHandler handler) {
      this.handler = Objects.requireNonNull(handler, "handler");
      return this;
    }

    /** How tools are named; {@link ToolNaming#serverPrefix()} by default. */
    public Builder naming(ToolNaming naming) {
      this.naming = Objects.requireNonNull(naming, "naming");
      return this;
    }

    /** Roots every session exposes. */
    public Builder roots(List<Root> roots) {
      this.roots = List.copyOf(roots);
      return this;
    }

    /**
     * Opens one session per server. If one fails to open, those already opened are closed and the failure is
     * thrown.
     */
    public McpToolbox open() {
      List<String> names = new ArrayList<>(servers);
      if (allServers) {
        for (UpstreamServer s : client.listServers()) {
          if (!names.contains(s.getName())) {
            names.add(s.getName());
          }
        }
      }
      if (names.isEmpty()) {
        throw new IllegalArgumentException("a toolbox needs at least one server");
      }
      List<Member> members = new ArrayList<>();
      for (String n : names) {
        members.add(new Member(n, null, true));
      }
      McpToolbox box = new McpToolbox(members, naming, true);
      Handler h = new Handler(handler, box);
      try {
        for (Member m : members) {
          SessionOptions o = SessionOptions.forServer(m.server).handler(h);
          if (!roots.isEmpty()) {
            o.roots(roots);
          }
          m.session = client.openSession(o);
        }
      } catch (RuntimeException e) {
        try {
          box.close();
        } catch (RuntimeException suppressed) {
          e.addSuppressed(suppressed);
        }
        throw e;
      }
      return box;
    }
  }

  /** The host's handler, seeing every session's events first for tools/list_changed. */
  private static final class Handler implements HostHandler {
    private final HostHandler inner;
    private final McpToolbox box;

    Handler(HostHandler inner, McpToolbox box) {
      this.inner = inner;
      this.box = box;
    }

    @Override
    public CompletionStage<CreateMessageResult> handleSamplingAsync(CreateMessageRequest r, RequestContext c) {
      return inner.handleSamplingAsync(r, c);
    }

    @Override
    public CompletionStage<ElicitResult> handleElicitationAsync(ElicitRequest r, RequestContext c) {
      return inner.handleElicitationAsync(r, c);
    }

    @Override
    public CompletionStage<ElicitResult> handleUrlElicitationAsync(ElicitRequest r, RequestContext c) {
      return inner.handleUrlElicitationAsync(r, c);
    }

    @Override
    public CompletionStage<List<Root>> listRootsAsync(RequestContext c) {
      return inner.listRootsAsync(c);
    }

    @Override
    public CompletionStage<String> handleAuthorizationAsync(AuthorizationRequest r, RequestContext c) {
      return inner.handleAuthorizationAsync(r, c);
    }

    @Override
    public CompletionStage<ApprovalDecision> handleApprovalAsync(ApprovalRequest r, RequestContext c) {
      return inner.handleApprovalAsync(r, c);
    }

    @Override
    public void onEvent(Event event) throws Exception {
      if (event.hasToolsListChanged()) {
        box.toolsChanged(event.getSessionId());
      }
      inner.onEvent(event);
    }

    @Override
    public HostCapabilities capabilities() {
      return inner.capabilities();
    }
  }
}
