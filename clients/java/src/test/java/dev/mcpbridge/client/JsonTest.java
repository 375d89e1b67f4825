package dev.mcpbridge.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonTest {
  @Test
  void javaValuesRoundTripThroughStruct() {
    Map<String, Object> in = new LinkedHashMap<>();
    in.put("s", "text");
    in.put("i", 30);
    in.put("d", 2.5);
    in.put("b", true);
    in.put("n", null);
    in.put("list", List.of(1, "two", false));
    in.put("array", new int[] {1, 2});
    in.put("nested", Map.of("k", Map.of("deep", "v")));
    Struct s = Json.toStruct(in);
    Map<String, Object> out = Json.toMap(s);
    assertEquals("text", out.get("s"));
    assertEquals(30.0, out.get("i"));
    assertEquals(2.5, out.get("d"));
    assertEquals(true, out.get("b"));
    assertNull(out.get("n"));
    assertEquals(Arrays.asList(1.0, "two", false), out.get("list"));
    assertEquals(List.of(1.0, 2.0), out.get("array"));
    assertEquals(Map.of("k", Map.of("deep", "v")), out.get("nested"));
  }

  @Test
  void parsesAndPrintsJson() {
    Struct s = Json.parseStruct("{\"a\": [1, {\"b\": null}], \"c\": \"x\"}");
    assertEquals("{\"a\":[1.0,{\"b\":null}],\"c\":\"x\"}", Json.toJson(s));
    Value v = Json.parseValue("[1, 2]");
    assertEquals(List.of(1.0, 2.0), Json.toJava(v));
    assertThrows(IllegalArgumentException.class, () -> Json.parseStruct("[1]"));
  }

  @Test
  void rejectsUnknownTypes() {
    assertThrows(IllegalArgumentException.class, () -> Json.toValue(new Object()));
  }

  @Test
  void nullsAreEmpty() {
    assertEquals(Struct.getDefaultInstance(), Json.toStruct(null));
    assertEquals(Map.of(), Json.toMap(null));
  }
}
