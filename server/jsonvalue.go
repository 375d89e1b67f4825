package server

// Conversions between free-form JSON (what the MCP SDK holds in `any`, maps and json.RawMessage) and
// google.protobuf.Struct / Value. Both directions take outside input: servers send schemas, structured
// content, metadata and log data; hosts send tool arguments, elicitation content and _meta.

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// errNotJSON is wrapped by the errors of the server-side direction (any → Value): a value that has no JSON
// form (NaN, a channel) or, for a Struct, is not an object.
var errNotJSON = errors.New("not representable as JSON")

// valueFromAny converts a JSON-like Go value — what encoding/json decodes into any, Go scalars,
// json.Number, json.RawMessage, maps with string keys and slices — to a Value. Other values (structs) go
// through encoding/json first. NaN and infinities have no JSON form and are errors.
func valueFromAny(v any) (*structpb.Value, error) {
	switch v := v.(type) {
	case nil, bool, string, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, []byte:
		return structpb.NewValue(v) // the scalars structpb converts as encoding/json does; never fails for them
	case *structpb.Value:
		return v, nil
	case float64: // NaN and infinities, which structpb would keep, have no JSON form
		return numberValue(v)
	case float32:
		return numberValue(float64(v))
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return nil, fmt.Errorf("%w: number %q", errNotJSON, string(v))
		}
		return numberValue(f)
	case json.RawMessage:
		return valueFromJSON(v)
	case map[string]any:
		s, err := structFromMap(v)
		if err != nil {
			return nil, err
		}
		return structpb.NewStructValue(s), nil
	case []any:
		l := &structpb.ListValue{Values: make([]*structpb.Value, 0, len(v))}
		for i, e := range v {
			ev, err := valueFromAny(e)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			l.Values = append(l.Values, ev)
		}
		return structpb.NewListValue(l), nil
	}
	// Typed maps, slices, structs, pointers: use their JSON form.
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return structpb.NewNullValue(), nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNotJSON, err)
	}
	return valueFromJSON(raw)
}

func numberValue(f float64) (*structpb.Value, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, fmt.Errorf("%w: number %v", errNotJSON, f)
	}
	return structpb.NewNumberValue(f), nil
}

// valueFromJSON parses raw JSON into a Value; empty input is null.
func valueFromJSON(raw []byte) (*structpb.Value, error) {
	if len(raw) == 0 {
		return structpb.NewNullValue(), nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("%w: %v", errNotJSON, err)
	}
	return valueFromAny(v)
}

// structFromMap converts a JSON object. A nil map is a nil Struct (field absent).
func structFromMap(m map[string]any) (*structpb.Struct, error) {
	if m == nil {
		return nil, nil
	}
	s := &structpb.Struct{Fields: make(map[string]*structpb.Value, len(m))}
	for k, e := range m {
		v, err := valueFromAny(e)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		s.Fields[k] = v
	}
	return s, nil
}

// structFromAny converts a value that must be a JSON object (or nil, which is a nil Struct).
func structFromAny(v any) (*structpb.Struct, error) {
	if v == nil {
		return nil, nil
	}
	if m, ok := v.(map[string]any); ok {
		return structFromMap(m)
	}
	pv, err := valueFromAny(v)
	if err != nil {
		return nil, err
	}
	switch k := pv.GetKind().(type) {
	case *structpb.Value_StructValue:
		return k.StructValue, nil
	case *structpb.Value_NullValue:
		return nil, nil
	}
	return nil, fmt.Errorf("%w: want a JSON object", errNotJSON)
}

