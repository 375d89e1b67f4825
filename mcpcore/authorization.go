package mcpcore

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// This file is the core's seam with upstream authorization (the MCP authorization flow, spec 2025-11-25
// and 2026-07-28, basic/authorization). The flow itself — grants, token store, JOSE, DPoP, URL safety —
// lives in package upstreamauth, which implements Authorizer; the core never imports it. What stays here
// is what needs the session machinery: asking the session's host (a pending request of KindAuthorization,
// tied to the host call that needed it) and checking the host's answer.

// DefaultAuthorizationTimeout is how long an authorization request waits for a host when
// OAuthOptions.AuthorizationTimeout is not set.
const DefaultAuthorizationTimeout = 10 * time.Minute

// OAuthOptions configure how the core asks hosts to authorize upstream servers.
type OAuthOptions struct {
	// AuthorizationTimeout bounds how long an authorization request waits for a host
	// (DefaultAuthorizationTimeout when not set); at the deadline the flow fails and so does the request
	// that needed it.
	AuthorizationTimeout time.Duration
}

// Authorizer is the upstream authorization of one configured server (ServerConfig.OAuth); package
// upstreamauth implements it. Its methods may be called concurrently.
type Authorizer interface {
	// Connect prepares one Streamable HTTP connection of a session: it returns the OAuth handler the
	// SDK's transport calls on a 401 or 403, and conn.Base wrapped with what the flow needs on the wire
	// (or conn.Base itself). Its errors wrap ErrAuthorization.
	Connect(conn AuthConnection) (auth.OAuthHandler, http.RoundTripper, error)
	// Secrets returns the configuration's secrets, which the session's logs redact.
	Secrets() []string
}

// AuthConnection is what an Authorizer is told of the connection it authorizes.
type AuthConnection struct {
	// Server is the configured name of the server, URL its endpoint (the resource tokens are bound
	// to), Owner the principal that owns the session.
	Server, URL, Owner string
	// Base is the connection's HTTP transport.
	Base http.RoundTripper
	// Logger is the core's logger.
	Logger *slog.Logger
	// Ask raises req as a pending request of KindAuthorization in the session and waits for its host's
	// answer, which has been checked against req (validateAuthorizationAnswer). It ends when ctx ends.
	// Its errors wrap ErrAuthorization.
	Ask func(ctx context.Context, req *AuthorizationRequest) (*AuthorizationAnswer, error)
	// Connecting reports whether the connection is still being made.
	Connecting func() bool
}

// AuthorizationRequest is the payload of a KindAuthorization pending request: a person must open
// AuthorizationURL, sign in and consent; the authorization server then redirects their browser to
// RedirectURL with the result, and the host answers with that URL.
type AuthorizationRequest struct {
	// AuthorizationURL is the authorization server's URL to open (https, or http on loopback). It carries
	// no secret: state and the PKCE challenge are single-use.
	AuthorizationURL string
	// RedirectURL is the redirect URL the answer must start with (scheme, host and path).
	RedirectURL string
	// ServerName is the configured name of the MCP server being authorized.
	ServerName string
	// Scopes are the scopes requested (empty when the authorization request names none).
	Scopes []string
}

// AuthorizationAnswer is a host's answer to an authorization request: either RedirectURL — the full URL
// the authorization server redirected the browser to — or Code and State (and Iss, when the authorization
// server sent one) taken from it. A redirect carrying an OAuth error (e.g. access_denied) is a valid
// answer: the flow then fails.
type AuthorizationAnswer struct {
	RedirectURL string
	Code        string
	State       string
	Iss         string
}

