package dev.mcpbridge.client;

import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicReference;
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

  /**
   * A future tied to a gRPC call: cancelling it, or any future derived from it with thenApply, thenCompose and
   * the like, cancels the call.
   */
  static class CallFuture<T> extends CompletableFuture<T> {
    private final AtomicReference<Runnable> onCancel;

    CallFuture() {
      this(new AtomicReference<>());
    }

    private CallFuture(AtomicReference<Runnable> onCancel) {
      this.onCancel = onCancel;
    }

    /** Sets what cancelling this future (or a dependent) does to the call. */
    final void onCancel(Runnable r) {
      onCancel.set(r);
    }

    @Override
    public <U> CompletableFuture<U> newIncompleteFuture() {
      return new CallFuture<>(onCancel);
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      boolean cancelled = super.cancel(mayInterruptIfRunning);
      Runnable r = onCancel.get();
      if (cancelled && r != null) {
        r.run();
      }
      return cancelled;
    }
  }

  /** A future that is also the response observer of one unary call. */
  static class UnaryFuture<Req, Resp> extends CallFuture<Resp> implements ClientResponseObserver<Req, Resp> {
    private Resp value;

    @Override
    public void beforeStart(ClientCallStreamObserver<Req> requestStream) {
      onCancel(() -> requestStream.cancel("cancelled by the caller", null));
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
      McpBridgeException e = new McpBridgeException(m.code(), m.getMessage(), m.statusDetails().orElse(null), m);
      m.callId().ifPresent(e::setCallId);
      return e;
    }
    return McpBridgeException.from(cause);
  }
}
