package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"log/slog"
	"runtime/debug"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
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

// authenticator checks bearer tokens. Tokens are kept as SHA-256 digests, so that comparing a guess against
// every token takes the same time whatever the guess and the token lengths are.
type authenticator struct {
	tokens []tokenEntry // empty: auth off, every caller is LocalPrincipal
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

// authenticate returns the principal of the call's bearer token. With no tokens configured every caller
// is LocalPrincipal.
func (a *authenticator) authenticate(ctx context.Context) (string, error) {
	if len(a.tokens) == 0 {
		return LocalPrincipal, nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	var token string
	for _, v := range md.Get("authorization") {
		scheme, rest, ok := strings.Cut(strings.TrimSpace(v), " ")
		if ok && strings.EqualFold(scheme, "bearer") {
			token = strings.TrimSpace(rest)
			break
		}
	}
	if token == "" {
		return "", unauthenticated("missing bearer token: send the header \"authorization: Bearer <token>\"")
	}
	d := sha256.Sum256([]byte(token))
	principal := ""
	for _, e := range a.tokens { // no early exit: every token is compared
		if subtle.ConstantTimeCompare(d[:], e.digest[:]) == 1 {
			principal = e.principal
		}
	}
	if principal == "" {
		return "", unauthenticated("invalid bearer token")
	}
	return principal, nil
}

func unauthenticated(msg string) error {
	return withDetails(codes.Unauthenticated, msg, &errdetails.ErrorInfo{Reason: ReasonUnauthenticated, Domain: ErrorDomain})
}

// UnaryInterceptor authenticates BridgeService calls, puts the principal into the context and turns a panic
// in a handler into INTERNAL (logged with its stack). Install it with grpc.ChainUnaryInterceptor.
func (s *Service) UnaryInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		defer s.recoverInto(info.FullMethod, &err)
		if strings.HasPrefix(info.FullMethod, servicePrefix) {
			p, aerr := s.auth.authenticate(ctx)
			if aerr != nil {
				return nil, aerr
			}
			ctx = WithPrincipal(ctx, p)
		}
		return handler(ctx, req)
	}
}

// StreamInterceptor is UnaryInterceptor for streaming RPCs.
func (s *Service) StreamInterceptor() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
		defer s.recoverInto(info.FullMethod, &err)
		if strings.HasPrefix(info.FullMethod, servicePrefix) {
			p, aerr := s.auth.authenticate(ss.Context())
			if aerr != nil {
				return aerr
			}
			ss = &principalStream{ServerStream: ss, ctx: WithPrincipal(ss.Context(), p)}
		}
		return handler(srv, ss)
	}
}

// ServerOptions are the interceptors of the service, for grpc.NewServer: failure logging (logging.go), then
// authentication and panic recovery.
func (s *Service) ServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(s.UnaryInterceptors()...),
		grpc.ChainStreamInterceptor(s.loggingStreamInterceptor(), s.StreamInterceptor()),
	}
}

// UnaryInterceptors is the unary chain of ServerOptions, in order, for a caller that runs unary methods
// without a gRPC server (the REST gateway's in-process channel): it must be the very chain the server runs.
func (s *Service) UnaryInterceptors() []grpc.UnaryServerInterceptor {
	return []grpc.UnaryServerInterceptor{s.loggingUnaryInterceptor(), s.UnaryInterceptor()}
}

type principalStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (p *principalStream) Context() context.Context { return p.ctx }

// recoverInto is the last line of defence: a panic in a handler is logged and becomes INTERNAL, and the
// process goes on. (Goroutines the service starts recover on their own: see logPanic.)
func (s *Service) recoverInto(method string, err *error) {
	if r := recover(); r != nil {
		s.logger.Error("panic in handler", "method", method, "panic", r, "stack", string(debug.Stack()))
		*err = withDetails(codes.Internal, "internal error", &errdetails.ErrorInfo{Reason: ReasonInternal, Domain: ErrorDomain})
	}
}

// logPanic recovers a panic in a goroutine the service owns and logs it.
func logPanic(logger *slog.Logger, where string) {
	if r := recover(); r != nil {
		logger.Error("panic", "where", where, "panic", r, "stack", string(debug.Stack()))
	}
}
