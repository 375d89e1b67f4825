package dev.mcpbridge.client;

import dev.mcpbridge.v1.CreateMessageRequest;
import dev.mcpbridge.v1.CreateMessageResult;
import dev.mcpbridge.v1.ModelPreferences;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * A {@link HostHandler} that answers MCP {@code sampling/createMessage} with a model of the host's: the one path
 * from a request to the model — the {@link #review} hook, the neutral {@link SamplingPrompt}, the host's
 * {@link #modelRule} — and {@link #complete}, which a subclass implements for its model API. The framework
 * adapters' {@code ChatModelSamplingHandler}s (Spring AI, LangChain4j) extend it. {@code S} is the subclass, so that
 * the hooks chain: {@code new ChatModelSamplingHandler(model).modelRule(rule).review(check)}.
 *
 * <p>Subclass it further to answer elicitation and the rest too. The hooks may be set from any thread.
 */
public abstract class ModelSamplingHandler<S extends ModelSamplingHandler<S>> implements HostHandler {
  private volatile Function<ModelPreferences, String> modelRule = prefs -> null;
  private volatile UnaryOperator<CreateMessageRequest> review = UnaryOperator.identity();

  /**
   * The host's rule from the server's model preferences (hints, priorities) to a model name; null keeps the model's
   * default. The default rule always returns null.
   */
  public S modelRule(Function<ModelPreferences, String> rule) {
    this.modelRule = Objects.requireNonNull(rule, "rule");
    return self();
  }

  /**
   * A hook run before each request goes to the model, e.g. to let a person approve or edit it: it returns the
   * request to send, or throws to refuse (the server gets an error).
   */
  public S review(UnaryOperator<CreateMessageRequest> review) {
    this.review = Objects.requireNonNull(review, "review");
    return self();
  }

  @SuppressWarnings("unchecked")
  private S self() {
    return (S) this;
  }

  @Override
  public CreateMessageResult handleSampling(CreateMessageRequest request, RequestContext context) throws Exception {
    return createMessage(request);
  }

  /** Runs one sampling request through the model: review, the neutral prompt, the model rule, {@link #complete}. */
  public CreateMessageResult createMessage(CreateMessageRequest request) {
    SamplingPrompt prompt = SamplingPrompt.of(review.apply(request));
    return complete(prompt, modelRule.apply(prompt.modelPreferences()));
  }

  /**
   * Runs {@code prompt} through the model and returns the answer ({@link SamplingPrompt#reply} builds it);
   * {@code model} is the name the model rule chose, null for the model's default.
   */
  protected abstract CreateMessageResult complete(SamplingPrompt prompt, String model);
}
