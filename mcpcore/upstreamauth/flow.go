// Package upstreamauth is the bridge's upstream authorization: the MCP authorization flow (spec 2025-11-25 and
// 2026-07-28, basic/authorization) on top of the SDK's OAuth client (package auth), which does discovery
// from WWW-Authenticate and protected-resource metadata (RFC 9728), authorization-server metadata (RFC
// 8414 / OIDC discovery, issuer checked), client ID metadata documents, pre-registered clients, dynamic
// registration (RFC 7591), PKCE S256, the resource indicator (RFC 8707), RFC 9207 iss checks, refresh and
// scope step-up with scope accumulation.
//
// What the bridge adds:
//
//   - the browser step reaches a host: the authorization URL becomes a pending request of
//     mcpcore.KindAuthorization in the session that needs it (this package builds the question, mcpcore
//     asks it), and the host answers with the redirect URL its user landed on (or code, state and iss);
//     the exchange and the original request then go on;
//   - tokens are kept per server (name and URL) and per owner in a TokenStore, shared by that owner's
//     sessions to that server, in memory or in an AES-GCM encrypted file (store.go);
//   - one authorization at a time per server and owner; a session that gets a 401 after another session
//     of the same owner has just authorized retries with the new token instead of asking again;
//   - URL safety on every discovered URL (http.go): https (http only for loopback, or when allowed),
//     no connections to link-local or cloud metadata addresses unless allowed.
//
// A token is only ever sent to the server it was issued for: the SDK attaches it to requests to the
// session's endpoint only, the store is keyed by that endpoint, the protected-resource metadata's resource
// must match the endpoint, and the resource indicator binds the token to it at the authorization server.
//
// Imports go one way: this package uses mcpcore's types (the question, the answer, ErrAuthorization) and
// implements its seam, mcpcore.Authorizer; mcpcore never imports it, so the OAuth and JOSE libraries stay
// out of the core.
package upstreamauth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/auth/extauth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// Grant is the OAuth grant a server's sessions use.
type Grant string

// Grants.
const (
	// GrantAuthorizationCode is the authorization-code flow with PKCE, which needs a person (the default).
	GrantAuthorizationCode Grant = "authorization_code"
	// GrantClientCredentials is the client-credentials grant of the MCP OAuth client credentials extension
	// (io.modelcontextprotocol/oauth-client-credentials): machine to machine, with a pre-registered client
	// id and secret; no person is asked.
	GrantClientCredentials Grant = "client_credentials"
	// GrantJWTBearer is the JWT bearer grant (RFC 7523) with an assertion the platform issues — workload
	// identity federation (SEP-1933): Config.Assertion, e.g. a Kubernetes service account token file.
	GrantJWTBearer Grant = "jwt_bearer"
	// GrantEnterpriseManaged is Enterprise-Managed Authorization (SEP-990, extension
	// io.modelcontextprotocol/enterprise-managed-authorization): Config.IdP exchanges the enterprise
	// identity assertion for an ID-JAG (RFC 8693), presented with the JWT bearer grant.
	GrantEnterpriseManaged Grant = "enterprise_managed"
)

// DefaultRedirectURL is the redirect URL registered and sent when a server's Config names none. Nobody
// listens on it: the host catches the redirect (or its user copies the URL from the browser) and answers the
// authorization request with it.
const DefaultRedirectURL = "http://127.0.0.1/mcp-bridge/oauth/callback"

