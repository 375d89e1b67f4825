package mcpcore

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/mail"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// This file validates the content of an accepted form-mode elicitation against the server's requestedSchema,
// so that a host that sends a wrong value learns which field is wrong (a FieldViolation per field, e.g.
// "content.age") instead of the server receiving content that does not match what it asked for.
//
// The MCP elicitation schema (spec 2025-11-25, client/elicitation, "Requested Schema") is a restricted JSON
// Schema: a flat object whose properties are primitives —
//
//   - string: title, description, minLength, maxLength, format (email, uri, date, date-time), default;
//     a single-select enum as "enum" (with optional legacy "enumNames") or as "oneOf" of {const, title};
//   - number / integer: minimum, maximum, default;
//   - boolean: default;
//   - array: a multi-select enum whose "items" carry "enum" or "anyOf" of {const, title}, with minItems and
//     maxItems.
//
// Those keywords are checked here field by field. Anything else a server put in the schema (pattern,
// multipleOf, exclusive bounds, …) is checked afterwards by github.com/google/jsonschema-go, the validator
// the SDK itself uses, as a backstop; its failure is reported on the field "content" with its message.
// Unknown formats are annotations and accepted, as in JSON Schema.
//
// What reaches the server (docs/adr/0007-elicitation-content.md), on both protocol eras:
//   - a property not in the schema's properties is refused, field "content.<name>", whatever
//     additionalProperties says: the spec has accept content be "the submitted data matching the requested
//     schema", a flat form of exactly those fields. Stripping it instead would hide a host's typo (the
//     server would then see the property as missing) and would be data the server did not ask for;
//   - a property the host omitted that has a default in the schema is filled in with it by the bridge, before
//     validation (so a required property with a default may be omitted): the spec asks clients to
//     pre-populate forms with defaults, and a person who submits a pre-populated field unchanged submits
//     the default. The SDK's own ApplyDefaults after the handler then finds nothing left to fill.
//
// A schema that cannot be parsed, or whose root is not an object, does not block the host: the content is
// then not validated here (the SDK rejects such a schema on push before the request is ever created).

// elicitSchema is a requestedSchema compiled for validating accept content. It is immutable once built and
// safe for concurrent use.
type elicitSchema struct {
	names      []string // property names, sorted, so violations come in a stable order
	props      map[string]*jsonschema.Schema
	required   []string
	noExtra    bool                 // properties outside the schema are refused (always, see above)
	resolved   *jsonschema.Resolved // backstop; nil when the schema does not resolve
	properties int                  // len(props), kept for the "accept without content" check
	// propResolved holds, per property, the root schema reduced to that one property, resolved; it
	// attributes a backstop failure to a field (the library reports the first failure it meets, in map
	// order, so the whole-root message alone is neither precise nor deterministic).
	propResolved map[string]*jsonschema.Resolved
}

// withDefaults returns content with the schema's default for every property content omits; content itself
// is not modified. A nil schema, or one without defaults, returns content as it is.
func (es *elicitSchema) withDefaults(content map[string]any) map[string]any {
	if es == nil {
		return content
	}
	var out map[string]any
	for _, name := range es.names {
		p := es.props[name]
		if _, ok := content[name]; ok || len(p.Default) == 0 {
			continue
		}
		var v any
		if json.Unmarshal(p.Default, &v) != nil {
			continue // a default that is not JSON is left to the SDK's validation
		}
		if out == nil {
			out = make(map[string]any, len(content)+1)
			for k, cv := range content {
				out[k] = cv
			}
		}
		out[name] = v
	}
	if out == nil {
		return content
	}
	return out
}

