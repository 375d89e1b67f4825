package mcpcore

import (
	"fmt"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

func mustCompile(t *testing.T, raw any) *elicitSchema {
	t.Helper()
	s, err := compileElicitSchema(raw)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A requested schema is compiled once: the same schema again, is the same compiled schema; a different schema is compiled on its own; the cache stays bounded.
func TestElicitSchemaCompiledOnce(t *testing.T) {
	wire := map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string", "minLength": 2}}, "required": []any{"name"}}
	a, err := compileElicitSchema(wire)
	if err != nil || a == nil {
		t.Fatalf("compile: %v %v", a, err)
	}
	b, _ := compileElicitSchema(map[string]any{"required": []any{"name"}, "type": "object", "properties": map[string]any{"name": map[string]any{"minLength": 2, "type": "string"}}})
	if a != b {
		t.Error("the same schema compiled twice")
	}
	typed := &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{"name": {Type: "string", MinLength: jsonschema.Ptr(2)}}, Required: []string{"name"}}
	if c, _ := compileElicitSchema(typed); c == nil || len(c.validate(map[string]any{"name": "x"})) == 0 {
		t.Error("a *jsonschema.Schema does not compile to the same rules")
	}
	if c, _ := compileElicitSchema(typed); c == nil || c != mustCompile(t, typed) {
		t.Error("the same *jsonschema.Schema compiled twice")
	}
	if vs := a.validate(map[string]any{"name": "x"}); len(vs) == 0 {
		t.Error("a cached schema no longer validates")
	}
	other, _ := compileElicitSchema(map[string]any{"type": "object", "properties": map[string]any{"age": map[string]any{"type": "integer"}}})
	if other == a {
		t.Error("a different schema shares a compiled one")
	}
	for i := range 2 * schemaCacheSize {
		_, _ = compileElicitSchema(map[string]any{"type": "object", "properties": map[string]any{fmt.Sprint("p", i): map[string]any{"type": "string"}}})
	}
	elicitSchemas.mu.Lock()
	n := len(elicitSchemas.m)
	elicitSchemas.mu.Unlock()
	if n > schemaCacheSize {
		t.Errorf("cache holds %d schemas, want at most %d", n, schemaCacheSize)
	}
}
