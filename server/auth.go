package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

// LocalPrincipal is the principal of every caller when no bearer tokens are configured
// (docs/adr/0004-principals.md).
const LocalPrincipal = "local"

// servicePrefix is the full-method prefix of BridgeService; other services on the same gRPC server (health,
// reflection) are not subject to bearer auth.
const servicePrefix = "/mcpbridge.v1.BridgeService/"

type principalKey struct{}

// WithPrincipal returns ctx carrying principal; the auth interceptors use it, and tests may too.
func WithPrincipal(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, principalKey{}, principal)
}

// Principal returns the principal the auth interceptors put into ctx, or LocalPrincipal when there is none.
func Principal(ctx context.Context) string {
	if p, ok := ctx.Value(principalKey{}).(string); ok && p != "" {
		return p
	}
	return LocalPrincipal
}

// authenticator finds the principal of a call: a bearer token from the tokens file, a JWT of the
// configured identity provider, or a verified client certificate (docs/adr/0004-principals.md,
// docs/adr/0012-policy.md). Static tokens are kept as SHA-256 digests, so that comparing a guess against
// every token takes the same time whatever the guess and the token lengths are.
type authenticator struct {
	tokens   []tokenEntry  // empty: no static tokens
	oidc     *oidcVerifier // nil: no identity provider
	certFrom string        // "": certificates do not name principals
	caller   func(context.Context) CallerInfo
}

type tokenEntry struct {
	digest    [sha256.Size]byte
	principal string
}

func newAuthenticator(tokens map[string]string) *authenticator {
	a := &authenticator{}
	for tok, p := range tokens {
		if tok == "" || p == "" {
			continue
		}
		a.tokens = append(a.tokens, tokenEntry{digest: sha256.Sum256([]byte(tok)), principal: p})
	}
	return a
}

// configure adds the identity provider and the certificate rule of opts.
func (a *authenticator) configure(opts Options, logger *slog.Logger) {
	if opts.OIDC != nil {
		a.oidc = newOIDCVerifier(*opts.OIDC, logger)
	}
	a.certFrom, a.caller = opts.CertPrincipal, opts.Caller
	if a.caller == nil {
		a.caller = DirectCaller
	}
}

// enabled reports whether any source of principals is configured; without one every caller is
// LocalPrincipal.
func (a *authenticator) enabled() bool {
	return len(a.tokens) > 0 || a.oidc != nil || a.certFrom != ""
}