// withElicitDefaults returns a with the requested schema's defaults filled into an accepted form-mode
// elicitation's content (see withDefaults); any other answer is returned as it is. The host's result is
// copied, not modified.
func (e *pendingEntry) withElicitDefaults(logger *slog.Logger, a Answer) Answer {
	r := a.Elicitation
	if r == nil || r.Action != "accept" || e.req.Kind != KindElicitation || elicitMode(e.req.Elicitation) != "form" {
		return a
	}
	if c := e.compiledSchema(logger).withDefaults(r.Content); len(c) != len(r.Content) {
		cp := *r
		cp.Content = c
		a.Elicitation = &cp
	}
	return a
}

// errSchemaNotObject reports a requestedSchema whose root is not an object schema.
var errSchemaNotObject = errors.New("requested schema is not an object schema")

// compileElicitSchema parses a requestedSchema as the SDK carries it (map[string]any from the wire,
// json.RawMessage, *jsonschema.Schema or anything that marshals to a JSON Schema). A nil schema compiles to
// nil: nothing to validate.
//
// Compiling resolves the schema once and once more per property, which costs far more than the rest of an
// elicitation's round trip; a server asks with the same few schemas again and again, so compiled schemas are
// kept by their JSON text (elicitSchemas). A compiled schema is only read after compilation.
func compileElicitSchema(raw any) (*elicitSchema, error) {
	if raw == nil {
		return nil, nil
	}
	if v, ok := raw.(*jsonschema.Schema); ok && v == nil {
		return nil, nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, fmt.Errorf("marshal requested schema: %w", err)
	}
	if string(b) == "null" {
		return nil, nil
	}
	return elicitSchemas.get(string(b), func() (*elicitSchema, error) { return compileElicitSchemaJSON(b) })
}

// elicitSchemas holds compiled requested schemas, by JSON text; at most schemaCacheSize of them.
var elicitSchemas = &schemaCache{m: map[string]schemaCacheEntry{}}

const schemaCacheSize = 256

type schemaCacheEntry struct {
	s   *elicitSchema
	err error
}

// schemaCache is a bounded map: when full, it is emptied (schemas are few; a server that sends a new one
// every time gains nothing from a cache and loses nothing by the reset).
type schemaCache struct {
	mu sync.Mutex
	m  map[string]schemaCacheEntry
}

func (c *schemaCache) get(key string, compile func() (*elicitSchema, error)) (*elicitSchema, error) {
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return e.s, e.err
	}
	s, err := compile()
	c.mu.Lock()
	if len(c.m) >= schemaCacheSize {
		clear(c.m)
	}
	c.m[key] = schemaCacheEntry{s: s, err: err}
	c.mu.Unlock()
	return s, err
}

// compileElicitSchemaJSON compiles a requested schema from its JSON text.
func compileElicitSchemaJSON(b []byte) (*elicitSchema, error) {
	var s *jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("parse requested schema: %w", err)
	}
	if s == nil {
		return nil, nil
	}
	if (s.Type != "" && s.Type != "object") || (s.Types != nil && !slices.Contains(s.Types, "object")) {
		return nil, errSchemaNotObject
	}
	es := &elicitSchema{props: s.Properties, required: s.Required, properties: len(s.Properties)}
	for name, p := range s.Properties {
		if p != nil {
			es.names = append(es.names, name)
		}
	}
	slices.Sort(es.names)
	es.noExtra = true // whatever additionalProperties says: see the top of this file
	if r, err := s.Resolve(nil); err == nil {
		es.resolved = r
		es.propResolved = make(map[string]*jsonschema.Resolved, len(es.names))
		for _, name := range es.names {
			one := s.CloneSchemas()
			one.Properties = map[string]*jsonschema.Schema{name: one.Properties[name]}
			one.Required, one.AdditionalProperties, one.PatternProperties = nil, nil, nil
			one.MinProperties, one.MaxProperties, one.DependentRequired, one.DependentSchemas = nil, nil, nil, nil
			if r, err := one.Resolve(nil); err == nil {
				es.propResolved[name] = r
			}
		}
	}
	return es, nil
}

