package server

// Fuzz targets for every conversion of outside input: JSON from servers (values, schemas, content, tasks)
// and protobuf from hosts (Struct, HostAnswer). Run one with e.g.
//
//	go test ./server -run '^$' -fuzz FuzzValueFromJSON -fuzztime 30s

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

var jsonSeeds = []string{
	`null`, `true`, `1e308`, `-0`, `"x"`, `[]`, `{}`, `{"a":[1,{"b":null}],"c":"\u00e9"}`,
	`{"type":"object","properties":{"n":{"type":"integer"}}}`, `[[[[[]]]]]`, `{"":{"":""}}`, `123456789012345678901234567890`,
}

// A server's JSON value becomes a Value whose JSON is the same value (numbers as float64).
func FuzzValueFromJSON(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		v, err := valueFromJSON(raw)
		if err != nil {
			return
		}
		out, err := protojson.Marshal(v)
		if err != nil {
			t.Fatalf("protojson of a converted value: %v", err)
		}
		var want, got any
		if err := json.Unmarshal(raw, &want); err != nil {
			return // empty input is null
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("protojson output %s: %v", out, err)
		}
		wantJ, _ := json.Marshal(want)
		gotJ, _ := json.Marshal(got)
		if string(wantJ) != string(gotJ) {
			t.Fatalf("value changed: %s → %s", wantJ, gotJ)
		}
		// And back, as a host would send it.
		var vs []mcpcore.FieldViolation
		back := anyFromValue(v, "v", &vs)
		if len(vs) > 0 {
			t.Fatalf("violations on a converted value: %v", vs)
		}
		backJ, _ := json.Marshal(back)
		if string(backJ) != string(wantJ) {
			t.Fatalf("round trip: %s → %s", wantJ, backJ)
		}
	})
}

// A server's JSON Schema becomes a Struct or a clean error.
func FuzzSchemaFromJSON(f *testing.F) {
	for _, s := range jsonSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var v any
		if json.Unmarshal(raw, &v) != nil {
			return
		}
		s, err := schemaFromAny(v)
		if err != nil {
			return
		}
		switch v.(type) {
		case map[string]any, bool:
			if s == nil {
				t.Fatalf("schema %s converted to nil", raw)
			}
		}
		if _, err := protojson.Marshal(s); err != nil {
			t.Fatalf("protojson: %v", err)
		}
	})
}

// Whatever protobuf a host sends as a Struct converts to JSON-able Go values or to field violations.
func FuzzStructFromProto(f *testing.F) {
	for _, s := range jsonSeeds {
		var st structpb.Struct
		if protojson.Unmarshal([]byte(s), &st) == nil {
			b, _ := proto.Marshal(&st)
			f.Add(b)
		}
	}
	nan, _ := proto.Marshal(&structpb.Struct{Fields: map[string]*structpb.Value{"x": structpb.NewNumberValue(0), "y": {}}})
	f.Add(nan)
	f.Fuzz(func(t *testing.T, raw []byte) {
		var st structpb.Struct
		if proto.Unmarshal(raw, &st) != nil {
			return
		}
		m, err := mapFromStruct(&st, "arguments")
		if err != nil {
			return
		}
		if _, err := json.Marshal(m); err != nil {
			t.Fatalf("converted Struct does not marshal: %v", err)
		}
		if _, err := jsonFromStruct(&st, "arguments"); err != nil {
			t.Fatalf("jsonFromStruct: %v", err)
		}
	})
}

