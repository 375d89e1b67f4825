package dev.mcpbridge.client;

import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.BiConsumer;

/** Plumbing between grpc-java's async stubs and CompletableFuture. */
final class Rpc {
  private Rpc() {}

  /**
   * Starts a unary call and returns its result as a future. Cancelling the future cancels the call, which the
   * bridge passes upstream as an MCP cancellation.
   */
  static <Req, Resp> CompletableFuture<Resp> unary(BiConsumer<Req, StreamObserver<Resp>> method, Req request) {
    UnaryFuture<Req, Resp> f = new UnaryFuture<>();
    try {
      method.accept(request, f);
    } catch (RuntimeException e) {
      f.completeExceptionally(McpBridgeException.from(e));
    }
    return f;
  }

  /** A future that is also the response observer of one call. */
  static class UnaryFuture<Req, Resp> extends CompletableFuture<Resp> implements ClientResponseObserver<Req, Resp> {
    private volatile ClientCallStreamObserver<Req> call;
    private Resp value;

    @Override
    public void beforeStart(ClientCallStreamObserver<Req> requestStream) {
      this.call = requestStream;
    }

    @Override
    public void onNext(Resp v) {
      value = v;
    }

    @Override
    public void onError(Throwable t) {
      completeExceptionally(McpBridgeException.from(t));
    }

    @Override
    public void onCompleted() {
      complete(value);
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      boolean cancelled = super.cancel(mayInterruptIfRunning);
      ClientCallStreamObserver<Req> c = call;
      if (cancelled && c != null) {
        c.cancel("cancelled by the caller", null);
      }
      return cancelled;
    }

    void cancelCall(String reason) {
      ClientCallStreamObserver<Req> c = call;
      if (c != null) {
        c.cancel(reason, null);
      }
    }
  }

  /**
   * Waits for a future the way a blocking method should: failures are rethrown as McpBridgeException (with this
   * thread's stack), interruption cancels the call and throws CANCELLED with the interrupt flag kept.
   */
  static <T> T await(CompletableFuture<T> f) {
    try {
      return f.get();
    } catch (InterruptedException e) {
      f.cancel(true);
      Thread.currentThread().interrupt();
      throw new McpBridgeException(Status.Code.CANCELLED, "CANCELLED: interrupted", null, e);
    } catch (ExecutionException e) {
      throw rethrow(e.getCause());
    } catch (CancellationException e) {
      throw new McpBridgeException(Status.Code.CANCELLED, "CANCELLED: cancelled", null, e);
    }
  }

  static McpBridgeException rethrow(Throwable cause) {
    while ((cause instanceof CompletionException || cause instanceof ExecutionException) && cause.getCause() != null) {
      cause = cause.getCause();
    }
    if (cause instanceof McpBridgeException m) {
      return new McpBridgeException(m.code(), m.getMessage(), m.statusDetails().orElse(null), m);
    }
    return McpBridgeException.from(cause);
  }
}