// validate checks content against the schema and returns the violations, fields named "content.<property>"
// (and "content.<property>[i]" for array items). A nil schema accepts any content.
func (es *elicitSchema) validate(content map[string]any) []FieldViolation {
	if es == nil {
		return nil
	}
	var vs []FieldViolation
	for _, name := range es.required {
		if _, ok := content[name]; !ok {
			vs = append(vs, FieldViolation{Field: "content." + name, Description: "required by the requested schema"})
		}
	}
	for _, name := range es.names {
		v, ok := content[name]
		if !ok {
			continue
		}
		vs = checkElicitValue(vs, "content."+name, es.props[name], v)
	}
	if es.noExtra {
		var extra []string
		for name := range content {
			if _, ok := es.props[name]; !ok {
				extra = append(extra, name)
			}
		}
		slices.Sort(extra)
		for _, name := range extra {
			vs = append(vs, FieldViolation{Field: "content." + name, Description: "not a property of the requested schema"})
		}
	}
	if len(vs) == 0 && es.resolved != nil {
		if err := backstopValidate(es.resolved, content); err != nil {
			vs = es.attribute(content, err)
		}
	}
	return vs
}

// attribute turns a failure of the whole-content backstop into violations of the properties that fail on
// their own, in name order; a failure no single property explains (a root keyword) is reported on
// "content".
func (es *elicitSchema) attribute(content map[string]any, rootErr error) []FieldViolation {
	var vs []FieldViolation
	for _, name := range es.names {
		v, ok := content[name]
		r := es.propResolved[name]
		if !ok || r == nil {
			continue
		}
		if err := backstopValidate(r, map[string]any{name: v}); err != nil {
			vs = append(vs, FieldViolation{Field: "content." + name, Description: trimValidating(err.Error())})
		}
	}
	if len(vs) == 0 {
		vs = append(vs, FieldViolation{Field: "content", Description: trimValidating(rootErr.Error())})
	}
	return vs
}

// trimValidating drops the library's "validating root: validating /properties/x: " location prefixes; the
// violation's field says where.
func trimValidating(msg string) string {
	for strings.HasPrefix(msg, "validating ") {
		i := strings.Index(msg, ": ")
		if i < 0 {
			break
		}
		msg = msg[i+2:]
	}
	return msg
}

// backstopValidate runs the full JSON Schema validator. It recovers from a panic in the library: content
// comes from a host and must never crash the process.
func backstopValidate(r *jsonschema.Resolved, content map[string]any) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("content cannot be validated against the requested schema")
		}
	}()
	if content == nil {
		content = map[string]any{}
	}
	return r.Validate(content)
}

// checkElicitValue appends the violations of one property value to vs.
func checkElicitValue(vs []FieldViolation, field string, s *jsonschema.Schema, v any) []FieldViolation {
	bad := func(format string, args ...any) []FieldViolation {
		return append(vs, FieldViolation{Field: field, Description: fmt.Sprintf(format, args...)})
	}
	typ := schemaType(s)
	if v == nil {
		if typ == "" || typ == "null" || slices.Contains(s.Types, "null") {
			return vs
		}
		return bad("must be %s, not null", withArticle(typ))
	}
	switch typ {
	case "string":
		str, ok := v.(string)
		if !ok {
			return bad("must be a string, got %s", jsonKind(v))
		}
		return checkElicitString(vs, field, s, str)
	case "number", "integer":
		f, ok := toFloat(v)
		if !ok {
			return bad("must be %s, got %s", withArticle(typ), jsonKind(v))
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return bad("must be a finite number")
		}
		if typ == "integer" && f != math.Trunc(f) {
			return bad("must be an integer, got %s", formatNum(f))
		}
		if s.Minimum != nil && f < *s.Minimum {
			return bad("must be at least %s, got %s", formatNum(*s.Minimum), formatNum(f))
		}
		if s.Maximum != nil && f > *s.Maximum {
			return bad("must be at most %s, got %s", formatNum(*s.Maximum), formatNum(f))
		}
		if s.ExclusiveMinimum != nil && f <= *s.ExclusiveMinimum {
			return bad("must be greater than %s, got %s", formatNum(*s.ExclusiveMinimum), formatNum(f))
		}
		if s.ExclusiveMaximum != nil && f >= *s.ExclusiveMaximum {
			return bad("must be less than %s, got %s", formatNum(*s.ExclusiveMaximum), formatNum(f))
		}
		if len(s.Enum) > 0 && !slices.ContainsFunc(s.Enum, func(e any) bool { g, ok := toFloat(e); return ok && g == f }) {
			return bad("must be one of the allowed values")
		}
		return vs
	case "boolean":
		if _, ok := v.(bool); !ok {
			return bad("must be a boolean, got %s", jsonKind(v))
		}
		return vs
	case "array":
		return checkElicitArray(vs, field, s, v)
	case "object":
		// Not allowed by the restricted schema; the backstop checks what the server asked for.
		if k := reflect.ValueOf(v).Kind(); k != reflect.Map {
			return bad("must be an object, got %s", jsonKind(v))
		}
		return vs
	case "":
		// No type: any primitive; const/enum still apply below through the backstop.
		return vs
	default:
		return vs
	}
}

