package dev.mcpbridge.langchain4j;

import dev.langchain4j.model.chat.request.json.JsonAnyOfSchema;
import dev.langchain4j.model.chat.request.json.JsonArraySchema;
import dev.langchain4j.model.chat.request.json.JsonBooleanSchema;
import dev.langchain4j.model.chat.request.json.JsonEnumSchema;
import dev.langchain4j.model.chat.request.json.JsonIntegerSchema;
import dev.langchain4j.model.chat.request.json.JsonNullSchema;
import dev.langchain4j.model.chat.request.json.JsonNumberSchema;
import dev.langchain4j.model.chat.request.json.JsonObjectSchema;
import dev.langchain4j.model.chat.request.json.JsonReferenceSchema;
import dev.langchain4j.model.chat.request.json.JsonSchemaElement;
import dev.langchain4j.model.chat.request.json.JsonStringSchema;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * An MCP tool's input schema (JSON Schema as Java values) as LangChain4j's schema elements, the way
 * langchain4j-mcp converts them: objects, arrays, strings, enums, numbers, integers, booleans, null, anyOf,
 * {@code $ref} to {@code $defs}/{@code definitions}, with their descriptions and {@code required}. A type list
 * ({@code ["string","null"]}) becomes anyOf; an element with no type is taken as a string.
 */
final class JsonSchemas {
  private JsonSchemas() {}

  static JsonObjectSchema toObjectSchema(Map<String, Object> schema) {
    JsonSchemaElement e = toElement(schema);
    if (e instanceof JsonObjectSchema) {
      return (JsonObjectSchema) e;
    }
    return JsonObjectSchema.builder().build();
  }

  @SuppressWarnings("unchecked")
  static JsonSchemaElement toElement(Map<String, Object> s) {
    String description = (String) s.get("description");
    if (s.get("$ref") instanceof String) {
      String ref = (String) s.get("$ref");
      return JsonReferenceSchema.builder().reference(ref.substring(ref.lastIndexOf('/') + 1)).build();
    }
    if (s.get("enum") instanceof List) {
      List<String> values = new ArrayList<>();
      for (Object v : (List<Object>) s.get("enum")) {
        values.add(String.valueOf(v));
      }
      return JsonEnumSchema.builder().enumValues(values).description(description).build();
    }
    Object any = s.containsKey("anyOf") ? s.get("anyOf") : s.get("oneOf");
    if (any instanceof List) {
      List<JsonSchemaElement> options = new ArrayList<>();
      for (Object o : (List<Object>) any) {
        options.add(toElement((Map<String, Object>) o));
      }
      return JsonAnyOfSchema.builder().anyOf(options).description(description).build();
    }
    Object type = s.get("type");
    if (type instanceof List) {
      List<JsonSchemaElement> options = new ArrayList<>();
      for (Object t : (List<Object>) type) {
        Map<String, Object> copy = new LinkedHashMap<>(s);
        copy.put("type", t);
        copy.remove("description");
        options.add(toElement(copy));
      }
      return options.size() == 1 ? options.get(0)
          : JsonAnyOfSchema.builder().anyOf(options).description(description).build();
    }
    String t = type == null ? (s.containsKey("properties") ? "object" : "string") : String.valueOf(type);
    switch (t) {
      case "object": {
        JsonObjectSchema.Builder b = JsonObjectSchema.builder().description(description);
        Object props = s.get("properties");
        if (props instanceof Map) {
          for (Map.Entry<String, Object> p : ((Map<String, Object>) props).entrySet()) {
            b.addProperty(p.getKey(), toElement((Map<String, Object>) p.getValue()));
          }
        }
        if (s.get("required") instanceof List) {
          List<String> req = new ArrayList<>();
          for (Object r : (List<Object>) s.get("required")) {
            req.add(String.valueOf(r));
          }
          b.required(req);
        }
        if (s.get("additionalProperties") instanceof Boolean) {
          b.additionalProperties((Boolean) s.get("additionalProperties"));
        }
        Object defs = s.containsKey("$defs") ? s.get("$defs") : s.get("definitions");
        if (defs instanceof Map) {
          Map<String, JsonSchemaElement> d = new LinkedHashMap<>();
          for (Map.Entry<String, Object> p : ((Map<String, Object>) defs).entrySet()) {
            d.put(p.getKey(), toElement((Map<String, Object>) p.getValue()));
          }
          b.definitions(d);
        }
        return b.build();
      }
      case "array": {
        JsonArraySchema.Builder b = JsonArraySchema.builder().description(description);
        if (s.get("items") instanceof Map) {
          b.items(toElement((Map<String, Object>) s.get("items")));
        }
        return b.build();
      }
      case "integer":
        return JsonIntegerSchema.builder().description(description).build();
      case "number":
        return JsonNumberSchema.builder().description(description).build();
      case "boolean":
        return JsonBooleanSchema.builder().description(description).build();
      case "null":
        return new JsonNullSchema();
      default:
        return JsonStringSchema.builder().description(description).build();
    }
  }
}
