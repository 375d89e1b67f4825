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
	wire := []byte(p.ProtoReflect().GetUnknown())
	if proto.Size(p) != len(wire) { // not a response held as its encoding (toolListResponse)
		if wire, err = proto.Marshal(p); err != nil { // fails on a string that is not UTF-8: the server's bad result
			return zero, badMessage("list result", err)
		}
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

// Tool schemas on the list path (docs/adr/0097, 0107). The core's tools hold their schemas as the server's JSON
// (mcp.ClientOptions.RawToolSchemas). encodeToolList writes a whole ListToolsResponse straight as its
// encoding, a tool at a time: each tool's other fields by proto, its schemas from their JSON as the encoded
// input_schema and output_schema Structs (rawstruct.go). No pb.Tool per tool and no google.protobuf.Struct
// tree is kept: a list of 100,000 tools took forty times its size in trees, and another twice its size in
// pb.Tool messages, where its encoding takes about its size. The response message holds that encoding as its
// unknown fields and nothing else; proto.Marshal writes unknown fields as they are, so gRPC sends the same
// bytes as for the message with its fields set, and the REST gateway writes its JSON from the encoding, a
// tool at a time (ToolListJSON).

var (
	toolInputSchema  = (&pb.Tool{}).ProtoReflect().Descriptor().Fields().ByName("input_schema").Number()
	toolOutputSchema = (&pb.Tool{}).ProtoReflect().Descriptor().Fields().ByName("output_schema").Number()
	listTools        = (&pb.ListToolsResponse{}).ProtoReflect().Descriptor().Fields().ByName("tools").Number()
)

// toolListResponse is the ListToolsResponse of tools, held as its encoding (encodeToolList). A page without
// tools is an ordinary message: its JSON is protojson's, with no tools field.
func toolListResponse(tools []*mcp.Tool, next string, approval func(name string) *pb.ToolApproval) (*pb.ListToolsResponse, error) {
	if len(tools) == 0 {
		return &pb.ListToolsResponse{NextPageToken: next}, nil
	}
	enc, err := encodeToolList(tools, next, approval)
	if err != nil {
		return nil, err
	}
	r := &pb.ListToolsResponse{}
	r.ProtoReflect().SetUnknown(enc)
	return r, nil
}

// encodeToolList is the encoding of the ListToolsResponse of tools, each with its approval mark: the bytes
// proto.Marshal writes for that response with every tool converted by toolToProto (its schemas' Structs
// included) — known fields in number order, then the schemas. A string that is not UTF-8 in a tool's other
// fields, or a schema that is not one, is the server's bad result.
func encodeToolList(tools []*mcp.Tool, next string, approval func(name string) *pb.ToolApproval) ([]byte, error) {
	// Sized from the JSON it is written from (an encoding is a little larger): a 16 MB list is not grown
	// by doubling, which would leave twice its size for the collector.
	size := 16 + len(next)
	for _, t := range tools {
		if t != nil {
			size += 5*(rawLen(t.InputSchema)+rawLen(t.OutputSchema))/4 + len(t.Name) + len(t.Title) + len(t.Description) + 24
		}
	}
	out := make([]byte, 0, size)
	var scratch []byte
	for _, t := range tools {
		p, schemas, err := toolParts(t, scratch)
		if err != nil {
			return nil, err
		}
		p.Approval = approval(p.GetName())
		n := proto.Size(p)
		out = protowire.AppendTag(out, listTools, protowire.BytesType)
		out = protowire.AppendVarint(out, uint64(n+len(schemas)))
		if out, err = (proto.MarshalOptions{UseCachedSize: true}).MarshalAppend(out, p); err != nil {
			return nil, badMessage("list result", err) // a string that is not UTF-8
		}
		out = append(out, schemas...)
		if cap(schemas) <= 1<<20 { // a huge schema's buffer is not kept for the next tool
			scratch = schemas[:0]
		}
	}
	out, err := (proto.MarshalOptions{}).MarshalAppend(out, &pb.ListToolsResponse{NextPageToken: next})
	if err != nil {
		return nil, badMessage("list result", err)
	}
	return out, nil
}

// rawLen is the length of a schema held as the server's JSON, 0 for any other.
func rawLen(s any) int {
	raw, _ := s.(json.RawMessage)
	return len(raw)
}

// toolParts is t's pb.Tool without the schemas held as the server's JSON, and those schemas encoded as
// input_schema and output_schema fields, appended to scratch[:0]. A schema held otherwise (a map: never on
// the list path, where the SDK holds them raw) is converted by toolToProto into the pb.Tool.
func toolParts(t *mcp.Tool, scratch []byte) (*pb.Tool, []byte, error) {
	if t == nil {
		p, err := toolToProto(t)
		return p, scratch[:0], err
	}
	in, inRaw := t.InputSchema.(json.RawMessage)
	out, outRaw := t.OutputSchema.(json.RawMessage)
	if !inRaw && !outRaw {
		p, err := toolToProto(t)
		return p, scratch[:0], err
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
		return nil, nil, err
	}
	enc := scratch[:0]
	if inRaw {
		if enc, err = appendSchemaField(enc, toolInputSchema, in); err != nil {
			return nil, nil, badMessage("tool "+strconv.Quote(t.Name)+" inputSchema", err)
		}
	}
	if outRaw {
		if enc, err = appendSchemaField(enc, toolOutputSchema, out); err != nil {
			return nil, nil, badMessage("tool "+strconv.Quote(t.Name)+" outputSchema", err)
		}
	}
	return p, enc, nil
}

// ToolListJSON is the REST gateway's JSON of a ListToolsResponse: what marshal (the gateway's protojson
// marshaler) writes for the whole response with its tools' schemas as Structs, written from the response's
// encoding a tool at a time: marshal writes each tool's other fields, and its schemas are written as JSON
// straight from their encoding, as protojson writes a Struct. Neither the list nor a tool's schema is ever a
// tree. r is the encoding toolListResponse holds, or any ListToolsResponse (then marshaled first).
func ToolListJSON(r *pb.ListToolsResponse, marshal func(proto.Message) ([]byte, error)) ([]byte, error) {
	enc := r.ProtoReflect().GetUnknown()
	if proto.Size(r) != len(enc) { // fields set: a response built otherwise
		var err error
		if enc, err = proto.Marshal(r); err != nil {
			return nil, err
		}
	}
	out := append(make([]byte, 0, 3*len(enc)/2+16), `{"tools":[`...)
	var others, scratch []byte // the response's fields other than tools; a tool's fields other than schemas
	tools := 0
	for len(enc) > 0 {
		num, typ, n := protowire.ConsumeTag(enc)
		if n < 0 {
			return nil, errBadEncoding
		}
		m := protowire.ConsumeFieldValue(num, typ, enc[n:])
		if m < 0 {
			return nil, errBadEncoding
		}
		if num == listTools && typ == protowire.BytesType {
			t, _ := protowire.ConsumeBytes(enc[n:])
			if tools > 0 {
				out = append(out, ',')
			}
			tools++
			var err error
			if out, scratch, err = appendToolJSON(out, t, scratch, marshal); err != nil {
				return nil, err
			}
		} else {
			others = append(others, enc[:n+m]...)
		}
		enc = enc[n+m:]
	}
	var rest pb.ListToolsResponse
	if err := proto.Unmarshal(others, &rest); err != nil {
		return nil, err
	}
	tail, err := marshal(&rest)
	if err != nil || tools == 0 {
		return tail, err
	}
	out = append(out, ']')
	if body := objectBody(tail); len(body) > 0 {
		out = append(append(out, ','), body...)
	}
	return append(out, '}'), nil
}

// appendToolJSON appends the JSON of the encoded tool enc: marshal's of its fields other than the schemas,
// with the schemas written from their encoding. scratch is a buffer it may use, returned for the next tool.
func appendToolJSON(out, enc, scratch []byte, marshal func(proto.Message) ([]byte, error)) ([]byte, []byte, error) {
	known := scratch[:0]
	schemas := false
	for b := enc; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, nil, errBadEncoding
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return nil, nil, errBadEncoding
		}
		if num == toolInputSchema || num == toolOutputSchema {
			schemas = true
		} else {
			known = append(known, b[:n+m]...)
		}
		b = b[n+m:]
	}
	var t pb.Tool
	if err := proto.Unmarshal(known, &t); err != nil {
		return nil, nil, err
	}
	b, err := marshal(&t)
	if err != nil {
		return nil, nil, err
	}
	if !schemas {
		return append(out, b...), known, nil
	}
	start := len(out)
	out = append(out, '{')
	for len(enc) > 0 {
		num, typ, n := protowire.ConsumeTag(enc)
		m := protowire.ConsumeFieldValue(num, typ, enc[n:])
		field := enc[:n+m]
		enc = enc[n+m:]
		if num != toolInputSchema && num != toolOutputSchema {
			continue
		}
		if len(out) > start+1 {
			out = append(out, ',')
		}
		if num == toolInputSchema {
			out = append(out, `"inputSchema":`...)
		} else {
			out = append(out, `"outputSchema":`...)
		}
		v, _, err := consumeField(field, num)
		if err == nil {
			out, err = appendStructJSON(out, v, 1)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	if rest := objectBody(b); len(rest) > 0 {
		out = append(append(out, ','), rest...)
	}
	return append(out, '}'), known, nil
}

// objectBody is what is between the braces of the JSON object b, trimmed; nil if b is not an object.
func objectBody(b []byte) []byte {
	b = bytes.TrimSpace(b)
	if len(b) < 2 || b[0] != '{' || b[len(b)-1] != '}' {
		return nil
	}
	return bytes.TrimSpace(b[1 : len(b)-1])
}