func checkElicitString(vs []FieldViolation, field string, s *jsonschema.Schema, str string) []FieldViolation {
	bad := func(format string, args ...any) []FieldViolation {
		return append(vs, FieldViolation{Field: field, Description: fmt.Sprintf(format, args...)})
	}
	if len(s.Enum) > 0 {
		if !slices.ContainsFunc(s.Enum, func(e any) bool { es, ok := e.(string); return ok && es == str }) {
			return bad("must be one of %s", quoteList(s.Enum))
		}
		return vs
	}
	if len(s.OneOf) > 0 {
		consts := constValues(s.OneOf)
		if consts != nil {
			if !slices.ContainsFunc(consts, func(e any) bool { es, ok := e.(string); return ok && es == str }) {
				return bad("must be one of %s", quoteList(consts))
			}
			return vs
		}
	}
	if s.Const != nil {
		if c, ok := (*s.Const).(string); !ok || c != str {
			return bad("must equal the schema's const value")
		}
	}
	n := utf8.RuneCountInString(str)
	if s.MinLength != nil && n < *s.MinLength {
		return bad("must be at least %d characters, got %d", *s.MinLength, n)
	}
	if s.MaxLength != nil && n > *s.MaxLength {
		return bad("must be at most %d characters, got %d", *s.MaxLength, n)
	}
	if s.Format != "" {
		if err := checkStringFormat(s.Format, str); err != nil {
			return bad("%v", err)
		}
	}
	return vs
}

func checkElicitArray(vs []FieldViolation, field string, s *jsonschema.Schema, v any) []FieldViolation {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return append(vs, FieldViolation{Field: field, Description: "must be an array, got " + jsonKind(v)})
	}
	n := rv.Len()
	if s.MinItems != nil && n < *s.MinItems {
		return append(vs, FieldViolation{Field: field, Description: fmt.Sprintf("must have at least %d items, got %d", *s.MinItems, n)})
	}
	if s.MaxItems != nil && n > *s.MaxItems {
		return append(vs, FieldViolation{Field: field, Description: fmt.Sprintf("must have at most %d items, got %d", *s.MaxItems, n)})
	}
	var allowed []any
	if it := s.Items; it != nil {
		switch {
		case len(it.Enum) > 0:
			allowed = it.Enum
		case len(it.AnyOf) > 0:
			allowed = constValues(it.AnyOf)
		case len(it.OneOf) > 0:
			allowed = constValues(it.OneOf)
		}
	}
	seen := make(map[string]bool, n)
	for i := range n {
		item := rv.Index(i).Interface()
		itemField := field + "[" + strconv.Itoa(i) + "]"
		str, ok := item.(string)
		if !ok {
			if s.Items != nil && schemaType(s.Items) != "" && schemaType(s.Items) != "string" {
				vs = checkElicitValue(vs, itemField, s.Items, item)
				continue
			}
			vs = append(vs, FieldViolation{Field: itemField, Description: "must be a string, got " + jsonKind(item)})
			continue
		}
		if allowed != nil && !slices.ContainsFunc(allowed, func(e any) bool { es, ok := e.(string); return ok && es == str }) {
			vs = append(vs, FieldViolation{Field: itemField, Description: "must be one of " + quoteList(allowed)})
			continue
		}
		if s.UniqueItems && seen[str] {
			vs = append(vs, FieldViolation{Field: itemField, Description: "duplicates an earlier item"})
		}
		seen[str] = true
	}
	return vs
}

