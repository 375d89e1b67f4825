package server

// Micro-benchmarks of the conversions on the hot paths, for make bench (scripts/bench.sh runs every
// BenchmarkBench…): a tool call's arguments (Struct → JSON) and result (SDK → proto), a server request
// (SDK → proto) and a host's answer (proto → SDK). They report cost, never assert on time.

import (
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

func BenchmarkBenchPrepareToolCallSmall(b *testing.B) {
	args, _ := structpb.NewStruct(map[string]any{"text": strings.Repeat("a", 100)})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := prepareToolCall("echo", args, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBenchPrepareToolCallNested(b *testing.B) {
	items := make([]any, 50)
	for i := range items {
		items[i] = map[string]any{"id": float64(i), "name": "item", "tags": []any{"a", "b"}, "ok": true}
	}
	args, _ := structpb.NewStruct(map[string]any{"query": "q", "items": items})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := prepareToolCall("search", args, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func benchResultToProto(b *testing.B, n int) {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", n)}}}
	b.ReportAllocs()
	b.SetBytes(int64(n))
	for b.Loop() {
		out, err := callResultToProto(res, nil)
		if err != nil {
			b.Fatal(err)
		}
		// The gRPC send path marshals it.
		if _, err := proto.Marshal(&pb.CallToolResponse{Result: out, CallId: "c-1"}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBenchCallToolResultToProto200B(b *testing.B)  { benchResultToProto(b, 200) }
func BenchmarkBenchCallToolResultToProto64KiB(b *testing.B) { benchResultToProto(b, 64<<10) }
func BenchmarkBenchCallToolResultToProtoStructured(b *testing.B) {
	res := &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: `{"temperature":21.5,"conditions":"sunny"}`}},
		StructuredContent: map[string]any{"temperature": 21.5, "conditions": "sunny", "hourly": []any{1.0, 2.0, 3.0}},
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := callResultToProto(res, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBenchServerRequestToProto(b *testing.B) {
	now := time.Now()
	r := &mcpcore.PendingRequest{
		ID: "req-1", SessionID: "s-1", Owner: "local", OriginCallID: "c-1", OriginMethod: "tools/call", OriginName: "sample",
		Delivery: mcpcore.DeliveryPush, Kind: mcpcore.KindSampling, Created: now, Deadline: now.Add(time.Minute),
		Sampling: &mcp.CreateMessageWithToolsParams{
			Messages:  []*mcp.SamplingMessageV2{{Role: "user", Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}},
			MaxTokens: 16,
		},
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := serverRequestToProto(r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBenchAnswerFromProtoSampling(b *testing.B) {
	a := &pb.HostAnswer{Answer: &pb.HostAnswer_Sampling{Sampling: &pb.CreateMessageResult{
		Role: pb.Role_ROLE_ASSISTANT, Model: "bench",
		Content: []*pb.ContentBlock{{Content: &pb.ContentBlock_Text{Text: &pb.TextContent{Text: "ok"}}}},
	}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := answerFromProto(a); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBenchAnswerFromProtoElicitation(b *testing.B) {
	st, _ := structpb.NewStruct(map[string]any{"name": "Ada", "age": 36.0})
	a := &pb.HostAnswer{Answer: &pb.HostAnswer_Elicitation{Elicitation: &pb.ElicitResult{
		Action: pb.ElicitAction_ELICIT_ACTION_ACCEPT, Content: st,
	}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := answerFromProto(a); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBenchRefProtojsonNested is a reference point for BenchmarkBenchPrepareToolCallNested: the same
// Struct written as JSON by protojson in one pass, without the intermediate map and per-value field paths.
func BenchmarkBenchRefProtojsonNested(b *testing.B) {
	items := make([]any, 50)
	for i := range items {
		items[i] = map[string]any{"id": float64(i), "name": "item", "tags": []any{"a", "b"}, "ok": true}
	}
	args, _ := structpb.NewStruct(map[string]any{"query": "q", "items": items})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := protojson.Marshal(args); err != nil {
			b.Fatal(err)
		}
	}
}
