package dev.mcpbridge.client;

import dev.mcpbridge.v1.ApprovalRequest;
import dev.mcpbridge.v1.AuthorizationRequest;
import dev.mcpbridge.v1.CreateMessageRequest;
import dev.mcpbridge.v1.ElicitRequest;
import dev.mcpbridge.v1.ElicitationCapability;
import dev.mcpbridge.v1.HostCapabilities;
import dev.mcpbridge.v1.RootsCapability;
import dev.mcpbridge.v1.SamplingCapability;

/** Derives a handler's capabilities from the {@link HostHandler} methods its class overrides. */
public final class Capabilities {
  private Capabilities() {}

  /**
   * The capabilities {@code handler} declares by overriding: sampling ({@code handleSampling} or its async
   * form), elicitation form ({@code handleElicitation…}), elicitation url ({@code handleUrlElicitation…}),
   * roots with listChanged ({@code listRoots…}). A null handler declares none.
   */
  public static HostCapabilities detect(HostHandler handler) {
    HostCapabilities.Builder b = HostCapabilities.newBuilder();
    if (handler == null) {
      return b.build();
    }
    Class<?> c = handler.getClass();
    if (overrides(c, "handleSampling", CreateMessageRequest.class, RequestContext.class)
        || overrides(c, "handleSamplingAsync", CreateMessageRequest.class, RequestContext.class)) {
      b.setSampling(SamplingCapability.getDefaultInstance());
    }
    boolean form = overrides(c, "handleElicitation", ElicitRequest.class, RequestContext.class)
        || overrides(c, "handleElicitationAsync", ElicitRequest.class, RequestContext.class);
    boolean url = overrides(c, "handleUrlElicitation", ElicitRequest.class, RequestContext.class)
        || overrides(c, "handleUrlElicitationAsync", ElicitRequest.class, RequestContext.class);
    if (form || url) {
      b.setElicitation(ElicitationCapability.newBuilder().setForm(form).setUrl(url));
    }
    if (overrides(c, "listRoots", RequestContext.class) || overrides(c, "listRootsAsync", RequestContext.class)) {
      b.setRoots(RootsCapability.newBuilder().setListChanged(true));
    }
    return b.build();
  }

  /**
   * Whether {@code handler} answers authorization requests (overrides {@code handleAuthorization} or its async
   * form). It declares no capability: authorization is the bridge's own request.
   */
  public static boolean handlesAuthorization(HostHandler handler) {
    if (handler == null) {
      return false;
    }
    Class<?> c = handler.getClass();
    return overrides(c, "handleAuthorization", AuthorizationRequest.class, RequestContext.class)
        || overrides(c, "handleAuthorizationAsync", AuthorizationRequest.class, RequestContext.class);
  }

  /** Whether {@code handler} decides approval requests (overrides {@code handleApproval} or its async form). */
  public static boolean handlesApproval(HostHandler handler) {
    if (handler == null) {
      return false;
    }
    Class<?> c = handler.getClass();
    return overrides(c, "handleApproval", ApprovalRequest.class, RequestContext.class)
        || overrides(c, "handleApprovalAsync", ApprovalRequest.class, RequestContext.class);
  }

  /** Whether class c has an implementation of the named HostHandler method other than the interface default. */
  static boolean overrides(Class<?> c, String name, Class<?>... params) {
    try {
      return c.getMethod(name, params).getDeclaringClass() != HostHandler.class;
    } catch (NoSuchMethodException e) {
      return false;
    }
  }
}
