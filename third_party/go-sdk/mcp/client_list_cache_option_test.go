// Copyright 2025 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by the license
// that can be found in the LICENSE file.

package mcp

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestClientDisableListCache checks that with DisableListCache every list
// request reaches the server although its results carry a ttl, and that the
// session's cache answers them otherwise.
func TestClientDisableListCache(t *testing.T) {
	for _, disable := range []bool{false, true} {
		s := NewServer(testImpl, &ServerOptions{
			SetCacheable: func(_ context.Context, _ Request, c *Cacheable) { c.TTLMs = 60_000 },
		})
		s.AddTool(&Tool{Name: "t", InputSchema: &jsonschema.Schema{Type: "object"}}, func(context.Context, *CallToolRequest) (*CallToolResult, error) {
			return &CallToolResult{}, nil
		})
		s.AddPrompt(&Prompt{Name: "p"}, func(context.Context, *GetPromptRequest) (*GetPromptResult, error) {
			return &GetPromptResult{}, nil
		})
		s.AddResource(&Resource{URI: "test://r", Name: "r"}, func(context.Context, *ReadResourceRequest) (*ReadResourceResult, error) {
			return &ReadResourceResult{}, nil
		})
		s.AddResourceTemplate(&ResourceTemplate{URITemplate: "test://t/{x}", Name: "t"}, func(context.Context, *ReadResourceRequest) (*ReadResourceResult, error) {
			return &ReadResourceResult{}, nil
		})
		var lists atomic.Int64
		s.AddReceivingMiddleware(func(next MethodHandler) MethodHandler {
			return func(ctx context.Context, method string, req Request) (Result, error) {
				switch method {
				case methodListTools, methodListPrompts, methodListResources, methodListResourceTemplates:
					lists.Add(1)
				}
				return next(ctx, method, req)
			}
		})
		cs := mustConnect(t, s, &ClientOptions{DisableListCache: disable})
		ctx := t.Context()
		for range 2 {
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := cs.ListPrompts(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := cs.ListResources(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := cs.ListResourceTemplates(ctx, nil); err != nil {
				t.Fatal(err)
			}
		}
		want := int64(4)
		if disable {
			want = 8
		}
		if got := lists.Load(); got != want {
			t.Errorf("DisableListCache=%v: %d list requests reached the server, want %d", disable, got, want)
		}
		if cs.lookupTool("t") == nil {
			t.Errorf("DisableListCache=%v: the listed tool is not recorded for CallTool", disable)
		}
	}
}
