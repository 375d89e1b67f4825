package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/internal/state/statetest"
)

// TestReadyzReportsRedisWriteFailures (issue 32): with the state in a real redis-server that refuses writes
// (min-replicas-to-write with no replica: every write is NOREPLICAS, reads still answer), /readyz stays 200
// and says the store is failing, with Redis's error; once Redis takes writes again, it says healthy.
func TestReadyzReportsRedisWriteFailures(t *testing.T) {
	rs := statetest.StartRedis(t, statetest.RedisConfig{Password: "redis-secret-for-the-test"})
	key := strings.Repeat("5a", 32)
	b := start(t, bridgeConfig{
		extra: fmt.Sprintf("sessions:\n  replica: r1\nstate:\n  keyEnv: MCPB_STATE_KEY\n  redis:\n    address: %q\n    passwordEnv: MCPB_REDIS_PASSWORD\n    keyPrefix: \"health:\"\n", rs.Addr),
		env:   []string{"MCPB_STATE_KEY=" + key, "MCPB_REDIS_PASSWORD=" + rs.Password},
	})
	ctx := testCtx(t)
	admin := redis.NewClient(&redis.Options{Addr: rs.Addr, Password: rs.Password})
	t.Cleanup(func() { _ = admin.Close() })
	readyState := func() (int, map[string]any) {
		t.Helper()
		code, body := b.rest("").do("GET", "/readyz", "")
		st, _ := body["state"].(map[string]any)
		return code, st
	}
	if code, st := readyState(); code != 200 || st["healthy"] != true {
		t.Fatalf("/readyz with redis taking writes = %d state %v, want 200 and healthy", code, st)
	}

	if err := admin.ConfigSet(ctx, "min-replicas-to-write", "1").Err(); err != nil {
		t.Fatal(err)
	}
	// A session's record is a write (its lease first, then the record): it fails, and the store says so.
	// Before: the lease's failure was only a debug line, and /readyz said healthy.
	_, _ = b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: serverModern})
	b.logs.waitFor(t, func(rec map[string]any) bool {
		return strings.HasPrefix(fmt.Sprint(rec["msg"]), "state store: a write failed")
	})
	if code, st := readyState(); code != 200 || st["healthy"] != false || !strings.Contains(fmt.Sprint(st["error"]), "NOREPLICAS") {
		t.Errorf("/readyz while redis refuses writes = %d state %v, want 200, unhealthy, Redis's NOREPLICAS error", code, st)
	}

	if err := admin.ConfigSet(ctx, "min-replicas-to-write", "0").Err(); err != nil {
		t.Fatal(err)
	}
	// Writes succeed again: a few sessions later the store is healthy.
	mark := b.logMark()
	for range 3 {
		if _, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: serverModern}); err != nil {
			t.Fatalf("CreateSession once redis takes writes again: %v", err)
		}
	}
	b.waitAfter(t, mark, func(rec map[string]any) bool { return rec["msg"] == "state store: writes succeed again" })
	if code, st := readyState(); code != 200 || fmt.Sprint(st) != "map[healthy:true]" {
		t.Errorf("/readyz once redis takes writes again = %d state %v, want healthy", code, st)
	}
}
