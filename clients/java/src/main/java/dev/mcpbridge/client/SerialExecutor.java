package dev.mcpbridge.client;

import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.Executor;

/** Runs tasks one at a time, in submission order, on an underlying executor. */
final class SerialExecutor implements Executor {
  private final Executor delegate;
  private final Queue<Runnable> tasks = new ArrayDeque<>();
  private boolean running; // guarded by tasks

  SerialExecutor(Executor delegate) {
    this.delegate = delegate;
  }

  @Override
  public void execute(Runnable task) {
    synchronized (tasks) {
      tasks.add(task);
      if (running) {
        return;
      }
      running = true;
    }
    try {
      delegate.execute(this::drain);
    } catch (RuntimeException e) {
      synchronized (tasks) {
        running = false;
        tasks.clear();
      }
      throw e;
    }
  }

  private void drain() {
    while (true) {
      Runnable next;
      synchronized (tasks) {
        next = tasks.poll();
        if (next == null) {
          running = false;
          return;
        }
      }
      try {
        next.run();
      } catch (RuntimeException e) {
        // tasks handle their own errors; never let one stop the queue
      }
    }
  }
}
