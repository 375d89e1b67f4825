// Package testauth is an OAuth 2.1 authorization server and an MCP resource-server guard for tests of
// mcp-bridge's upstream authorization. It implements what the MCP authorization spec asks of the other
// side, strictly: authorization-server metadata (RFC 8414) with the issuer and PKCE methods, dynamic
// client registration (RFC 7591), the authorization endpoint with PKCE S256 required, the resource
// indicator (RFC 8707) required and bound to codes and tokens, RFC 9207 iss in the redirect, the token
// endpoint (authorization_code, refresh_token with rotation, client_credentials), and for the MCP server:
// protected-resource metadata (RFC 9728), 401 with WWW-Authenticate, and 403 insufficient_scope for
// tools that need more scopes.
//
// The authorization endpoint approves at once and redirects (302) with code, state and iss, like the
// conformance suite's mock; a test's "person" fetches the authorization URL without following redirects.
// Every server listens on loopback (httptest).
package testauth

import (
	"crypto"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"
)

// Options configure a Server. The zero value is a server that supports dynamic registration and issues
// one-hour tokens.
type Options struct {
	// ScopesSupported is advertised in the metadata (and by Guard in protected-resource metadata).
	ScopesSupported []string
	// TokenTTL is the access tokens' lifetime (default 1h).
	TokenTTL time.Duration
	// NoRefreshTokens stops the server from issuing refresh tokens.
	NoRefreshTokens bool
	// NoRegistration hides the registration endpoint (pre-registered clients only).
	NoRegistration bool
	// Clients are pre-registered clients: id → secret ("" for a public client).
	Clients map[string]string
	// Deny makes the authorization endpoint redirect with error=access_denied.
	Deny bool

	// ClientKeys are clients that authenticate with private_key_jwt: id → public key (enterprise.go).
	ClientKeys map[string]crypto.PublicKey
	// TrustedIssuers sign the assertions of the JWT bearer grant and the ID tokens of token exchange:
	// iss → public key.
	TrustedIssuers map[string]crypto.PublicKey
	// JAGClientID is the client_id claim of the ID-JAGs the server issues by token exchange.
	JAGClientID string
	// DPoP binds tokens to the key of the token request's DPoP proof and makes guards check proofs;
	// DPoPNonce, if set, is the nonce both demand.
	DPoP      bool
	DPoPNonce string
}

// Server is a running authorization server. Its methods are safe for concurrent use.
type Server struct {
	// Issuer is the server's issuer and base URL (http://127.0.0.1:port).
	Issuer string

	opts Options
	srv  *httptest.Server

	mu      sync.Mutex // guards everything below
	clients map[string]string
	codes   map[string]*grant
	access  map[string]*grant
	refresh map[string]*grant
	log     []Request

	signer       *Issuer         // signs ID-JAGs (token exchange)
	jtis         map[string]bool // client assertion and DPoP proof ids seen (replay)
	dpopAccepted int             // DPoP proofs accepted
}

// grant is what a code or token stands for.
type grant struct {
	clientID  string
	redirect  string
	challenge string
	resource  string
	scopes    []string
	expiry    time.Time
	jkt       string // DPoP key thumbprint the token is bound to ("": a bearer token)
}

// Request is one request the server received, for assertions.
type Request struct {
	Endpoint string     // "metadata", "register", "authorize", "token"
	Form     url.Values // query (authorize) or form (token, register: the JSON body's keys are not here)
	Header   http.Header
}

