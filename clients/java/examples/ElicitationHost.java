import dev.mcpbridge.client.*;
import dev.mcpbridge.v1.*;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A host that answers form elicitations from a map instead of asking a person: it accepts with the values the
 * requested schema asks for, and declines when it lacks a required one. URL-mode elicitations are accepted (a
 * real host would open the URL) and their completion notification is printed.
 *
 * Run: java -cp 'target/*:target/lib/*' examples/ElicitationHost.java
 */
public class ElicitationHost {
  static final class FromMap implements HostHandler {
    private final Map<String, Object> answers;

    FromMap(Map<String, Object> answers) {
      this.answers = answers;
    }

    @Override
    @SuppressWarnings("unchecked")
    public ElicitResult handleElicitation(ElicitRequest request, RequestContext ctx) {
      System.out.println("server asks: " + request.getMessage());
      Map<String, Object> schema = Json.toMap(request.getRequestedSchema());
      Map<String, Object> properties = (Map<String, Object>) schema.getOrDefault("properties", Map.of());
      List<Object> required = (List<Object>) schema.getOrDefault("required", List.of());
      Map<String, Object> content = new LinkedHashMap<>();
      for (String field : properties.keySet()) {
        if (answers.containsKey(field)) {
          content.put(field, answers.get(field));
        } else if (required.contains(field)) {
          return Mcp.decline(); // we cannot fill the form in
        }
      }
      return Mcp.accept(content);
    }

    @Override
    public ElicitResult handleUrlElicitation(ElicitRequest request, RequestContext ctx) {
      System.out.println("server sends the user to " + request.getUrl());
      return Mcp.accept();
    }

    @Override
    public void handleNotification(String method, Event event) {
      if (event.hasElicitationComplete()) {
        System.out.println("elicitation " + event.getElicitationComplete().getElicitationId() + " completed");
      }
    }
  }

  public static void main(String[] args) {
    try (McpBridgeClient client = McpBridgeClient.connect("127.0.0.1:50051")) {
      McpSession session = client.openSession("demo", new FromMap(Map.of("name", "Ada", "age", 36)));
      System.out.println(Mcp.text(session.callTool("elicit", Map.of())));
      System.out.println(Mcp.text(session.callTool("elicit_url", Map.of())));
      try (McpSession stranger = client.openSession("demo", new FromMap(Map.of("age", 99)))) {
        System.out.println(Mcp.text(stranger.callTool("elicit", Map.of())));
      }
    }
  }
}
