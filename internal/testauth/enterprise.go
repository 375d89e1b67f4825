package testauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// The enterprise side of the test authorization server (mcp-bridge ADR 0011):
//
//   - private_key_jwt client authentication (RFC 7523 §2.2): Options.ClientKeys;
//   - the JWT bearer grant (RFC 7523 §2.1) for assertions of Options.TrustedIssuers (a workload's
//     platform, or an IdP's ID-JAG);
//   - token exchange (RFC 8693) of an ID token of a trusted issuer for an ID-JAG the server signs, so a
//     Server can play the enterprise IdP of Enterprise-Managed Authorization;
//   - DPoP (RFC 9449): Options.DPoP binds tokens to the proof's key at the token endpoint, and Guard then
//     insists on the DPoP scheme and a valid, fresh proof on every request; Options.DPoPNonce makes both
//     demand that nonce first (use_dpop_nonce).

// Issuer signs JWTs for tests: workload tokens, ID tokens, ID-JAGs.
type Issuer struct {
	// Name is the iss claim.
	Name string
	key  *ecdsa.PrivateKey
}

// NewIssuer returns an issuer with a fresh ES256 key.
func NewIssuer(name string) *Issuer {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	return &Issuer{Name: name, key: k}
}

// Public returns the issuer's public key.
func (i *Issuer) Public() crypto.PublicKey { return &i.key.PublicKey }

// Private returns the issuer's private key (a client's key for private_key_jwt).
func (i *Issuer) Private() *ecdsa.PrivateKey { return i.key }

// Mint signs claims (iss, iat, exp and jti added unless set) with typ in the header ("" for JWT).
func (i *Issuer) Mint(claims map[string]any, typ string, ttl time.Duration) string {
	c := map[string]any{"iss": i.Name, "iat": time.Now().Unix(), "exp": time.Now().Add(ttl).Unix(), "jti": rand.Text()}
	for k, v := range claims {
		c[k] = v
	}
	if typ == "" {
		typ = "JWT"
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: i.key}, (&jose.SignerOptions{}).WithType(jose.ContentType(typ)))
	if err != nil {
		panic(err)
	}
	s, err := jwt.Signed(signer).Claims(c).Serialize()
	if err != nil {
		panic(err)
	}
	return s
}

// verifyJWT checks a compact JWS signed by key with an asymmetric algorithm and returns its claims and
// header. It checks exp (and nbf) but not the audience.
func verifyJWT(raw string, key crypto.PublicKey) (map[string]any, jose.Header, error) {
	tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.ES256, jose.ES384, jose.ES512, jose.RS256, jose.PS256, jose.EdDSA})
	if err != nil {
		return nil, jose.Header{}, fmt.Errorf("not a signed JWT: %w", err)
	}
	var std jwt.Claims
	claims := map[string]any{}
	if err := tok.Claims(key, &std, &claims); err != nil {
		return nil, jose.Header{}, fmt.Errorf("signature: %w", err)
	}
	if err := std.ValidateWithLeeway(jwt.Expected{Time: time.Now()}, 5*time.Second); err != nil {
		return nil, jose.Header{}, err
	}
	if std.Expiry == nil {
		return nil, jose.Header{}, errors.New("no exp")
	}
	return claims, tok.Headers[0], nil
}

// unverifiedIssuer returns the iss claim of a JWT without checking it (to pick the key).
func unverifiedIssuer(raw string) string {
	tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.ES256, jose.ES384, jose.ES512, jose.RS256, jose.PS256, jose.EdDSA})
	if err != nil {
		return ""
	}
	var c jwt.Claims
	if tok.UnsafeClaimsWithoutVerification(&c) != nil {
		return ""
	}
	return c.Issuer
}

func hasAudience(claims map[string]any, want string) bool {
	switch a := claims["aud"].(type) {
	case string:
		return strings.TrimSuffix(a, "/") == strings.TrimSuffix(want, "/")
	case []any:
		for _, v := range a {
			if s, _ := v.(string); strings.TrimSuffix(s, "/") == strings.TrimSuffix(want, "/") {
				return true
			}
		}
	}
	return false
}