// Config is a server's OAuth client configuration. The client is registered with the authorization
// server by the first of these that applies: the client ID metadata document (when the authorization
// server supports it), the pre-registered client id, dynamic client registration (when the authorization
// server offers it and DisableDynamicRegistration is not set).
type Config struct {
	// Grant is the grant to use; empty means GrantAuthorizationCode.
	Grant Grant
	// ClientID and ClientSecret are a pre-registered client. ClientSecret is a secret: never logged.
	// GrantClientCredentials requires the id and a secret or a ClientKey.
	ClientID     string
	ClientSecret string
	// Issuer, if set, binds the pre-registered client to that authorization server: a server that
	// points elsewhere fails authorization instead of receiving the credentials (SEP-2352).
	Issuer string
	// ClientMetadataURL is the bridge's client ID metadata document (an https URL with a path), used as
	// the client_id where the authorization server supports client ID metadata documents.
	ClientMetadataURL string
	// RedirectURL is where the authorization server sends the user's browser; empty means
	// DefaultRedirectURL.
	RedirectURL string
	// Scopes are requested when neither the server's challenge nor its protected-resource metadata names
	// any (the server's own list is authoritative when it gives one).
	Scopes []string
	// DisableDynamicRegistration stops the bridge from registering itself with authorization servers.
	DisableDynamicRegistration bool
	// ClientName is the client_name sent in dynamic registration; empty means "mcp-bridge".
	ClientName string

	// ClientKey, if set, authenticates the client at the token endpoint with a signed JWT
	// (private_key_jwt, RFC 7523 §2.2) instead of a secret: a PEM (PKCS #8, SEC 1, PKCS #1) or JWK private
	// key, read again at every token request. Machine grants only (client_credentials, jwt_bearer,
	// enterprise_managed). ClientKeyAlg is the JWS algorithm; empty means the key's own (ES256 for P-256,
	// RS256 for RSA, EdDSA for Ed25519).
	ClientKey    *SecretSource
	ClientKeyAlg string
	// Assertion is the JWT presented by GrantJWTBearer, read again at every grant.
	Assertion *SecretSource
	// IdP is the enterprise identity provider of GrantEnterpriseManaged.
	IdP *IdPConfig
	// DPoP sender-constrains the tokens (RFC 9449): proofs on token requests and on every request to the
	// server with a DPoP-bound token, server nonces honoured.
	DPoP bool
}

// machine reports whether the grant asks no person and runs in machineFlow.
func (c *Config) machine() bool {
	switch c.Grant {
	case GrantJWTBearer, GrantEnterpriseManaged:
		return true
	case GrantClientCredentials:
		return c.ClientKey != nil
	}
	return false
}

func (c *Config) redirectURL() string {
	if c.RedirectURL != "" {
		return c.RedirectURL
	}
	return DefaultRedirectURL
}

// Options configure the upstream OAuth client the bridge's servers share. The zero value keeps tokens in
// memory.
type Options struct {
	// Store keeps tokens per server and owner; nil means a new in-memory store.
	Store *TokenStore
	// AllowLinkLocal allows discovery, registration and token requests to link-local addresses
	// (169.254.0.0/16, fe80::/10) and cloud metadata addresses, which are refused by default (SSRF).
	AllowLinkLocal bool
	// AllowInsecureHTTP allows http:// authorization-server and metadata URLs on hosts other than
	// loopback (loopback http is always allowed, for development).
	AllowInsecureHTTP bool
	// Transport, if set, is the base RoundTripper of the OAuth client's requests (tests); nil means the
	// transport of the connection being authorized (mcpcore.AuthConnection.Base). The address checks
	// apply either way.
	Transport http.RoundTripper
}

// Client is the bridge's upstream OAuth client: the options and the token store its servers share. Its
// methods may be called concurrently.
type Client struct {
	opts Options
}

// NewClient returns a client with opts; a nil Store becomes a new in-memory store.
func NewClient(opts Options) *Client {
	if opts.Store == nil {
		opts.Store = NewTokenStore()
	}
	return &Client{opts: opts}
}

// Options returns the client's options, with its token store.
func (c *Client) Options() Options { return c.opts }

// Server returns the authorizer of a server configured with cfg, for mcpcore.ServerConfig.OAuth.
func (c *Client) Server(cfg *Config) mcpcore.Authorizer {
	return &serverAuth{client: c, cfg: cfg}
}

// serverAuth is the mcpcore.Authorizer of one configured server.
type serverAuth struct {
	client *Client
	cfg    *Config
}

var _ mcpcore.Authorizer = (*serverAuth)(nil)

// Secrets returns the configuration's client secret, which the session's logs redact.
func (a *serverAuth) Secrets() []string { return []string{a.cfg.ClientSecret} }

// authorizationResult turns a validated answer into what the SDK's flow expects. The iss value is passed
// on exactly as form-decoded from the redirect: RFC 9207 wants a simple string comparison, no
// normalization.
func authorizationResult(a *mcpcore.AuthorizationAnswer) (*auth.AuthorizationResult, error) {
	if a.RedirectURL == "" {
		return &auth.AuthorizationResult{Code: a.Code, State: a.State, Iss: a.Iss}, nil
	}
	u, err := url.Parse(a.RedirectURL)
	if err != nil {
		return nil, fmt.Errorf("%w: the redirect URL does not parse", mcpcore.ErrAuthorization)
	}
	q := u.Query()
	if e := q.Get("error"); e != "" {
		// RFC 9207 §2.4: before the issuer is checked, error details must not be acted on or shown;
		// the code alone is safe to report.
		return nil, fmt.Errorf("%w: the authorization server returned %s", mcpcore.ErrAuthorization, oauthErrorCode(e))
	}
	return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}

