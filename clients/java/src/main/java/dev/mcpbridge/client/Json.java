package dev.mcpbridge.client;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.ListValue;
import com.google.protobuf.MessageOrBuilder;
import com.google.protobuf.NullValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import com.google.protobuf.util.JsonFormat;
import java.lang.reflect.Array;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Conversions between plain Java values and the JSON the API carries as {@code google.protobuf.Struct} and
 * {@code Value} (tool arguments, JSON Schemas, structured content, elicitation content, {@code _meta}).
 *
 * <p>Java to JSON: {@code null}, {@link Boolean}, any {@link Number}, {@link CharSequence}, {@link Enum} (its
 * name), {@link Map} (keys by {@code toString()}), {@link Iterable} and arrays, and {@code Struct} / {@code Value}
 * / {@code ListValue} themselves. Anything else is an {@link IllegalArgumentException}.
 *
 * <p>JSON to Java: objects become {@code Map<String, Object>} (insertion-ordered, unmodifiable), arrays
 * {@code List<Object>}, numbers {@link Double} (JSON numbers in a Struct are doubles; an integer {@code 30}
 * comes back as {@code 30.0}), strings, booleans and {@code null}.
 */
public final class Json {
  private static final JsonFormat.Printer PRINTER = JsonFormat.printer().omittingInsignificantWhitespace();
  private static final JsonFormat.Parser PARSER = JsonFormat.parser();

  private Json() {}

  /** A Struct holding the entries of {@code map}; {@code null} gives an empty Struct. */
  public static Struct toStruct(Map<String, ?> map) {
    Struct.Builder b = Struct.newBuilder();
    if (map != null) {
      for (Map.Entry<String, ?> e : map.entrySet()) {
        b.putFields(String.valueOf(e.getKey()), toValue(e.getValue()));
      }
    }
    return b.build();
  }

  /** A Value for any supported Java value (see the class comment). */
  public static Value toValue(Object o) {
    if (o == null) {
      return Value.newBuilder().setNullValue(NullValue.NULL_VALUE).build();
    }
    if (o instanceof Value v) {
      return v;
    }
    if (o instanceof Struct s) {
      return Value.newBuilder().setStructValue(s).build();
    }
    if (o instanceof ListValue l) {
      return Value.newBuilder().setListValue(l).build();
    }
    if (o instanceof Boolean b) {
      return Value.newBuilder().setBoolValue(b).build();
    }
    if (o instanceof Number n) {
      return Value.newBuilder().setNumberValue(toDouble(n)).build();
    }
    if (o instanceof CharSequence || o instanceof Character) {
      return Value.newBuilder().setStringValue(o.toString()).build();
    }
    if (o instanceof Enum<?> e) {
      return Value.newBuilder().setStringValue(e.name()).build();
    }
    if (o instanceof Map<?, ?> m) {
      Struct.Builder b = Struct.newBuilder();
      for (Map.Entry<?, ?> e : m.entrySet()) {
        b.putFields(String.valueOf(e.getKey()), toValue(e.getValue()));
      }
      return Value.newBuilder().setStructValue(b).build();
    }
    if (o instanceof Iterable<?> it) {
      ListValue.Builder b = ListValue.newBuilder();
      for (Object x : it) {
        b.addValues(toValue(x));
      }
      return Value.newBuilder().setListValue(b).build();
    }
    if (o.getClass().isArray()) {
      ListValue.Builder b = ListValue.newBuilder();
      int n = Array.getLength(o);
      for (int i = 0; i < n; i++) {
        b.addValues(toValue(Array.get(o, i)));
      }
      return Value.newBuilder().setListValue(b).build();
    }
    throw new IllegalArgumentException("cannot convert " + o.getClass().getName() + " to JSON");
  }

  private static double toDouble(Number n) {
    if (n instanceof BigDecimal d) {
      return d.doubleValue();
    }
    if (n instanceof BigInteger i) {
      return i.doubleValue();
    }
    return n.doubleValue();
  }

  /** The entries of a Struct as Java values; {@code null} gives an empty map. */
  public static Map<String, Object> toMap(Struct s) {
    if (s == null) {
      return Map.of();
    }
    Map<String, Object> m = new LinkedHashMap<>();
    for (Map.Entry<String, Value> e : s.getFieldsMap().entrySet()) {
      m.put(e.getKey(), toJava(e.getValue()));
    }
    return Collections.unmodifiableMap(m);
  }

  /** A Value as a Java value: Map, List, Double, String, Boolean or null. */
  public static Object toJava(Value v) {
    if (v == null) {
      return null;
    }
    switch (v.getKindCase()) {
      case NULL_VALUE:
      case KIND_NOT_SET:
        return null;
      case BOOL_VALUE:
        return v.getBoolValue();
      case NUMBER_VALUE:
        return v.getNumberValue();
      case STRING_VALUE:
        return v.getStringValue();
      case STRUCT_VALUE:
        return toMap(v.getStructValue());
      case LIST_VALUE:
        List<Object> l = new ArrayList<>();
        for (Value x : v.getListValue().getValuesList()) {
          l.add(toJava(x));
        }
        return Collections.unmodifiableList(l);
      default:
        throw new IllegalStateException("unknown Value kind " + v.getKindCase());
    }
  }

  /** Parses a JSON object into a Struct. */
  public static Struct parseStruct(String json) {
    Struct.Builder b = Struct.newBuilder();
    try {
      PARSER.merge(json, b);
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalArgumentException("not a JSON object: " + e.getMessage(), e);
    }
    return b.build();
  }

  /** Parses any JSON value into a Value. */
  public static Value parseValue(String json) {
    Value.Builder b = Value.newBuilder();
    try {
      PARSER.merge(json, b);
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalArgumentException("not JSON: " + e.getMessage(), e);
    }
    return b.build();
  }

  /**
   * Compact JSON of a message, as protojson writes it: a Struct or Value as plain JSON, any other message with
   * lowerCamelCase field names (the REST API's JSON).
   */
  public static String toJson(MessageOrBuilder message) {
    try {
      return PRINTER.print(message);
    } catch (InvalidProtocolBufferException e) {
      throw new IllegalArgumentException(e.getMessage(), e);
    }
  }
}
