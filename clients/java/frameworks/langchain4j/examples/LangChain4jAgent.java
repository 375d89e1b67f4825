import dev.langchain4j.model.openai.OpenAiChatModel;
import dev.langchain4j.service.AiServices;
import dev.mcpbridge.client.*;
import dev.mcpbridge.langchain4j.*;
import dev.mcpbridge.v1.*;
import java.util.Map;

public class LangChain4jAgent {
  interface Assistant {
    String chat(String message);
  }

  public static void main(String[] args) {
    String bridge = System.getenv().getOrDefault("MCP_BRIDGE_TARGET", "127.0.0.1:50051");
    OpenAiChatModel model = OpenAiChatModel.builder()
        .baseUrl(System.getenv().getOrDefault("OPENAI_BASE_URL", "https://api.openai.com/v1"))
        .apiKey(System.getenv().getOrDefault("OPENAI_API_KEY", "none"))
        .modelName(System.getenv().getOrDefault("OPENAI_MODEL", "gpt-4o-mini"))
        .build();

    // Answers the servers' sampling requests with the same model, and their elicitations with a fixed person.
    ChatModelSamplingHandler handler = new ChatModelSamplingHandler(model) {
      @Override public ElicitResult handleElicitation(ElicitRequest request, RequestContext context) {
        return Mcp.accept(Map.of("name", "Ada", "age", 36)); // ask your user here
      }
    };

    try (McpBridgeClient client = McpBridgeClient.connect(bridge);
         McpToolbox toolbox = McpToolbox.builder(client).servers("demo").handler(handler).open()) {
      Assistant assistant = AiServices.builder(Assistant.class)
          .chatModel(model)
          .toolProvider(BridgeToolProvider.of(toolbox))
          .build();
      System.out.println(assistant.chat("What is 2 + 3? Use the demo_add tool."));
    }
  }
}