// oauthErrorCode returns e if it is one of the error codes of RFC 6749 §4.1.2.1, else "an error".
func oauthErrorCode(e string) string {
	switch e {
	case "access_denied", "invalid_request", "unauthorized_client", "unsupported_response_type",
		"invalid_scope", "server_error", "temporarily_unavailable":
		return e
	}
	return "an error"
}

// --- the handler the session's transport uses ---

// promptKey is the context key under which sessionAuth hands the SDK's shared flow the function that asks
// a person for this session.
type promptKey struct{}

type promptFunc func(ctx context.Context, authURL string) (*auth.AuthorizationResult, error)

// oauthFlow is the authorization state of one server for one owner, shared by the owner's sessions to it:
// the SDK's handler (with its granted scopes) and the token source. It lives in the TokenStore.
type oauthFlow struct {
	key   grantKey
	sdk   auth.OAuthHandler
	sem   chan struct{} // one authorization at a time
	store *TokenStore

	dpop *dpopState // nil unless the server's tokens are DPoP-bound

	mu         sync.Mutex // guards lastScopes
	lastScopes []string   // scopes of the last authorization that completed
}

// sessionAuth is the auth.OAuthHandler of one session's transport (one connection attempt).
type sessionAuth struct {
	flow   *oauthFlow
	prompt promptFunc

	// connecting reports whether the connection is still being made (refused only holds then: a step-up
	// the person declines on a live connection does not stop later ones).
	connecting func() bool

	mu      sync.Mutex // guards refused
	refused error      // the authorization failed while connecting: not asked again on this connection
}

var _ auth.OAuthHandler = (*sessionAuth)(nil)

// TokenSource returns the shared token source of the session's server and owner (nil before the first
// authorization).
func (a *sessionAuth) TokenSource(ctx context.Context) (oauth2.TokenSource, error) {
	return a.flow.sdk.TokenSource(ctx)
}

// Authorize runs the authorization flow after a 401 or 403 (step-up). It waits for any other session's
// authorization of the same server and owner first, and retries with that one's token when it is newer
// than the token the failed request carried.
func (a *sessionAuth) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	a.mu.Lock()
	refused := a.refused
	a.mu.Unlock()
	if refused != nil && a.connecting() {
		// The person declined, or the flow failed, for this connection already: the SDK's next request
		// (the initialize fallback after server/discover, the standalone stream) must not ask again,
		// and the host must hear the first reason, not a later timeout.
		drain(resp)
		return refused
	}
	f := a.flow
	select {
	case f.sem <- struct{}{}:
	case <-ctx.Done():
		drain(resp)
		return ctx.Err()
	}
	defer func() { <-f.sem }()

	sent := strings.TrimPrefix(req.Header.Get("Authorization"), "Bearer ")
	if cur := f.currentToken(ctx); cur != "" && cur != sent {
		drain(resp)
		return nil // another session refreshed or re-authorized meanwhile: retry with its token
	}
	if resp.StatusCode == http.StatusForbidden && sent != "" {
		challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
		if want := challengedScopes(challenges); len(want) > 0 && f.granted(want) {
			// The token already carries every scope the server asks for; authorizing again would loop
			// (the spec asks clients to bound step-up attempts).
			drain(resp)
			return fmt.Errorf("%w: the server refuses a token granted the scopes it asks for (%s)", mcpcore.ErrAuthorization, strings.Join(want, " "))
		}
	}
	err := f.sdk.Authorize(context.WithValue(ctx, promptKey{}, a.prompt), req, resp)
	if err != nil && !errors.Is(err, mcpcore.ErrAuthorization) && ctx.Err() == nil {
		err = fmt.Errorf("%w: %w", mcpcore.ErrAuthorization, err)
	}
	if err != nil && ctx.Err() == nil {
		a.mu.Lock()
		a.refused = err
		a.mu.Unlock()
	}
	return err
}