// clientAssertionClient authenticates a private_key_jwt client; ok is false when the request uses none.
// Called with s.mu held.
func (s *Server) clientAssertionClient(f url.Values) (clientID string, ok bool, err error) {
	if f.Get("client_assertion") == "" && f.Get("client_assertion_type") == "" {
		return "", false, nil
	}
	if f.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
		return "", true, errors.New("client_assertion_type")
	}
	iss := unverifiedIssuer(f.Get("client_assertion"))
	key := s.opts.ClientKeys[iss]
	if key == nil {
		return "", true, errors.New("unknown client")
	}
	claims, _, err := verifyJWT(f.Get("client_assertion"), key)
	if err != nil {
		return "", true, err
	}
	if claims["sub"] != iss || !hasAudience(claims, s.Issuer) || claims["jti"] == nil {
		return "", true, errors.New("sub, aud or jti")
	}
	if id := f.Get("client_id"); id != "" && id != iss {
		return "", true, errors.New("client_id")
	}
	jti, _ := claims["jti"].(string)
	if s.jtis[jti] {
		return "", true, errors.New("replayed assertion")
	}
	s.jtis[jti] = true
	return iss, true, nil
}

// jwtBearerGrant checks the assertion of a JWT bearer grant: signed by a trusted issuer, for this server.
func (s *Server) jwtBearerGrant(assertion string) (map[string]any, error) {
	iss := unverifiedIssuer(assertion)
	key := s.opts.TrustedIssuers[iss]
	if key == nil {
		return nil, fmt.Errorf("issuer %q not trusted", iss)
	}
	claims, _, err := verifyJWT(assertion, key)
	if err != nil {
		return nil, err
	}
	if !hasAudience(claims, s.Issuer) {
		return nil, errors.New("audience")
	}
	return claims, nil
}

// tokenExchange turns an ID token of a trusted issuer into an ID-JAG signed by the server (SEP-990).
func (s *Server) tokenExchange(w http.ResponseWriter, f url.Values, clientID string) {
	switch {
	case f.Get("requested_token_type") != "urn:ietf:params:oauth:token-type:id-jag",
		f.Get("subject_token_type") != "urn:ietf:params:oauth:token-type:id_token",
		f.Get("audience") == "", f.Get("resource") == "":
		tokenError(w, "invalid_request")
		return
	}
	sub := f.Get("subject_token")
	key := s.opts.TrustedIssuers[unverifiedIssuer(sub)]
	if key == nil {
		tokenError(w, "invalid_grant")
		return
	}
	claims, _, err := verifyJWT(sub, key)
	if err != nil || !hasAudience(claims, clientID) {
		tokenError(w, "invalid_grant")
		return
	}
	jag := s.signer.Mint(map[string]any{
		"sub":       claims["sub"],
		"aud":       f.Get("audience"),
		"resource":  f.Get("resource"),
		"client_id": s.opts.JAGClientID,
		"scope":     f.Get("scope"),
	}, "oauth-id-jag+jwt", 5*time.Minute)
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token":      jag,
		"issued_token_type": "urn:ietf:params:oauth:token-type:id-jag",
		"token_type":        "N_A",
		"expires_in":        300,
	})
}

// DPoP.

