package mcpcore

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK matches JSON field names case-sensitively, so that a message cannot smuggle a field past a check
// that reads it under its exact name (go-sdk's internal/json). The bridge runs the SDK with a patch to how
// that package parses (third_party/, ADR 0010); these tests keep the property under test through the
// decoders the bridge depends on: the JSON-RPC frame and a tool result.
func TestSDKDecodingIsCaseSensitive(t *testing.T) {
	msg, err := jsonrpc.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":false},"RESULT":{"isError":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	resp, ok := msg.(*jsonrpc.Response)
	if !ok {
		t.Fatalf("decoded %T, want a response", msg)
	}
	var r mcp.CallToolResult
	if err := json.Unmarshal(resp.Result, &r); err != nil {
		t.Fatal(err)
	}
	if r.IsError {
		t.Error("a RESULT field replaced result")
	}

	var miscased mcp.CallToolResult
	if err := json.Unmarshal([]byte(`{"content":[{"type":"text","text":"ok"}],"IsError":true,"ISERROR":true}`), &miscased); err != nil {
		t.Fatal(err)
	}
	if miscased.IsError {
		t.Error("IsError or ISERROR set isError")
	}
	if len(miscased.Content) != 1 {
		t.Fatalf("content = %v", miscased.Content)
	}

	req, err := jsonrpc.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","METHOD":"sampling/createMessage","params":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	if m := req.(*jsonrpc.Request).Method; m != "tools/call" {
		t.Errorf("method = %q, want tools/call", m)
	}
}

// BenchmarkBenchDecodeToolResult is what the client does with every tools/call response over stdio: decode the
// frame, then the result.
func BenchmarkBenchDecodeToolResult(b *testing.B) {
	frame := []byte(`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hello"}],"isError":false}}`)
	b.ReportAllocs()
	for b.Loop() {
		msg, err := jsonrpc.DecodeMessage(frame)
		if err != nil {
			b.Fatal(err)
		}
		var r mcp.CallToolResult
		if err := json.Unmarshal(msg.(*jsonrpc.Response).Result, &r); err != nil {
			b.Fatal(err)
		}
	}
}
