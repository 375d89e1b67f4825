package dev.mcpbridge.client;

import dev.mcpbridge.v1.Event;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/** Collects events for tests and waits for the one a test expects. */
final class Events {
  final BlockingQueue<Event> queue = new LinkedBlockingQueue<>();
  final List<Event> seen = new ArrayList<>();

  void add(Event e) {
    queue.add(e);
  }

  /** The first event (from now on, skipping others) matching {@code p}, within {@code seconds}. */
  Event await(Predicate<Event> p, int seconds, String what) throws InterruptedException {
    long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    while (true) {
      long left = end - System.nanoTime();
      Event e = left > 0 ? queue.poll(left, TimeUnit.NANOSECONDS) : null;
      if (e == null) {
        throw new AssertionError("no " + what + " event within " + seconds + " s; saw " + seen);
      }
      seen.add(e);
      if (p.test(e)) {
        return e;
      }
    }
  }
}
