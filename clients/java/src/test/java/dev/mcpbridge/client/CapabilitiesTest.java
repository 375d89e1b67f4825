package dev.mcpbridge.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.mcpbridge.v1.CreateMessageRequest;
import dev.mcpbridge.v1.CreateMessageResult;
import dev.mcpbridge.v1.ElicitRequest;
import dev.mcpbridge.v1.ElicitResult;
import dev.mcpbridge.v1.HostCapabilities;
import dev.mcpbridge.v1.Root;
import dev.mcpbridge.v1.SamplingCapability;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

class CapabilitiesTest {
  @Test
  void emptyHandlerDeclaresNothing() {
    assertEquals(HostCapabilities.getDefaultInstance(), new HostHandler() {}.capabilities());
    assertEquals(HostCapabilities.getDefaultInstance(), Capabilities.detect(null));
  }

  @Test
  void notificationsAloneDeclareNothing() {
    HostHandler h = new HostHandler() {
      @Override public void handleNotification(String method, dev.mcpbridge.v1.Event event) {}
    };
    assertEquals(HostCapabilities.getDefaultInstance(), h.capabilities());
  }

  @Test
  void samplingSyncOrAsync() {
    HostHandler sync = new HostHandler() {
      @Override public CreateMessageResult handleSampling(CreateMessageRequest r, RequestContext c) {
        return Mcp.samplingReply("m", "t");
      }
    };
    HostHandler async = new HostHandler() {
      @Override public CompletionStage<CreateMessageResult> handleSamplingAsync(CreateMessageRequest r, RequestContext c) {
        return CompletableFuture.completedFuture(Mcp.samplingReply("m", "t"));
      }
    };
    for (HostHandler h : List.of(sync, async)) {
      HostCapabilities caps = h.capabilities();
      assertTrue(caps.hasSampling());
      assertFalse(caps.hasElicitation());
      assertFalse(caps.hasRoots());
    }
  }

  /** A named class, as applications write them, overriding elicitation (form and URL) and roots. */
  static class FullHandler implements HostHandler {
    @Override public ElicitResult handleElicitation(ElicitRequest r, RequestContext c) {
      return Mcp.decline();
    }

    @Override public CompletionStage<ElicitResult> handleUrlElicitationAsync(ElicitRequest r, RequestContext c) {
      return CompletableFuture.completedFuture(Mcp.accept());
    }

    @Override public List<Root> listRoots(RequestContext c) {
      return List.of();
    }
  }

  static class SubHandler extends FullHandler {}

  @Test
  void elicitationModesAndRoots() {
    for (HostHandler h : List.of(new FullHandler(), new SubHandler())) {
      HostCapabilities caps = h.capabilities();
      assertFalse(caps.hasSampling());
      assertTrue(caps.getElicitation().getForm());
      assertTrue(caps.getElicitation().getUrl());
      assertTrue(caps.getRoots().getListChanged());
    }
  }

  @Test
  void explicitCapabilitiesWin() {
    HostHandler h = new HostHandler() {
      @Override public CreateMessageResult handleSampling(CreateMessageRequest r, RequestContext c) {
        return Mcp.samplingReply("m", "t");
      }

      @Override public HostCapabilities capabilities() {
        return HostHandler.super.capabilities().toBuilder()
            .setSampling(SamplingCapability.newBuilder().setTools(true)).build();
      }
    };
    assertTrue(h.capabilities().getSampling().getTools());
    HostCapabilities forced = SessionOptions.forServer("x").handler(h)
        .capabilities(HostCapabilities.getDefaultInstance()).effectiveCapabilities();
    assertEquals(HostCapabilities.getDefaultInstance(), forced);
  }

  @Test
  void initialRootsDeclareRoots() {
    HostCapabilities caps = SessionOptions.forServer("x").roots(List.of(Mcp.root("file:///tmp", "tmp")))
        .effectiveCapabilities();
    assertTrue(caps.hasRoots());
    assertFalse(caps.hasSampling());
  }
}
