package dev.mcpbridge.client;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A minimal MCP server over stdio (JDK only, no dependencies) whose tool list changes: it starts with the tools
 * {@code add_tool} and one whose name is longer than model APIs accept; {@code add_tool} adds a tool named by its
 * {@code name} argument and sends {@code notifications/tools/list_changed}. ToolboxTest has the bridge run it with
 * {@code java -cp target/test-classes}.
 */
public final class ListChangingServer {
  private static final Pattern ID = Pattern.compile("\"id\"\\s*:\\s*(\"(?:[^\"\\\\]|\\\\.)*\"|-?\\d+)");
  private static final Pattern METHOD = Pattern.compile("\"method\"\\s*:\\s*\"([^\"]+)\"");
  private static final Pattern VERSION = Pattern.compile("\"protocolVersion\"\\s*:\\s*\"([^\"]+)\"");
  private static final Pattern PARAMS_NAME = Pattern.compile("\"params\"\\s*:\\s*\\{.*?\"name\"\\s*:\\s*\"([^\"]+)\"");
  private static final Pattern ARG_NAME = Pattern.compile("\"arguments\"\\s*:\\s*\\{[^}]*\"name\"\\s*:\\s*\"([^\"]+)\"");

  static final String LONG_TOOL = "a_tool_whose_name_is_far_too_long_for_any_model_api_to_accept_as_is_really";

  private ListChangingServer() {}

  public static void main(String[] args) throws Exception {
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    List<String> tools = new ArrayList<>(List.of("add_tool", LONG_TOOL));
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      Matcher mm = METHOD.matcher(line);
      Matcher im = ID.matcher(line);
      if (!mm.find()) {
        continue; // a response to something we never sent
      }
      String method = mm.group(1);
      if (!im.find()) {
        continue; // a notification
      }
      String id = im.group(1);
      switch (method) {
        case "initialize": {
          Matcher v = VERSION.matcher(line);
          String version = v.find() ? v.group(1) : "2025-06-18";
          out.println("{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":{\"protocolVersion\":\"" + version
              + "\",\"capabilities\":{\"tools\":{\"listChanged\":true}},"
              + "\"serverInfo\":{\"name\":\"list-changing\",\"version\":\"1.0.0\"}}}");
          break;
        }
        case "tools/list": {
          StringBuilder sb = new StringBuilder();
          for (String t : tools) {
            sb.append(sb.length() == 0 ? "" : ",").append("{\"name\":\"").append(t)
                .append("\",\"description\":\"tool ").append(t).append("\",\"inputSchema\":{\"type\":\"object\","
                + "\"properties\":{\"name\":{\"type\":\"string\"}}}}");
          }
          out.println("{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":{\"tools\":[" + sb + "]}}");
          break;
        }
        case "tools/call": {
          Matcher n = PARAMS_NAME.matcher(line);
          String tool = n.find() ? n.group(1) : "";
          String text = "called " + tool;
          if (tool.equals("add_tool")) {
            Matcher a = ARG_NAME.matcher(line);
            String added = a.find() ? a.group(1) : "added";
            tools.add(added);
            text = "added " + added;
          }
          out.println("{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\""
              + text + "\"}]}}");
          if (tool.equals("add_tool")) {
            out.println("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}");
          }
          break;
        }
        case "ping":
          out.println("{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":{}}");
          break;
        default:
          out.println("{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"error\":{\"code\":-32601,\"message\":\"no method "
              + method + "\"}}");
      }
    }
  }
}
