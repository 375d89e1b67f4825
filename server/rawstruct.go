package server

// A server's JSON written straight as a google.protobuf.Struct's protobuf encoding (docs/adr/0097): a tool's
// schemas go from the bytes the server sent to the bytes the host receives without a map[string]any tree nor a
// structpb tree between them, so a list of many tools costs a small multiple of its size, not forty.
//
// The encoding is the one proto.Marshal gives the Struct that schemaFromAny builds from the same JSON, up to
// the order of a Struct's entries (which proto.Marshal leaves to map iteration): numbers are float64, a
// string's invalid UTF-8 and lone surrogates become U+FFFD (as the SDK's decoder makes them), a key given twice
// is written twice and the last one wins when decoded (as in the map), and a boolean schema is {} or
// {"not": {}}.

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// The field numbers of google.protobuf.Struct, Value and ListValue.
const (
	structFields  = 1 // Struct.fields, map<string, Value>: entries of key = 1, value = 2
	valueNull     = 1
	valueNumber   = 2
	valueString   = 3
	valueBool     = 4
	valueStruct   = 5
	valueList     = 6
	listValues    = 1
	mapEntryKey   = 1
	mapEntryValue = 2
)

// appendSchemaField appends field num of a message holding the JSON Schema raw as a Struct: an object, or a
// boolean (true is {}, false {"not": {}}, as schemaFromAny makes them). Anything else is an errNotJSON.
func appendSchemaField(dst []byte, num protowire.Number, raw []byte) ([]byte, error) {
	d := jsonScanner{b: raw}
	d.space()
	switch {
	case d.literal("true"):
		dst = protowire.AppendTag(dst, num, protowire.BytesType)
		dst = protowire.AppendVarint(dst, 0)
	case d.literal("false"):
		dst = protowire.AppendTag(dst, num, protowire.BytesType)
		// {"not": {}}: one entry, key "not", value a Value holding an empty Struct.
		dst = append(dst, 11, structFields<<3|2, 9, mapEntryKey<<3|2, 3, 'n', 'o', 't', mapEntryValue<<3|2, 2, valueStruct<<3|2, 0)
	case d.peek() == '{':
		dst = protowire.AppendTag(dst, num, protowire.BytesType)
		var err error
		if dst, err = d.lengthPrefixed(dst, func(dst []byte) ([]byte, error) { return d.object(dst, 1) }); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%w: schema: want a JSON object or boolean", errNotJSON)
	}
	if d.space(); d.i != len(d.b) {
		return nil, fmt.Errorf("%w: schema: data after the value", errNotJSON)
	}
	return dst, nil
}

// jsonScanner reads one JSON text and writes its protobuf encoding. Its input has been checked as JSON by
// the SDK's decoder already; it still reports any syntax error it meets rather than trusting that.
type jsonScanner struct {
	b []byte
	i int
}

func (d *jsonScanner) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: at byte %d: %s", errNotJSON, d.i, fmt.Sprintf(format, args...))
}

func (d *jsonScanner) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\r', '\n':
			d.i++
		default:
			return
		}
	}
}

func (d *jsonScanner) peek() byte {
	if d.i < len(d.b) {
		return d.b[d.i]
	}
	return 0
}

func (d *jsonScanner) literal(s string) bool {
	if len(d.b)-d.i >= len(s) && string(d.b[d.i:d.i+len(s)]) == s {
		d.i += len(s)
		return true
	}
	return false
}

// lengthPrefixed appends what body appends, preceded by its length as a varint. The length is reserved as
// one byte and the body moved when it needs more, so nothing is encoded twice.
func (d *jsonScanner) lengthPrefixed(dst []byte, body func([]byte) ([]byte, error)) ([]byte, error) {
	mark := len(dst)
	dst = append(dst, 0)
	dst, err := body(dst)
	if err != nil {
		return nil, err
	}
	n := len(dst) - mark - 1
	if n < 0x80 {
		dst[mark] = byte(n)
		return dst, nil
	}
	k := protowire.SizeVarint(uint64(n))
	dst = append(dst, make([]byte, k-1)...)
	copy(dst[mark+k:], dst[mark+1:mark+1+n])
	protowire.AppendVarint(dst[:mark], uint64(n))
	return dst, nil
}

// object appends the fields of a Struct for the JSON object at d (its '{' not yet read), at nesting level
// depth.
func (d *jsonScanner) object(dst []byte, depth int) ([]byte, error) {
	if depth > mcpcore.MaxNestingDepth {
		return nil, d.errorf("nested deeper than %d levels", mcpcore.MaxNestingDepth)
	}
	d.i++ // '{'
	d.space()
	if d.peek() == '}' {
		d.i++
		return dst, nil
	}
	for {
		d.space()
		if d.peek() != '"' {
			return nil, d.errorf("want a key")
		}
		dst = append(dst, structFields<<3|2)
		var err error
		dst, err = d.lengthPrefixed(dst, func(dst []byte) ([]byte, error) {
			dst = append(dst, mapEntryKey<<3|2)
			dst, err := d.lengthPrefixed(dst, d.str)
			if err != nil {
				return nil, err
			}
			if d.space(); d.peek() != ':' {
				return nil, d.errorf("want ':'")
			}
			d.i++
			dst = append(dst, mapEntryValue<<3|2)
			return d.lengthPrefixed(dst, func(dst []byte) ([]byte, error) { return d.value(dst, depth) })
		})
		if err != nil {
			return nil, err
		}
		d.space()
		switch d.peek() {
		case ',':
			d.i++
		case '}':
			d.i++
			return dst, nil
		default:
			return nil, d.errorf("want ',' or '}'")
		}
	}
}

