package dev.mcpbridge.langchain4j;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import dev.langchain4j.model.chat.request.json.JsonAnyOfSchema;
import dev.langchain4j.model.chat.request.json.JsonArraySchema;
import dev.langchain4j.model.chat.request.json.JsonEnumSchema;
import dev.langchain4j.model.chat.request.json.JsonIntegerSchema;
import dev.langchain4j.model.chat.request.json.JsonNumberSchema;
import dev.langchain4j.model.chat.request.json.JsonObjectSchema;
import dev.langchain4j.model.chat.request.json.JsonReferenceSchema;
import dev.langchain4j.model.chat.request.json.JsonStringSchema;
import dev.mcpbridge.client.Json;
import java.util.List;
import org.junit.jupiter.api.Test;

/** MCP input schemas as LangChain4j schema elements. */
class JsonSchemasTest {
  @Test
  void convertsTheShapesToolsUse() {
    JsonObjectSchema s = JsonSchemas.toObjectSchema(Json.toMap(Json.parseStruct("{\"type\":\"object\","
        + "\"properties\":{"
        + "\"a\":{\"type\":\"number\",\"description\":\"the first addend\"},"
        + "\"n\":{\"type\":\"integer\"},"
        + "\"tags\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
        + "\"mode\":{\"type\":\"string\",\"enum\":[\"fast\",\"slow\"]},"
        + "\"maybe\":{\"type\":[\"string\",\"null\"]},"
        + "\"item\":{\"$ref\":\"#/$defs/Item\"}},"
        + "\"required\":[\"a\"],"
        + "\"$defs\":{\"Item\":{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"string\"}}}}}")));
    assertEquals(List.of("a"), s.required());
    assertInstanceOf(JsonNumberSchema.class, s.properties().get("a"));
    assertEquals("the first addend", ((JsonNumberSchema) s.properties().get("a")).description());
    assertInstanceOf(JsonIntegerSchema.class, s.properties().get("n"));
    assertInstanceOf(JsonStringSchema.class, ((JsonArraySchema) s.properties().get("tags")).items());
    assertEquals(List.of("fast", "slow"), ((JsonEnumSchema) s.properties().get("mode")).enumValues());
    assertEquals(2, ((JsonAnyOfSchema) s.properties().get("maybe")).anyOf().size());
    assertEquals("Item", ((JsonReferenceSchema) s.properties().get("item")).reference());
    assertInstanceOf(JsonObjectSchema.class, s.definitions().get("Item"));
  }

  @Test
  void anEmptySchemaIsAnEmptyObject() {
    assertEquals(0, JsonSchemas.toObjectSchema(Json.toMap(Json.parseStruct("{}"))).properties().size());
  }
}
