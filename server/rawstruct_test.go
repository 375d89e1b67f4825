package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// rawSchemas are schemas as servers send them, with the cases where JSON text and a Struct differ.
var rawSchemas = []string{
	`{}`, `true`, `false`, ` { "type" : "object" } `,
	`{"type":"object","properties":{"a":{"type":"string","maxLength":10,"default":"x"},"b":{"type":["integer","null"],"minimum":-1.5e3}},"required":["a"],"additionalProperties":false}`,
	`{"enum":[null,true,false,0,-0,1e-7,12345678901234567890,"",[],{}]}`,
	`{"description":"esc \" \\ \/ \b \f \n \r \t \u00e9 \ud83d\ude00 lone \ud800 then \udc00 end \u0000"}`,
	"{\"bad utf8 \xff key\":\"v\xc3\x28w\",\"ok\":\"h\u00e9llo \u4e16\u754c\"}",
	`{"dup":1,"dup":{"x":2}}`,
	`{"deep":{"a":[{"b":[[[{"c":"` + strings.Repeat("long ", 60) + `"}]]]}]}}`,
	`{"` + strings.Repeat("k", 300) + `":[` + strings.Repeat(`"item",`, 100) + `1]}`,
}

// TestToolToListProtoMatchesToolToProto: a tool whose schemas are the server's JSON encodes to what the
// Structs of toolToProto decode to, for the schemas above; and its REST JSON is protojson's of those Structs.
func TestToolToListProtoMatchesToolToProto(t *testing.T) {
	for _, s := range rawSchemas {
		var tree any
		if err := json.Unmarshal([]byte(s), &tree); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		want, err := toolToProto(&mcp.Tool{Name: "t", Title: "T", InputSchema: tree, OutputSchema: tree, Meta: mcp.Meta{"m": 1}})
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		got, err := toolToListProto(&mcp.Tool{Name: "t", Title: "T", InputSchema: json.RawMessage(s), OutputSchema: json.RawMessage(s), Meta: mcp.Meta{"m": 1}})
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		wire, err := proto.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		var decoded pb.Tool
		if err := proto.Unmarshal(wire, &decoded); err != nil {
			t.Fatalf("%s: the encoding does not decode: %v", s, err)
		}
		if d := cmp.Diff(want, &decoded, protocmp.Transform()); d != "" {
			t.Errorf("%s (-toolToProto +decoded):\n%s", s, d)
		}
		resp := &pb.ListToolsResponse{Tools: []*pb.Tool{got, got}, NextPageToken: "next"}
		js, err := ToolListJSON(resp, protojson.Marshal)
		if err != nil {
			t.Fatal(err)
		}
		// The same JSON protojson writes, number literals included (a Python client reads 1 and 1.0 apart).
		wantJS, err := protojson.Marshal(&pb.ListToolsResponse{Tools: []*pb.Tool{want, want}, NextPageToken: "next"})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(jsonWithNumbers(t, wantJS), jsonWithNumbers(t, js)); d != "" {
			t.Errorf("%s REST JSON (-protojson +got):\n%s", s, d)
		}
		var fromJSON pb.ListToolsResponse
		if err := protojson.Unmarshal(js, &fromJSON); err != nil {
			t.Fatalf("%s: REST JSON %s: %v", s, js, err)
		}
		if d := cmp.Diff(&pb.ListToolsResponse{Tools: []*pb.Tool{want, want}, NextPageToken: "next"}, &fromJSON, protocmp.Transform()); d != "" {
			t.Errorf("%s REST (-want +got):\n%s", s, d)
		}
	}
}

// TestToolToListProtoRefuses: what is not a schema, not JSON or too deep is the server's bad message.
func TestToolToListProtoRefuses(t *testing.T) {
	for _, s := range []string{`"str"`, `1`, `[]`, `{"a":1e400}`, `{"a":}`, `{"a":"x`, `{"a" 1}`, `{}x`,
		strings.Repeat(`{"a":`, mcpcore.MaxNestingDepth+1) + `1` + strings.Repeat(`}`, mcpcore.MaxNestingDepth+1)} {
		_, err := toolToListProto(&mcp.Tool{Name: "bad", InputSchema: json.RawMessage(s)})
		if !errors.Is(err, mcpcore.ErrBadMessage) {
			t.Errorf("%.40s: %v, want a bad message", s, err)
		}
	}
	ok := strings.Repeat(`{"a":`, mcpcore.MaxNestingDepth-1) + `1` + strings.Repeat(`}`, mcpcore.MaxNestingDepth-1)
	if _, err := toolToListProto(&mcp.Tool{Name: "deep", InputSchema: json.RawMessage(ok)}); err != nil {
		t.Errorf("a schema %d levels deep: %v", mcpcore.MaxNestingDepth-1, err)
	}
}

func jsonWithNumbers(t *testing.T, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return v
}