// currentToken is the access token the flow would send now, or "".
func (f *oauthFlow) currentToken(ctx context.Context) string {
	ts, err := f.sdk.TokenSource(ctx)
	if err != nil || ts == nil {
		return ""
	}
	tok, err := ts.Token()
	if err != nil || tok == nil {
		return ""
	}
	return tok.AccessToken
}

func (f *oauthFlow) granted(want []string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range want {
		if !slices.Contains(f.lastScopes, s) {
			return false
		}
	}
	return true
}

func (f *oauthFlow) setGranted(scopes []string) {
	f.mu.Lock()
	f.lastScopes = scopes
	f.mu.Unlock()
}

func challengedScopes(cs []oauthex.Challenge) []string {
	for _, c := range cs {
		if strings.EqualFold(c.Scheme, "bearer") && c.Params["scope"] != "" {
			return strings.Fields(c.Params["scope"])
		}
	}
	return nil
}

// drain discards and closes a response body (Authorize owns it).
func drain(resp *http.Response) {
	if resp != nil && resp.Body != nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
	}
}

// fetchCode is the SDK's AuthorizationCodeFetcher of every shared flow: it asks through the session whose
// request needs the authorization.
func fetchCode(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	prompt, _ := ctx.Value(promptKey{}).(promptFunc)
	if prompt == nil {
		return nil, fmt.Errorf("%w: no session to ask", mcpcore.ErrAuthorization)
	}
	return prompt(ctx, args.URL)
}

// newOAuthFlow builds the SDK handler for cfg. resource is the server's endpoint URL.
func newOAuthFlow(key grantKey, cfg *Config, store *TokenStore, hc *http.Client) (*oauthFlow, error) {
	f := &oauthFlow{key: key, sem: make(chan struct{}, 1), store: store}
	if cfg.DPoP {
		d, err := newDPoPState()
		if err != nil {
			return nil, err
		}
		f.dpop = d
		withDPoP := *hc
		withDPoP.Transport = &dpopTokenTransport{base: hc.Transport, dpop: d}
		hc = &withDPoP
	}
	if cfg.machine() {
		if err := machineConfigCheck(cfg); err != nil {
			return nil, fmt.Errorf("%w: %w", mcpcore.ErrAuthorization, err)
		}
		f.sdk = &machineFlow{cfg: cfg, resource: key.Resource, hc: hc}
		return f, nil
	}
	if cfg.Grant == GrantClientCredentials {
		if cfg.ClientID == "" || cfg.ClientSecret == "" {
			return nil, fmt.Errorf("%w: the client_credentials grant needs a client id and secret", mcpcore.ErrAuthorization)
		}
		// The SDK's client-credentials handler sends no resource indicator; the bridge adds it (RFC 8707,
		// required by the MCP authorization spec in every token request) so the token is bound to this server.
		withResource := *hc
		withResource.Transport = &resourceIndicator{base: hc.Transport, resource: key.Resource}
		h, err := extauth.NewClientCredentialsHandler(&extauth.ClientCredentialsHandlerConfig{
			Credentials: &oauthex.ClientCredentials{
				ClientID:         cfg.ClientID,
				ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: cfg.ClientSecret},
				Issuer:           cfg.Issuer,
			},
			HTTPClient: &withResource,
		})
		if err != nil {
			return nil, fmt.Errorf("%w: %w", mcpcore.ErrAuthorization, err)
		}
		f.sdk = h
		return f, nil
	}
	redirect := cfg.redirectURL()
	hcfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              redirect,
		AuthorizationCodeFetcher: fetchCode,
		RequestRefreshToken:      true,
		Client:                   hc,
		NewTokenSource: func(ctx context.Context, oc *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
			return store.put(key, oc, tok, ctx), nil
		},
	}
	if f.dpop == nil { // a DPoP-bound grant is bound to a key of an earlier flow, gone: not restored
		if ts := store.restore(key, hc); ts != nil {
			hcfg.InitialTokenSource = ts
		}
	}
	if cfg.ClientMetadataURL != "" {
		hcfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: cfg.ClientMetadataURL}
	}
	if cfg.ClientID != "" {
		pre := &oauthex.ClientCredentials{ClientID: cfg.ClientID, Issuer: cfg.Issuer}
		if cfg.ClientSecret != "" {
			pre.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: cfg.ClientSecret}
		}
		hcfg.PreregisteredClient = pre
	}
	if !cfg.DisableDynamicRegistration {
		name := cfg.ClientName
		if name == "" {
			name = "mcp-bridge"
		}
		hcfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{
				RedirectURIs:  []string{redirect},
				ClientName:    name,
				GrantTypes:    []string{"authorization_code", "refresh_token"},
				ResponseTypes: []string{"code"},
			},
		}
	}
	if len(cfg.Scopes) > 0 {
		fallback := slices.Clone(cfg.Scopes)
		hcfg.ScopeFilter = func(discovered []string) []string {
			if len(discovered) == 0 {
				return slices.Clone(fallback)
			}
			return discovered
		}
	}
	h, err := auth.NewAuthorizationCodeHandler(hcfg)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", mcpcore.ErrAuthorization, err)
	}
	f.sdk = h
	return f, nil
}

