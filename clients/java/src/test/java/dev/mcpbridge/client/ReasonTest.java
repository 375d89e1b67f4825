package dev.mcpbridge.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.mcpbridge.v1.Reason;
import org.junit.jupiter.api.Test;

/** The client's reason constants come from the generated enum mcpbridge.v1.Reason, not from copied strings. */
class ReasonTest {
  @Test
  void constantsAreTheEnumsNames() {
    assertEquals("CALL_OUTCOME_UNKNOWN", McpBridgeException.CALL_OUTCOME_UNKNOWN);
    assertEquals(Reason.CALL_OUTCOME_UNKNOWN.name(), McpBridgeException.CALL_OUTCOME_UNKNOWN);
    assertEquals(Reason.SESSION_NOT_FOUND, Reason.valueOf("SESSION_NOT_FOUND"));
  }
}