// dpopProof checks a DPoP proof (RFC 9449 §4.3) for method and target, and accessToken when one is
// presented; it returns the thumbprint of the proof's key. Called with s.mu held.
func (s *Server) dpopProof(proof, method, target, accessToken string) (jkt, nonce string, err error) {
	if proof == "" || strings.Contains(proof, ",") {
		return "", "", errors.New("missing or multiple DPoP proofs")
	}
	tok, err := jose.ParseSignedCompact(proof, []jose.SignatureAlgorithm{jose.ES256, jose.ES384, jose.ES512, jose.RS256, jose.PS256, jose.EdDSA})
	if err != nil {
		return "", "", errors.New("proof is not a JWS")
	}
	h := tok.Signatures[0].Header
	if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); typ != "dpop+jwt" {
		return "", "", errors.New("typ")
	}
	if h.JSONWebKey == nil || !h.JSONWebKey.IsPublic() {
		return "", "", errors.New("jwk")
	}
	payload, err := tok.Verify(h.JSONWebKey)
	if err != nil {
		return "", "", errors.New("signature")
	}
	var c struct {
		JTI, HTM, HTU, ATH, Nonce string
		IAT                       int64
	}
	if err := json.Unmarshal(payload, &c); err != nil || c.JTI == "" {
		return "", "", errors.New("claims")
	}
	if c.HTM != method || strings.TrimSuffix(c.HTU, "/") != strings.TrimSuffix(target, "/") || strings.ContainsAny(c.HTU, "?#") {
		return "", "", errors.New("htm or htu")
	}
	if d := time.Since(time.Unix(c.IAT, 0)); d > 5*time.Minute || d < -time.Minute {
		return "", "", errors.New("iat")
	}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		if c.ATH != base64.RawURLEncoding.EncodeToString(sum[:]) {
			return "", "", errors.New("ath")
		}
	}
	if s.jtis[c.JTI] {
		return "", "", errors.New("replayed proof")
	}
	s.jtis[c.JTI] = true
	tp, err := h.JSONWebKey.Thumbprint(crypto.SHA256)
	if err != nil {
		return "", "", err
	}
	return base64.RawURLEncoding.EncodeToString(tp), c.Nonce, nil
}

// DPoPProofs returns how many DPoP proofs the token endpoint and guards of s accepted.
func (s *Server) DPoPProofs() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dpopAccepted
}

// guardDPoP checks a request to a guarded endpoint that presents a DPoP-bound token; it reports false
// after answering the request itself.
func (g *Guard) guardDPoP(w http.ResponseWriter, r *http.Request, tok string) bool {
	s := g.s
	s.mu.Lock()
	bound := s.access[tok]
	var jkt, nonce string
	var err error
	if bound != nil {
		jkt, nonce, err = s.dpopProof(r.Header.Get("DPoP"), r.Method, g.opts.Resource, tok)
	}
	if err == nil && bound != nil && jkt == bound.jkt {
		if s.opts.DPoPNonce != "" && nonce != s.opts.DPoPNonce {
			s.mu.Unlock()
			w.Header().Set("DPoP-Nonce", s.opts.DPoPNonce)
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`DPoP error="use_dpop_nonce", resource_metadata=%q`, g.metadataURL()))
			http.Error(w, "use_dpop_nonce", http.StatusUnauthorized)
			return false
		}
		s.dpopAccepted++
		s.mu.Unlock()
		return true
	}
	s.mu.Unlock()
	w.Header().Set("WWW-Authenticate", fmt.Sprintf(`DPoP error="invalid_token", resource_metadata=%q`, g.metadataURL()))
	http.Error(w, "invalid DPoP proof", http.StatusUnauthorized)
	return false
}

// JWTIssuer is the issuer of the ID-JAGs s signs (trust it in the authorization server that accepts them).
func (s *Server) JWTIssuer() *Issuer { return s.signer }

// SetClientKey registers (key non-nil) or removes a private_key_jwt client's public key.
func (s *Server) SetClientKey(id string, key crypto.PublicKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opts.ClientKeys == nil {
		s.opts.ClientKeys = map[string]crypto.PublicKey{}
	}
	if key == nil {
		delete(s.opts.ClientKeys, id)
		return
	}
	s.opts.ClientKeys[id] = key
}

// SetTrustedIssuer trusts iss's key for JWT bearer assertions and the ID tokens of token exchange.
func (s *Server) SetTrustedIssuer(iss string, key crypto.PublicKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opts.TrustedIssuers == nil {
		s.opts.TrustedIssuers = map[string]crypto.PublicKey{}
	}
	s.opts.TrustedIssuers[iss] = key
}