// bearerToken returns the token of the call's "authorization: Bearer …" header, or "".
func bearerToken(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	for _, v := range md.Get("authorization") {
		scheme, rest, ok := strings.Cut(strings.TrimSpace(v), " ")
		if ok && strings.EqualFold(scheme, "bearer") {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}

// authenticate returns the principal of the call. A bearer token, when sent, decides: a static token,
// else a JWT of the identity provider; an invalid one is refused even if a certificate would name a
// principal. Without a token the client certificate names the principal when so configured. With no
// source configured every caller is LocalPrincipal.
func (a *authenticator) authenticate(ctx context.Context) (string, error) {
	p, _, err := a.authenticateIdentity(ctx)
	return p, err
}

// authenticateIdentity is authenticate returning the principal's groups too: those of an identity
// provider's token (OIDCOptions.GroupsClaim); static tokens and certificates name none.
func (a *authenticator) authenticateIdentity(ctx context.Context) (string, []string, error) {
	if !a.enabled() {
		return LocalPrincipal, nil, nil
	}
	if token := bearerToken(ctx); token != "" {
		if p := a.staticPrincipal(token); p != "" {
			return p, nil, nil
		}
		if a.oidc != nil && looksLikeJWT(token) {
			p, groups, err := a.oidc.verifyIdentity(ctx, token)
			if err != nil {
				return "", nil, toStatus(err)
			}
			return p, groups, nil
		}
		return "", nil, toStatus(errBadToken)
	}
	if a.certFrom != "" {
		if cert := a.caller(ctx).Cert; cert != nil {
			p, err := certPrincipal(cert, a.certFrom)
			if err != nil {
				return "", nil, toStatus(fmt.Errorf("%w: %v", errNoCredentials, err))
			}
			return p, nil, nil
		}
	}
	return "", nil, toStatus(errNoCredentials)
}

// staticPrincipal returns the principal of a static token, or "".
func (a *authenticator) staticPrincipal(token string) string {
	d := sha256.Sum256([]byte(token))
	principal := ""
	for _, e := range a.tokens { // no early exit: every token is compared
		if subtle.ConstantTimeCompare(d[:], e.digest[:]) == 1 {
			principal = e.principal
		}
	}
	return principal
}

// interceptors is the service's interceptor chain: authentication (this file), rate limits, failure logs
// (logging.go), panic recovery, and the replica header (routing.go). Service embeds it.
type interceptors struct{ s *Service }

// UnaryInterceptor authenticates BridgeService calls, puts the principal into the context and turns a panic
// in a handler into INTERNAL (logged with its stack). Install it with grpc.ChainUnaryInterceptor.
func (ic *interceptors) UnaryInterceptor() grpc.UnaryServerInterceptor {
	s := ic.s
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		defer s.recoverInto(info.FullMethod, &err)
		if strings.HasPrefix(info.FullMethod, servicePrefix) {
			p, groups, aerr := s.auth.authenticateIdentity(ctx)
			if aerr != nil {
				return nil, aerr
			}
			release, lerr := s.limiter.admit(p, info.FullMethod)
			if lerr != nil {
				return nil, toStatus(lerr)
			}
			var end func()
			ctx, end = withAdmission(ctx, release)
			defer end()
			ctx = WithGroups(WithPrincipal(ctx, p), groups)
			if m, ok := req.(proto.Message); ok {
				if derr := CheckDepth(m); derr != nil {
					return nil, derr
				}
			}
		}
		return handler(ctx, req)
	}
}

// StreamInterceptor is UnaryInterceptor for streaming RPCs.
func (ic *interceptors) StreamInterceptor() grpc.StreamServerInterceptor {
	s := ic.s
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
		defer s.recoverInto(info.FullMethod, &err)
		if strings.HasPrefix(info.FullMethod, servicePrefix) {
			p, groups, aerr := s.auth.authenticateIdentity(ss.Context())
			if aerr != nil {
				return aerr
			}
			release, lerr := s.limiter.admit(p, info.FullMethod)
			if lerr != nil {
				return toStatus(lerr)
			}
			actx, end := withAdmission(ss.Context(), release)
			defer end()
			ss = &principalStream{ServerStream: ss, ctx: WithGroups(WithPrincipal(actx, p), groups)}
		}
		return handler(srv, ss)
	}
}

// ServerOptions are the interceptors of the service, for grpc.NewServer: failure logging (logging.go), then
// authentication and panic recovery.
func (ic *interceptors) ServerOptions() []grpc.ServerOption {
	s := ic.s
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(s.UnaryInterceptors()...),
		grpc.ChainStreamInterceptor(s.loggingStreamInterceptor(), s.StreamInterceptor()),
	}
}

// UnaryInterceptors is the unary chain of ServerOptions, in order, for a caller that runs unary methods
// without a gRPC server (the REST gateway's in-process channel): it must be the very chain the server runs.
func (ic *interceptors) UnaryInterceptors() []grpc.UnaryServerInterceptor {
	s := ic.s
	chain := []grpc.UnaryServerInterceptor{s.loggingUnaryInterceptor(), s.UnaryInterceptor()}
	if r := s.replicaUnaryInterceptor(); r != nil {
		chain = append(chain, r)
	}
	return chain
}

type principalStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (p *principalStream) Context() context.Context { return p.ctx }

// RecvMsg receives a message of the stream and refuses one nested deeper than MaxNestingDepth (CheckDepth).
func (p *principalStream) RecvMsg(m any) error {
	if err := p.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	if pm, ok := m.(proto.Message); ok {
		return CheckDepth(pm)
	}
	return nil
}

// recoverInto is the last line of defence: a panic in a handler is logged and becomes INTERNAL, and the
// process goes on. (Goroutines the service starts recover on their own: see logPanic.)
func (ic *interceptors) recoverInto(method string, err *error) {
	s := ic.s
	if r := recover(); r != nil {
		s.logger.Error("panic in handler", "method", method, "panic", r, "stack", string(debug.Stack()))
		*err = internalError()
	}
}

// logPanic recovers a panic in a goroutine the service owns and logs it.
func logPanic(logger *slog.Logger, where string) {
	if r := recover(); r != nil {
		logger.Error("panic", "where", where, "panic", r, "stack", string(debug.Stack()))
	}
}