// array appends the values of a ListValue for the JSON array at d (its '[' not yet read).
func (d *jsonScanner) array(dst []byte, depth int) ([]byte, error) {
	if depth > mcpcore.MaxNestingDepth {
		return nil, d.errorf("nested deeper than %d levels", mcpcore.MaxNestingDepth)
	}
	d.i++ // '['
	d.space()
	if d.peek() == ']' {
		d.i++
		return dst, nil
	}
	for {
		dst = append(dst, listValues<<3|2)
		var err error
		if dst, err = d.lengthPrefixed(dst, func(dst []byte) ([]byte, error) { return d.value(dst, depth) }); err != nil {
			return nil, err
		}
		d.space()
		switch d.peek() {
		case ',':
			d.i++
		case ']':
			d.i++
			return dst, nil
		default:
			return nil, d.errorf("want ',' or ']'")
		}
	}
}

// value appends the fields of a Value for the JSON value at d; depth is the level of the object or array
// that holds it.
func (d *jsonScanner) value(dst []byte, depth int) ([]byte, error) {
	d.space()
	switch c := d.peek(); {
	case c == '{':
		dst = append(dst, valueStruct<<3|2)
		return d.lengthPrefixed(dst, func(dst []byte) ([]byte, error) { return d.object(dst, depth+1) })
	case c == '[':
		dst = append(dst, valueList<<3|2)
		return d.lengthPrefixed(dst, func(dst []byte) ([]byte, error) { return d.array(dst, depth+1) })
	case c == '"':
		dst = append(dst, valueString<<3|2)
		return d.lengthPrefixed(dst, d.str)
	case d.literal("true"):
		return append(dst, valueBool<<3, 1), nil
	case d.literal("false"):
		return append(dst, valueBool<<3, 0), nil
	case d.literal("null"):
		return append(dst, valueNull<<3, 0), nil
	case c == '-' || c >= '0' && c <= '9':
		start := d.i
		for d.i < len(d.b) && isNumberByte(d.b[d.i]) {
			d.i++
		}
		f, err := strconv.ParseFloat(string(d.b[start:d.i]), 64)
		if err != nil || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%w: number %q", errNotJSON, d.b[start:d.i])
		}
		dst = append(dst, valueNumber<<3|1)
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(f)), nil
	}
	return nil, d.errorf("want a value")
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// str appends the text of the JSON string at d (its '"' not yet read), as the SDK's decoder reads it:
// escapes resolved, invalid UTF-8 and lone surrogates as U+FFFD.
func (d *jsonScanner) str(dst []byte) ([]byte, error) {
	d.i++ // '"'
	for {
		// The run up to the next quote, escape or byte that is not plain ASCII is copied as it is.
		start := d.i
		for d.i < len(d.b) && d.b[d.i] != '"' && d.b[d.i] != '\\' && d.b[d.i] >= 0x20 && d.b[d.i] < utf8.RuneSelf {
			d.i++
		}
		dst = append(dst, d.b[start:d.i]...)
		if d.i >= len(d.b) {
			return nil, d.errorf("unterminated string")
		}
		switch c := d.b[d.i]; {
		case c == '"':
			d.i++
			return dst, nil
		case c < 0x20:
			return nil, d.errorf("control character in a string")
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(d.b[d.i:])
			if r == utf8.RuneError && size == 1 {
				dst = utf8.AppendRune(dst, utf8.RuneError)
			} else {
				dst = append(dst, d.b[d.i:d.i+size]...)
			}
			d.i += size
		default: // '\\'
			var err error
			if dst, err = d.escape(dst); err != nil {
				return nil, err
			}
		}
	}
}

// escape appends what the escape at d (its '\\' not yet read) stands for.
func (d *jsonScanner) escape(dst []byte) ([]byte, error) {
	if d.i+1 >= len(d.b) {
		return nil, d.errorf("unterminated escape")
	}
	c := d.b[d.i+1]
	d.i += 2
	switch c {
	case '"', '\\', '/':
		return append(dst, c), nil
	case 'b':
		return append(dst, '\b'), nil
	case 'f':
		return append(dst, '\f'), nil
	case 'n':
		return append(dst, '\n'), nil
	case 'r':
		return append(dst, '\r'), nil
	case 't':
		return append(dst, '\t'), nil
	case 'u':
		r, ok := d.hex4()
		if !ok {
			return nil, d.errorf("bad \\u escape")
		}
		if utf16.IsSurrogate(r) {
			// A pair makes one rune; a lone half is U+FFFD and what follows it is read on its own.
			if d.i+1 < len(d.b) && d.b[d.i] == '\\' && d.b[d.i+1] == 'u' {
				save := d.i
				d.i += 2
				if r2, ok := d.hex4(); ok {
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						return utf8.AppendRune(dst, dec), nil
					}
				}
				d.i = save
			}
			r = utf8.RuneError
		}
		return utf8.AppendRune(dst, r), nil
	}
	return nil, d.errorf("bad escape")
}

func (d *jsonScanner) hex4() (rune, bool) {
	if len(d.b)-d.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range d.b[d.i : d.i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	d.i += 4
	return r, true
}
