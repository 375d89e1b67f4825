package server

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strconv"
	"sync"
	"weak"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	encproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// A cached list is answered by the core with the same result object on every hit, for as long as the
// entry and the server's policy hold (mcpcore/listcache.go). The List* RPCs keep, for each result object
// they answered, its response and that response's encoding (docs/adr/0054): a cached ListTools then costs
// the round trip and a copy of the bytes, not the conversion of every tool's schemas to
// google.protobuf.Struct nor their marshaling, which walks every Struct's map twice (size, then bytes) and
// cost more than the rest of the RPC together.
//
// The response is an ordinary message, shared by every RPC answered from it and never modified: gRPC
// marshals it, the REST gateway's in-process channel copies it (proto.Merge), no interceptor reads it. Its
// encoding is registered in preEncoded, where the gRPC server's codec (EncodingOptions) finds it and writes
// it as it is; a server without that codec marshals the message as usual, so the codec changes cost, never
// what is sent.

// maxEncodedResponses bounds a responseMemo; when full it starts afresh.
const maxEncodedResponses = 1024

// preEncoded maps a shared response message (a pointer) to its encoding. Entries come and go with their
// responseMemo entries.
var preEncoded sync.Map

// responseMemo maps a list result object of the core to its response. Its keys are weak: an entry goes
// when the core drops the result (an expired, changed or evicted cache entry, or a result that was never
// cached, once its RPC is answered). Its methods are safe for concurrent use.
type responseMemo[R any, P proto.Message] struct {
	mu sync.Mutex // guards m
	m  map[weak.Pointer[R]]P
}

func newResponseMemo[R any, P proto.Message]() *responseMemo[R, P] {
	return &responseMemo[R, P]{m: map[weak.Pointer[R]]P{}}
}

// respond returns the response to r, building and encoding it the first time. A result build fails for is
// not remembered. The core never modifies a result it returned, so r's response is a function of r alone.
func (c *responseMemo[R, P]) respond(r *R, build func() (P, error)) (P, error) {
	var zero P
	if r == nil {
		return build()
	}
	k := weak.Make(r)
	c.mu.Lock()
	p, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return p, nil
	}
	p, err := build()
	if err != nil {
		return zero, err
	}
	wire, err := proto.Marshal(p) // fails on a string that is not UTF-8: the server's bad result
	if err != nil {
		return zero, badMessage("list result", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if kept, ok := c.m[k]; ok { // another RPC built it meanwhile
		return kept, nil
	}
	if len(c.m) >= maxEncodedResponses {
		for _, old := range c.m {
			preEncoded.Delete(any(old))
		}
		clear(c.m)
	}
	c.m[k] = p
	preEncoded.Store(any(p), wire)
	runtime.AddCleanup(r, c.forget, k)
	return p, nil
}

// forget drops the entry of a result the core no longer holds.
func (c *responseMemo[R, P]) forget(k weak.Pointer[R]) {
	c.mu.Lock()
	if p, ok := c.m[k]; ok {
		preEncoded.Delete(any(p))
		delete(c.m, k)
	}
	c.mu.Unlock()
}

// EncodingOptions are the gRPC server options that let it send a list response's kept encoding instead of
// marshaling the message again: its codec is grpc-go's proto codec, except for a message registered in
// preEncoded, which it writes as registered. The bridge's server uses them next to ServerOptions. It decodes
// with decodeCodec, which Register's handlers need (decode.go): the server has one codec.
func (s *Service) EncodingOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.ForceServerCodecV2(preEncodedCodec{decodeCodec{encoding.GetCodecV2(encproto.Name)}})}
}

// preEncodedCodec is the gRPC server's codec: proto, with the encodings kept in preEncoded.
type preEncodedCodec struct{ encoding.CodecV2 }

func (c preEncodedCodec) Marshal(v any) (mem.BufferSlice, error) {
	if m, ok := v.(proto.Message); ok {
		if wire, ok := preEncoded.Load(m); ok {
			// A SliceBuffer is never returned to a pool: gRPC only reads it, and the bytes stay the entry's.
			return mem.BufferSlice{mem.SliceBuffer(wire.([]byte))}, nil
		}
	}
	return c.CodecV2.Marshal(v)
}

// Tool schemas on the list path (docs/adr/0097). The core's tools hold their schemas as the server's JSON
// (mcp.ClientOptions.RawToolSchemas); toolToListProto writes each straight into its pb.Tool as the encoded
// input_schema and output_schema fields, kept as the message's unknown fields, instead of building a
// google.protobuf.Struct tree: a list of 100,000 tools took forty times its size in trees, where its encoding
// takes about its size. proto.Marshal writes unknown fields as they are, so the gRPC response is the same
// bytes a decoder reads as the Structs; the REST gateway reads them back one tool at a time (ToolListJSON).

