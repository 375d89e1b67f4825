package upstreamauth

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// The machine grants of the MCP authorization extensions, none of which asks a person:
//
//   - client_credentials with private_key_jwt client authentication (RFC 7523 §2.2; extension
//     io.modelcontextprotocol/oauth-client-credentials). With a client secret the SDK's handler runs it.
//   - jwt_bearer: the RFC 7523 JWT bearer grant with an assertion the platform issues, read from a file or
//     the environment at every grant — workload identity federation (SEP-1933), e.g. a Kubernetes
//     projected service account token.
//   - enterprise_managed: Enterprise-Managed Authorization (SEP-990): the enterprise identity assertion
//     (an ID token) is exchanged at the enterprise IdP for an ID-JAG (RFC 8693 token exchange), which is
//     presented to the MCP server's authorization server with the JWT bearer grant.
//
// Each runs when the server answers 401 (or 403 insufficient_scope): protected-resource metadata (RFC
// 9728, from the challenge or the well-known locations, its resource checked against the server URL),
// authorization-server metadata (RFC 8414, issuer checked), then one token request with the resource
// indicator (RFC 8707). A failed grant is reported, not retried and not replaced by another grant; the
// next 401 runs it again, reading the key material and assertions afresh. Tokens are kept in memory by the
// flow (a restart runs the grant again; nothing to persist since no person is asked).

// Grant type URNs.
const (
	grantTypeJWTBearer     = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	grantTypeTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	clientAssertionTypeJWT = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
	tokenTypeIDToken       = "urn:ietf:params:oauth:token-type:id_token"
	tokenTypeIDJAG         = "urn:ietf:params:oauth:token-type:id-jag"
)

// IdPConfig is the enterprise identity provider of GrantEnterpriseManaged: where the identity assertion
// is exchanged for an ID-JAG (RFC 8693).
type IdPConfig struct {
	// TokenEndpoint is the IdP's token endpoint; if empty it is discovered from Issuer (RFC 8414 / OIDC).
	TokenEndpoint string
	// Issuer is the IdP's issuer, used to discover TokenEndpoint.
	Issuer string
	// ClientID is the bridge's client at the IdP; ClientSecret (optional) authenticates it (HTTP Basic).
	ClientID     string
	ClientSecret *SecretSource
	// SubjectToken is the enterprise identity assertion to exchange (an OpenID Connect ID token unless
	// SubjectTokenType says otherwise), read again at every grant.
	SubjectToken *SecretSource
	// SubjectTokenType is the assertion's RFC 8693 token type; empty means an ID token
	// (urn:ietf:params:oauth:token-type:id_token).
	SubjectTokenType string
}

// machineFlow is the auth.OAuthHandler of the machine grants. It is shared, like every flow, by the
// sessions of one owner to one server; sessionAuth serializes Authorize calls.
type machineFlow struct {
	cfg      *Config
	resource string // the MCP server's URL
	hc       *http.Client

	logger *slog.Logger // told of each grant (never of a credential); nil: none

	mu      sync.Mutex // guards tok, granted
	tok     *oauth2.Token
	granted []string // scopes of the last grant
}

// machineFlow returns the flow's machine grant handler, if it has one.
func (f *oauthFlow) machineFlow() (*machineFlow, bool) {
	if f == nil {
		return nil, false
	}
	m, ok := f.sdk.(*machineFlow)
	return m, ok
}

var _ auth.OAuthHandler = (*machineFlow)(nil)

// TokenSource returns the current token; nil before the first grant. An expired token is reported as
// invalid_grant, which makes the transport send the request without it: the server's 401 then runs the
// grant again (with the request's context) through Authorize.
func (m *machineFlow) TokenSource(context.Context) (oauth2.TokenSource, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tok == nil {
		return nil, nil
	}
	return machineTokenSource{m}, nil
}

type machineTokenSource struct{ m *machineFlow }

func (s machineTokenSource) Token() (*oauth2.Token, error) {
	s.m.mu.Lock()
	defer s.m.mu.Unlock()
	if s.m.tok == nil || !s.m.tok.Valid() {
		return nil, &oauth2.RetrieveError{ErrorCode: "invalid_grant", ErrorDescription: "the access token expired"}
	}
	return s.m.tok, nil
}

