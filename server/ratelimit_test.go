package server

import (
	"errors"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
)

func TestRateLimiter(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	r := newRateLimiter(func(p string) RateLimit {
		if p == "bob" {
			return RateLimit{ConcurrentCalls: 1}
		}
		return RateLimit{CallsPerSecond: 2, Burst: 2}
	})
	r.now = func() time.Time { return now }
	call := servicePrefix + "ListTools"
	admit := func(p string) error {
		release, err := r.admit(p, call)
		if err == nil {
			release()
		}
		return err
	}
	for i := range 2 {
		if err := admit("alice"); err != nil {
			t.Fatalf("call %d within the burst: %v", i, err)
		}
	}
	var rl *RateLimitedError
	if err := admit("alice"); !errors.As(err, &rl) || rl.Reason != ReasonRateLimited || rl.RetryAfter <= 0 || rl.RetryAfter > time.Second {
		t.Fatalf("over the rate = %v (%+v), want RATE_LIMITED with a retry within 500ms", err, rl)
	}
	if err := admit("carol"); err != nil {
		t.Fatalf("another principal has a bucket of her own: %v", err)
	}
	now = now.Add(500 * time.Millisecond)
	if err := admit("alice"); err != nil {
		t.Fatalf("after the bucket refilled one token: %v", err)
	}
	// Streams that stay open are not calls.
	for range 5 {
		if _, err := r.admit("alice", servicePrefix+"Connect"); err != nil {
			t.Fatalf("Connect: %v", err)
		}
	}

	release, err := r.admit("bob", call)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.admit("bob", call); !errors.As(err, &rl) || rl.Reason != ReasonTooManyConcurrentCalls {
		t.Fatalf("second call in flight = %v, want TOO_MANY_CONCURRENT_CALLS", err)
	}
	release()
	release() // idempotent
	if err := admit("bob"); err != nil {
		t.Fatalf("after the first call ended: %v", err)
	}
	r.mu.Lock()
	inflight := r.byPrinc["bob"].inflight
	r.mu.Unlock()
	if inflight != 0 {
		t.Fatalf("bob's calls in flight = %d after all ended", inflight)
	}
}

func TestRateLimiterForgetsIdlePrincipals(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	r := newRateLimiter(func(string) RateLimit { return RateLimit{CallsPerSecond: 1} })
	r.now = func() time.Time { return now }
	for i := range maxIdleLimiters {
		release, err := r.admit(string(rune('a'+i%26))+time.Duration(i).String(), servicePrefix+"Ping")
		if err != nil {
			t.Fatal(err)
		}
		release()
	}
	now = now.Add(idleLimiterTTL)
	if _, err := r.admit("newcomer", servicePrefix+"Ping"); err != nil {
		t.Fatal(err)
	}
	if n := len(r.byPrinc); n > 2 {
		t.Fatalf("%d principals kept after they all went idle", n)
	}
}

func TestNilRateLimiterAdmits(t *testing.T) {
	var r *rateLimiter
	if release, err := r.admit("x", servicePrefix+"Ping"); err != nil || release == nil {
		t.Fatalf("nil limiter: %v", err)
	}
}

func TestCodeName(t *testing.T) {
	for c, want := range map[codes.Code]string{codes.OK: "OK", codes.Canceled: "CANCELLED", codes.PermissionDenied: "PERMISSION_DENIED", codes.ResourceExhausted: "RESOURCE_EXHAUSTED"} {
		if got := codeName(c); got != want {
			t.Errorf("codeName(%v) = %q, want %q", c, got, want)
		}
	}
}

// A detached call keeps its admission after its RPC returns (holdAdmission), so it counts toward the
// concurrency limit until it ends (ADR 0105); an RPC that does not hold it gives it back when it returns.
func TestHeldAdmissionOutlivesTheRPC(t *testing.T) {
	r := newRateLimiter(func(string) RateLimit { return RateLimit{ConcurrentCalls: 1} })
	call := servicePrefix + "CallTool"
	rpc := func(hold bool) (func(), error) {
		release, err := r.admit("bob", call)
		if err != nil {
			return nil, err
		}
		ctx, end := withAdmission(t.Context(), release)
		defer end()
		if hold {
			return holdAdmission(ctx), nil
		}
		return func() {}, nil
	}
	if _, err := rpc(false); err != nil {
		t.Fatal(err)
	}
	done, err := rpc(true) // the RPC returned; its detached call goes on
	if err != nil {
		t.Fatalf("after a plain RPC returned: %v", err)
	}
	var rl *RateLimitedError
	if _, err := rpc(false); !errors.As(err, &rl) || rl.Reason != ReasonTooManyConcurrentCalls {
		t.Fatalf("a call while the detached one runs = %v, want TOO_MANY_CONCURRENT_CALLS", err)
	}
	done()
	if _, err := rpc(false); err != nil {
		t.Fatalf("after the detached call ended: %v", err)
	}
}
