// Copyright 2025 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by the license
// that can be found in the LICENSE file.

package mcp

import (
	"fmt"
	"testing"
)

func elicitTestSchema(prop string) map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			prop:  map[string]any{"type": "string", "minLength": 1},
			"age": map[string]any{"type": "integer", "minimum": 0},
		},
		"required": []any{prop},
	}
}

// TestElicitSchemaCache checks that a schema is validated and resolved once
// however often it is requested, that equal schemas share an entry, and that an
// invalid schema is reported on every request.
func TestElicitSchemaCache(t *testing.T) {
	var c elicitSchemaCache
	a1, err := c.get(elicitTestSchema("name"))
	if err != nil || a1.err != nil {
		t.Fatalf("get: %v, %v", err, a1.err)
	}
	a2, _ := c.get(elicitTestSchema("name")) // an equal schema, a different map
	if a1 != a2 {
		t.Error("an equal schema got a new entry")
	}
	r1, err := a1.resolve()
	if err != nil {
		t.Fatal(err)
	}
	if r2, _ := a2.resolve(); r1 != r2 {
		t.Error("the schema was resolved twice")
	}
	if err := r1.Validate(map[string]any{"name": "x", "age": 3}); err != nil {
		t.Errorf("valid content: %v", err)
	}
	if err := r1.Validate(map[string]any{"age": 3}); err == nil {
		t.Error("content without the required property was accepted")
	}
	b, _ := c.get(elicitTestSchema("email"))
	if b == a1 {
		t.Error("a different schema shared an entry")
	}
	nested := map[string]any{"type": "object", "properties": map[string]any{
		"x": map[string]any{"type": "object", "properties": map[string]any{"y": map[string]any{"type": "string"}}},
	}}
	for range 2 {
		e, err := c.get(nested)
		if err != nil || e.err == nil {
			t.Errorf("nested schema: got %v, %v; want an invalid-schema error", err, e.err)
		}
	}
	if e, err := c.get(nil); err != nil || e.err != nil || e.schema != nil {
		t.Errorf("nil schema: %v %v %v", e.schema, e.err, err)
	}
}

func TestElicitSchemaCacheBounded(t *testing.T) {
	var c elicitSchemaCache
	for i := range maxElicitSchemas + 10 {
		if _, err := c.get(elicitTestSchema(fmt.Sprintf("p%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.m); n > maxElicitSchemas {
		t.Errorf("%d schemas kept, want at most %d", n, maxElicitSchemas)
	}
}

// BenchmarkElicitSchema compares checking and resolving a requested schema on
// every request (before) with the cache.
func BenchmarkElicitSchema(b *testing.B) {
	wire := elicitTestSchema("name")
	b.Run("uncached", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			s, err := validateElicitSchema(wire)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := s.Resolve(nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		b.ReportAllocs()
		var c elicitSchemaCache
		for b.Loop() {
			e, err := c.get(wire)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := e.resolve(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