// Authorize runs the grant after a 401 or 403.
func (m *machineFlow) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	drain(resp)
	prm, err := m.protectedResource(ctx, challenges)
	if err != nil {
		return fmt.Errorf("%w: %w", mcpcore.ErrAuthorization, err)
	}
	asm, err := authServerMetadata(ctx, prm.AuthorizationServers[0], m.hc)
	if err != nil {
		return fmt.Errorf("%w: authorization server metadata: %w", mcpcore.ErrAuthorization, err)
	}
	if asm == nil || asm.TokenEndpoint == "" {
		return fmt.Errorf("%w: the authorization server %s publishes no metadata with a token endpoint", mcpcore.ErrAuthorization, prm.AuthorizationServers[0])
	}
	if m.cfg.Issuer != "" && strings.TrimSuffix(m.cfg.Issuer, "/") != strings.TrimSuffix(asm.Issuer, "/") {
		return fmt.Errorf("%w: the authorization server %s is not the configured issuer %s", mcpcore.ErrAuthorization, asm.Issuer, m.cfg.Issuer)
	}
	scopes := challengedScopesAny(challenges)
	if len(scopes) == 0 {
		scopes = prm.ScopesSupported
	}
	if len(scopes) == 0 {
		scopes = m.cfg.Scopes
	}
	m.mu.Lock()
	scopes = unionScopes(m.granted, scopes) // step-up keeps what was granted
	m.mu.Unlock()

	resource := prm.Resource
	if resource == "" {
		resource = m.resource
	}
	form := url.Values{}
	switch m.cfg.Grant {
	case GrantClientCredentials:
		form.Set("grant_type", "client_credentials")
	case GrantJWTBearer:
		assertion, err := m.cfg.Assertion.read()
		if err != nil {
			return fmt.Errorf("%w: the jwt_bearer assertion (%s): %w", mcpcore.ErrAuthorization, m.cfg.Assertion.where(), err)
		}
		form.Set("grant_type", grantTypeJWTBearer)
		form.Set("assertion", assertion)
	case GrantEnterpriseManaged:
		jag, err := m.exchangeAtIdP(ctx, asm.Issuer, resource, scopes)
		if err != nil {
			return fmt.Errorf("%w: %w", mcpcore.ErrAuthorization, err)
		}
		form.Set("grant_type", grantTypeJWTBearer)
		form.Set("assertion", jag)
	default:
		return fmt.Errorf("%w: grant %q is not a machine grant", mcpcore.ErrAuthorization, m.cfg.Grant)
	}
	form.Set("resource", resource)
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	tok, err := m.tokenRequest(ctx, asm, form)
	if err != nil {
		return fmt.Errorf("%w: %s grant: %w", mcpcore.ErrAuthorization, m.cfg.Grant, err)
	}
	if s, _ := tok.Extra("scope").(string); s != "" {
		scopes = strings.Fields(s)
	}
	m.mu.Lock()
	m.tok, m.granted = tok, scopes
	m.mu.Unlock()
	if m.logger != nil {
		expires := "never"
		if !tok.Expiry.IsZero() {
			expires = time.Until(tok.Expiry).Round(time.Second).String()
		}
		m.logger.Info("upstream token obtained", "grant", string(m.cfg.Grant), "tokenType", tok.Type(),
			"scopes", strings.Join(scopes, " "), "expiresIn", expires)
	}
	return nil
}

// protectedResource finds the server's protected-resource metadata: the challenge's resource_metadata
// URL, then the well-known URL at the endpoint's path, then at the root (MCP 2025-11-25 authorization,
// "Protected Resource Metadata Discovery Requirements"). The SDK checks that its resource is the server.
func (m *machineFlow) protectedResource(ctx context.Context, challenges []oauthex.Challenge) (*oauthex.ProtectedResourceMetadata, error) {
	type candidate struct{ url, resource string }
	var cands []candidate
	for _, c := range challenges {
		if u := c.Params["resource_metadata"]; u != "" {
			cands = append(cands, candidate{u, m.resource})
			break
		}
	}
	if ru, err := url.Parse(m.resource); err == nil {
		mu := *ru
		mu.RawQuery, mu.Fragment = "", ""
		mu.Path = "/.well-known/oauth-protected-resource/" + strings.TrimLeft(ru.Path, "/")
		cands = append(cands, candidate{mu.String(), m.resource})
		mu.Path = "/.well-known/oauth-protected-resource"
		root := *ru
		root.Path, root.RawQuery, root.Fragment = "", "", ""
		cands = append(cands, candidate{mu.String(), root.String()})
	}
	var errs []error
	for _, c := range cands {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, c.url, c.resource, m.hc)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if prm == nil {
			continue
		}
		if len(prm.AuthorizationServers) == 0 {
			return nil, errors.New("the protected-resource metadata names no authorization server")
		}
		return prm, nil
	}
	return nil, fmt.Errorf("no protected-resource metadata found: %w", errors.Join(errs...))
}

