package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/mcp-bridge/mcp-bridge/internal/oidcdefaults"
)

// OIDCOptions configure the acceptance of JWT bearer tokens an OpenID Connect identity provider issued
// (docs/adr/0012-policy.md). Issuer and Audience are required.
type OIDCOptions struct {
	// Issuer is the iss tokens must carry; also where the keys' URL is discovered when JWKSURL is empty
	// (Issuer + "/.well-known/openid-configuration", whose issuer must equal Issuer).
	Issuer string
	// Audience is a value tokens' aud must hold.
	Audience string
	// JWKSURL is the issuer's key set (optional: see Issuer).
	JWKSURL string
	// PrincipalClaim names the claim whose string value is the principal (default "sub").
	PrincipalClaim string
	// GroupsClaim, when set, names the claim (a string or an array of strings) whose values are the groups
	// of the principal; approvers may be named by group (docs/adr/0080-approvals.md).
	GroupsClaim string
	// Algorithms are the accepted JWS algorithms, a subset of OIDCAlgorithms (default: all of them).
	Algorithms []string
	// ClockSkew is the leeway for exp, nbf and iat (default 1m).
	ClockSkew time.Duration
	// RefreshInterval is the age after which the keys are fetched again (default 1h); MinRefreshInterval
	// bounds how often a token with an unknown key id, or a failed fetch, makes the bridge fetch them
	// (default 30s).
	RefreshInterval    time.Duration
	MinRefreshInterval time.Duration
	// HTTPClient fetches the discovery document and the keys; nil means a client with a 10s timeout.
	HTTPClient *http.Client
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
}

// Defaults of OIDCOptions. internal/oidcdefaults owns them (the configuration file reads them there too).
const (
	DefaultOIDCPrincipalClaim     = oidcdefaults.PrincipalClaim
	DefaultOIDCClockSkew          = oidcdefaults.ClockSkew
	DefaultOIDCRefreshInterval    = oidcdefaults.RefreshInterval
	DefaultOIDCMinRefreshInterval = oidcdefaults.MinRefreshInterval
)

// OIDCAlgorithms are the JWS algorithms the verifier can accept — the asymmetric ones; symmetric algorithms
// and "none" never are — and the default of OIDCOptions.Algorithms (oidcdefaults.Algorithms). Read it, do
// not change it.
var OIDCAlgorithms = oidcdefaults.Algorithms

// Bounds on what the identity provider can make the bridge hold.
const (
	maxJWKSBytes    = 1 << 20
	maxJWKSKeys     = 100
	maxTokenBytes   = 16 << 10
	maxPrincipalLen = 256
	jwksFetchBound  = 10 * time.Second
)

// Errors of token verification. They become UNAUTHENTICATED (errIdentityProviderUnavailable:
// UNAVAILABLE) in errors.go; their text says what was wrong with the token, never what it held.
var (
	errBadToken                    = errors.New("invalid bearer token")
	errIdentityProviderUnavailable = errors.New("the identity provider's keys cannot be fetched")
)

// oidcVerifier verifies JWTs against the issuer's key set, which it caches: the keys are fetched on first
// use, again when older than RefreshInterval, and again when a token names a key id the set lacks — at
// most once per MinRefreshInterval, so that tokens with made-up key ids cannot make the bridge hammer the
// identity provider. A failed fetch keeps the keys it had. Fetches run in the goroutine of the call that
// needs them; concurrent callers wait for that one fetch (or for their own context to end).
type oidcVerifier struct {
	opts   OIDCOptions
	algs   []jose.SignatureAlgorithm
	logger *slog.Logger

	mu       sync.Mutex        // guards the fields below
	jwksURL  string            // opts.JWKSURL, or the discovered one
	keys     []jose.JSONWebKey // the last key set fetched
	fetched  time.Time         // when keys were fetched
	tried    time.Time         // when the last fetch was attempted
	inflight chan struct{}     // non-nil while a fetch runs; closed when it ends
	lastErr  error             // the last fetch's error, for callers that waited on it
}

func newOIDCVerifier(o OIDCOptions, logger *slog.Logger) *oidcVerifier {
	if o.PrincipalClaim == "" {
		o.PrincipalClaim = DefaultOIDCPrincipalClaim
	}
	if o.ClockSkew == 0 {
		o.ClockSkew = DefaultOIDCClockSkew
	}
	if o.RefreshInterval <= 0 {
		o.RefreshInterval = DefaultOIDCRefreshInterval
	}
	if o.MinRefreshInterval <= 0 {
		o.MinRefreshInterval = DefaultOIDCMinRefreshInterval
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: jwksFetchBound}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	algs := o.Algorithms
	if len(algs) == 0 {
		algs = OIDCAlgorithms
	}
	v := &oidcVerifier{opts: o, logger: logger, jwksURL: o.JWKSURL}
	for _, a := range algs {
		v.algs = append(v.algs, jose.SignatureAlgorithm(a))
	}
	return v
}

