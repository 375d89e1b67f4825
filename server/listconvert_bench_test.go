package server

// Micro-benchmarks of a cached ListTools's own work in the bridge, for make bench: before ADR 0054 every hit
// converted the tools and grpc-go marshaled the response (Size, then Marshal); now a hit finds its response
// and the server's codec its kept encoding. The tools are benchecho's (eight, small object schemas). They report
// cost, never assert on time.

import (
	"encoding/json"
	"fmt"
	"runtime"
	"testing"

	gwruntime "github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/encoding"
	encproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/protobuf/proto"

	"github.com/mcp-bridge/mcp-bridge/e2e/probe"
	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// benchTools is a tools/list result like benchecho's: eight tools, each with an object schema of at most one
// property.
func benchTools() *mcp.ListToolsResult {
	r := &mcp.ListToolsResult{}
	for i := range 8 {
		props := map[string]any{}
		if i%2 == 0 {
			props[fmt.Sprintf("arg%d", i)] = map[string]any{"type": "string"}
		}
		r.Tools = append(r.Tools, &mcp.Tool{
			Name: fmt.Sprintf("tool%d", i), Description: "a tool of the benchmark upstream",
			InputSchema: map[string]any{"type": "object", "properties": props, "additionalProperties": false},
		})
	}
	return r
}

func buildToolList(r *mcp.ListToolsResult) (*pb.ListToolsResponse, error) {
	tools, err := convertAll(r.Tools, toolToProto)
	return &pb.ListToolsResponse{Tools: tools, NextPageToken: r.NextCursor}, err
}

// grpcMarshal is what grpc-go's proto codec does with a response.
func grpcMarshal(b *testing.B, m proto.Message) {
	size := proto.Size(m)
	out, err := proto.MarshalOptions{UseCachedSize: true}.Marshal(m)
	if err != nil || len(out) != size {
		b.Fatal(err, len(out), size)
	}
}

// BenchmarkBenchListToolsHitMarshal: a hit before ADR 0054, without the conversion (memoized per tool then):
// grpc-go's marshaling of the full response.
func BenchmarkBenchListToolsHitMarshal(b *testing.B) {
	r := benchTools()
	full, _ := buildToolList(r)
	b.ReportAllocs()
	for b.Loop() {
		grpcMarshal(b, full)
	}
}

// BenchmarkBenchListToolsHitEncoded: a hit now: the memo's lookup and the server codec's marshaling of the
// response, which finds its kept encoding.
func BenchmarkBenchListToolsHitEncoded(b *testing.B) {
	r := benchTools()
	memo := newResponseMemo[mcp.ListToolsResult, *pb.ListToolsResponse]()
	build := func() (*pb.ListToolsResponse, error) { return buildToolList(r) }
	codec := preEncodedCodec{encoding.GetCodecV2(encproto.Name)}
	b.ReportAllocs()
	for b.Loop() {
		p, err := memo.respond(r, build)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := codec.Marshal(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBenchListToolsDecode: what the client does with the answer, which no cache in the bridge removes:
// decoding the tools and their Structs. BenchmarkBenchGetSessionDecode is the same for the floor's answer.
func BenchmarkBenchListToolsDecode(b *testing.B) {
	full, _ := buildToolList(benchTools())
	benchDecode(b, full)
}

func BenchmarkBenchGetSessionDecode(b *testing.B) {
	benchDecode(b, &pb.GetSessionResponse{Session: &pb.Session{
		SessionId: "01JDXKQ3V5W6Y7Z8A9B0C1D2E3", Server: "echo", State: pb.SessionState_SESSION_STATE_READY,
		ProtocolVersion: "2026-07-28",
	}})
}

func benchDecode(b *testing.B, m proto.Message) {
	raw, err := proto.Marshal(m)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(raw)), "bytes")
	b.ReportAllocs()
	for b.Loop() {
		out := m.ProtoReflect().New().Interface()
		if err := proto.Unmarshal(raw, out); err != nil {
			b.Fatal(err)
		}
	}
}

// benchListEncodings reports the bytes allocated per byte of the server's list for building a ListTools
// response from tools and encoding it for gRPC (the memo's proto.Marshal) and REST (the gateway's JSON).
func benchListEncodings(b *testing.B, tools []*mcp.Tool, size int, convert func(*mcp.Tool) (*pb.Tool, error), restJSON func(*pb.ListToolsResponse) ([]byte, error)) {
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		pt, err := convertAll(tools, convert)
		if err != nil {
			b.Fatal(err)
		}
		resp := &pb.ListToolsResponse{Tools: pt}
		if _, err := proto.Marshal(resp); err != nil {
			b.Fatal(err)
		}
		if _, err := restJSON(resp); err != nil {
			b.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/float64(size), "allocB/listB")
}

var gatewayJSON = &gwruntime.JSONPb{}

// BenchmarkBenchHugeToolListTrees: 10,000 tools the way the bridge held them before ADR 0097 — schemas as the
// SDK's map[string]any trees, each converted to a google.protobuf.Struct tree, the response marshaled by proto
// and by the gateway's protojson. (The SDK's decoding into the maps, about as much again, is not counted.)
func BenchmarkBenchHugeToolListTrees(b *testing.B) {
	raw := probe.ToolList(10_000)
	size := len(raw)
	var r mcp.ListToolsResult // encoding/json decodes the schemas into maps, as the SDK did
	if err := json.Unmarshal(raw, &r); err != nil {
		b.Fatal(err)
	}
	benchListEncodings(b, r.Tools, size, toolToProto, func(p *pb.ListToolsResponse) ([]byte, error) { return gatewayJSON.Marshal(p) })
}

// BenchmarkBenchHugeToolListRaw: the same list now — schemas as the server's JSON (ClientOptions.RawToolSchemas),
// encoded straight to the Struct encoding and from it to REST's JSON (ToolListJSON).
func BenchmarkBenchHugeToolListRaw(b *testing.B) {
	raw := probe.ToolList(10_000)
	size := len(raw)
	var wire struct {
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(raw, &wire); err != nil {
		b.Fatal(err)
	}
	tools := make([]*mcp.Tool, len(wire.Tools))
	for i, t := range wire.Tools {
		tools[i] = &mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema}
	}
	benchListEncodings(b, tools, size, toolToListProto, func(p *pb.ListToolsResponse) ([]byte, error) {
		return ToolListJSON(p, gatewayJSON.MarshalOptions.Marshal)
	})
}
