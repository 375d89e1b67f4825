package dev.mcpbridge.client;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.regex.Pattern;

/**
 * How a {@link McpToolbox} names a server's tool for a model. Model APIs accept tool names matching
 * {@code ^[a-zA-Z0-9_-]{1,64}$}; whatever a naming returns, the toolbox then makes it fit ({@link #fit}) and
 * unique: characters outside that set become {@code _}, and a name that is too long, or that two tools would share
 * (in both), is cut and ends with {@code _} and 8 hex digits of SHA-256 over the server and tool names, so the same
 * set of tools always gets the same names, in any order.
 */
@FunctionalInterface
public interface ToolNaming {
  /** The longest tool name model APIs accept. */
  int MAX_LENGTH = 64;

  /** The names model APIs accept. */
  Pattern VALID = Pattern.compile("^[a-zA-Z0-9_-]{1,64}$");

  /** The name before it is fitted: {@code server} is the configured server's name, {@code tool} the MCP tool's. */
  String name(String server, String tool);

  /** {@code <server><separator><tool>}, e.g. {@code prefixed("_")} names the demo server's add {@code demo_add}. */
  static ToolNaming prefixed(String separator) {
    return (server, tool) -> server + separator + tool;
  }

  /** The default: {@code prefixed("_")}. */
  static ToolNaming serverPrefix() {
    return prefixed("_");
  }

  /** The MCP tool's own name (collisions between servers are still made unique with a hash). */
  static ToolNaming toolName() {
    return (server, tool) -> tool;
  }

  /**
   * {@code name} made valid for a model API: invalid characters become {@code _}; if the result is not empty and
   * fits in 64 characters (and {@code forceHash} is false) that is the name, else it is cut to 55 characters and
   * ends with {@code _} and {@link #hash} of {@code server} and {@code tool}.
   */
  static String fit(String name, String server, String tool, boolean forceHash) {
    String clean = name.replaceAll("[^a-zA-Z0-9_-]", "_");
    if (!forceHash && !clean.isEmpty() && clean.length() <= MAX_LENGTH) {
      return clean;
    }
    String suffix = "_" + hash(server, tool);
    int keep = Math.min(clean.length(), MAX_LENGTH - suffix.length());
    return clean.substring(0, keep) + suffix;
  }

  /** 8 hex digits of SHA-256 over {@code server}, a NUL and {@code tool}. */
  static String hash(String server, String tool) {
    try {
      byte[] d = MessageDigest.getInstance("SHA-256")
          .digest((server + "\0" + tool).getBytes(StandardCharsets.UTF_8));
      return HexFormat.of().formatHex(d, 0, 4);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
