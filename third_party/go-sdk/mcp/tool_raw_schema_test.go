// Copyright 2026 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by an MIT-style
// license that can be found in the LICENSE file.

package mcp

import (
	"context"
	"encoding/json"
	"testing"
)

// TestClientRawToolSchemas checks that with RawToolSchemas a listed tool holds
// its schemas as the server sent them and its other fields as before, that
// sending middleware sees a *ListToolsResult, that x-mcp-header annotations
// are read from a raw schema, and that without the option schemas are maps.
func TestClientRawToolSchemas(t *testing.T) {
	s := NewServer(testImpl, nil)
	noop := func(context.Context, *CallToolRequest) (*CallToolResult, error) { return &CallToolResult{}, nil }
	s.AddTool(&Tool{Name: "a", Title: "A", Annotations: &ToolAnnotations{Title: "AA"}, Meta: Meta{"k": "v"},
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Region"}}}`),
		OutputSchema: json.RawMessage(`{"type":"object"}`)}, noop)
	for _, raw := range []bool{false, true} {
		c := NewClient(testImpl, &ClientOptions{RawToolSchemas: raw})
		var seen Result
		c.AddSendingMiddleware(func(next MethodHandler) MethodHandler {
			return func(ctx context.Context, method string, req Request) (Result, error) {
				res, err := next(ctx, method, req)
				if method == methodListTools {
					seen = res
				}
				return res, err
			}
		})
		cs, _, _ := basicClientServerConnection(t, c, s, nil)
		res, err := cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := seen.(*ListToolsResult); !ok {
			t.Errorf("RawToolSchemas=%v: middleware saw %T", raw, seen)
		}
		if len(res.Tools) != 1 {
			t.Fatalf("RawToolSchemas=%v: %d tools", raw, len(res.Tools))
		}
		tool := res.Tools[0]
		if tool.Name != "a" || tool.Title != "A" || tool.Annotations == nil || tool.Annotations.Title != "AA" || tool.Meta["k"] != "v" {
			t.Errorf("RawToolSchemas=%v: other fields %+v", raw, tool)
		}
		in, isRaw := tool.InputSchema.(json.RawMessage)
		if _, isMap := tool.InputSchema.(map[string]any); isRaw != raw || isMap == raw {
			t.Errorf("RawToolSchemas=%v: InputSchema is %T", raw, tool.InputSchema)
		}
		if raw && string(in) != `{"type":"object","properties":{"r":{"type":"string","x-mcp-header":"Region"}}}` {
			t.Errorf("raw InputSchema = %s", in)
		}
		if out, ok := tool.OutputSchema.(json.RawMessage); raw && (!ok || string(out) != `{"type":"object"}`) {
			t.Errorf("raw OutputSchema = %#v", tool.OutputSchema)
		}
		if props := unmarshalSchemaProperties(tool.InputSchema); len(props["r"].XMCPHeader) == 0 {
			t.Errorf("RawToolSchemas=%v: x-mcp-header not read: %v", raw, props)
		}
	}
	// x-mcp-header behind a \u escape is still found; a schema without the key has no properties read.
	escaped := json.RawMessage(`{"properties":{"r":{"type":"string","x-mcp-head\u0065r":"Region"}}}`)
	if props := unmarshalSchemaProperties(escaped); len(props["r"].XMCPHeader) == 0 {
		t.Errorf("an escaped x-mcp-header not read: %v", props)
	}
	if props := unmarshalSchemaProperties(json.RawMessage(`{"properties":{"r":{"type":"string"}}}`)); props != nil {
		t.Errorf("a schema without x-mcp-header: %v", props)
	}
	var r rawSchemaToolsResult
	if err := r.UnmarshalJSON([]byte(`{"tools":[{"name":"n","inputSchema":null},null],"nextCursor":"c"}`)); err != nil {
		t.Fatal(err)
	}
	if len(r.Tools) != 2 || r.Tools[0].InputSchema != nil || r.Tools[0].OutputSchema != nil || r.Tools[1] != nil || r.NextCursor != "c" {
		t.Errorf("null schema and null tool: %+v", r.ListToolsResult)
	}
}
