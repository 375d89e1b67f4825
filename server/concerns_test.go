package server

import (
	"reflect"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// Every RPC of the service is served by exactly one of the concern types Service embeds, none by the
// generated defaults (server.go): an RPC no concern type serves would answer UNIMPLEMENTED.
func TestEveryRPCHasOneConcern(t *testing.T) {
	concerns := []any{&sessionsAPI{}, &upstreamOps{}, &toolCalls{}, &hostAPI{}, &approvalAPI{}, &sessionUse{},
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

// The service keeps nothing by session id: the idle reaper asks the core (mcpcore.Core.ClaimIdle), whose
// sessions hold their usage. A session closed behind the service's back (here straight on the core) is not
// claimed; a session in use through the service is not claimed however long ago it was opened; a claimed
// session is not found by the RPCs that use it.
func TestIdleReaperFollowsTheCore(t *testing.T) {
	b := newBridge(t, bridgeConfig{opts: Options{IdleTimeout: time.Hour}}) // the reaper's first sweep is a minute away: the test claims
	ctx := testCtx(t, "")
	kept := b.create(ctx, serverLegacy).GetSessionId()
	gone := b.create(ctx, serverLegacy).GetSessionId()
	if idle := b.core.ClaimIdle(time.Now(), time.Hour); len(idle) != 0 {
		t.Fatalf("a sweep found sessions idle for an hour: %d", len(idle))
	}
	sess, err := b.core.Session(gone)
	if err != nil {
		t.Fatal(err)
	}
	if err := sess.Close(ctx); err != nil {
		t.Fatal(err)
	}
	b.core.Forget(gone)
	_, release, err := b.svc.use(ctx, kept)
	if err != nil {
		t.Fatal(err)
	}
	if idle := b.core.ClaimIdle(time.Now().Add(2*time.Hour), time.Hour); len(idle) != 0 {
		t.Errorf("claimed %d sessions: one closed, one in use", len(idle))
	}
	release()
	idle := b.core.ClaimIdle(time.Now().Add(2*time.Hour), time.Hour)
	if len(idle) != 1 || idle[0].ID() != kept {
		t.Fatalf("claimed %d sessions two hours after the last use, want the open one", len(idle))
	}
	_, err = b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: kept, Name: "echo"})
	wantCode(t, err, codes.NotFound)
	_, _, err = b.svc.attachHost(ctx, kept)
	wantCode(t, err, codes.NotFound)
}
