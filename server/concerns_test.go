package server

import (
	"reflect"
	"testing"
	"time"

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

// The session table keeps a record only of sessions the core has open: a session closed and forgotten
// behind the service's back (here straight on the core) is dropped at the next sweep, and a session used
// through the service is kept however often the sweep runs.
func TestSessionTableFollowsTheCore(t *testing.T) {
	b := newBridge(t, bridgeConfig{opts: Options{IdleTimeout: time.Hour}}) // the reaper's first sweep is a minute away: the test sweeps
	ctx := testCtx(t, "")
	kept := b.create(ctx, serverLegacy).GetSessionId()
	gone := b.create(ctx, serverLegacy).GetSessionId()
	has := func(id string) bool {
		b.svc.sessionTable.mu.Lock()
		defer b.svc.sessionTable.mu.Unlock()
		return b.svc.sessionTable.tracked[id] != nil
	}
	if idle := b.svc.sweepIdle(time.Now()); len(idle) != 0 {
		t.Fatalf("a sweep found sessions idle for an hour: %d", len(idle))
	}
	if !has(kept) || !has(gone) {
		t.Fatal("open sessions are not in the table after a sweep")
	}
	sess, err := b.core.Session(gone)
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.Close(ctx); err != nil {
		t.Fatal(err)
	}
	b.core.Forget(gone)
	b.svc.sweepIdle(time.Now())
	if has(gone) {
		t.Error("the table kept a session the core forgot")
	}
	if !has(kept) {
		t.Error("the table dropped an open session")
	}
}
