import dev.mcpbridge.client.*;
import dev.mcpbridge.springai.*;
import dev.mcpbridge.v1.*;
import java.util.Map;
import org.springframework.ai.chat.client.ChatClient;
import org.springframework.ai.openai.OpenAiChatModel;
import org.springframework.ai.openai.OpenAiChatOptions;

public class SpringAiAgent {
  public static void main(String[] args) {
    String bridge = System.getenv().getOrDefault("MCP_BRIDGE_TARGET", "127.0.0.1:50051");
    OpenAiChatModel model = OpenAiChatModel.builder()
        .options(OpenAiChatOptions.builder()
            .baseUrl(System.getenv().getOrDefault("OPENAI_BASE_URL", "https://api.openai.com/v1"))
            .apiKey(System.getenv().getOrDefault("OPENAI_API_KEY", "none"))
            .model(System.getenv().getOrDefault("OPENAI_MODEL", "gpt-4o-mini"))
            .build())
        .build();

    // Answers the servers' sampling requests with the same model, and their elicitations with a fixed person.
    ChatModelSamplingHandler handler = new ChatModelSamplingHandler(model) {
      @Override public ElicitResult handleElicitation(ElicitRequest request, RequestContext context) {
        return Mcp.accept(Map.of("name", "Ada", "age", 36)); // ask your user here
      }
    };

    try (McpBridgeClient client = McpBridgeClient.connect(bridge);
         McpToolbox toolbox = McpToolbox.builder(client).servers("demo").handler(handler).open()) {
      ChatClient chat = ChatClient.builder(model)
          .defaultToolCallbacks(BridgeToolCallbackProvider.of(toolbox))
          .build();
      System.out.println(chat.prompt().user("What is 2 + 3? Use the demo_add tool.").call().content());
    }
  }
}
