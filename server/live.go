package server

import (
	"context"
	"math"
	"sync"
	"sync/atomic"

	"golang.org/x/time/rate"
)

// Live configuration (docs/adr/0095-live-configuration.md): what a reload of the configuration file changes in
// the service while it serves. Every call reads the generation in force once, at its start: the
// authenticator, the rate limits and the servers' descriptions are each one pointer that Reconfigure swaps.

// liveConfig holds what a reload changes, each one pointer that Reconfigure swaps; the audit log, which a
// reload changes too, is auditLog's (audit.go). Service embeds it.
type liveConfig struct {
	s *Service
	// auth and limiter are the authenticator and the rate limits in force, servers the servers' descriptions.
	auth    *authSwitch
	limiter *limiterSwitch
	servers atomic.Pointer[[]ServerDescription]
	// streamCap is limits.maxEventStreamsPerPrincipal as Reconfigure set it; nil: Options'.
	streamCap atomic.Pointer[int]
}

// LiveOptions are the options of Options a reload may change.
type LiveOptions struct {
	Tokens        map[string]string
	OIDC          *OIDCOptions
	CertPrincipal string
	RateLimits    func(principal string) RateLimit
	Servers       []ServerDescription
	// MaxEventStreamsPerPrincipal replaces Options': from the next WatchEvents stream (streams held over the
	// new cap stay until they end).
	MaxEventStreamsPerPrincipal int
}

// Reconfigure applies o from the next call on: calls in flight finish under what admitted them. Bearer tokens
// no longer listed are refused from the next call; the calls in flight of a principal still count against
// its new concurrency limit, and its token bucket starts full at the new rate.
func (lc *liveConfig) Reconfigure(o LiveOptions) {
	s := lc.s
	opts := s.opts
	opts.Tokens, opts.OIDC, opts.CertPrincipal, opts.RateLimits = o.Tokens, o.OIDC, o.CertPrincipal, o.RateLimits
	a := newAuthenticator(o.Tokens)
	a.configure(opts, s.logger)
	s.auth.cur.Store(a)
	s.limiter.set(o.RateLimits)
	servers := append([]ServerDescription(nil), o.Servers...)
	s.servers.Store(&servers)
	streams := o.MaxEventStreamsPerPrincipal
	s.streamCap.Store(&streams)
}

// maxEventStreams is the cap on a principal's WatchEvents streams in force (0: none).
func (lc *liveConfig) maxEventStreams() int {
	s := lc.s
	if p := s.streamCap.Load(); p != nil {
		return *p
	}
	return s.opts.MaxEventStreamsPerPrincipal
}

// serverDescriptions are the configured servers' descriptions in force, in the file's order.
func (lc *liveConfig) serverDescriptions() []ServerDescription {
	s := lc.s
	if p := s.servers.Load(); p != nil {
		return *p
	}
	return s.opts.Servers
}

// authSwitch is the authenticator in force.
type authSwitch struct{ cur atomic.Pointer[authenticator] }

func newAuthSwitch(a *authenticator) *authSwitch {
	sw := &authSwitch{}
	sw.cur.Store(a)
	return sw
}

func (sw *authSwitch) authenticateIdentity(ctx context.Context) (string, []string, error) {
	return sw.cur.Load().authenticateIdentity(ctx)
}

// limiterSwitch is the rate limiter in force; it holds a nil *rateLimiter (everything admitted) without limits.
type limiterSwitch struct {
	mu  sync.Mutex // serializes set
	cur atomic.Pointer[rateLimiter]
}

func newLimiterSwitch(limits func(string) RateLimit) *limiterSwitch {
	sw := &limiterSwitch{}
	sw.cur.Store(newRateLimiter(limits))
	return sw
}

func (sw *limiterSwitch) admit(principal, method string) (func(), error) {
	return sw.cur.Load().admit(principal, method)
}

// set changes the limits: nil turns them off. An existing limiter keeps each principal's calls in flight.
func (sw *limiterSwitch) set(limits func(string) RateLimit) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	cur := sw.cur.Load()
	switch {
	case limits == nil:
		sw.cur.Store(nil)
	case cur == nil:
		sw.cur.Store(newRateLimiter(limits))
	default:
		cur.setLimits(limits)
	}
}

// setLimits changes the limits of every principal: the calls in flight are kept, each bucket starts full.
func (r *rateLimiter) setLimits(limits func(string) RateLimit) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.limits = limits
	for p, pl := range r.byPrinc {
		pl.cfg = limits(p)
		pl.bucket = nil
		if pl.cfg.CallsPerSecond > 0 {
			burst := pl.cfg.Burst
			if burst <= 0 {
				burst = max(1, int(math.Ceil(pl.cfg.CallsPerSecond)))
			}
			pl.bucket = rate.NewLimiter(rate.Limit(pl.cfg.CallsPerSecond), burst)
		}
	}
}
