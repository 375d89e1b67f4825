package dev.mcpbridge.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpbridge.client.HostHandler;
import dev.mcpbridge.client.Mcp;
import dev.mcpbridge.client.McpBridgeClient;
import dev.mcpbridge.client.RequestContext;
import dev.mcpbridge.client.testing.TestBridge;
import dev.mcpbridge.v1.ApprovalDecision;
import dev.mcpbridge.v1.ApprovalRequest;
import dev.mcpbridge.v1.ElicitRequest;
import dev.mcpbridge.v1.ElicitResult;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The agent run both framework tests drive: a scripted OpenAI-compatible model that calls, one step at a time,
 * {@code demo_add}, {@code demo_echo}, {@code demo_elicit}, {@code demo_sample} and {@code gated_echo} twice (the
 * gated server needs an approval for echo: the approver approves the first and denies the second), then answers.
 * The bridge runs the demo server twice, as {@code demo} and as {@code gated}; the app's principal is {@code app},
 * the approver's {@code ops}. {@link #verify} checks what the model server received.
 */
public final class AgentScenario implements AutoCloseable {
  public static final String SAMPLE_PROMPT = "Capital of France?";
  public static final String SAMPLE_SYSTEM = "Answer in one sentence.";
  public static final String SAMPLE_REPLY = "Paris is the capital of France.";
  public static final String FINAL_ANSWER = "All six tool calls are done.";
  public static final String DENY_REASON = "echoing that is not allowed";
  public static final String MODEL = "scripted-model";

  /** The tool calls of the agent, in order: name, arguments, what the tool's answer must contain. */
  static final String[][] STEPS = {
    {"demo_add", "{\"a\":2,\"b\":3}", "2 + 3 = 5"},
    {"demo_echo", "{\"text\":\"hello bridge\"}", "hello bridge"},
    {"demo_elicit", "{\"message\":\"Who are you?\"}", "accepted: name=Ada age=36"},
    {"demo_sample", "{\"prompt\":\"" + SAMPLE_PROMPT + "\",\"systemPrompt\":\"" + SAMPLE_SYSTEM
        + "\",\"maxTokens\":20}", SAMPLE_REPLY},
    {"gated_echo", "{\"text\":\"approve me\"}", "approve me"},
    {"gated_echo", "{\"text\":\"please deny me\"}", DENY_REASON},
  };

  public final ScriptedModel model;
  public final TestBridge bridge;
  public final McpBridgeClient app;
  private final McpBridgeClient ops;
  public final List<ApprovalRequest> approvals = new CopyOnWriteArrayList<>();
  public final List<ElicitRequest> elicitations = new CopyOnWriteArrayList<>();

  private AgentScenario(ScriptedModel model, TestBridge bridge, McpBridgeClient app, McpBridgeClient ops) {
    this.model = model;
    this.bridge = bridge;
    this.app = app;
    this.ops = ops;
  }

  public static AgentScenario start() throws Exception {
    ScriptedModel model = new ScriptedModel(AgentScenario::reply);
    TestBridge bridge = null;
    try {
      java.nio.file.Path tokens = TestBridge.tokensFile(Map.of("tok-app", "app", "tok-ops", "ops"));
      bridge = TestBridge.start(Map.of(
          "auth", Map.of("tokensFile", tokens.toString()),
          "mcpServers", Map.of(
              "demo", TestBridge.demoServer(Map.of()),
              "gated", TestBridge.demoServer(Map.of("tools", Map.of("approve", List.of("echo")),
                  "approvers", Map.of("principals", List.of("ops")), "approvalExpiry", "1h")))));
      McpBridgeClient app = bridge.client("tok-app");
      McpBridgeClient ops = bridge.client("tok-ops");
      AgentScenario s = new AgentScenario(model, bridge, app, ops);
      ops.serveApprovals(new HostHandler() {
        @Override
        public ApprovalDecision handleApproval(ApprovalRequest request, RequestContext context) {
          s.approvals.add(request);
          String text = request.getArguments().getFieldsOrThrow("text").getStringValue();
          return text.contains("deny") ? Mcp.deny(DENY_REASON) : Mcp.approve("fine");
        }
      });
      return s;
    } catch (Exception | Error e) {
      model.close();
      if (bridge != null) {
        bridge.close();
      }
      throw e;
    }
  }

  /** What the host's person answers to the demo's elicit tool. */
  public ElicitResult elicit(ElicitRequest request) {
    elicitations.add(request);
    return Mcp.accept(Map.of("name", "Ada", "age", 36));
  }

