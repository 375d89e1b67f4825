package dev.mcpbridge.client;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/** Follows page tokens until the last page. */
final class Paging {
  /** Stops a server that hands out tokens forever. */
  static final int MAX_PAGES = 10_000;

  private Paging() {}

  static <R, T> CompletableFuture<List<T>> all(
      Function<String, CompletableFuture<R>> fetch, Function<R, List<T>> items, Function<R, String> next) {
    List<T> out = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    return page(fetch, items, next, "", out, seen);
  }

  private static <R, T> CompletableFuture<List<T>> page(
      Function<String, CompletableFuture<R>> fetch,
      Function<R, List<T>> items,
      Function<R, String> next,
      String token,
      List<T> out,
      Set<String> seen) {
    return fetch.apply(token).thenCompose(resp -> {
      out.addAll(items.apply(resp));
      String n = next.apply(resp);
      if (n == null || n.isEmpty()) {
        return CompletableFuture.completedFuture(List.copyOf(out));
      }
      if (!seen.add(n) || seen.size() > MAX_PAGES) {
        return CompletableFuture.failedFuture(new McpBridgeException(io.grpc.Status.Code.INTERNAL,
            "INTERNAL: the server repeated page token " + n + " (a paging loop)", null, null));
      }
      return page(fetch, items, next, n, out, seen);
    });
  }
}
