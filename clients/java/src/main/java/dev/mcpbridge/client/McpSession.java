package dev.mcpbridge.client;

import com.google.protobuf.Duration;
import com.google.protobuf.Struct;
import dev.mcpbridge.v1.CallToolRequest;
import dev.mcpbridge.v1.CallToolResponse;
import dev.mcpbridge.v1.CallToolResult;
import dev.mcpbridge.v1.CancelCallRequest;
import dev.mcpbridge.v1.CancelCallResponse;
import dev.mcpbridge.v1.CancelTaskRequest;
import dev.mcpbridge.v1.CancelTaskResponse;
import dev.mcpbridge.v1.CompleteRequest;
import dev.mcpbridge.v1.CompleteResponse;
import dev.mcpbridge.v1.DeleteSessionRequest;
import dev.mcpbridge.v1.DeleteSessionResponse;
import dev.mcpbridge.v1.Event;
import dev.mcpbridge.v1.GetPromptRequest;
import dev.mcpbridge.v1.GetPromptResponse;
import dev.mcpbridge.v1.GetSessionRequest;
import dev.mcpbridge.v1.GetSessionResponse;
import dev.mcpbridge.v1.GetTaskRequest;
import dev.mcpbridge.v1.GetTaskResponse;
import dev.mcpbridge.v1.HostAnswer;
import dev.mcpbridge.v1.Implementation;
import dev.mcpbridge.v1.ListPendingRequestsRequest;
import dev.mcpbridge.v1.ListPendingRequestsResponse;
import dev.mcpbridge.v1.ListPromptsRequest;
import dev.mcpbridge.v1.ListPromptsResponse;
import dev.mcpbridge.v1.ListResourceTemplatesRequest;
import dev.mcpbridge.v1.ListResourceTemplatesResponse;
import dev.mcpbridge.v1.ListResourcesRequest;
import dev.mcpbridge.v1.ListResourcesResponse;
import dev.mcpbridge.v1.ListToolsRequest;
import dev.mcpbridge.v1.ListToolsResponse;
import dev.mcpbridge.v1.LoggingLevel;
import dev.mcpbridge.v1.PingRequest;
import dev.mcpbridge.v1.PingResponse;
import dev.mcpbridge.v1.Prompt;
import dev.mcpbridge.v1.ReadResourceRequest;
import dev.mcpbridge.v1.ReadResourceResponse;
import dev.mcpbridge.v1.Resource;
import dev.mcpbridge.v1.ResourceTemplate;
import dev.mcpbridge.v1.RespondToRequestRequest;
import dev.mcpbridge.v1.RespondToRequestResponse;
import dev.mcpbridge.v1.Root;
import dev.mcpbridge.v1.ServerCapabilities;
import dev.mcpbridge.v1.ServerRequest;
import dev.mcpbridge.v1.Session;
import dev.mcpbridge.v1.SetLogLevelRequest;
import dev.mcpbridge.v1.SetLogLevelResponse;
import dev.mcpbridge.v1.SetRootsRequest;
import dev.mcpbridge.v1.SetRootsResponse;
import dev.mcpbridge.v1.StreamCallToolRequest;
import dev.mcpbridge.v1.StreamCallToolResponse;
import dev.mcpbridge.v1.SubscribeResourceRequest;
import dev.mcpbridge.v1.SubscribeResourceResponse;
import dev.mcpbridge.v1.Task;
import dev.mcpbridge.v1.TaskOptions;
import dev.mcpbridge.v1.Tool;
import dev.mcpbridge.v1.UnsubscribeResourceRequest;
import dev.mcpbridge.v1.UnsubscribeResourceResponse;
import dev.mcpbridge.v1.WatchEventsRequest;
import dev.mcpbridge.v1.WatchEventsResponse;
import io.grpc.Status;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * One session on the bridge: a connection to one upstream MCP server on behalf of this host. Obtain one from
 * {@link McpBridgeClient#openSession}; close it when done (or let the client close it).
 *
 * <p>Arguments are plain Java values ({@code Map<String, ?>}, see {@link Json}) or Structs; results are the
 * API's messages ({@code dev.mcpbridge.v1}), with {@link Mcp} helpers to get at their text and structured
 * content. List methods follow page tokens to the end; the {@code ...Page} methods return one page. Every method
 * has a blocking form that throws {@link McpBridgeException} and an async form.
 */
public final class McpSession implements AutoCloseable {
  private final McpBridgeClient client;
  private final Session info;
  private volatile List<Root> roots;
  private volatile boolean closed;

  McpSession(McpBridgeClient client, Session info, List<Root> initialRoots) {
    this.client = client;
    this.info = info;
    this.roots = info.getRootsCount() > 0 ? List.copyOf(info.getRootsList()) : List.copyOf(initialRoots);
  }

  /** The session id. */
  public String id() {
    return info.getSessionId();
  }

  /** The session as the bridge described it when it was opened (see {@link #refresh()} for its state now). */
  public Session info() {
    return info;
  }

  /** The negotiated MCP protocol version, e.g. "2025-11-25". */
  public String protocolVersion() {
    return info.getProtocolVersion();
  }

  /** The server's serverInfo. */
  public Implementation serverInfo() {
    return info.getServerInfo();
  }

  /** The capabilities the server declared. */
  public ServerCapabilities serverCapabilities() {
    return info.getServerCapabilities();
  }

  /** The server's instructions, "" if none. */
  public String instructions() {
    return info.getInstructions();
  }

  /** The session's roots as this client last set or saw them. */
  public List<Root> roots() {
    return roots;
  }

  /** The client this session belongs to. */
  public McpBridgeClient client() {
    return client;
  }

  /** The session's current state on the bridge. */
  public Session refresh() {
    return Rpc.await(refreshAsync());
  }

  /** Async form of {@link #refresh()}. */
  public CompletableFuture<Session> refreshAsync() {
    return Rpc.<GetSessionRequest, GetSessionResponse>unary(
            client.stub(null, id())::getSession, GetSessionRequest.newBuilder().setSessionId(id()).build())
        .thenApply(GetSessionResponse::getSession);
  }

  // ---- tools ----

  /** Every tool of the server (all pages). */
  public List<Tool> listTools() {
    return Rpc.await(listToolsAsync());
  }

  /** Async form of {@link #listTools()}. */
  public CompletableFuture<List<Tool>> listToolsAsync() {
    return Paging.all(this::listToolsPageAsync, ListToolsResponse::getToolsList, ListToolsResponse::getNextPageToken);
  }

  /** One page of tools; {@code pageToken} "" for the first. */
  public ListToolsResponse listToolsPage(String pageToken) {
    return Rpc.await(listToolsPageAsync(pageToken));
  }

  /** Async form of {@link #listToolsPage}. */
  public CompletableFuture<ListToolsResponse> listToolsPageAsync(String pageToken) {
    return Rpc.unary(client.stub(null, id())::listTools,
        ListToolsRequest.newBuilder().setSessionId(id()).setPageToken(nz(pageToken)).build());
  }

  /**
   * Calls a tool. A tool that fails is a result with {@code getIsError()} true, not an exception. Server
   * requests the call causes (sampling, elicitation, roots) go to the session's handler while the call waits.
   *
   * <p>A call lost to UNAVAILABLE (the connection dropped, the bridge restarted or is draining) is made again with
   * the same call id, asking the bridge for that call's one outcome, within the call's deadline ({@link
   * RetryPolicy}); if the bridge cannot know whether the tool ran, the call fails with an exception whose {@link
   * McpBridgeException#outcomeUnknown()} is true.
   */
  public CallToolResult callTool(String name, Map<String, ?> arguments) {
    return callTool(name, arguments, CallOptions.none());
  }

  /** Calls a tool with options (call id, _meta, timeout, task). */
  public CallToolResult callTool(String name, Map<String, ?> arguments, CallOptions options) {
    return Rpc.await(callToolAsync(name, Json.toStruct(arguments), options)).getResult();
  }

  /** Calls a tool with arguments given as JSON text, e.g. {@code "{\"text\": \"hi\"}"}. */
  public CallToolResult callToolJson(String name, String argumentsJson) {
    return Rpc.await(callToolAsync(name, Json.parseStruct(argumentsJson), CallOptions.none())).getResult();
  }

  /** Async form of {@link #callTool(String, Map)}. */
  public CompletableFuture<CallToolResult> callToolAsync(String name, Map<String, ?> arguments) {
    return callToolAsync(name, Json.toStruct(arguments), CallOptions.none()).thenApply(CallToolResponse::getResult);
  }

  /**
   * Async call with a Struct of arguments and options; the response also carries the call id. Cancelling the future
   * cancels the call and its retries.
   */
  public CompletableFuture<CallToolResponse> callToolAsync(String name, Struct arguments, CallOptions options) {
    CallOptions o = options == null ? CallOptions.none() : options;
    String callId = callIdFor(o);
    CallToolRequest.Builder req = CallToolRequest.newBuilder().setSessionId(id()).setName(name)
        .setArguments(arguments == null ? Struct.getDefaultInstance() : arguments).setCallId(callId)
        .setDetach(o.detach());
    if (o.meta() != null) {
      req.setMeta(Json.toStruct(o.meta()));
    }
    if (o.taskTtl() != null) {
      req.setTask(TaskOptions.newBuilder().setTtl(duration(o.taskTtl())));
    }
    CallToolRequest base = req.build();
    java.time.Duration timeout = client.effectiveTimeout(o.timeout());
    io.grpc.Deadline deadline = timeout == null ? null : io.grpc.Deadline.after(timeout.toNanos(), TimeUnit.NANOSECONDS);
    Retrying.Attempts attempts = new Retrying.Attempts(retryPolicy(o), timeout, o.resume());
    return Retrying.run(attempts, callId, client.scheduler(), client::resetConnectBackoff,
        resume -> Rpc.unary(client.stubUntil(deadline, id())::callTool, base.toBuilder().setResume(resume).build()));
  }

  /** The options' call id, or a new one; a resume needs the id of the call it resumes. */
  private static String callIdFor(CallOptions o) {
    if (o.callId() != null && !o.callId().isEmpty()) {
      return o.callId();
    }
    if (o.resume()) {
      throw new IllegalArgumentException("CallOptions.withResume(true) needs the call id of the call to resume");
    }
    if (o.detach()) {
      throw new IllegalArgumentException("CallOptions.withDetach(true) needs a call id to resume or cancel the call by");
    }
    return Retrying.newCallId();
  }

  private RetryPolicy retryPolicy(CallOptions o) {
    return o.retry() != null ? o.retry() : client.retryPolicy();
  }

  /**
   * Calls a tool and reports its progress, log messages and server requests to {@code listener} as they come,
   * then returns its result.
   */
  public CallToolResult callToolStreaming(String name, Map<String, ?> arguments, ToolCallListener listener) {
    return Rpc.await(callToolStreamingAsync(name, arguments, CallOptions.none(), listener));
  }

  /** Streams a tool call with options. */
  public CallToolResult callToolStreaming(
      String name, Map<String, ?> arguments, CallOptions options, ToolCallListener listener) {
    return Rpc.await(callToolStreamingAsync(name, arguments, options, listener));
  }

  /**
   * Async form of {@link #callToolStreaming}; cancelling the future cancels the call. A stream lost to UNAVAILABLE is
   * opened again with the same call id and {@code resume} ({@link RetryPolicy}): the listener may then hear events
   * again that it heard on the lost stream (a server request still pending, progress the server reports again).
   */
  public CompletableFuture<CallToolResult> callToolStreamingAsync(
      String name, Map<String, ?> arguments, CallOptions options, ToolCallListener listener) {
    CallOptions o = options == null ? CallOptions.none() : options;
    ToolCallListener l = listener == null ? new ToolCallListener() {} : listener;
    String callId = callIdFor(o);
    StreamCallToolRequest.Builder req = StreamCallToolRequest.newBuilder().setSessionId(id()).setName(name)
        .setArguments(Json.toStruct(arguments)).setCallId(callId).setDetach(o.detach());
    if (o.meta() != null) {
      req.setMeta(Json.toStruct(o.meta()));
    }
    if (o.taskTtl() != null) {
      req.setTask(TaskOptions.newBuilder().setTtl(duration(o.taskTtl())));
    }
    StreamCallToolRequest base = req.build();
    // Streams get only an explicit timeout, never the client's default one.
    io.grpc.Deadline deadline =
        o.timeout() == null ? null : io.grpc.Deadline.after(o.timeout().toNanos(), TimeUnit.NANOSECONDS);
    Retrying.Attempts attempts = new Retrying.Attempts(retryPolicy(o), o.timeout(), o.resume());
    return Retrying.run(attempts, callId, client.scheduler(), client::resetConnectBackoff, resume -> {
      StreamingCall call = new StreamingCall(l, attempts);
      try {
        client.stubUntil(deadline, id()).streamCallTool(base.toBuilder().setResume(resume).build(), call);
      } catch (RuntimeException e) {
        call.completeExceptionally(McpBridgeException.from(e));
      }
      return call;
    });
  }

  /** Collects a StreamCallTool stream into a future of its result. */
  private static final class StreamingCall extends Rpc.CallFuture<CallToolResult>
      implements io.grpc.stub.ClientResponseObserver<StreamCallToolRequest, StreamCallToolResponse> {
    private final ToolCallListener listener;
    private final Retrying.Attempts attempts;
    private CallToolResult result;

    StreamingCall(ToolCallListener listener, Retrying.Attempts attempts) {
      this.listener = listener;
      this.attempts = attempts;
    }

    @Override
    public void beforeStart(io.grpc.stub.ClientCallStreamObserver<StreamCallToolRequest> requestStream) {
      onCancel(() -> requestStream.cancel("cancelled by the caller", null));
    }

    @Override
    public void onNext(StreamCallToolResponse m) {
      attempts.reached();
      try {
        switch (m.getEventCase()) {
          case PROGRESS:
            listener.onProgress(m.getProgress());
            break;
          case LOG:
            listener.onLog(m.getLog());
            break;
          case SERVER_REQUEST:
            listener.onServerRequest(m.getServerRequest());
            break;
          case REQUEST_ENDED:
            listener.onRequestEnded(m.getRequestEnded());
            break;
          case APPROVAL_PENDING:
            listener.onApprovalPending(m.getApprovalPending());
            break;
          case RESULT:
            result = m.getResult();
            break;
          default:
            break;
        }
      } catch (RuntimeException e) {
        System.getLogger(McpSession.class.getName())
            .log(System.Logger.Level.WARNING, "mcp-bridge: tool call listener failed", e);
      }
    }

    @Override
    public void onError(Throwable t) {
      completeExceptionally(McpBridgeException.from(t));
    }

    @Override
    public void onCompleted() {
      if (result == null) {
        completeExceptionally(new McpBridgeException(Status.Code.INTERNAL,
            "INTERNAL: the tool call stream ended without a result", null, null));
      } else {
        complete(result);
      }
    }
  }

  // ---- resources ----

  /** Every resource of the server (all pages). */
  public List<Resource> listResources() {
    return Rpc.await(listResourcesAsync());
  }

  /** Async form of {@link #listResources()}. */
  public CompletableFuture<List<Resource>> listResourcesAsync() {
    return Paging.all(this::listResourcesPageAsync, ListResourcesResponse::getResourcesList,
        ListResourcesResponse::getNextPageToken);
  }

  /** One page of resources. */
  public ListResourcesResponse listResourcesPage(String pageToken) {
    return Rpc.await(listResourcesPageAsync(pageToken));
  }

  /** Async form of {@link #listResourcesPage}. */
  public CompletableFuture<ListResourcesResponse> listResourcesPageAsync(String pageToken) {
    return Rpc.unary(client.stub(null, id())::listResources,
        ListResourcesRequest.newBuilder().setSessionId(id()).setPageToken(nz(pageToken)).build());
  }

  /** Every resource template of the server (all pages). */
  public List<ResourceTemplate> listResourceTemplates() {
    return Rpc.await(listResourceTemplatesAsync());
  }

  /** Async form of {@link #listResourceTemplates()}. */
  public CompletableFuture<List<ResourceTemplate>> listResourceTemplatesAsync() {
    return Paging.all(this::listResourceTemplatesPageAsync, ListResourceTemplatesResponse::getResourceTemplatesList,
        ListResourceTemplatesResponse::getNextPageToken);
  }

  /** One page of resource templates. */
  public ListResourceTemplatesResponse listResourceTemplatesPage(String pageToken) {
    return Rpc.await(listResourceTemplatesPageAsync(pageToken));
  }

  /** Async form of {@link #listResourceTemplatesPage}. */
  public CompletableFuture<ListResourceTemplatesResponse> listResourceTemplatesPageAsync(String pageToken) {
    return Rpc.unary(client.stub(null, id())::listResourceTemplates,
        ListResourceTemplatesRequest.newBuilder().setSessionId(id()).setPageToken(nz(pageToken)).build());
  }

  /** Reads a resource; NOT_FOUND if the server has no such resource. {@link Mcp#text} gets its text. */
  public ReadResourceResponse readResource(String uri) {
    return Rpc.await(readResourceAsync(uri, CallOptions.none()));
  }

  /** Reads a resource with options. */
  public ReadResourceResponse readResource(String uri, CallOptions options) {
    return Rpc.await(readResourceAsync(uri, options));
  }

  /** Async form of {@link #readResource(String, CallOptions)}. */
  public CompletableFuture<ReadResourceResponse> readResourceAsync(String uri, CallOptions options) {
    CallOptions o = options == null ? CallOptions.none() : options;
    ReadResourceRequest.Builder req = ReadResourceRequest.newBuilder().setSessionId(id()).setUri(uri);
    if (o.callId() != null) {
      req.setCallId(o.callId());
    }
    if (o.meta() != null) {
      req.setMeta(Json.toStruct(o.meta()));
    }
    return Rpc.unary(client.stub(o.timeout(), id())::readResource, req.build());
  }

  /** Subscribes to updates of a resource; they arrive as {@code notifications/resources/updated}. */
  public void subscribe(String uri) {
    Rpc.await(subscribeAsync(uri));
  }

  /** Async form of {@link #subscribe}. */
  public CompletableFuture<Void> subscribeAsync(String uri) {
    return Rpc.<SubscribeResourceRequest, SubscribeResourceResponse>unary(client.stub(null, id())::subscribeResource,
            SubscribeResourceRequest.newBuilder().setSessionId(id()).setUri(uri).build())
        .thenApply(r -> null);
  }

  /** Ends a subscription. */
  public void unsubscribe(String uri) {
    Rpc.await(unsubscribeAsync(uri));
  }

  /** Async form of {@link #unsubscribe}. */
  public CompletableFuture<Void> unsubscribeAsync(String uri) {
    return Rpc.<UnsubscribeResourceRequest, UnsubscribeResourceResponse>unary(client.stub(null, id())::unsubscribeResource,
            UnsubscribeResourceRequest.newBuilder().setSessionId(id()).setUri(uri).build())
        .thenApply(r -> null);
  }

  // ---- prompts and completion ----

  /** Every prompt of the server (all pages). */
  public List<Prompt> listPrompts() {
    return Rpc.await(listPromptsAsync());
  }

  /** Async form of {@link #listPrompts()}. */
  public CompletableFuture<List<Prompt>> listPromptsAsync() {
    return Paging.all(this::listPromptsPageAsync, ListPromptsResponse::getPromptsList,
        ListPromptsResponse::getNextPageToken);
  }

  /** One page of prompts. */
  public ListPromptsResponse listPromptsPage(String pageToken) {
    return Rpc.await(listPromptsPageAsync(pageToken));
  }

  /** Async form of {@link #listPromptsPage}. */
  public CompletableFuture<ListPromptsResponse> listPromptsPageAsync(String pageToken) {
    return Rpc.unary(client.stub(null, id())::listPrompts,
        ListPromptsRequest.newBuilder().setSessionId(id()).setPageToken(nz(pageToken)).build());
  }

  /** Renders a prompt with arguments. */
  public GetPromptResponse getPrompt(String name, Map<String, String> arguments) {
    return Rpc.await(getPromptAsync(name, arguments, CallOptions.none()));
  }

  /** Renders a prompt with arguments and options. */
  public GetPromptResponse getPrompt(String name, Map<String, String> arguments, CallOptions options) {
    return Rpc.await(getPromptAsync(name, arguments, options));
  }

  /** Async form of {@link #getPrompt(String, Map, CallOptions)}. */
  public CompletableFuture<GetPromptResponse> getPromptAsync(
      String name, Map<String, String> arguments, CallOptions options) {
    CallOptions o = options == null ? CallOptions.none() : options;
    GetPromptRequest.Builder req = GetPromptRequest.newBuilder().setSessionId(id()).setName(name);
    if (arguments != null) {
      req.putAllArguments(arguments);
    }
    if (o.callId() != null) {
      req.setCallId(o.callId());
    }
    if (o.meta() != null) {
      req.setMeta(Json.toStruct(o.meta()));
    }
    return Rpc.unary(client.stub(o.timeout(), id())::getPrompt, req.build());
  }

  /** Completions for a prompt argument given what the user typed so far. */
  public CompleteResponse completePromptArgument(String prompt, String argument, String value) {
    return completePromptArgument(prompt, argument, value, Map.of());
  }

  /** Completions for a prompt argument, with the values of arguments already filled in. */
  public CompleteResponse completePromptArgument(
      String prompt, String argument, String value, Map<String, String> context) {
    return Rpc.await(completeAsync(CompleteRequest.newBuilder().setPromptName(prompt), argument, value, context));
  }

  /** Completions for a variable of a resource template. */
  public CompleteResponse completeResourceArgument(String uriTemplate, String argument, String value) {
    return Rpc.await(completeAsync(CompleteRequest.newBuilder().setResourceTemplateUri(uriTemplate), argument, value,
        Map.of()));
  }

  /** Async completion: {@code ref} has the prompt name or template URI set. */
  public CompletableFuture<CompleteResponse> completeAsync(
      CompleteRequest.Builder ref, String argument, String value, Map<String, String> context) {
    CompleteRequest.Builder req = ref.clone().setSessionId(id()).setArgumentName(argument).setArgumentValue(nz(value));
    if (context != null) {
      req.putAllContextArguments(context);
    }
    return Rpc.unary(client.stub(null, id())::complete, req.build());
  }

  // ---- logging, ping, roots ----

  /** Sets the minimum level of log messages the server sends. */
  public void setLogLevel(LoggingLevel level) {
    Rpc.await(setLogLevelAsync(level));
  }

  /** Async form of {@link #setLogLevel}. */
  public CompletableFuture<Void> setLogLevelAsync(LoggingLevel level) {
    return Rpc.<SetLogLevelRequest, SetLogLevelResponse>unary(client.stub(null, id())::setLogLevel,
            SetLogLevelRequest.newBuilder().setSessionId(id()).setLevel(level).build())
        .thenApply(r -> null);
  }

  /**
   * Cancels the call {@code callId} in flight in this session (detached or not) upstream; a call id with no call
   * in flight fails NOT_FOUND, reason CALL_NOT_FOUND (docs/adr/0105-detached-calls.md).
   */
  public void cancelCall(String callId) {
    Rpc.await(cancelCallAsync(callId));
  }

  /** Async form of {@link #cancelCall}. */
  public CompletableFuture<Void> cancelCallAsync(String callId) {
    return Rpc.<CancelCallRequest, CancelCallResponse>unary(client.stub(null, id())::cancelCall,
            CancelCallRequest.newBuilder().setSessionId(id()).setCallId(callId).build())
        .thenApply(r -> null);
  }

  /** Pings the server; returns the round-trip time the bridge measured. */
  public java.time.Duration ping() {
    return Rpc.await(pingAsync());
  }

  /** Async form of {@link #ping()}. */
  public CompletableFuture<java.time.Duration> pingAsync() {
    return Rpc.<PingRequest, PingResponse>unary(client.stub(null, id())::ping,
            PingRequest.newBuilder().setSessionId(id()).build())
        .thenApply(r -> java.time.Duration.ofSeconds(r.getLatency().getSeconds(), r.getLatency().getNanos()));
  }

  /**
   * Replaces the session's roots; the bridge tells the server their list changed. Returns the roots now.
   * The session must have declared roots: opened with {@link SessionOptions#roots} or a handler that
   * overrides {@link HostHandler#listRoots}; otherwise the bridge answers FAILED_PRECONDITION
   * (CAPABILITY_NOT_NEGOTIATED).
   */
  public List<Root> setRoots(List<Root> newRoots) {
    return Rpc.await(setRootsAsync(newRoots));
  }

  /** Async form of {@link #setRoots}. */
  public CompletableFuture<List<Root>> setRootsAsync(List<Root> newRoots) {
    List<Root> copy = List.copyOf(newRoots);
    roots = copy; // answer roots requests with the new list at once
    return Rpc.<SetRootsRequest, SetRootsResponse>unary(client.stub(null, id())::setRoots,
            SetRootsRequest.newBuilder().setSessionId(id()).addAllRoots(copy).build())
        .thenApply(r -> {
          roots = List.copyOf(r.getRootsList());
          return roots;
        });
  }

  // ---- tasks ----

  /** The state of a task the server runs, and its result once it completed. */
  public GetTaskResponse getTask(String taskId) {
    return Rpc.await(getTaskAsync(taskId));
  }

  /** Async form of {@link #getTask}. */
  public CompletableFuture<GetTaskResponse> getTaskAsync(String taskId) {
    return Rpc.unary(client.stub(null, id())::getTask, GetTaskRequest.newBuilder().setSessionId(id()).setTaskId(taskId).build());
  }

  /** Asks the server to cancel a task; returns its state afterwards. */
  public Task cancelTask(String taskId) {
    return Rpc.await(cancelTaskAsync(taskId));
  }

  /** Async form of {@link #cancelTask}. */
  public CompletableFuture<Task> cancelTaskAsync(String taskId) {
    return Rpc.<CancelTaskRequest, CancelTaskResponse>unary(client.stub(null, id())::cancelTask,
            CancelTaskRequest.newBuilder().setSessionId(id()).setTaskId(taskId).build())
        .thenApply(CancelTaskResponse::getTask);
  }

  // ---- server requests without the host stream ----

  /** The session's server requests waiting for an answer, oldest first. */
  public List<ServerRequest> pendingRequests() {
    return Rpc.await(pendingRequestsAsync());
  }

  /** Async form of {@link #pendingRequests()}. */
  public CompletableFuture<List<ServerRequest>> pendingRequestsAsync() {
    return Rpc.<ListPendingRequestsRequest, ListPendingRequestsResponse>unary(client.stub(null, id())::listPendingRequests,
            ListPendingRequestsRequest.newBuilder().setSessionId(id()).build())
        .thenApply(ListPendingRequestsResponse::getRequestsList);
  }

  /**
   * Answers a pending server request directly (as REST hosts do), e.g. for a session opened without a handler.
   * Fails NOT_FOUND, FAILED_PRECONDITION (already ended) or INVALID_ARGUMENT (wrong kind, content not matching
   * the schema).
   */
  public void respond(String requestId, HostAnswer answer) {
    Rpc.await(respondAsync(requestId, answer));
  }

  /** Async form of {@link #respond}. */
  public CompletableFuture<Void> respondAsync(String requestId, HostAnswer answer) {
    return Rpc.<RespondToRequestRequest, RespondToRequestResponse>unary(client.stub(null, id())::respondToRequest,
            RespondToRequestRequest.newBuilder().setSessionId(id()).setRequestId(requestId).setAnswer(answer).build())
        .thenApply(r -> null);
  }

  /**
   * Watches the session's events (WatchEvents) without attaching to the host stream: {@code consumer} gets each
   * event in order on a gRPC thread (keep it short). Pending server requests come first when
   * {@code includePending}. Close the returned watch to stop; its {@link EventWatch#done()} future ends with the
   * stream.
   */
  public EventWatch watchEvents(boolean includePending, Consumer<Event> consumer) {
    EventWatch w = new EventWatch(consumer);
    client.streamStub(null).watchEvents(WatchEventsRequest.newBuilder().setSessionId(id()).setIncludePending(includePending).build(), w);
    return w;
  }

  /** A running {@link #watchEvents} stream. */
  public static final class EventWatch
      implements AutoCloseable, io.grpc.stub.ClientResponseObserver<WatchEventsRequest, WatchEventsResponse> {
    private final Consumer<Event> consumer;
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    private volatile io.grpc.stub.ClientCallStreamObserver<WatchEventsRequest> call;

    EventWatch(Consumer<Event> consumer) {
      this.consumer = consumer;
    }

    @Override
    public void beforeStart(io.grpc.stub.ClientCallStreamObserver<WatchEventsRequest> requestStream) {
      call = requestStream;
    }

    @Override
    public void onNext(WatchEventsResponse value) {
      try {
        consumer.accept(value.getEvent());
      } catch (RuntimeException e) {
        System.getLogger(McpSession.class.getName())
            .log(System.Logger.Level.WARNING, "mcp-bridge: event consumer failed", e);
      }
    }

    @Override
    public void onError(Throwable t) {
      done.completeExceptionally(McpBridgeException.from(t));
    }

    @Override
    public void onCompleted() {
      done.complete(null);
    }

    /** Completes when the stream ends: normally when the session closes, exceptionally on an error or close(). */
    public CompletableFuture<Void> done() {
      return done;
    }

    /** Stops watching. */
    @Override
    public void close() {
      io.grpc.stub.ClientCallStreamObserver<WatchEventsRequest> c = call;
      if (c != null) {
        c.cancel("watch closed", null);
      }
    }
  }

  // ---- lifecycle ----

  /**
   * Closes the session on the bridge: in-flight calls fail CANCELLED, pending server requests end, a stdio
   * server is shut down. Idempotent.
   */
  @Override
  public void close() {
    Rpc.await(closeAsync());
  }

  /** Async form of {@link #close()}. */
  public CompletableFuture<Void> closeAsync() {
    if (closed) {
      return CompletableFuture.completedFuture(null);
    }
    closed = true;
    client.hostStreamFor(id()).detach(id());
    client.forget(id());
    return Rpc.<DeleteSessionRequest, DeleteSessionResponse>unary(client.stub(null, id())::deleteSession,
            DeleteSessionRequest.newBuilder().setSessionId(id()).build())
        .handle((r, e) -> {
          if (e != null) {
            McpBridgeException m = Rpc.rethrow(e);
            if (m.code() != Status.Code.NOT_FOUND) {
              throw m;
            }
          }
          return null;
        });
  }

  @Override
  public String toString() {
    return "McpSession{" + id() + ", server=" + info.getServer() + ", protocol=" + info.getProtocolVersion() + "}";
  }

  private static String nz(String s) {
    return s == null ? "" : s;
  }

  private static Duration duration(java.time.Duration d) {
    return Duration.newBuilder().setSeconds(d.getSeconds()).setNanos(d.getNano()).build();
  }
}