// looksLikeJWT tells a compact JWS (three base64url parts) from an opaque token.
func looksLikeJWT(token string) bool {
	return strings.Count(token, ".") == 2 && !strings.ContainsFunc(token, func(r rune) bool {
		return !(r == '.' || r == '-' || r == '_' || r == '=' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9'))
	})
}

// verify checks token and returns its principal.
func (v *oidcVerifier) verify(ctx context.Context, token string) (string, error) {
	p, _, err := v.verifyIdentity(ctx, token)
	return p, err
}

// maxGroups bounds the groups taken from one token.
const maxGroups = 256

// groupsOf returns the values of the configured groups claim: a string or an array of strings; anything
// else, and entries that are not principal-like strings, are ignored.
func (v *oidcVerifier) groupsOf(claims map[string]any) []string {
	if v.opts.GroupsClaim == "" {
		return nil
	}
	var out []string
	add := func(x any) {
		if s, ok := x.(string); ok && checkPrincipal(s) == nil && len(out) < maxGroups {
			out = append(out, s)
		}
	}
	switch g := claims[v.opts.GroupsClaim].(type) {
	case string:
		add(g)
	case []any:
		for _, x := range g {
			add(x)
		}
	}
	return out
}

// verifyIdentity is verify returning the principal's groups too (OIDCOptions.GroupsClaim).
func (v *oidcVerifier) verifyIdentity(ctx context.Context, token string) (string, []string, error) {
	if len(token) > maxTokenBytes {
		return "", nil, fmt.Errorf("%w: longer than %d bytes", errBadToken, maxTokenBytes)
	}
	tok, err := jwt.ParseSigned(token, v.algs)
	if err != nil {
		return "", nil, fmt.Errorf("%w: not a signed JWT with an accepted algorithm", errBadToken)
	}
	if len(tok.Headers) != 1 {
		return "", nil, fmt.Errorf("%w: want exactly one signature", errBadToken)
	}
	h := tok.Headers[0]
	keys, err := v.keysFor(ctx, h.KeyID)
	if err != nil {
		return "", nil, err
	}
	var (
		std    jwt.Claims
		claims map[string]any
		ok     bool
	)
	for _, k := range keys {
		if k.Algorithm != "" && k.Algorithm != h.Algorithm {
			continue
		}
		if tok.Claims(k.Key, &std, &claims) == nil {
			ok = true
			break
		}
	}
	if !ok {
		return "", nil, fmt.Errorf("%w: no key of the issuer verifies its signature", errBadToken)
	}
	p, err := v.principalOf(std, claims)
	if err != nil {
		return "", nil, err
	}
	return p, v.groupsOf(claims), nil
}

// principalOf checks the verified claims and returns the principal they name.
func (v *oidcVerifier) principalOf(std jwt.Claims, claims map[string]any) (string, error) {
	if std.Expiry == nil {
		return "", fmt.Errorf("%w: no exp claim", errBadToken)
	}
	err := std.ValidateWithLeeway(jwt.Expected{Issuer: v.opts.Issuer, AnyAudience: jwt.Audience{v.opts.Audience}, Time: v.opts.Now()}, v.opts.ClockSkew)
	switch {
	case errors.Is(err, jwt.ErrExpired):
		return "", fmt.Errorf("%w: expired", errBadToken)
	case errors.Is(err, jwt.ErrNotValidYet), errors.Is(err, jwt.ErrIssuedInTheFuture):
		return "", fmt.Errorf("%w: not valid yet", errBadToken)
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return "", fmt.Errorf("%w: wrong issuer", errBadToken)
	case errors.Is(err, jwt.ErrInvalidAudience):
		return "", fmt.Errorf("%w: wrong audience", errBadToken)
	case err != nil:
		return "", fmt.Errorf("%w: claims", errBadToken)
	}
	p, _ := claims[v.opts.PrincipalClaim].(string)
	if err := checkPrincipal(p); err != nil {
		return "", fmt.Errorf("%w: claim %s %v", errBadToken, v.opts.PrincipalClaim, err)
	}
	return p, nil
}

// checkPrincipal accepts a principal from outside (a token's claim, a certificate's name): non-empty,
// at most maxPrincipalLen bytes of valid UTF-8 without control characters.
func checkPrincipal(p string) error {
	switch {
	case p == "":
		return errors.New("is missing, empty or not a string")
	case len(p) > maxPrincipalLen:
		return fmt.Errorf("is longer than %d bytes", maxPrincipalLen)
	case !utf8.ValidString(p) || strings.ContainsFunc(p, unicode.IsControl):
		return errors.New("holds invalid UTF-8 or control characters")
	}
	return nil
}

// keysFor returns the keys that may have signed a token with key id kid (every key when kid is empty),
// fetching the key set when it is missing, old, or lacks kid (within the bounds described on
// oidcVerifier).
func (v *oidcVerifier) keysFor(ctx context.Context, kid string) ([]jose.JSONWebKey, error) {
	for attempt := 0; ; attempt++ {
		v.mu.Lock()
		now := v.opts.Now()
		matching := matchKeys(v.keys, kid)
		stale := v.fetched.IsZero() || now.Sub(v.fetched) >= v.opts.RefreshInterval
		mayFetch := v.tried.IsZero() || now.Sub(v.tried) >= v.opts.MinRefreshInterval
		if attempt > 0 || (!stale && len(matching) > 0) || (!mayFetch && v.inflight == nil) {
			keys, lastErr, have := matching, v.lastErr, v.keys != nil
			v.mu.Unlock()
			if len(keys) > 0 {
				return keys, nil
			}
			if !have && lastErr != nil {
				return nil, errIdentityProviderUnavailable
			}
			return nil, fmt.Errorf("%w: signed with a key the issuer does not publish", errBadToken)
		}
		wait := v.inflight
		if wait == nil {
			wait = make(chan struct{})
			v.inflight = wait
			v.tried = now
			v.mu.Unlock()
			v.fetch(ctx, wait)
		} else {
			v.mu.Unlock()
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func matchKeys(keys []jose.JSONWebKey, kid string) []jose.JSONWebKey {
	var out []jose.JSONWebKey
	for _, k := range keys {
		if kid == "" || k.KeyID == kid {
			out = append(out, k)
		}
	}
	return out
}

// fetch fetches the key set (discovering its URL first if need be) and closes done. It runs detached from
// the caller's cancellation, bounded by jwksFetchBound, since other callers may be waiting on it.
func (v *oidcVerifier) fetch(ctx context.Context, done chan struct{}) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), jwksFetchBound)
	defer cancel()
	keys, url, err := v.load(ctx)
	v.mu.Lock()
	defer v.mu.Unlock()
	defer close(done)
	v.inflight = nil
	v.lastErr = err
	if err != nil {
		v.logger.Warn("fetching the identity provider's keys failed; keeping the keys fetched before", "issuer", v.opts.Issuer, "error", err)
		return
	}
	v.jwksURL, v.keys, v.fetched = url, keys, v.opts.Now()
	v.logger.Debug("identity provider keys fetched", "issuer", v.opts.Issuer, "keys", len(keys))
}

func (v *oidcVerifier) load(ctx context.Context) ([]jose.JSONWebKey, string, error) {
	v.mu.Lock()
	url := v.jwksURL
	v.mu.Unlock()
	if url == "" {
		var doc struct {
			Issuer  string `json:"issuer"`
			JWKSURI string `json:"jwks_uri"`
		}
		if err := v.getJSON(ctx, strings.TrimSuffix(v.opts.Issuer, "/")+"/.well-known/openid-configuration", &doc); err != nil {
			return nil, "", fmt.Errorf("discovery: %w", err)
		}
		if doc.Issuer != v.opts.Issuer {
			return nil, "", fmt.Errorf("discovery: the document's issuer %q is not the configured one", doc.Issuer)
		}
		if !strings.HasPrefix(doc.JWKSURI, "https://") {
			return nil, "", errors.New("discovery: jwks_uri is missing or not https")
		}
		url = doc.JWKSURI
	}
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := v.getJSON(ctx, url, &set); err != nil {
		return nil, "", fmt.Errorf("keys: %w", err)
	}
	keys := parseJWKS(set.Keys, v.logger)
	if len(keys) == 0 {
		return nil, "", errors.New("keys: the key set holds no usable signing key")
	}
	return keys, url, nil
}

// parseJWKS keeps the public signing keys of a key set; keys that cannot be parsed, private or
// symmetric keys, and keys for encryption are left out (and logged). At most maxJWKSKeys are kept.
func parseJWKS(raw []json.RawMessage, logger *slog.Logger) []jose.JSONWebKey {
	var keys []jose.JSONWebKey
	for i, r := range raw {
		if len(keys) == maxJWKSKeys {
			logger.Warn("the identity provider's key set is too large; ignoring the rest", "kept", maxJWKSKeys)
			break
		}
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(r); err != nil {
			logger.Warn("ignoring a key of the identity provider's key set", "index", i, "error", err)
			continue
		}
		if !k.Valid() || !k.IsPublic() || (k.Use != "" && k.Use != "sig") {
			logger.Warn("ignoring a key of the identity provider's key set that is not a public signing key", "index", i, "kid", k.KeyID)
			continue
		}
		keys = append(keys, k)
	}
	return keys
}

func (v *oidcVerifier) getJSON(ctx context.Context, url string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := v.opts.HTTPClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return fmt.Errorf("GET %s: %v", url, err)
	}
	if len(body) > maxJWKSBytes {
		return fmt.Errorf("GET %s: larger than %d bytes", url, maxJWKSBytes)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("GET %s: %v", url, err)
	}
	return nil
}
