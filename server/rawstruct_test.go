package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/encoding"
	encproto "google.golang.org/grpc/encoding/proto"
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

// toolToListProto is a list's tool as one pb.Tool: its schemas held as the server's JSON are its unknown
// fields, as encodeToolList writes them.
func toolToListProto(t *mcp.Tool) (*pb.Tool, error) {
	p, schemas, err := toolParts(t, nil)
	if err != nil {
		return nil, err
	}
	if len(schemas) > 0 {
		p.ProtoReflect().SetUnknown(schemas)
	}
	return p, nil
}

// TestToolListResponseIsTheMessagesEncoding: the response a ListTools answers with is held as its encoding,
// and that encoding is the bytes proto.Marshal writes for the response with every tool converted by
// toolToProto (schemas as Structs, approval marks set); its REST JSON is protojson's of that response.
func TestToolListResponseIsTheMessagesEncoding(t *testing.T) {
	var tools []*mcp.Tool
	var want []*pb.Tool
	mark := &pb.ToolApproval{Rule: "r", Principals: []string{"p"}}
	approval := func(name string) *pb.ToolApproval {
		if strings.HasSuffix(name, "1") {
			return mark
		}
		return nil
	}
	for i, s := range rawSchemas {
		var tree any
		if err := json.Unmarshal([]byte(s), &tree); err != nil {
			t.Fatal(err)
		}
		name := "tool" + strconv.Itoa(i)
		raw := &mcp.Tool{Name: name, Title: "T", Description: "d", InputSchema: json.RawMessage(s), Meta: mcp.Meta{"m": 1}}
		tree1 := &mcp.Tool{Name: name, Title: "T", Description: "d", InputSchema: tree, Meta: mcp.Meta{"m": 1}}
		if i%3 == 0 { // an output schema too
			raw.OutputSchema, tree1.OutputSchema = json.RawMessage(s), tree
		}
		if i == 4 { // no schema at all
			raw.InputSchema, tree1.InputSchema = nil, nil
		}
		w, err := toolToProto(tree1)
		if err != nil {
			t.Fatal(err)
		}
		w.Approval = approval(name)
		tools, want = append(tools, raw), append(want, w)
	}
	for _, next := range []string{"", "next"} {
		got, err := toolListResponse(tools, next, approval)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.GetTools()) != 0 || proto.Size(got) != len(got.ProtoReflect().GetUnknown()) {
			t.Fatalf("the response is not held as its encoding alone")
		}
		wantMsg := &pb.ListToolsResponse{Tools: want, NextPageToken: next}
		var decoded pb.ListToolsResponse
		if err := proto.Unmarshal(got.ProtoReflect().GetUnknown(), &decoded); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(wantMsg, &decoded, protocmp.Transform()); d != "" {
			t.Errorf("next %q (-want +decoded):\n%s", next, d)
		}
		// Through the memo and the server's codec: the encoding itself, not a copy.
		memo := newResponseMemo[listResult, *pb.ListToolsResponse]()
		key := &listResult{}
		if _, err := memo.respond(key, func() (*pb.ListToolsResponse, error) { return got, nil }); err != nil {
			t.Fatal(err)
		}
		sent, err := preEncodedCodec{encoding.GetCodecV2(encproto.Name)}.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		if wire := sent.Materialize(); !bytes.Equal(wire, got.ProtoReflect().GetUnknown()) || &sent[0].ReadOnlyData()[0] != &got.ProtoReflect().GetUnknown()[0] {
			t.Error("the codec did not send the response's encoding as it is")
		}
		runtime.KeepAlive(key)
		js, err := ToolListJSON(got, protojson.Marshal)
		if err != nil {
			t.Fatal(err)
		}
		wantJS, err := protojson.Marshal(wantMsg)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(jsonWithNumbers(t, wantJS), jsonWithNumbers(t, js)); d != "" {
			t.Errorf("next %q REST JSON (-protojson +got):\n%s", next, d)
		}
		// A response with its fields set (Structs built by toolToProto) gives the same JSON.
		js2, err := ToolListJSON(wantMsg, protojson.Marshal)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(jsonWithNumbers(t, wantJS), jsonWithNumbers(t, js2)); d != "" {
			t.Errorf("next %q REST JSON of Structs (-protojson +got):\n%s", next, d)
		}
	}
	// A page without tools is an ordinary message: its JSON has no tools field, as protojson's has not.
	empty, err := toolListResponse(nil, "next", approval)
	if err != nil || empty.GetNextPageToken() != "next" {
		t.Fatalf("empty page: %v %v", empty, err)
	}
	// A name that is not UTF-8 is the server's bad result, as proto.Marshal made it.
	if _, err := toolListResponse([]*mcp.Tool{{Name: "bad \xff", InputSchema: json.RawMessage(`{}`)}}, "", approval); !errors.Is(err, mcpcore.ErrBadMessage) {
		t.Errorf("a name that is not UTF-8: %v, want a bad message", err)
	}
	if _, err := toolListResponse([]*mcp.Tool{{Name: "bad", InputSchema: json.RawMessage(`1`)}}, "", approval); !errors.Is(err, mcpcore.ErrBadMessage) {
		t.Errorf("a schema that is a number: %v, want a bad message", err)
	}
}
