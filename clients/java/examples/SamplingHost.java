import dev.mcpbridge.client.*;
import dev.mcpbridge.v1.*;
import java.util.List;
import java.util.Map;

/**
 * A host that answers sampling requests with a canned "model": it shows what the server asked, checks the
 * token budget, and answers on the handler's thread. A real host calls its LLM provider here (and may ask the
 * user first: the bridge waits, and nothing else is blocked meanwhile).
 *
 * Run: java -cp 'target/*:target/lib/*' examples/SamplingHost.java
 */
public class SamplingHost {
  static final class CannedModel implements HostHandler {
    @Override
    public CreateMessageResult handleSampling(CreateMessageRequest request, RequestContext ctx) throws McpError {
      String prompt = Mcp.lastUserText(request);
      // A legacy push over stdio has no originating call: it belongs to the session.
      String call = ctx.originCallId().isEmpty() ? "(session)" : ctx.originCallId();
      System.out.printf("server asks (%s, call %s, max %d tokens): %s%n",
          ctx.delivery(), call, request.getMaxTokens(), prompt);
      if (prompt.contains("forbidden")) {
        throw McpError.userRejected("User rejected sampling request");
      }
      String reply = "A canned answer to \"" + prompt + "\"";
      List<String> words = List.of(reply.split(" "));
      if (words.size() > request.getMaxTokens()) {
        reply = String.join(" ", words.subList(0, request.getMaxTokens()));
      }
      return Mcp.samplingReply("canned-model-1", reply);
    }

    @Override
    public void handleNotification(String method, Event event) {
      System.out.println("notification: " + method);
    }
  }

  public static void main(String[] args) {
    try (McpBridgeClient client = McpBridgeClient.connect("127.0.0.1:50051")) {
      McpSession session = client.openSession("demo", new CannedModel());
      System.out.println("declared: " + Json.toJson(session.info().getHostCapabilities()));
      CallToolResult result = session.callTool("sample", Map.of("prompt", "Write a haiku about bridges"),
          CallOptions.none().withCallId("haiku-1"));
      System.out.println("tool result: " + Mcp.text(result) + " " + Mcp.structuredMap(result));
      try {
        // A refusal reaches the server as a JSON-RPC error; depending on the protocol era the tool reports it
        // as a failed result, or the whole call fails with the server's error.
        CallToolResult refused = session.callTool("sample", Map.of("prompt", "something forbidden"));
        System.out.println("refused: " + Mcp.text(refused));
      } catch (McpBridgeException e) {
        System.out.println("refused: " + e.code() + " " + e.jsonRpcMessage().orElse(e.getMessage()));
      }
    }
  }
}
