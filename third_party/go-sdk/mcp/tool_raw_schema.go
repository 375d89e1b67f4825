// Copyright 2026 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by an MIT-style
// license that can be found in the LICENSE file.

package mcp

import (
	"bytes"
	"encoding/json"

	internaljson "github.com/modelcontextprotocol/go-sdk/internal/json"
)

// rawSchemaToolsResult is what a client with [ClientOptions.RawToolSchemas]
// decodes a tools/list result into: a ListToolsResult whose tools hold their
// schemas as the server sent them. The sending method handler hands on the
// ListToolsResult (decodedResult), so middleware and callers see that type.
type rawSchemaToolsResult struct {
	ListToolsResult
}

func (r *rawSchemaToolsResult) decodedResult() Result { return &r.ListToolsResult }

func (r *rawSchemaToolsResult) UnmarshalJSON(data []byte) error {
	type res ListToolsResult // without this method
	var wire struct {
		res
		Tools []*rawSchemaTool `json:"tools"`
	}
	if err := internaljson.Unmarshal(data, &wire); err != nil {
		return err
	}
	r.ListToolsResult = ListToolsResult(wire.res)
	r.Tools = make([]*Tool, len(wire.Tools))
	for i, t := range wire.Tools {
		r.Tools[i] = (*Tool)(t) // a null tool stays nil
	}
	return nil
}

// rawSchemaTool decodes a Tool with its InputSchema and OutputSchema as
// json.RawMessage; an absent or null schema is nil.
type rawSchemaTool Tool

func (t *rawSchemaTool) UnmarshalJSON(data []byte) error {
	type tool Tool // without this method
	var wire struct {
		tool
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	}
	if err := internaljson.Unmarshal(data, &wire); err != nil {
		return err
	}
	*t = rawSchemaTool(wire.tool)
	t.InputSchema, t.OutputSchema = rawSchema(wire.InputSchema), rawSchema(wire.OutputSchema)
	return nil
}

// rawSchema is a decoded schema: nil when absent or null.
func rawSchema(raw json.RawMessage) any {
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	return raw
}
