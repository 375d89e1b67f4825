package server

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// RateLimit bounds one principal's calls (the config's rateLimits).
type RateLimit struct {
	// CallsPerSecond is the sustained rate (0: none); Burst the calls that may come at once above it
	// (0: CallsPerSecond rounded up, at least 1).
	CallsPerSecond float64
	Burst          int
	// ConcurrentCalls bounds the calls in flight (0: none).
	ConcurrentCalls int
}

// Which calls count: every BridgeService call but the host streams Connect and WatchEvents, which stay
// open for a session's life (they are attachments, not calls). StreamCallTool is a call.
var unlimitedMethods = map[string]bool{
	servicePrefix + "Connect":     true,
	servicePrefix + "WatchEvents": true,
}

// concurrencyRetryAfter is the RetryInfo of a call refused for too many calls in flight: when one of them
// will end is unknown, so this is a hint for a client's backoff.
const concurrencyRetryAfter = time.Second

// idleLimiterTTL and maxIdleLimiters bound the per-principal state kept for principals that stopped
// calling (principals from an identity provider are unbounded in number).
const (
	idleLimiterTTL  = 10 * time.Minute
	maxIdleLimiters = 1024
)

// rateLimiter keeps each principal's token bucket and calls in flight.
type rateLimiter struct {
	limits func(string) RateLimit
	now    func() time.Time

	mu      sync.Mutex                 // guards byPrinc and every principalLimit's inflight and lastUsed
	byPrinc map[string]*principalLimit // by principal
}

type principalLimit struct {
	cfg      RateLimit
	bucket   *rate.Limiter // nil without CallsPerSecond
	inflight int
	lastUsed time.Time
}

func newRateLimiter(limits func(string) RateLimit) *rateLimiter {
	if limits == nil {
		return nil
	}
	return &rateLimiter{limits: limits, now: time.Now, byPrinc: map[string]*principalLimit{}}
}

// admit lets a call of principal in, or refuses it with a *RateLimitedError. The caller calls release
// when the call ends. A nil rateLimiter admits everything.
func (r *rateLimiter) admit(principal, method string) (release func(), err error) {
	if r == nil || unlimitedMethods[method] {
		return func() {}, nil
	}
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	pl := r.byPrinc[principal]
	if pl == nil {
		r.sweepLocked(now)
		cfg := r.limits(principal)
		pl = &principalLimit{cfg: cfg}
		if cfg.CallsPerSecond > 0 {
			burst := cfg.Burst
			if burst <= 0 {
				burst = max(1, int(math.Ceil(cfg.CallsPerSecond)))
			}
			pl.bucket = rate.NewLimiter(rate.Limit(cfg.CallsPerSecond), burst)
		}
		r.byPrinc[principal] = pl
	}
	pl.lastUsed = now
	if pl.cfg.ConcurrentCalls > 0 && pl.inflight >= pl.cfg.ConcurrentCalls {
		return nil, &RateLimitedError{Reason: ReasonTooManyConcurrentCalls, RetryAfter: concurrencyRetryAfter,
			Detail: strconv.Itoa(pl.cfg.ConcurrentCalls) + " calls in flight"}
	}
	if pl.bucket != nil {
		res := pl.bucket.ReserveN(now, 1)
		if d := res.DelayFrom(now); !res.OK() || d > 0 {
			res.CancelAt(now)
			return nil, &RateLimitedError{Reason: ReasonRateLimited, RetryAfter: max(d, time.Millisecond),
				Detail: fmt.Sprintf("%g calls per second", pl.cfg.CallsPerSecond)}
		}
	}
	pl.inflight++
	var once sync.Once
	return func() {
		once.Do(func() {
			r.mu.Lock()
			pl.inflight--
			pl.lastUsed = r.now()
			r.mu.Unlock()
		})
	}, nil
}

// sweepLocked forgets principals with no call in flight that have not called for idleLimiterTTL (their
// bucket has long been full again), once there are more than maxIdleLimiters. The caller holds r.mu.
func (r *rateLimiter) sweepLocked(now time.Time) {
	if len(r.byPrinc) < maxIdleLimiters {
		return
	}
	for p, pl := range r.byPrinc {
		ttl := idleLimiterTTL
		if pl.bucket != nil { // at a very low rate the bucket takes longer to fill again
			ttl = max(ttl, time.Duration(float64(pl.bucket.Burst())/float64(pl.bucket.Limit())*float64(time.Second)))
		}
		if pl.inflight == 0 && now.Sub(pl.lastUsed) >= ttl {
			delete(r.byPrinc, p)
		}
	}
}

// admission is a call's admission by the rate limiter, in the RPC's context: the interceptor releases it
// when the handler returns, unless the handler held it for a call that outlives the RPC (a detached call,
// ADR 0105), which then releases it when it ends — it counts toward the concurrency limit all its life.
type admission struct {
	mu      sync.Mutex
	release func()
	held    bool
}

type admissionKey struct{}

// withAdmission puts release in ctx; the returned end is what the interceptor defers.
func withAdmission(ctx context.Context, release func()) (context.Context, func()) {
	a := &admission{release: release}
	return context.WithValue(ctx, admissionKey{}, a), func() {
		a.mu.Lock()
		held := a.held
		a.mu.Unlock()
		if !held {
			release()
		}
	}
}

// holdAdmission takes over the release of ctx's admission: the interceptor no longer releases it, the
// caller must call the returned func (once is enough; more are harmless). A context without one (a test
// calling the service directly) gives a no-op.
func holdAdmission(ctx context.Context) func() {
	a, _ := ctx.Value(admissionKey{}).(*admission)
	if a == nil {
		return func() {}
	}
	a.mu.Lock()
	a.held = true
	a.mu.Unlock()
	return a.release
}