// A server's tool result, whatever JSON it is, converts to proto or fails with ErrBadMessage; converted
// content converts back without violations.
func FuzzCallToolResult(f *testing.F) {
	seeds := []string{
		`{"content":[{"type":"text","text":"hi"}]}`,
		`{"content":[{"type":"image","data":"AAEC","mimeType":"image/png","annotations":{"audience":["user"],"priority":0.3}}],"isError":true}`,
		`{"content":[{"type":"resource","resource":{"uri":"a://b","blob":"AA=="}}],"structuredContent":[1,2]}`,
		`{"content":[{"type":"resource_link","uri":"x","name":"n","size":3,"icons":[{"src":"s","theme":"dark"}]}],"_meta":{"k":{}}}`,
		`{"content":[{"type":"tool_use","id":"1","name":"n","input":{"a":1}}]}`,
		`{"content":[{"type":"tool_result","toolUseId":"1","content":[{"type":"text","text":"t"}],"structuredContent":{"x":null}}]}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var r mcp.CallToolResult
		if json.Unmarshal(raw, &r) != nil {
			return
		}
		p, err := callToolResultToProto(&r)
		if err != nil {
			return
		}
		if _, err := protojson.Marshal(p); err != nil {
			t.Fatalf("protojson: %v", err)
		}
		for i, c := range p.GetContent() {
			var vs []mcpcore.FieldViolation
			if contentFromProto(c, "c", &vs); len(vs) > 0 {
				t.Fatalf("content %d converts back with violations %v", i, vs)
			}
		}
	})
}

// A server's sampling or elicitation request converts to a ServerRequest or fails cleanly.
func FuzzServerRequest(f *testing.F) {
	f.Add([]byte(`{"messages":[{"role":"user","content":{"type":"text","text":"q"}}],"maxTokens":10,"tools":[{"name":"t","inputSchema":true}]}`), true)
	f.Add([]byte(`{"mode":"form","message":"m","requestedSchema":{"type":"object"}}`), false)
	f.Add([]byte(`{"message":"m","requestedSchema":false}`), false)
	f.Fuzz(func(t *testing.T, raw []byte, sampling bool) {
		r := &mcpcore.PendingRequest{ID: "req", SessionID: "s"}
		if sampling {
			var p mcp.CreateMessageWithToolsParams
			if json.Unmarshal(raw, &p) != nil {
				return
			}
			r.Kind, r.Sampling = mcpcore.KindSampling, &p
		} else {
			var p mcp.ElicitParams
			if json.Unmarshal(raw, &p) != nil {
				return
			}
			r.Kind, r.Elicitation = mcpcore.KindElicitation, &p
		}
		p, err := serverRequestToProto(r)
		if err != nil {
			return
		}
		if _, err := protojson.Marshal(p); err != nil {
			t.Fatalf("protojson: %v", err)
		}
	})
}

// Whatever a host sends as a HostAnswer converts or yields field violations; never a panic.
func FuzzHostAnswer(f *testing.F) {
	for _, s := range []string{
		`{"sampling":{"role":"ROLE_ASSISTANT","model":"m","content":[{"text":{"text":"x"}}]}}`,
		`{"elicitation":{"action":"ELICIT_ACTION_ACCEPT","content":{"name":"a","age":3}}}`,
		`{"roots":{"roots":[{"uri":"file:///x","_meta":{"a":[]}}]}}`,
		`{"error":{"code":-1,"message":"no","data":{"why":[1]}}}`,
		`{"sampling":{"content":[{"toolResult":{"content":[{"resource":{"resource":{"uri":"u","blob":"AA=="}}}],"structuredContent":[1]}}]}}`,
	} {
		var a pb.HostAnswer
		if err := protojson.Unmarshal([]byte(s), &a); err != nil {
			f.Fatalf("seed %s: %v", s, err)
		}
		b, _ := proto.Marshal(&a)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var a pb.HostAnswer
		if proto.Unmarshal(raw, &a) != nil {
			return
		}
		ans, err := answerFromProto(&a)
		if err != nil {
			return
		}
		if _, err := json.Marshal(ans); err != nil {
			t.Fatalf("converted answer does not marshal: %v", err)
		}
	})
}

// A task object from a server converts or fails with ErrBadMessage.
func FuzzTaskFromRaw(f *testing.F) {
	f.Add([]byte(`{"taskId":"t","status":"working","createdAt":"2025-01-01T00:00:00Z","ttlMs":1e300,"pollInterval":-1}`))
	f.Add([]byte(`{"taskId":"t","_meta":{"a":1}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := taskFromRaw(raw)
		if err != nil {
			return
		}
		if _, err := protojson.Marshal(p); err != nil {
			t.Fatalf("protojson: %v", err)
		}
	})
}