  /** The scripted model: a sampling request gets {@link #SAMPLE_REPLY}; the agent gets its next step. */
  static Map<String, Object> reply(Map<String, Object> request) {
    List<Map<String, Object>> messages = ScriptedModel.messages(request);
    for (Map<String, Object> m : messages) {
      if ("user".equals(m.get("role")) && ScriptedModel.content(m).equals(SAMPLE_PROMPT)) {
        return ScriptedModel.text(SAMPLE_REPLY);
      }
    }
    int done = 0;
    for (Map<String, Object> m : messages) {
      if ("tool".equals(m.get("role"))) {
        done++;
      }
    }
    if (done >= STEPS.length) {
      return ScriptedModel.text(FINAL_ANSWER);
    }
    return ScriptedModel.toolCall("call_" + done, STEPS[done][0], STEPS[done][1]);
  }

  /**
   * Checks the run: the final answer; each tool's answer as the model saw it (the denial as an error carrying the
   * approver's reason); the tools the agent was offered; the sampling request as the model server received it
   * (system prompt, user message, max tokens, no tools); the approvals and the elicitation.
   */
  public void verify(String answer) {
    assertEquals(FINAL_ANSWER, answer);
    List<Map<String, Object>> agent = new ArrayList<>();
    Map<String, Object> sampling = null;
    for (Map<String, Object> r : model.requests()) {
      boolean isSampling = ScriptedModel.messages(r).stream()
          .anyMatch(m -> "user".equals(m.get("role")) && ScriptedModel.content(m).equals(SAMPLE_PROMPT));
      if (isSampling) {
        assertEquals(null, sampling, "more than one sampling request");
        sampling = r;
      } else {
        agent.add(r);
      }
    }
    assertEquals(STEPS.length + 1, agent.size(), "agent requests: " + agent);
    List<String> offered = ScriptedModel.toolNames(agent.get(0));
    for (String want : List.of("demo_add", "demo_echo", "demo_elicit", "demo_sample", "gated_echo", "gated_add")) {
      assertTrue(offered.contains(want), "tools offered: " + offered);
    }
    for (String name : offered) {
      assertTrue(name.matches("^[a-zA-Z0-9_-]{1,64}$"), name);
    }
    for (int i = 0; i < STEPS.length; i++) {
      List<Map<String, Object>> ms = ScriptedModel.messages(agent.get(i + 1));
      Map<String, Object> last = ms.get(ms.size() - 1);
      assertEquals("tool", last.get("role"), "step " + i + ": " + last);
      assertEquals("call_" + i, last.get("tool_call_id"), "step " + i + ": " + last);
      String seen = ScriptedModel.content(last);
      assertTrue(seen.contains(STEPS[i][2]), "step " + i + " (" + STEPS[i][0] + "): the model saw " + seen);
    }
    String denial = ScriptedModel.content(lastMessage(agent.get(STEPS.length)));
    assertTrue(denial.contains("denied"), denial);

    assertTrue(sampling != null, "the sampling adapter never called the model server");
    List<Map<String, Object>> sm = ScriptedModel.messages(sampling);
    assertEquals(2, sm.size(), sm.toString());
    assertEquals("system", sm.get(0).get("role"));
    assertEquals(SAMPLE_SYSTEM, ScriptedModel.content(sm.get(0)));
    assertEquals("user", sm.get(1).get("role"));
    Object maxTokens = sampling.containsKey("max_completion_tokens") ? sampling.get("max_completion_tokens")
        : sampling.get("max_tokens");
    assertEquals(20.0, ((Number) maxTokens).doubleValue(), "max tokens: " + sampling);
    assertTrue(ScriptedModel.toolNames(sampling).isEmpty(), "the sample tool offers the model no tools");

    assertEquals(2, approvals.size(), approvals.toString());
    for (ApprovalRequest a : approvals) {
      assertEquals("app", a.getCaller());
      assertEquals("gated", a.getServerName());
      assertEquals("echo", a.getTool());
    }
    assertEquals(1, elicitations.size());
    assertEquals("Who are you?", elicitations.get(0).getMessage());
  }

  private static Map<String, Object> lastMessage(Map<String, Object> request) {
    List<Map<String, Object>> ms = ScriptedModel.messages(request);
    return ms.get(ms.size() - 1);
  }

  @Override
  public void close() {
    app.close();
    ops.close();
    bridge.close();
    model.close();
  }
}