// validateAuthorizationAnswer checks a host's answer against its request; the dispatcher calls it from
// Respond so that a malformed answer is refused there, with field violations, and the flow keeps waiting.
func validateAuthorizationAnswer(req *AuthorizationRequest, a *AuthorizationAnswer) []FieldViolation {
	var vs []FieldViolation
	bad := func(field, desc string) { vs = append(vs, FieldViolation{Field: field, Description: desc}) }
	if req == nil {
		bad("authorization", "the request has no authorization payload")
		return vs
	}
	wantState := ""
	if u, err := url.Parse(req.AuthorizationURL); err == nil {
		wantState = u.Query().Get("state")
	}
	switch {
	case a.RedirectURL != "" && (a.Code != "" || a.State != "" || a.Iss != ""):
		bad("authorization", "set either redirectUrl or code and state, not both")
	case a.RedirectURL != "":
		got, err := url.Parse(a.RedirectURL)
		if err != nil {
			bad("authorization.redirectUrl", "not a URL")
			break
		}
		if want, err := url.Parse(req.RedirectURL); err == nil && req.RedirectURL != "" && !sameEndpoint(got, want) {
			bad("authorization.redirectUrl", "does not start with the redirect URL of the request ("+want.Scheme+"://"+want.Host+want.Path+")")
			break
		}
		q := got.Query()
		if q.Get("error") != "" {
			break // the authorization server said no; the flow fails with that
		}
		if q.Get("code") == "" {
			bad("authorization.redirectUrl", "has neither code nor error")
		}
		if s := q.Get("state"); s == "" || (wantState != "" && s != wantState) {
			bad("authorization.redirectUrl", "state is missing or does not match the request")
		}
	case a.Code != "":
		if a.State == "" || (wantState != "" && a.State != wantState) {
			bad("authorization.state", "missing or does not match the request")
		}
	default:
		bad("authorization", "redirectUrl, or code and state, required")
	}
	return vs
}

// sameEndpoint reports whether a and b have the same scheme, host (with port) and path, ignoring case in
// scheme and host.
func sameEndpoint(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Host, b.Host) &&
		strings.TrimSuffix(a.Path, "/") == strings.TrimSuffix(b.Path, "/")
}

// authorize returns the OAuth handler for a new connection of s and base wrapped for it, or nil and base
// when its server has no OAuth configuration. The transport construction (http.go) sets them on the
// Streamable HTTP transport.
// sessionAuthorization is a session's side of its server's HTTP authorization: the OAuth handler and the
// round tripper of its connections, and the authorization requests it raises for hosts. The session holds
// it as Session.auth.
type sessionAuthorization struct {
	s *Session
}

func (sa *sessionAuthorization) authorize(base http.RoundTripper) (auth.OAuthHandler, http.RoundTripper, error) {
	s := sa.s
	authorizer := s.server.OAuth
	if authorizer == nil {
		return nil, base, nil
	}
	if s.server.Transport != TransportStreamableHTTP {
		return nil, nil, fmt.Errorf("%w: OAuth is supported on the streamable-http transport only", ErrAuthorization)
	}
	return authorizer.Connect(AuthConnection{
		Server: s.server.Name, URL: s.server.URL, Owner: s.owner,
		Base:   base,
		Logger: s.core.logger,
		Ask:    s.auth.askAuthorization,
		Connecting: func() bool {
			st, _ := s.State()
			return st != StateReady
		},
	})
}

// askAuthorization raises a KindAuthorization pending request for ar and waits for the host. The
// request is tied to the host call that needed it, if any (a step-up during a tool call), and ends when
// ctx ends: the call or the opening was abandoned.
func (sa *sessionAuthorization) askAuthorization(ctx context.Context, ar *AuthorizationRequest) (*AuthorizationAnswer, error) {
	s := sa.s
	opts := s.core.opts.OAuth
	timeout := opts.AuthorizationTimeout
	if timeout <= 0 {
		timeout = DefaultAuthorizationTimeout
	}
	now := time.Now()
	req := &PendingRequest{
		SessionID:     s.id,
		Owner:         s.owner,
		Kind:          KindAuthorization,
		Created:       now,
		Deadline:      now.Add(timeout),
		Authorization: ar,
	}
	if call := callFrom(ctx); call != nil {
		req.OriginCallID, req.OriginMethod, req.OriginName = call.id, call.method, call.name
	}
	s.logger.Info("authorization needed", "server", s.server.Name, "scopes", strings.Join(ar.Scopes, " "))
	a, outcome, err := s.core.dispatcher.submit(ctx, req, func() Answer {
		return Answer{Error: &RPCError{Code: CodeRequestTimedOut, Message: "no host answered the authorization request"}}
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrAuthorization, err)
	}
	switch {
	case outcome == OutcomeAnswered && a.Authorization != nil:
		s.logger.Info("authorization answered", "server", s.server.Name)
		return a.Authorization, nil
	case a.Error != nil:
		return nil, fmt.Errorf("%w: %s (%s)", ErrAuthorization, a.Error.Message, outcome)
	}
	return nil, fmt.Errorf("%w: the authorization request ended: %s", ErrAuthorization, outcome)
}