// authServerMetadata fetches an authorization server's metadata (RFC 8414, then OpenID Connect
// discovery; with path insertion for issuers with a path, as the MCP spec lists them) and checks its
// issuer. Unlike the SDK's discovery for the authorization-code flow it does not require PKCE, which the
// machine grants do not use. nil, nil when no location has any.
func authServerMetadata(ctx context.Context, issuer string, hc *http.Client) (*oauthex.AuthServerMeta, error) {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("issuer %q is not a URL", issuer)
	}
	var locations []string
	at := func(wellKnown string, insert bool) {
		l := *u
		l.RawQuery, l.Fragment = "", ""
		p := strings.TrimSuffix(u.Path, "/")
		if insert {
			l.Path = wellKnown + p
		} else {
			l.Path = p + wellKnown
		}
		locations = append(locations, l.String())
	}
	at("/.well-known/oauth-authorization-server", true)
	at("/.well-known/openid-configuration", true)
	if strings.Trim(u.Path, "/") != "" {
		at("/.well-known/openid-configuration", false)
	}
	for _, loc := range locations {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, loc, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", loc, redactURLError(err))
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenResponse))
		resp.Body.Close()
		if resp.StatusCode/100 == 4 {
			continue
		}
		if err != nil || resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("%s: %s", loc, resp.Status)
		}
		var meta oauthex.AuthServerMeta
		if err := json.Unmarshal(body, &meta); err != nil {
			return nil, fmt.Errorf("%s: not JSON metadata", loc)
		}
		if strings.TrimSuffix(meta.Issuer, "/") != strings.TrimSuffix(issuer, "/") {
			return nil, fmt.Errorf("%s: metadata issuer %q is not %q", loc, meta.Issuer, issuer)
		}
		if meta.TokenEndpoint != "" {
			tu, err := url.Parse(meta.TokenEndpoint)
			if err != nil || (tu.Scheme != "https" && tu.Scheme != "http") || tu.Host == "" {
				return nil, fmt.Errorf("%s: token_endpoint %q is not an http(s) URL", loc, meta.TokenEndpoint)
			}
		}
		return &meta, nil
	}
	return nil, nil
}

// exchangeAtIdP exchanges the enterprise identity assertion for an ID-JAG for the MCP server's
// authorization server (audience) and the server (resource) (RFC 8693; SEP-990 §4).
func (m *machineFlow) exchangeAtIdP(ctx context.Context, audience, resource string, scopes []string) (string, error) {
	idp := m.cfg.IdP
	if idp == nil {
		return "", errors.New("enterprise_managed needs an IdP")
	}
	subject, err := idp.SubjectToken.read()
	if err != nil {
		return "", fmt.Errorf("the identity assertion (%s): %w", idp.SubjectToken.where(), err)
	}
	endpoint := idp.TokenEndpoint
	if endpoint == "" {
		meta, err := authServerMetadata(ctx, idp.Issuer, m.hc)
		if err != nil {
			return "", fmt.Errorf("IdP metadata: %w", err)
		}
		if meta == nil || meta.TokenEndpoint == "" {
			return "", fmt.Errorf("the IdP %s publishes no token endpoint", idp.Issuer)
		}
		endpoint = meta.TokenEndpoint
	}
	typ := idp.SubjectTokenType
	if typ == "" {
		typ = tokenTypeIDToken
	}
	form := url.Values{
		"grant_type":           {grantTypeTokenExchange},
		"requested_token_type": {tokenTypeIDJAG},
		"audience":             {audience},
		"resource":             {resource},
		"subject_token":        {subject},
		"subject_token_type":   {typ},
	}
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	var basic *[2]string
	if idp.ClientSecret != nil {
		secret, err := idp.ClientSecret.read()
		if err != nil {
			return "", fmt.Errorf("the IdP client secret (%s): %w", idp.ClientSecret.where(), err)
		}
		basic = &[2]string{idp.ClientID, secret}
	} else if idp.ClientID != "" {
		form.Set("client_id", idp.ClientID)
	}
	tok, err := postToken(ctx, m.hc, endpoint, form, basic)
	if err != nil {
		return "", fmt.Errorf("token exchange at the IdP: %w", err)
	}
	if it, _ := tok.Extra("issued_token_type").(string); it != tokenTypeIDJAG {
		return "", fmt.Errorf("token exchange at the IdP: issued_token_type %q, want %s", it, tokenTypeIDJAG)
	}
	return tok.AccessToken, nil
}

