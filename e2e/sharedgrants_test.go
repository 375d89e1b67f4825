package e2e

import (
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/internal/state/statetest"
	"github.com/mcp-bridge/mcp-bridge/internal/testauth"
)

// Replicas sharing their state in Redis share the upstream OAuth grants too (issue 32): a person authorizes
// through replica r1; r1 is killed with SIGKILL; replica r2, which was already running, takes the session
// over and calls the protected server with the grant r1 was given — no second authorization, no request
// pending anywhere. Before, a bridge whose state was in Redis kept grants in memory (the "is the state
// durable" test looked only at state.file), so r2 had none and the person had to authorize again.
func TestSharedStateSharesUpstreamGrants(t *testing.T) {
	redis := statetest.StartRedis(t, statetest.RedisConfig{Password: "redis-secret-for-the-test"})
	as := testauth.New(testauth.Options{ScopesSupported: []string{"mcp"}})
	t.Cleanup(as.Close)
	one := newProtectedServer(t, as, "one")
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(i*5 + 1)
	}
	replica := func(name string) *bridge {
		return start(t, bridgeConfig{
			extraServers: fmt.Sprintf("  secured:\n    url: %q\n    auth:\n      type: oauth\n", one.url),
			extra: fmt.Sprintf("auth:\n  tokensFile: tokens.txt\noauth:\n  authorizationTimeout: 1m\n"+
				"sessions:\n  replica: %s\nstate:\n  keyEnv: MCPB_STATE_KEY\n  redis:\n    address: %q\n    passwordEnv: MCPB_REDIS_PASSWORD\n    keyPrefix: \"grants:\"\n    leaseTTL: 2s\n",
				name, redis.Addr),
			files: map[string]string{"tokens.txt": "tok-alice alice\n"},
			env:   []string{"MCPB_STATE_KEY=" + hex.EncodeToString(key), "MCPB_REDIS_PASSWORD=" + redis.Password},
		})
	}
	r1, r2 := replica("r1"), replica("r2")
	ctx := testCtx(t)
	alice := withToken(ctx, "tok-alice")

	created := r1.createAsync(alice, "secured")
	req := pendingAuthorization(t, alice, r1.client)
	if _, err := r1.client.RespondToRequest(alice, &pb.RespondToRequestRequest{SessionId: "-", RequestId: req.GetRequestId(),
		Answer: authAnswer(authorize(t, req.GetAuthorization(), "secured"))}); err != nil {
		t.Fatalf("RespondToRequest: %v", err)
	}
	cr := await(t, created)
	if cr.err != nil {
		t.Fatalf("CreateSession through r1: %v", cr.err)
	}
	id := cr.resp.GetSession().GetSessionId()
	if got := r1.whoami(t, alice, id); got != "this is one" {
		t.Fatalf("whoami through r1 = %q", got)
	}

	r1.kill()
	// r2 takes the session over once r1's lease has lapsed (on Redis's clock, in another process); until then
	// it answers UNAVAILABLE, which a host retries.
	var res *pb.CallToolResponse
	var err error
	eventually(60*time.Second, func() bool {
		res, err = r2.client.CallTool(alice, &pb.CallToolRequest{SessionId: id, Name: "whoami"})
		return status.Code(err) != codes.Unavailable
	})
	if err != nil {
		l, _ := r2.client.ListPendingRequests(alice, &pb.ListPendingRequestsRequest{SessionId: "-"})
		t.Fatalf("whoami through r2 after the takeover: %v (requests pending on r2: %v)", err, l.GetRequests())
	}
	if got := textOf(res.GetResult()); got != "this is one" {
		t.Fatalf("whoami through r2 = %q", got)
	}
	if n := len(as.Requests("authorize")); n != 1 {
		t.Errorf("%d authorizations, want 1: r2 asked the person again", n)
	}
	if l, err := r2.client.ListPendingRequests(alice, &pb.ListPendingRequestsRequest{SessionId: "-"}); err != nil || len(l.GetRequests()) != 0 {
		t.Errorf("requests pending on r2 = %v, %v; want none", l.GetRequests(), err)
	}
}
