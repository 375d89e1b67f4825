package server

import (
	"reflect"
	"testing"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// Every RPC of the service is served by exactly one of the concern types Service embeds, none by the
// generated defaults (server.go): an RPC no concern type serves would answer UNIMPLEMENTED.
func TestEveryRPCHasOneConcern(t *testing.T) {
	concerns := []any{&sessionsAPI{}, &upstreamOps{}, &toolCalls{}, &hostAPI{}, &approvalAPI{}, &sessionTable{},
		&liveConfig{}, &auditLog{}, &interceptors{}, &replicaRouting{}, &identityAPI{}}
	desc := pb.BridgeService_ServiceDesc
	var names []string
	for _, m := range desc.Methods {
		names = append(names, m.MethodName)
	}
	for _, st := range desc.Streams {
		names = append(names, st.StreamName)
	}
	if len(names) == 0 {
		t.Fatal("the service descriptor lists no RPC")
	}
	for _, name := range names {
		var by []string
		for _, c := range concerns {
			typ := reflect.TypeOf(c)
			if _, ok := typ.MethodByName(name); ok {
				by = append(by, typ.Elem().Name())
			}
		}
		if len(by) != 1 {
			t.Errorf("RPC %s is served by %v, want exactly one concern type", name, by)
		}
	}
}
