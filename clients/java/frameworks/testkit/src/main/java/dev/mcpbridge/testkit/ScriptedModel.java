package dev.mcpbridge.testkit;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.mcpbridge.client.Json;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * An OpenAI-compatible model server on loopback: {@code POST /v1/chat/completions} (and {@code /chat/completions})
 * answers with whatever {@code script} returns for the parsed request — a text reply ({@link #text}) or tool calls
 * ({@link #toolCall}) — and records every request it received. Non-streaming only.
 */
public final class ScriptedModel implements AutoCloseable {
  private final HttpServer server;
  private final ExecutorService executor = Executors.newFixedThreadPool(4);
  private final Function<Map<String, Object>, Map<String, Object>> script;
  private final List<Map<String, Object>> requests = new CopyOnWriteArrayList<>();
  private final AtomicInteger ids = new AtomicInteger();

  public ScriptedModel(Function<Map<String, Object>, Map<String, Object>> script) throws IOException {
    this.script = script;
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
    server.createContext("/", this::handle);
    server.setExecutor(executor);
    server.start();
  }

  /** The base URL an OpenAI client takes, ending in /v1. */
  public String baseUrl() {
    return "http://127.0.0.1:" + server.getAddress().getPort() + "/v1";
  }

  /** Every chat completion request received, parsed, in arrival order. */
  public List<Map<String, Object>> requests() {
    return List.copyOf(requests);
  }

  /** An assistant message with text. */
  public static Map<String, Object> text(String content) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("role", "assistant");
    m.put("content", content);
    return m;
  }

  /** An assistant message calling one tool. */
  public static Map<String, Object> toolCall(String id, String name, String argumentsJson) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("role", "assistant");
    m.put("content", null);
    m.put("tool_calls", List.of(Map.of("id", id, "type", "function",
        "function", Map.of("name", name, "arguments", argumentsJson))));
    return m;
  }

  /** The request's messages. */
  @SuppressWarnings("unchecked")
  public static List<Map<String, Object>> messages(Map<String, Object> request) {
    return (List<Map<String, Object>>) request.getOrDefault("messages", List.of());
  }

  /** The text of a message's content (a string, or the text parts of a list). */
  @SuppressWarnings("unchecked")
  public static String content(Map<String, Object> message) {
    Object c = message.get("content");
    if (c instanceof String) {
      return (String) c;
    }
    StringBuilder sb = new StringBuilder();
    if (c instanceof List) {
      for (Object part : (List<Object>) c) {
        if (part instanceof Map && ((Map<String, Object>) part).get("text") != null) {
          sb.append(((Map<String, Object>) part).get("text"));
        }
      }
    }
    return sb.toString();
  }

  /** The names of the functions a request offered the model. */
  @SuppressWarnings("unchecked")
  public static List<String> toolNames(Map<String, Object> request) {
    List<String> names = new ArrayList<>();
    for (Object t : (List<Object>) request.getOrDefault("tools", List.of())) {
      Map<String, Object> fn = (Map<String, Object>) ((Map<String, Object>) t).get("function");
      names.add((String) fn.get("name"));
    }
    return names;
  }

  private void handle(HttpExchange ex) throws IOException {
    try (ex) {
      if (!"POST".equals(ex.getRequestMethod()) || !ex.getRequestURI().getPath().endsWith("/chat/completions")) {
        reply(ex, 404, "{\"error\":{\"message\":\"not found\"}}");
        return;
      }
      String body;
      try (InputStream in = ex.getRequestBody()) {
        body = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      }
      Map<String, Object> request = Json.toMap(Json.parseStruct(body));
      requests.add(request);
      Map<String, Object> message;
      try {
        message = script.apply(request);
      } catch (RuntimeException e) {
        reply(ex, 500, "{\"error\":{\"message\":" + quote(String.valueOf(e)) + "}}");
        return;
      }
      Map<String, Object> choice = new LinkedHashMap<>();
      choice.put("index", 0);
      choice.put("message", message);
      choice.put("finish_reason", message.containsKey("tool_calls") ? "tool_calls" : "stop");
      choice.put("logprobs", null);
      Map<String, Object> resp = new LinkedHashMap<>();
      resp.put("id", "chatcmpl-" + ids.incrementAndGet());
      resp.put("object", "chat.completion");
      resp.put("created", 1700000000);
      resp.put("model", request.getOrDefault("model", "scripted"));
      resp.put("choices", List.of(choice));
      resp.put("usage", Map.of("prompt_tokens", 1, "completion_tokens", 1, "total_tokens", 2));
      reply(ex, 200, json(resp));
    }
  }

  private static void reply(HttpExchange ex, int status, String json) throws IOException {
    byte[] b = json.getBytes(StandardCharsets.UTF_8);
    ex.getResponseHeaders().add("Content-Type", "application/json");
    ex.sendResponseHeaders(status, b.length);
    try (OutputStream out = ex.getResponseBody()) {
      out.write(b);
    }
  }

  /** JSON text of maps, lists, strings, numbers (integers stay integers), booleans and null. */
  @SuppressWarnings("unchecked")
  public static String json(Object o) {
    if (o == null) {
      return "null";
    }
    if (o instanceof String) {
      return quote((String) o);
    }
    if (o instanceof Number || o instanceof Boolean) {
      return String.valueOf(o);
    }
    StringBuilder sb = new StringBuilder();
    if (o instanceof Map) {
      sb.append('{');
      boolean first = true;
      for (Map.Entry<String, Object> e : ((Map<String, Object>) o).entrySet()) {
        sb.append(first ? "" : ",").append(quote(e.getKey())).append(':').append(json(e.getValue()));
        first = false;
      }
      return sb.append('}').toString();
    }
    if (o instanceof List) {
      sb.append('[');
      boolean first = true;
      for (Object x : (List<Object>) o) {
        sb.append(first ? "" : ",").append(json(x));
        first = false;
      }
      return sb.append(']').toString();
    }
    throw new IllegalArgumentException("no JSON for " + o.getClass());
  }

  private static String quote(String s) {
    StringBuilder sb = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      if (c == '"' || c == '\\') {
        sb.append('\\').append(c);
      } else if (c < 0x20) {
        sb.append(String.format("\\u%04x", (int) c));
      } else {
        sb.append(c);
      }
    }
    return sb.append('"').toString();
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
  }
}
