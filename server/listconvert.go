package server

import (
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// toolProtos remembers the conversion of tools the core's list cache hands out again and again
// (mcpcore/listcache.go): a cached ListTools then costs the round trip, not the conversion of every tool's
// schemas to google.protobuf.Struct. It is keyed by the *mcp.Tool, which the core never modifies once a
// server sent it; the *pb.Tool it holds is shared by every response that lists the tool and is never
// modified either (gRPC and the gateway only marshal it).
var toolProtos = &protoMemo[mcp.Tool, pb.Tool]{m: map[*mcp.Tool]*pb.Tool{}}

// maxProtoMemo bounds a protoMemo; when full it starts afresh.
const maxProtoMemo = 1024

// protoMemo is a bounded map from a core object to its conversion. Its methods are safe for concurrent use.
type protoMemo[K, V any] struct {
	mu sync.Mutex // guards m
	m  map[*K]*V
}

// convert returns the memoized conversion of k, or converts it with fn and remembers a successful one.
func (c *protoMemo[K, V]) convert(k *K, fn func(*K) (*V, error)) (*V, error) {
	if k == nil {
		return fn(k)
	}
	c.mu.Lock()
	v, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := fn(k)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if len(c.m) >= maxProtoMemo {
		clear(c.m)
	}
	c.m[k] = v
	c.mu.Unlock()
	return v, nil
}

// toolToProtoMemo is toolToProto through toolProtos.
func toolToProtoMemo(t *mcp.Tool) (*pb.Tool, error) { return toolProtos.convert(t, toolToProto) }
