import dev.mcpbridge.client.*;
import dev.mcpbridge.v1.*;
import java.util.Map;

public class QuickStart {
  public static void main(String[] args) {
    try (McpBridgeClient client = McpBridgeClient.connect("127.0.0.1:50051")) {
      McpSession session = client.openSession("demo", new HostHandler() {
        @Override public CreateMessageResult handleSampling(CreateMessageRequest req, RequestContext ctx) {
          return Mcp.samplingReply("canned-model", "Hello from Java!"); // call your LLM here
        }
      });
      System.out.println(Mcp.text(session.callTool("echo", Map.of("text", "hi"))));
      System.out.println(Mcp.text(session.callTool("sample", Map.of("prompt", "Say hello"))));
    }
  }
}
