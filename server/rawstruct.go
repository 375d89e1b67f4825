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
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
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
	return d.members(dst, depth, '}', func(dst []byte) ([]byte, error) {
		if d.space(); d.peek() != '"' {
			return nil, d.errorf("want a key")
		}
		dst = append(dst, structFields<<3|2)
		return d.lengthPrefixed(dst, func(dst []byte) ([]byte, error) {
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
	})
}

// array appends the values of a ListValue for the JSON array at d (its '[' not yet read).
func (d *jsonScanner) array(dst []byte, depth int) ([]byte, error) {
	return d.members(dst, depth, ']', func(dst []byte) ([]byte, error) {
		dst = append(dst, listValues<<3|2)
		return d.lengthPrefixed(dst, func(dst []byte) ([]byte, error) { return d.value(dst, depth) })
	})
}

// members reads the object or array at d (its opening byte not yet read, end its closing byte), at nesting
// level depth, appending each member with member.
func (d *jsonScanner) members(dst []byte, depth int, end byte, member func([]byte) ([]byte, error)) ([]byte, error) {
	if depth > mcpcore.MaxNestingDepth {
		return nil, d.errorf("nested deeper than %d levels", mcpcore.MaxNestingDepth)
	}
	d.i++
	if d.space(); d.peek() == end {
		d.i++
		return dst, nil
	}
	for {
		var err error
		if dst, err = member(dst); err != nil {
			return nil, err
		}
		d.space()
		switch d.peek() {
		case ',':
			d.i++
		case end:
			d.i++
			return dst, nil
		default:
			return nil, d.errorf("want ',' or '%c'", end)
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
		f, err := parseNumber(d.b[start:d.i])
		if err != nil || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%w: number %q", errNotJSON, d.b[start:d.i])
		}
		dst = append(dst, valueNumber<<3|1)
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(f)), nil
	}
	return nil, d.errorf("want a value")
}

// parseNumber is strconv.ParseFloat, without its string for an integer of up to 15 digits (exact in a
// float64), the common number of a schema.
func parseNumber(b []byte) (float64, error) {
	digits := b
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if n := len(digits); n > 0 && n <= 15 && (digits[0] != '0' || n == 1) {
		var v int64
		for _, c := range digits {
			if c < '0' || c > '9' {
				return strconv.ParseFloat(string(b), 64)
			}
			v = v*10 + int64(c-'0')
		}
		if len(digits) < len(b) {
			return -float64(v), nil
		}
		return float64(v), nil
	}
	return strconv.ParseFloat(string(b), 64)
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

// appendStructJSON appends the JSON of the encoded google.protobuf.Struct b as protojson writes that Struct:
// keys sorted, a key encoded twice written once with its last value (as decoding keeps it), numbers as
// float64 in encoding/json's format. It reads what appendSchemaField wrote, for the REST gateway.
func appendStructJSON(dst, b []byte, depth int) ([]byte, error) {
	if depth > mcpcore.MaxNestingDepth {
		return nil, fmt.Errorf("%w: nested deeper than %d levels", errNotJSON, mcpcore.MaxNestingDepth)
	}
	type entry struct{ key, val []byte }
	var small [16]entry // most objects of a schema have few keys: no allocation for them
	entries := small[:0]
	for len(b) > 0 {
		e, rest, err := consumeField(b, structFields)
		if err != nil {
			return nil, err
		}
		b = rest
		var en entry
		for len(e) > 0 {
			num, typ, n := protowire.ConsumeTag(e)
			if n < 0 || typ != protowire.BytesType {
				return nil, errBadEncoding
			}
			v, m := protowire.ConsumeBytes(e[n:])
			if m < 0 {
				return nil, errBadEncoding
			}
			switch num {
			case mapEntryKey:
				en.key = v
			case mapEntryValue:
				en.val = v
			}
			e = e[n+m:]
		}
		entries = append(entries, en)
	}
	slices.SortStableFunc(entries, func(a, b entry) int { return bytes.Compare(a.key, b.key) })
	dst = append(dst, '{')
	for i, en := range entries {
		if i+1 < len(entries) && bytes.Equal(en.key, entries[i+1].key) {
			continue // the last of equal keys wins
		}
		if len(dst) > 0 && dst[len(dst)-1] != '{' {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, en.key)
		dst = append(dst, ':')
		var err error
		if dst, err = appendValueJSON(dst, en.val, depth); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

// appendValueJSON appends the JSON of the encoded google.protobuf.Value b.
func appendValueJSON(dst, b []byte, depth int) ([]byte, error) {
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 {
		return nil, errBadEncoding
	}
	b = b[n:]
	switch {
	case num == valueNull && typ == protowire.VarintType:
		return append(dst, "null"...), nil
	case num == valueBool && typ == protowire.VarintType:
		v, _ := protowire.ConsumeVarint(b)
		if v != 0 {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case num == valueNumber && typ == protowire.Fixed64Type:
		v, m := protowire.ConsumeFixed64(b)
		if m < 0 {
			return nil, errBadEncoding
		}
		return appendJSONFloat(dst, math.Float64frombits(v)), nil
	case typ == protowire.BytesType:
		v, m := protowire.ConsumeBytes(b)
		if m < 0 {
			return nil, errBadEncoding
		}
		switch num {
		case valueString:
			return appendJSONString(dst, v), nil
		case valueStruct:
			return appendStructJSON(dst, v, depth+1)
		case valueList:
			if depth+1 > mcpcore.MaxNestingDepth {
				return nil, fmt.Errorf("%w: nested deeper than %d levels", errNotJSON, mcpcore.MaxNestingDepth)
			}
			dst = append(dst, '[')
			for first := true; len(v) > 0; first = false {
				e, rest, err := consumeField(v, listValues)
				if err != nil {
					return nil, err
				}
				v = rest
				if !first {
					dst = append(dst, ',')
				}
				if dst, err = appendValueJSON(dst, e, depth+1); err != nil {
					return nil, err
				}
			}
			return append(dst, ']'), nil
		}
	}
	return nil, errBadEncoding
}

// errBadEncoding is what the JSON writer reports of bytes appendSchemaField did not write.
var errBadEncoding = errors.New("not an encoded google.protobuf.Struct")

// consumeField reads the length-delimited field num at the start of b: its contents and what follows.
func consumeField(b []byte, num protowire.Number) (field, rest []byte, err error) {
	n, typ, k := protowire.ConsumeTag(b)
	if k < 0 || n != num || typ != protowire.BytesType {
		return nil, nil, errBadEncoding
	}
	v, m := protowire.ConsumeBytes(b[k:])
	if m < 0 {
		return nil, nil, errBadEncoding
	}
	return v, b[k+m:], nil
}

// appendJSONFloat writes f as protojson (and encoding/json) do.
func appendJSONFloat(dst []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' { // e-07 → e-7
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}

// appendJSONString writes s, valid UTF-8 (appendSchemaField made it so), as a JSON string, escaping what
// protojson escapes.
func appendJSONString(dst, s []byte) []byte {
	dst = append(dst, '"')
	start := 0
	for i, c := range s {
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
		}
		start = i + 1
	}
	return append(append(dst, s[start:]...), '"')
}
