package server

import (
	"runtime"
	"sync"
	"weak"

	"google.golang.org/protobuf/proto"
)

// A cached list is answered by the core with the same result object on every hit, for as long as the
// entry and the server's policy hold (mcpcore/listcache.go). The List* RPCs keep, for each result object
// they answered, the response already encoded (docs/adr/0053): a cached ListTools then costs the round
// trip and a copy of the bytes, not the conversion of every tool's schemas to google.protobuf.Struct nor
// their marshaling, which walks every Struct's map twice (size, then bytes) and cost more than the rest of
// the RPC together.
//
// The encoded response is a message of the RPC's own response type whose only content is the encoding of
// the full response, held as unknown fields: proto.Marshal writes unknown fields as they are, so the wire
// carries exactly the bytes of the full response and every client (the REST gateway too, which is a gRPC
// client of this server) decodes the usual message. In the process it is opaque — its fields read empty —
// and it is shared by every RPC answered from it: nothing may read or modify it but gRPC's marshaling. No
// interceptor reads responses.

// maxEncodedResponses bounds a responseMemo; when full it starts afresh.
const maxEncodedResponses = 1024

// responseMemo maps a list result object of the core to its encoded response. Its keys are weak: an entry
// goes when the core drops the result (an expired, changed or evicted cache entry, or a result that was
// never cached once its RPC is answered). Its methods are safe for concurrent use.
type responseMemo[R any, P proto.Message] struct {
	mu sync.Mutex // guards m
	m  map[weak.Pointer[R]]P
}

func newResponseMemo[R any, P proto.Message]() *responseMemo[R, P] {
	return &responseMemo[R, P]{m: map[weak.Pointer[R]]P{}}
}

// respond returns the encoded response to r, building it with build and encoding it the first time. A
// result build fails for is not remembered. The core never modifies a result it returned, so r's response
// is a function of r alone.
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
	full, err := build()
	if err != nil {
		return zero, err
	}
	p, err = encoded(full)
	if err != nil {
		return zero, err
	}
	c.mu.Lock()
	if len(c.m) >= maxEncodedResponses {
		clear(c.m)
	}
	c.m[k] = p
	c.mu.Unlock()
	runtime.AddCleanup(r, c.forget, k)
	return p, nil
}

// forget drops the entry of a result the core no longer holds.
func (c *responseMemo[R, P]) forget(k weak.Pointer[R]) {
	c.mu.Lock()
	delete(c.m, k)
	c.mu.Unlock()
}

// encoded returns a new message of full's type carrying full's encoding as its unknown fields: it
// marshals to the same bytes as full, without walking full again.
func encoded[P proto.Message](full P) (P, error) {
	var zero P
	b, err := proto.Marshal(full) // fails on a string that is not UTF-8: the server's bad result
	if err != nil {
		return zero, badMessage("list result", err)
	}
	m := full.ProtoReflect().New()
	m.SetUnknown(b)
	p, _ := m.Interface().(P) // a generated message's New is of its own type
	return p, nil
}
