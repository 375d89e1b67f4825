package server

import (
	"runtime"
	"sync"
	"weak"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	encproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
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