// schemaFromAny converts a JSON Schema. A schema is an object or a boolean (JSON Schema 2020-12 §4.3.2);
// Struct cannot hold a boolean, so true becomes {} and false {"not": {}}, which mean the same
// (docs/adr/0002-api-shape.md).
func schemaFromAny(v any) (*structpb.Struct, error) {
	switch b := v.(type) {
	case bool:
		return boolSchema(b), nil
	case json.RawMessage:
		var x any
		if err := json.Unmarshal(b, &x); err != nil {
			return nil, fmt.Errorf("%w: schema: %v", errNotJSON, err)
		}
		return schemaFromAny(x)
	}
	s, err := structFromAny(v)
	if err != nil {
		// A boolean hidden behind a typed value (e.g. a *bool) ends up here as a Value.
		if pv, perr := valueFromAny(v); perr == nil {
			if bv, ok := pv.GetKind().(*structpb.Value_BoolValue); ok {
				return boolSchema(bv.BoolValue), nil
			}
		}
		return nil, fmt.Errorf("schema: %w", err)
	}
	return s, nil
}

func boolSchema(b bool) *structpb.Struct {
	if b {
		return &structpb.Struct{Fields: map[string]*structpb.Value{}}
	}
	return &structpb.Struct{Fields: map[string]*structpb.Value{"not": structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{}})}}
}

// --- host input: Struct / Value → Go values ---

// anyFromValue converts a host's Value to a JSON-like Go value (nil, bool, float64, string, []any,
// map[string]any). Values that have no JSON form — a Value with no kind set, NaN or infinite numbers — are
// reported as field violations at path.
func anyFromValue(v *structpb.Value, path string, vs *[]mcpcore.FieldViolation) any {
	if v == nil {
		*vs = append(*vs, mcpcore.FieldViolation{Field: path, Description: "value has no kind set"})
		return nil
	}
	switch k := v.GetKind().(type) {
	case *structpb.Value_NullValue:
		return nil
	case *structpb.Value_BoolValue:
		return k.BoolValue
	case *structpb.Value_StringValue:
		return k.StringValue
	case *structpb.Value_NumberValue:
		if math.IsNaN(k.NumberValue) || math.IsInf(k.NumberValue, 0) {
			*vs = append(*vs, mcpcore.FieldViolation{Field: path, Description: "must be a finite number"})
			return nil
		}
		return k.NumberValue
	case *structpb.Value_StructValue:
		return mapFromStructPath(k.StructValue, path, vs)
	case *structpb.Value_ListValue:
		out := make([]any, 0, len(k.ListValue.GetValues()))
		for i, e := range k.ListValue.GetValues() {
			out = append(out, anyFromValue(e, path+"["+strconv.Itoa(i)+"]", vs))
		}
		return out
	}
	*vs = append(*vs, mcpcore.FieldViolation{Field: path, Description: "value has no kind set"})
	return nil
}

// mapFromStructPath converts a host's Struct; a nil Struct is an empty (non-nil) map.
func mapFromStructPath(s *structpb.Struct, path string, vs *[]mcpcore.FieldViolation) map[string]any {
	out := make(map[string]any, len(s.GetFields()))
	for k, e := range s.GetFields() {
		out[k] = anyFromValue(e, joinField(path, k), vs)
	}
	return out
}

// mapFromStruct converts a host's Struct at path, or returns an *mcpcore.InvalidError. A nil Struct is a nil
// map (field absent).
func mapFromStruct(s *structpb.Struct, path string) (map[string]any, error) {
	if s == nil {
		return nil, nil
	}
	var vs []mcpcore.FieldViolation
	m := mapFromStructPath(s, path, &vs)
	if len(vs) > 0 {
		return nil, &mcpcore.InvalidError{Err: errInvalidInput, Violations: vs}
	}
	return m, nil
}

// jsonFromStruct is mapFromStruct marshalled to JSON; nil for a nil Struct.
func jsonFromStruct(s *structpb.Struct, path string) (json.RawMessage, error) {
	if s == nil {
		return nil, nil
	}
	m, err := mapFromStruct(s, path)
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(m)
	if err != nil { // unreachable: the map holds only JSON values
		return nil, &mcpcore.InvalidError{Err: errInvalidInput, Violations: []mcpcore.FieldViolation{{Field: path, Description: err.Error()}}}
	}
	return raw, nil
}