// tokenRequest authenticates the client as configured and posts form to the token endpoint.
func (m *machineFlow) tokenRequest(ctx context.Context, asm *oauthex.AuthServerMeta, form url.Values) (*oauth2.Token, error) {
	cfg := m.cfg
	var basic *[2]string
	switch {
	case cfg.ClientKey != nil:
		pem, err := cfg.ClientKey.read()
		if err != nil {
			return nil, fmt.Errorf("the client key (%s): %w", cfg.ClientKey.where(), err)
		}
		key, err := ParsePrivateKey([]byte(pem))
		if err != nil {
			return nil, fmt.Errorf("the client key (%s): %w", cfg.ClientKey.where(), err)
		}
		alg, err := signingAlg(key, cfg.ClientKeyAlg)
		if err != nil {
			return nil, fmt.Errorf("the client key (%s): %w", cfg.ClientKey.where(), err)
		}
		if algs := asm.TokenEndpointAuthSigningAlgValuesSupported; len(algs) > 0 && !slices.Contains(algs, string(alg)) {
			return nil, fmt.Errorf("the authorization server accepts client assertions signed with %s, not %s", strings.Join(algs, ", "), alg)
		}
		assertion, err := clientAssertion(key, alg, cfg.ClientID, asm.Issuer, time.Now())
		if err != nil {
			return nil, err
		}
		form.Set("client_id", cfg.ClientID)
		form.Set("client_assertion_type", clientAssertionTypeJWT)
		form.Set("client_assertion", assertion)
	case cfg.ClientSecret != "":
		if secretPost(asm.TokenEndpointAuthMethodsSupported) {
			form.Set("client_id", cfg.ClientID)
			form.Set("client_secret", cfg.ClientSecret)
		} else {
			basic = &[2]string{cfg.ClientID, cfg.ClientSecret}
		}
	case cfg.ClientID != "":
		form.Set("client_id", cfg.ClientID) // a public client (token_endpoint_auth_method none)
	}
	return postToken(ctx, m.hc, asm.TokenEndpoint, form, basic)
}

// secretPost reports whether to send a client secret in the body: only when the authorization server
// supports client_secret_post and not client_secret_basic (the default of RFC 8414 when it lists none).
func secretPost(supported []string) bool {
	return slices.Contains(supported, "client_secret_post") && !slices.Contains(supported, "client_secret_basic")
}

// maxTokenResponse bounds a token endpoint's answer.
const maxTokenResponse = 1 << 20