// New starts a server; Close stops it.
func New(opts Options) *Server {
	if opts.TokenTTL <= 0 {
		opts.TokenTTL = time.Hour
	}
	s := &Server{
		opts:    opts,
		clients: map[string]string{},
		codes:   map[string]*grant{},
		access:  map[string]*grant{},
		refresh: map[string]*grant{},
		jtis:    map[string]bool{},
	}
	for id, secret := range opts.Clients {
		s.clients[id] = secret
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", s.metadata)
	mux.HandleFunc("POST /register", s.register)
	mux.HandleFunc("GET /authorize", s.authorize)
	mux.HandleFunc("POST /token", s.token)
	s.srv = httptest.NewServer(mux)
	s.Issuer = s.srv.URL
	s.signer = NewIssuer(s.Issuer)
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Requests returns the requests the server received to endpoint ("" for all), oldest first.
func (s *Server) Requests(endpoint string) []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Request
	for _, r := range s.log {
		if endpoint == "" || r.Endpoint == endpoint {
			out = append(out, r)
		}
	}
	return out
}

func (s *Server) record(endpoint string, form url.Values, h http.Header) {
	s.mu.Lock()
	s.log = append(s.log, Request{Endpoint: endpoint, Form: form, Header: h.Clone()})
	s.mu.Unlock()
}

// ExpireAccessTokens makes every access token issued so far invalid (refresh tokens stay valid).
func (s *Server) ExpireAccessTokens() {
	s.mu.Lock()
	clear(s.access)
	s.mu.Unlock()
}

// Verify reports the scopes of a valid access token issued for resource.
func (s *Server) Verify(token, resource string) (scopes []string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.access[token]
	if g == nil || time.Now().After(g.expiry) || g.resource != resource {
		return nil, false
	}
	return slices.Clone(g.scopes), true
}

// boundToKey reports whether token is a DPoP-bound access token.
func (s *Server) boundToKey(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.access[token]
	return g != nil && g.jkt != ""
}

func (s *Server) metadata(w http.ResponseWriter, r *http.Request) {
	s.record("metadata", r.URL.Query(), r.Header)
	m := map[string]any{
		"issuer":                   s.Issuer,
		"authorization_endpoint":   s.Issuer + "/authorize",
		"token_endpoint":           s.Issuer + "/token",
		"response_types_supported": []string{"code"},
		"grant_types_supported": []string{"authorization_code", "refresh_token", "client_credentials",
			"urn:ietf:params:oauth:grant-type:jwt-bearer", "urn:ietf:params:oauth:grant-type:token-exchange"},
		"code_challenge_methods_supported":                 []string{"S256"},
		"token_endpoint_auth_methods_supported":            []string{"client_secret_post", "client_secret_basic", "none", "private_key_jwt"},
		"token_endpoint_auth_signing_alg_values_supported": []string{"ES256", "RS256", "EdDSA"},
		"authorization_response_iss_parameter_supported":   true,
	}
	if s.opts.DPoP {
		m["dpop_signing_alg_values_supported"] = []string{"ES256"}
	}
	if !s.opts.NoRegistration {
		m["registration_endpoint"] = s.Issuer + "/register"
	}
	if len(s.opts.ScopesSupported) > 0 {
		m["scopes_supported"] = s.opts.ScopesSupported
	}
	writeJSON(w, http.StatusOK, m)
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var md struct {
		RedirectURIs []string `json:"redirect_uris"`
		AuthMethod   string   `json:"token_endpoint_auth_method"`
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	s.record("register", nil, r.Header)
	if err := json.Unmarshal(body, &md); err != nil || len(md.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	id, secret := "client-"+rand.Text(), rand.Text()
	s.mu.Lock()
	s.clients[id] = secret
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{
		"client_id":                  id,
		"client_secret":              secret,
		"redirect_uris":              md.RedirectURIs,
		"token_endpoint_auth_method": "client_secret_post",
	})
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.record("authorize", q, r.Header)
	redirect, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || q.Get("redirect_uri") == "" {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	_, known := s.clients[q.Get("client_id")]
	s.mu.Unlock()
	fail := func(code string) {
		v := redirect.Query()
		v.Set("error", code)
		v.Set("state", q.Get("state"))
		v.Set("iss", s.Issuer)
		redirect.RawQuery = v.Encode()
		http.Redirect(w, r, redirect.String(), http.StatusFound)
	}
	switch {
	case !known:
		http.Error(w, "unknown client", http.StatusBadRequest)
		return
	case q.Get("response_type") != "code":
		fail("unsupported_response_type")
		return
	case q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "":
		fail("invalid_request") // PKCE S256 is required
		return
	case q.Get("resource") == "":
		fail("invalid_target") // RFC 8707: this server insists on the resource indicator
		return
	case s.opts.Deny:
		fail("access_denied")
		return
	}
	code := rand.Text()
	s.mu.Lock()
	s.codes[code] = &grant{
		clientID:  q.Get("client_id"),
		redirect:  q.Get("redirect_uri"),
		challenge: q.Get("code_challenge"),
		resource:  q.Get("resource"),
		scopes:    strings.Fields(q.Get("scope")),
		expiry:    time.Now().Add(time.Minute),
	}
	s.mu.Unlock()
	v := redirect.Query()
	v.Set("code", code)
	v.Set("state", q.Get("state"))
	v.Set("iss", s.Issuer)
	redirect.RawQuery = v.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		tokenError(w, "invalid_request")
		return
	}
	f := r.PostForm
	s.record("token", f, r.Header)
	clientID, secret, basic := r.BasicAuth()
	if !basic {
		clientID, secret = f.Get("client_id"), f.Get("client_secret")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	assertedID, asserted, err := s.clientAssertionClient(f)
	want, known := s.clients[clientID]
	switch {
	case asserted && err == nil:
		clientID = assertedID
	case asserted || !known || want != secret:
		w.Header().Set("WWW-Authenticate", `Basic realm="testauth"`)
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	jkt := ""
	if gt := f.Get("grant_type"); s.opts.DPoP && gt != "urn:ietf:params:oauth:grant-type:token-exchange" {
		var nonce string
		jkt, nonce, err = s.dpopProof(r.Header.Get("DPoP"), http.MethodPost, s.Issuer+"/token", "")
		if err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_dpop_proof"})
			return
		}
		if s.opts.DPoPNonce != "" && nonce != s.opts.DPoPNonce {
			w.Header().Set("DPoP-Nonce", s.opts.DPoPNonce)
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "use_dpop_nonce"})
			return
		}
		s.dpopAccepted++
	}
	var g *grant
	switch f.Get("grant_type") {
	case "urn:ietf:params:oauth:grant-type:jwt-bearer":
		claims, err := s.jwtBearerGrant(f.Get("assertion"))
		if err != nil {
			tokenError(w, "invalid_grant")
			return
		}
		if cid, _ := claims["client_id"].(string); cid != "" && cid != clientID {
			tokenError(w, "invalid_grant") // an ID-JAG names the client it was issued to
			return
		}
		if res, _ := claims["resource"].(string); res != "" && res != f.Get("resource") {
			tokenError(w, "invalid_target")
			return
		}
		g = &grant{clientID: clientID, resource: f.Get("resource"), scopes: strings.Fields(f.Get("scope"))}
	case "urn:ietf:params:oauth:grant-type:token-exchange":
		s.tokenExchange(w, f, clientID)
		return
	case "authorization_code":
		c := s.codes[f.Get("code")]
		delete(s.codes, f.Get("code")) // single use
		switch {
		case c == nil || time.Now().After(c.expiry) || c.clientID != clientID:
			tokenError(w, "invalid_grant")
			return
		case c.redirect != f.Get("redirect_uri"):
			tokenError(w, "invalid_grant")
			return
		case s256(f.Get("code_verifier")) != c.challenge:
			tokenError(w, "invalid_grant") // PKCE
			return
		case f.Get("resource") != c.resource:
			tokenError(w, "invalid_target")
			return
		}
		g = c
	case "refresh_token":
		old := s.refresh[f.Get("refresh_token")]
		delete(s.refresh, f.Get("refresh_token")) // rotation: single use
		if old == nil || old.clientID != clientID {
			tokenError(w, "invalid_grant")
			return
		}
		g = old
	case "client_credentials":
		g = &grant{clientID: clientID, resource: f.Get("resource"), scopes: strings.Fields(f.Get("scope"))}
	default:
		tokenError(w, "unsupported_grant_type")
		return
	}
	tok := &grant{clientID: g.clientID, resource: g.resource, scopes: g.scopes, expiry: time.Now().Add(s.opts.TokenTTL), jkt: jkt}
	at := "at-" + rand.Text()
	s.access[at] = tok
	typ := "Bearer"
	if jkt != "" {
		typ = "DPoP"
	}
	out := map[string]any{
		"access_token": at,
		"token_type":   typ,
		"expires_in":   int(s.opts.TokenTTL.Seconds()),
	}
	if len(g.scopes) > 0 {
		out["scope"] = strings.Join(g.scopes, " ")
	}
	if !s.opts.NoRefreshTokens && (f.Get("grant_type") == "authorization_code" || f.Get("grant_type") == "refresh_token") {
		rt := "rt-" + rand.Text()
		s.refresh[rt] = tok
		out["refresh_token"] = rt
	}
	writeJSON(w, http.StatusOK, out)
}

func s256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func tokenError(w http.ResponseWriter, code string) {
	writeJSON(w, http.StatusBadRequest, map[string]string{"error": code})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// GuardOptions configure Guard.
type GuardOptions struct {
	// Resource is the MCP endpoint's URL, the resource tokens must be issued for.
	Resource string
	// Scopes are required for every request.
	Scopes []string
	// ToolScopes are required, in addition, to call the named tools: a call without them gets 403
	// insufficient_scope naming the scopes needed.
	ToolScopes map[string][]string
}

// Guard protects an MCP endpoint with tokens of s: it serves the protected-resource metadata at
// /.well-known/oauth-protected-resource/<endpoint path> and answers requests without a valid token
// with 401 and a WWW-Authenticate challenge pointing at it. Requests with a valid token reach next, and
// Tokens records the tokens seen.
type Guard struct {
	s    *Server
	opts GuardOptions
	next http.Handler

	mu   sync.Mutex // guards seen
	seen []string
}

// NewGuard returns a guard for next.
func (s *Server) NewGuard(next http.Handler, opts GuardOptions) *Guard {
	return &Guard{s: s, opts: opts, next: next}
}

// Tokens returns the Authorization header values the guard received, in order ("" for none).
func (g *Guard) Tokens() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.seen)
}