// --- the connection's side ---

// Connect returns the OAuth handler of a new Streamable HTTP connection of a session, and the connection's
// transport wrapped with what the server's flow needs on the wire: DPoP proofs for DPoP-bound tokens (the
// transport itself for other servers).
func (a *serverAuth) Connect(conn mcpcore.AuthConnection) (auth.OAuthHandler, http.RoundTripper, error) {
	opts := a.client.opts
	store := opts.Store
	key := grantKey{Server: conn.Server, Resource: conn.URL, Owner: conn.Owner}
	f, err := store.flow(key, func() (*oauthFlow, error) {
		base := opts.Transport
		if base == nil {
			base = conn.Base
		}
		f, err := newOAuthFlow(key, a.cfg, store, newOAuthHTTPClient(base, opts))
		if m, ok := f.machineFlow(); ok && conn.Logger != nil {
			m.logger = conn.Logger.With("server", conn.Server, "owner", conn.Owner)
		}
		return f, err
	})
	if err != nil {
		return nil, nil, err
	}
	rt := conn.Base
	if f.dpop != nil {
		rt = &dpopResourceTransport{base: rt, dpop: f.dpop}
	}
	h := &sessionAuth{flow: f, connecting: conn.Connecting, prompt: func(ctx context.Context, authURL string) (*auth.AuthorizationResult, error) {
		return a.ask(ctx, conn, f, authURL)
	}}
	return h, rt, nil
}

// ask checks authURL and asks the session's host to open it (conn.Ask: a pending request of
// mcpcore.KindAuthorization), then turns the host's answer into what the SDK's flow expects.
func (a *serverAuth) ask(ctx context.Context, conn mcpcore.AuthConnection, f *oauthFlow, authURL string) (*auth.AuthorizationResult, error) {
	u, err := url.Parse(authURL)
	if err != nil {
		return nil, fmt.Errorf("%w: the authorization URL does not parse", mcpcore.ErrAuthorization)
	}
	if err := checkOAuthURL(u, a.client.opts.AllowInsecureHTTP); err != nil {
		return nil, fmt.Errorf("%w: authorization URL: %w", mcpcore.ErrAuthorization, err)
	}
	ar := &mcpcore.AuthorizationRequest{
		AuthorizationURL: authURL,
		RedirectURL:      a.cfg.redirectURL(),
		ServerName:       conn.Server,
		Scopes:           strings.Fields(u.Query().Get("scope")),
	}
	answer, err := conn.Ask(ctx, ar)
	if err != nil {
		return nil, err
	}
	res, err := authorizationResult(answer)
	if err == nil {
		f.setGranted(ar.Scopes)
	}
	return res, err
}

// resourceIndicator adds resource=<the MCP server> to client_credentials token requests that lack one.
type resourceIndicator struct {
	base     http.RoundTripper
	resource string
}

func (t *resourceIndicator) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost || req.Body == nil ||
		!strings.HasPrefix(req.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		return t.base.RoundTrip(req)
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	_ = req.Body.Close()
	if err != nil {
		return nil, err
	}
	if form, err := url.ParseQuery(string(body)); err == nil && form.Get("grant_type") == "client_credentials" && !form.Has("resource") {
		form.Set("resource", t.resource)
		body = []byte(form.Encode())
	}
	req = req.Clone(req.Context())
	req.Body = io.NopCloser(strings.NewReader(string(body)))
	req.ContentLength = int64(len(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(string(body))), nil }
	return t.base.RoundTrip(req)
}