// postToken posts a token request (RFC 6749 §3.2) and decodes the answer. basic, if set, is the client id
// and secret for HTTP Basic authentication (form-encoded first, RFC 6749 §2.3.1). An error response
// becomes an *oauth2.RetrieveError with the server's error code; the request's secrets never reach an
// error.
func postToken(ctx context.Context, hc *http.Client, endpoint string, form url.Values, basic *[2]string) (*oauth2.Token, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("token endpoint %q is not a valid URL", endpoint)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if basic != nil {
		req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString(
			[]byte(url.QueryEscape(basic[0])+":"+url.QueryEscape(basic[1]))))
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("token request to %s: %w", endpoint, redactURLError(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenResponse))
	if err != nil {
		return nil, fmt.Errorf("token response from %s: %w", endpoint, err)
	}
	var tr struct {
		AccessToken     string `json:"access_token"`
		TokenType       string `json:"token_type"`
		RefreshToken    string `json:"refresh_token"`
		ExpiresIn       int64  `json:"expires_in"`
		Error           string `json:"error"`
		ErrorDesc       string `json:"error_description"`
		IssuedTokenType string `json:"issued_token_type"`
		Scope           string `json:"scope"`
	}
	jsonErr := json.Unmarshal(body, &tr)
	if resp.StatusCode/100 != 2 {
		re := &oauth2.RetrieveError{Response: &http.Response{StatusCode: resp.StatusCode, Status: resp.Status}}
		if jsonErr == nil {
			re.ErrorCode, re.ErrorDescription = tr.Error, tr.ErrorDesc
		}
		if re.ErrorCode == "" {
			re.ErrorCode = "http " + resp.Status
		}
		return nil, re
	}
	if jsonErr != nil {
		return nil, fmt.Errorf("token response from %s is not JSON", endpoint)
	}
	if tr.AccessToken == "" {
		return nil, fmt.Errorf("token response from %s has no access_token", endpoint)
	}
	tok := &oauth2.Token{AccessToken: tr.AccessToken, TokenType: tr.TokenType, RefreshToken: tr.RefreshToken}
	if tr.ExpiresIn > 0 {
		tok.Expiry = time.Now().Add(time.Duration(tr.ExpiresIn) * time.Second)
	}
	extra := map[string]any{}
	if tr.IssuedTokenType != "" {
		extra["issued_token_type"] = tr.IssuedTokenType
	}
	if tr.Scope != "" {
		extra["scope"] = tr.Scope
	}
	return tok.WithExtra(extra), nil
}

// redactURLError drops the URL and method of an *url.Error, which the caller's message already names.
func redactURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// challengedScopesAny returns the scope of a Bearer or DPoP challenge.
func challengedScopesAny(cs []oauthex.Challenge) []string {
	for _, c := range cs {
		if (strings.EqualFold(c.Scheme, "bearer") || strings.EqualFold(c.Scheme, "dpop")) && c.Params["scope"] != "" {
			return strings.Fields(c.Params["scope"])
		}
	}
	return nil
}

// unionScopes is a followed by the scopes of b it lacks.
func unionScopes(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// machineConfigCheck checks what a machine grant needs, and parses the configured client key once so
// that a bad key is reported when the flow is made rather than at the first 401 (it is read again at
// every grant).
func machineConfigCheck(cfg *Config) error {
	if cfg.ClientKey != nil && cfg.ClientSecret != "" {
		return errors.New("a client key and a client secret: configure one")
	}
	switch cfg.Grant {
	case GrantClientCredentials:
		if cfg.ClientID == "" {
			return errors.New("the client_credentials grant needs a client id")
		}
	case GrantJWTBearer:
		if cfg.Assertion == nil {
			return errors.New("the jwt_bearer grant needs an assertion")
		}
	case GrantEnterpriseManaged:
		if cfg.IdP == nil || cfg.IdP.SubjectToken == nil || (cfg.IdP.TokenEndpoint == "" && cfg.IdP.Issuer == "") {
			return errors.New("the enterprise_managed grant needs an IdP with a token endpoint or issuer and a subject token")
		}
		if cfg.ClientID == "" {
			return errors.New("the enterprise_managed grant needs the client id registered with the authorization server")
		}
	}
	if cfg.ClientKey == nil {
		return nil
	}
	if cfg.ClientID == "" {
		return errors.New("a client key needs a client id")
	}
	pem, err := cfg.ClientKey.read()
	if err != nil {
		return fmt.Errorf("the client key (%s): %w", cfg.ClientKey.where(), err)
	}
	key, err := ParsePrivateKey([]byte(pem))
	if err != nil {
		return fmt.Errorf("the client key (%s): %w", cfg.ClientKey.where(), err)
	}
	if _, err := signingAlg(key, cfg.ClientKeyAlg); err != nil {
		return fmt.Errorf("the client key (%s): %w", cfg.ClientKey.where(), err)
	}
	return nil
}