func (g *Guard) metadataURL() string {
	u, _ := url.Parse(g.opts.Resource)
	u.Path = "/.well-known/oauth-protected-resource" + u.Path
	return u.String()
}

// ServeHTTP implements http.Handler.
func (g *Guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource") {
		m := map[string]any{"resource": g.opts.Resource, "authorization_servers": []string{g.s.Issuer}}
		if len(g.s.opts.ScopesSupported) > 0 {
			m["scopes_supported"] = g.s.opts.ScopesSupported
		}
		writeJSON(w, http.StatusOK, m)
		return
	}
	h := r.Header.Get("Authorization")
	g.mu.Lock()
	g.seen = append(g.seen, h)
	g.mu.Unlock()
	challenge := func(status int, errCode string, scopes []string) {
		c := fmt.Sprintf(`Bearer resource_metadata=%q`, g.metadataURL())
		if errCode != "" {
			c += fmt.Sprintf(`, error=%q`, errCode)
		}
		if len(scopes) > 0 {
			c += fmt.Sprintf(`, scope=%q`, strings.Join(scopes, " "))
		}
		w.Header().Set("WWW-Authenticate", c)
		http.Error(w, http.StatusText(status), status)
	}
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if dtok, dpop := strings.CutPrefix(h, "DPoP "); dpop {
		if !g.guardDPoP(w, r, dtok) {
			return
		}
		tok, ok = dtok, true
	} else if ok && g.s.boundToKey(tok) {
		challenge(http.StatusUnauthorized, "invalid_token", g.opts.Scopes) // a DPoP-bound token as Bearer
		return
	}
	if !ok {
		challenge(http.StatusUnauthorized, "", g.opts.Scopes)
		return
	}
	have, valid := g.s.Verify(tok, g.opts.Resource)
	if !valid {
		challenge(http.StatusUnauthorized, "invalid_token", g.opts.Scopes)
		return
	}
	need := slices.Clone(g.opts.Scopes)
	if r.Method == http.MethodPost && len(g.opts.ToolScopes) > 0 {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" {
			need = append(need, g.opts.ToolScopes[msg.Params.Name]...)
		}
	}
	for _, sc := range need {
		if !slices.Contains(have, sc) {
			challenge(http.StatusForbidden, "insufficient_scope", need)
			return
		}
	}
	g.next.ServeHTTP(w, r)
}
