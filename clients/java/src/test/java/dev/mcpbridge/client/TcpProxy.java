package dev.mcpbridge.client;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A loopback TCP proxy for reconnect tests: forwards connections to a target port, and can drop every open
 * connection (as a network failure would) or refuse new ones for a while.
 */
final class TcpProxy implements AutoCloseable {
  private final ServerSocket server;
  private final int targetPort;
  private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
  private volatile boolean refusing;
  private volatile boolean closed;

  TcpProxy(int targetPort) throws IOException {
    this.targetPort = targetPort;
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread t = new Thread(this::acceptLoop, "tcp-proxy-accept");
    t.setDaemon(true);
    t.start();
  }

  String target() {
    return "127.0.0.1:" + server.getLocalPort();
  }

  /** Closes every open connection; new ones are accepted unless {@link #refuse} is on. */
  void dropAll() {
    for (Socket s : sockets) {
      closeQuietly(s);
    }
    sockets.clear();
  }

  /** While on, connections are closed as soon as they are accepted. */
  void refuse(boolean on) {
    refusing = on;
  }

  private void acceptLoop() {
    while (!closed) {
      Socket in;
      try {
        in = server.accept();
      } catch (IOException e) {
        return;
      }
      if (refusing) {
        closeQuietly(in);
        continue;
      }
      try {
        Socket out = new Socket(InetAddress.getLoopbackAddress(), targetPort);
        in.setTcpNoDelay(true);
        out.setTcpNoDelay(true);
        sockets.add(in);
        sockets.add(out);
        pump(in, out);
        pump(out, in);
      } catch (IOException e) {
        closeQuietly(in);
      }
    }
  }

  private void pump(Socket from, Socket to) {
    Thread t = new Thread(() -> {
      byte[] buf = new byte[16 * 1024];
      try (InputStream is = from.getInputStream(); OutputStream os = to.getOutputStream()) {
        int n;
        while ((n = is.read(buf)) >= 0) {
          os.write(buf, 0, n);
          os.flush();
        }
      } catch (IOException ignored) {
        // connection dropped
      } finally {
        closeQuietly(from);
        closeQuietly(to);
        sockets.remove(from);
        sockets.remove(to);
      }
    }, "tcp-proxy-pump");
    t.setDaemon(true);
    t.start();
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException ignored) {
      // already closed
    }
  }

  @Override
  public void close() {
    closed = true;
    try {
      server.close();
    } catch (IOException ignored) {
      // already closed
    }
    dropAll();
  }
}