var (
	toolInputSchema  = (&pb.Tool{}).ProtoReflect().Descriptor().Fields().ByName("input_schema").Number()
	toolOutputSchema = (&pb.Tool{}).ProtoReflect().Descriptor().Fields().ByName("output_schema").Number()
)

// toolToListProto is toolToProto for a list's tool: a schema held as json.RawMessage is encoded as it is.
func toolToListProto(t *mcp.Tool) (*pb.Tool, error) {
	if t == nil {
		return toolToProto(t)
	}
	in, inRaw := t.InputSchema.(json.RawMessage)
	out, outRaw := t.OutputSchema.(json.RawMessage)
	if !inRaw && !outRaw {
		return toolToProto(t)
	}
	rest := *t
	if inRaw {
		rest.InputSchema = nil
	}
	if outRaw {
		rest.OutputSchema = nil
	}
	p, err := toolToProto(&rest)
	if err != nil {
		return nil, err
	}
	scratch := encodeScratch.Get().(*[]byte)
	enc := (*scratch)[:0]
	if inRaw {
		if enc, err = appendSchemaField(enc, toolInputSchema, in); err != nil {
			return nil, badMessage("tool "+strconv.Quote(t.Name)+" inputSchema", err)
		}
	}
	if outRaw {
		if enc, err = appendSchemaField(enc, toolOutputSchema, out); err != nil {
			return nil, badMessage("tool "+strconv.Quote(t.Name)+" outputSchema", err)
		}
	}
	// Kept at its size: a list holds 100,000 of them. A huge schema's buffer is not kept for the next tool.
	p.ProtoReflect().SetUnknown(append(make([]byte, 0, len(enc)), enc...))
	if cap(enc) <= 1<<20 {
		*scratch = enc[:0]
		encodeScratch.Put(scratch)
	}
	return p, nil
}

// encodeScratch holds the buffers toolToListProto encodes a tool's schemas into before keeping a copy of
// exactly their size (an encoding is larger than its JSON, so a buffer sized from the JSON grows).
var encodeScratch = sync.Pool{New: func() any { return new([]byte) }}

// ToolListJSON is the REST gateway's JSON of a ListToolsResponse: what marshal (the gateway's protojson
// marshaler) writes for the whole response, written a tool at a time: marshal writes each tool's other
// fields, and its encoded schemas (toolToListProto) are written as JSON straight from their encoding, as
// protojson writes a Struct. Neither the list nor a tool's schema is ever a tree.
func ToolListJSON(r *pb.ListToolsResponse, marshal func(proto.Message) ([]byte, error)) ([]byte, error) {
	tail, err := marshal(&pb.ListToolsResponse{NextPageToken: r.GetNextPageToken()})
	if err != nil {
		return nil, err
	}
	size := len(tail) + 16
	for _, t := range r.GetTools() {
		size += 3*len(t.ProtoReflect().GetUnknown())/2 + 2*len(t.GetName()) + len(t.GetDescription()) + 64
	}
	out := append(make([]byte, 0, size), `{"tools":[`...)
	for i, t := range r.GetTools() {
		if i > 0 {
			out = append(out, ',')
		}
		if out, err = appendToolJSON(out, t, marshal); err != nil {
			return nil, err
		}
	}
	out = append(out, ']')
	if rest := objectBody(tail); len(rest) > 0 {
		out = append(append(out, ','), rest...)
	}
	return append(out, '}'), nil
}

// appendToolJSON appends the JSON of t: marshal's, with the schemas held in t's unknown fields added.
func appendToolJSON(out []byte, t *pb.Tool, marshal func(proto.Message) ([]byte, error)) ([]byte, error) {
	b, err := marshal(t) // protojson leaves unknown fields out
	if err != nil {
		return nil, err
	}
	enc := t.ProtoReflect().GetUnknown()
	if len(enc) == 0 {
		return append(out, b...), nil
	}
	out = append(out, '{')
	for len(enc) > 0 {
		num, _, n := protowire.ConsumeTag(enc)
		var field []byte
		if field, enc, err = consumeField(enc, num); n < 0 || err != nil {
			return nil, errBadEncoding
		}
		switch num {
		case toolInputSchema:
			out = append(out, `"inputSchema":`...)
		case toolOutputSchema:
			out = append(out, `"outputSchema":`...)
		default:
			return nil, errBadEncoding
		}
		if out, err = appendStructJSON(out, field, 1); err != nil {
			return nil, err
		}
		if len(enc) > 0 {
			out = append(out, ',')
		}
	}
	if rest := objectBody(b); len(rest) > 0 {
		out = append(append(out, ','), rest...)
	}
	return append(out, '}'), nil
}

// objectBody is what is between the braces of the JSON object b, trimmed; nil if b is not an object.
func objectBody(b []byte) []byte {
	b = bytes.TrimSpace(b)
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return nil
	}
	return bytes.TrimSpace(b[1 : len(b)-1])
}
