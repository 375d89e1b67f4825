// Copyright 2025 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by the license
// that can be found in the LICENSE file.

package mcp

import (
	"encoding/json"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// maxElicitSchemas bounds [elicitSchemas]. A server asks with a handful of
// distinct schemas; one that sends a new schema with every request only
// empties the cache now and then.
const maxElicitSchemas = 256

// elicitSchemas keeps the form-mode elicitation schemas clients received, by
// their JSON text, each validated once and resolved at most once. Checking a
// schema ([validateElicitSchema]) and resolving it for validating the answer
// costs far more than marshalling it to find its entry, and a server sends the
// same few schemas over and over. Both are pure functions of the schema's JSON,
// so the cache is shared by all clients.
var elicitSchemas elicitSchemaCache

type elicitSchemaCache struct {
	mu sync.Mutex
	m  map[string]*elicitSchemaEntry // guarded by mu; at most maxElicitSchemas
}

// elicitSchemaEntry is one requested schema: the result of
// [validateElicitSchema], and its resolution, done on first use.
type elicitSchemaEntry struct {
	schema *jsonschema.Schema // nil when the request carried no schema
	err    error              // validateElicitSchema's error

	once       sync.Once
	resolved   *jsonschema.Resolved
	resolveErr error
}

// get returns the entry of the wire schema. The error is that of marshalling
// the schema; an invalid schema is reported in the entry's err.
func (c *elicitSchemaCache) get(wireSchema any) (*elicitSchemaEntry, error) {
	if wireSchema == nil {
		return &elicitSchemaEntry{}, nil
	}
	data, err := json.Marshal(wireSchema)
	if err != nil {
		return nil, err
	}
	key := string(data)
	c.mu.Lock()
	e, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return e, nil
	}
	e = &elicitSchemaEntry{}
	e.schema, e.err = validateElicitSchema(json.RawMessage(data))
	c.mu.Lock()
	if len(c.m) >= maxElicitSchemas {
		clear(c.m)
	}
	if c.m == nil {
		c.m = make(map[string]*elicitSchemaEntry)
	}
	c.m[key] = e
	c.mu.Unlock()
	return e, nil
}

// resolve returns the schema resolved; it resolves it on the first call only.
// The result is safe for concurrent use.
func (e *elicitSchemaEntry) resolve() (*jsonschema.Resolved, error) {
	e.once.Do(func() { e.resolved, e.resolveErr = e.schema.Resolve(nil) })
	return e.resolved, e.resolveErr
}