// checkStringFormat checks the string formats the MCP elicitation schema allows. Other formats are
// annotations and always pass.
func checkStringFormat(format, s string) error {
	switch format {
	case "email":
		a, err := mail.ParseAddress(s)
		if err != nil || a.Address != s || a.Name != "" {
			return errors.New("must be an email address")
		}
	case "uri":
		u, err := url.Parse(s)
		if err != nil || u.Scheme == "" || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			return errors.New("must be an absolute URI")
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return errors.New("must be a date (RFC 3339 full-date, YYYY-MM-DD)")
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return errors.New("must be a date-time (RFC 3339)")
		}
	}
	return nil
}

// schemaType is the JSON type a property schema asks for, inferring "string" for enums and oneOf lists and
// "array" for items, as the SDK does for untyped enum schemas.
func schemaType(s *jsonschema.Schema) string {
	switch {
	case s.Type != "":
		return s.Type
	case len(s.Types) > 0:
		for _, t := range s.Types {
			if t != "null" {
				return t
			}
		}
		return "null"
	case len(s.Enum) > 0, len(s.OneOf) > 0 && constValues(s.OneOf) != nil:
		return "string"
	case s.Items != nil:
		return "array"
	}
	return ""
}

// constValues returns the const of every entry, or nil if an entry has none (then the list is not a
// titled enum and the backstop validates it).
func constValues(entries []*jsonschema.Schema) []any {
	out := make([]any, 0, len(entries))
	for _, e := range entries {
		if e == nil || e.Const == nil {
			return nil
		}
		out = append(out, *e.Const)
	}
	return out
}

// toFloat converts the numeric types a host may put in content (float64 from JSON, ints from Go code,
// json.Number) to float64.
func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	rv := reflect.ValueOf(v)
	switch {
	case rv.CanInt():
		return float64(rv.Int()), true
	case rv.CanUint():
		return float64(rv.Uint()), true
	case rv.CanFloat():
		return rv.Float(), true
	}
	return 0, false
}

// jsonKind names the JSON type of a Go value for messages.
func jsonKind(v any) string {
	if v == nil {
		return "null"
	}
	if _, ok := v.(json.Number); ok {
		return "number"
	}
	rv := reflect.ValueOf(v)
	switch {
	case rv.CanInt(), rv.CanUint(), rv.CanFloat():
		return "number"
	}
	switch rv.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.String:
		return "string"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return "unsupported value"
}

func formatNum(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// quoteList renders allowed values for a message, bounded so a huge enum does not make a huge error.
func quoteList(vals []any) string {
	const maxShown = 10
	var b strings.Builder
	b.WriteByte('[')
	for i, v := range vals {
		if i == maxShown {
			fmt.Fprintf(&b, ", … %d more", len(vals)-maxShown)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		if s, ok := v.(string); ok {
			b.WriteString(strconv.Quote(s))
		} else {
			fmt.Fprint(&b, v)
		}
	}
	b.WriteByte(']')
	return b.String()
}

// withArticle puts the indefinite article before a JSON type name: "an integer", "a number".
func withArticle(typ string) string {
	switch typ {
	case "integer", "array", "object":
		return "an " + typ
	}
	return "a " + typ
}
