package upstreamauth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"golang.org/x/oauth2"

	"github.com/mcp-bridge/mcp-bridge/internal/testauth"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

func pemOf(t *testing.T, typ string, der []byte) string {
	t.Helper()
	return string(pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}))
}

func TestParsePrivateKey(t *testing.T) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ec384, _ := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	small, _ := rsa.GenerateKey(rand.Reader, 1024)
	_, ed, _ := ed25519.GenerateKey(rand.Reader)
	pkcs8 := func(k any) []byte {
		b, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	sec1, _ := x509.MarshalECPrivateKey(ec)
	jwkPriv, _ := json.Marshal(jose.JSONWebKey{Key: ec, Algorithm: "ES256"})
	jwkPub, _ := json.Marshal(jose.JSONWebKey{Key: &ec.PublicKey})
	tests := []struct {
		name    string
		in      string
		wantAlg string // "" when an error is expected
	}{
		{"pkcs8 P-256", pemOf(t, "PRIVATE KEY", pkcs8(ec)), "ES256"},
		{"pkcs8 P-384", pemOf(t, "PRIVATE KEY", pkcs8(ec384)), "ES384"},
		{"sec1", pemOf(t, "EC PRIVATE KEY", sec1), "ES256"},
		{"pkcs1 rsa", pemOf(t, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(rsaKey)), "RS256"},
		{"pkcs8 ed25519", pemOf(t, "PRIVATE KEY", pkcs8(ed)), "EdDSA"},
		{"jwk", string(jwkPriv), "ES256"},
		{"public jwk", string(jwkPub), ""},
		{"small rsa", pemOf(t, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(small)), ""},
		{"certificate", pemOf(t, "CERTIFICATE", []byte("not really")), ""},
		{"garbage", "s3cret-looking-garbage", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k, err := ParsePrivateKey([]byte(tt.in))
			if tt.wantAlg == "" {
				if err == nil {
					t.Fatal("parsed")
				}
				if strings.Contains(err.Error(), "s3cret") || strings.Contains(err.Error(), "BEGIN") {
					t.Errorf("error quotes the input: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			alg, err := signingAlg(k, "")
			if err != nil || string(alg) != tt.wantAlg {
				t.Errorf("signingAlg = %v, %v; want %s", alg, err, tt.wantAlg)
			}
		})
	}
	if _, err := signingAlg(ec, "RS256"); err == nil {
		t.Error("RS256 accepted for an EC key")
	}
}

func TestSecretSourceReadsAgainAtEveryUse(t *testing.T) {
	p := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(p, []byte("first\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src := &SecretSource{File: p}
	if v, err := src.read(); err != nil || v != "first" {
		t.Fatalf("read = %q, %v", v, err)
	}
	if err := os.WriteFile(p, []byte("second"), 0o600); err != nil {
		t.Fatal(err)
	}
	if v, err := src.read(); err != nil || v != "second" {
		t.Fatalf("read after rotation = %q, %v", v, err)
	}
	if err := os.WriteFile(p, []byte("  \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := src.read(); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("empty file: %v", err)
	}
	if _, err := (&SecretSource{File: p + ".missing"}).read(); err == nil {
		t.Error("missing file read")
	}
	t.Setenv("H16_TEST_SECRET", " from-env ")
	if v, err := (&SecretSource{Env: "H16_TEST_SECRET"}).read(); err != nil || v != "from-env" {
		t.Errorf("env = %q, %v", v, err)
	}
	if _, err := (&SecretSource{Env: "H16_TEST_UNSET"}).read(); err == nil || !strings.Contains(err.Error(), "H16_TEST_UNSET") {
		t.Errorf("unset env: %v", err)
	}
}

// decodeProof verifies a DPoP proof with the key in its header and returns header and claims.
func decodeProof(t *testing.T, proof string) (jose.Header, dpopClaims) {
	t.Helper()
	jws, err := jose.ParseSignedCompact(proof, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatal(err)
	}
	h := jws.Signatures[0].Header
	if h.JSONWebKey == nil || !h.JSONWebKey.IsPublic() {
		t.Fatal("the proof's jwk is missing or private")
	}
	payload, err := jws.Verify(h.JSONWebKey)
	if err != nil {
		t.Fatal(err)
	}
	var c dpopClaims
	if err := json.Unmarshal(payload, &c); err != nil {
		t.Fatal(err)
	}
	return h, c
}

func TestDPoPProof(t *testing.T) {
	k, err := newDPoPKey()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	p1, err := k.proof("POST", "https://mcp.example/mcp?x=1#f", "tok", "n1", now)
	if err != nil {
		t.Fatal(err)
	}
	p2, _ := k.proof("POST", "https://mcp.example/mcp", "tok", "", now)
	h, c := decodeProof(t, p1)
	if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); typ != "dpop+jwt" || h.Algorithm != "ES256" {
		t.Errorf("header typ %q alg %q", typ, h.Algorithm)
	}
	sum := sha256.Sum256([]byte("tok"))
	want := dpopClaims{JTI: c.JTI, HTM: "POST", HTU: "https://mcp.example/mcp", IAT: now.Unix(), ATH: base64.RawURLEncoding.EncodeToString(sum[:]), Nonce: "n1"}
	if c != want {
		t.Errorf("claims = %+v, want %+v", c, want)
	}
	tp, _ := h.JSONWebKey.Thumbprint(crypto.SHA256)
	if base64.RawURLEncoding.EncodeToString(tp) != k.jkt {
		t.Error("the proof's key is not the key's thumbprint")
	}
	if _, c2 := decodeProof(t, p2); c2.JTI == c.JTI {
		t.Error("two proofs share a jti")
	}
}

// nonceServer answers like a DPoP server that demands a nonce: without it, status and a use_dpop_nonce
// error (in the body for a token endpoint, in WWW-Authenticate for a resource).
type nonceServer struct {
	t        *testing.T
	resource bool

	mu     sync.Mutex
	proofs []dpopClaims
	auths  []string
	bodies []string
}

func (n *nonceServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	var c dpopClaims
	if p := r.Header.Get("DPoP"); p != "" {
		_, c = decodeProof(n.t, p)
	}
	n.mu.Lock()
	n.proofs = append(n.proofs, c)
	n.auths = append(n.auths, r.Header.Get("Authorization"))
	n.bodies = append(n.bodies, string(b))
	n.mu.Unlock()
	if c.Nonce != "the-nonce" {
		w.Header().Set("DPoP-Nonce", "the-nonce")
		if n.resource {
			w.Header().Set("WWW-Authenticate", `DPoP error="use_dpop_nonce", error_description="nonce"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"use_dpop_nonce"}`))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"access_token":"bound-token","token_type":"DPoP","expires_in":60}`))
}

func TestDPoPTokenAndResourceNonceRetries(t *testing.T) {
	d, err := newDPoPState()
	if err != nil {
		t.Fatal(err)
	}
	as := &nonceServer{t: t}
	asSrv := httptest.NewServer(as)
	defer asSrv.Close()
	hc := &http.Client{Transport: &dpopTokenTransport{base: http.DefaultTransport, dpop: d}}
	form := "grant_type=client_credentials&resource=x"
	req, _ := http.NewRequest(http.MethodPost, asSrv.URL+"/token?q=1", strings.NewReader(form))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "bound-token") {
		t.Fatalf("token response %d %s", resp.StatusCode, body)
	}
	if len(as.proofs) != 2 || as.proofs[0].Nonce != "" || as.proofs[1].Nonce != "the-nonce" ||
		as.proofs[1].HTU != asSrv.URL+"/token" || as.proofs[1].ATH != "" || as.bodies[1] != form {
		t.Errorf("token requests: proofs %+v, bodies %q", as.proofs, as.bodies)
	}
	if !d.isBound("bound-token") || d.isBound("other") {
		t.Error("the DPoP-bound token was not recorded")
	}

	rs := &nonceServer{t: t, resource: true}
	rsSrv := httptest.NewServer(rs)
	defer rsSrv.Close()
	rc := &http.Client{Transport: &dpopResourceTransport{base: http.DefaultTransport, dpop: d}}
	for _, tok := range []string{"bound-token", "bound-token", "plain-token"} {
		req, _ := http.NewRequest(http.MethodPost, rsSrv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0"}`))
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := rc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if tok != "plain-token" && resp.StatusCode != http.StatusOK {
			t.Errorf("resource request answered %d", resp.StatusCode)
		}
	}
	// First request: challenged, retried once with the nonce and the same body; second: the nonce at
	// once; the token the server issued as Bearer goes as before, without a proof.
	wantNonces := []string{"", "the-nonce", "the-nonce", ""}
	if len(rs.proofs) != 4 {
		t.Fatalf("%d resource requests, want 4", len(rs.proofs))
	}
	for i, c := range rs.proofs {
		if c.Nonce != wantNonces[i] {
			t.Errorf("request %d nonce %q, want %q", i, c.Nonce, wantNonces[i])
		}
	}
	if rs.auths[1] != "DPoP bound-token" || rs.auths[3] != "Bearer plain-token" || rs.bodies[1] != `{"jsonrpc":"2.0"}` {
		t.Errorf("authorizations %q, bodies %q", rs.auths, rs.bodies)
	}
	if rs.proofs[3].JTI != "" {
		t.Error("a bearer token went with a proof")
	}
}

func TestMachineGrantsAgainstTestAuth(t *testing.T) {
	platform := testauth.NewIssuer("https://platform.example")
	clientKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(clientKey)
	keyPEM := pemOf(t, "PRIVATE KEY", der)
	tests := []struct {
		name    string
		as      testauth.Options
		cfg     func(f *oauthFixture) *Config
		wantErr string // substring of the connect error; "" for success
		secret  func(f *oauthFixture) string
	}{
		{
			name: "client credentials with private_key_jwt",
			as:   testauth.Options{ClientKeys: map[string]crypto.PublicKey{"svc": &clientKey.PublicKey}},
			cfg: func(*oauthFixture) *Config {
				return &Config{Grant: GrantClientCredentials, ClientID: "svc", ClientKey: &SecretSource{Value: keyPEM}}
			},
		},
		{
			name: "client credentials with an unknown key",
			as:   testauth.Options{},
			cfg: func(*oauthFixture) *Config {
				return &Config{Grant: GrantClientCredentials, ClientID: "svc", ClientKey: &SecretSource{Value: keyPEM}}
			},
			wantErr: "invalid_client",
		},
		{
			name: "jwt bearer",
			as:   testauth.Options{Clients: map[string]string{"wl": ""}},
			cfg: func(f *oauthFixture) *Config {
				f.as.SetTrustedIssuer(platform.Name, platform.Public())
				return &Config{Grant: GrantJWTBearer, ClientID: "wl", Assertion: &SecretSource{Value: platform.Mint(map[string]any{"sub": "wl", "aud": f.as.Issuer}, "", time.Hour)}}
			},
		},
		{
			name: "jwt bearer with an expired assertion",
			as:   testauth.Options{Clients: map[string]string{"wl": ""}},
			cfg: func(f *oauthFixture) *Config {
				f.as.SetTrustedIssuer(platform.Name, platform.Public())
				return &Config{Grant: GrantJWTBearer, ClientID: "wl", Assertion: &SecretSource{Value: platform.Mint(map[string]any{"sub": "wl", "aud": f.as.Issuer}, "", -time.Minute)}}
			},
			wantErr: "invalid_grant",
			secret:  func(f *oauthFixture) string { return "" },
		},
		{
			name: "jwt bearer without its assertion file",
			as:   testauth.Options{Clients: map[string]string{"wl": ""}},
			cfg: func(*oauthFixture) *Config {
				return &Config{Grant: GrantJWTBearer, ClientID: "wl", Assertion: &SecretSource{File: "/nonexistent/sa-token"}}
			},
			wantErr: "/nonexistent/sa-token",
		},
		{
			name: "client credentials with a client secret at a private_key_jwt server",
			as:   testauth.Options{Clients: map[string]string{"svc": "right"}},
			cfg: func(*oauthFixture) *Config {
				return &Config{Grant: GrantClientCredentials, ClientID: "svc", ClientSecret: "wrong-s3cret"}
			},
			wantErr: "invalid_client",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newOAuthFixture(t, fixtureOptions{as: tt.as})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cfg := tt.cfg(f)
			cs, err := f.connect(ctx, f.session("alice", cfg))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("connect: %v, want an error with %q", err, tt.wantErr)
				}
				for _, secret := range []string{keyPEM, "wrong-s3cret", cfg.Assertion.valueOrEmpty()} {
					if secret != "" && strings.Contains(err.Error(), secret) {
						t.Errorf("the error carries a secret: %v", err)
					}
				}
				if !errors.Is(err, mcpcore.ErrAuthorization) && !strings.Contains(err.Error(), mcpcore.ErrAuthorization.Error()) {
					t.Errorf("error %v is not an authorization error", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			callOK(t, ctx, cs, "whoami")
			if n := f.askedCount(); n != 0 {
				t.Errorf("host asked %d times, want 0", n)
			}
		})
	}
}

// valueOrEmpty is the in-process value of s ("" for nil or a file or variable).
func (s *SecretSource) valueOrEmpty() string {
	if s == nil {
		return ""
	}
	return s.Value
}

func TestMachineTokenExpiryRunsTheGrantAgain(t *testing.T) {
	platform := testauth.NewIssuer("https://platform.example")
	f := newOAuthFixture(t, fixtureOptions{as: testauth.Options{Clients: map[string]string{"wl": ""}, TokenTTL: time.Hour}})
	f.as.SetTrustedIssuer(platform.Name, platform.Public())
	p := filepath.Join(t.TempDir(), "sa-token")
	write := func(sub string) {
		if err := os.WriteFile(p, []byte(platform.Mint(map[string]any{"sub": sub, "aud": f.as.Issuer}, "", time.Hour)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("first")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := f.session("alice", &Config{Grant: GrantJWTBearer, ClientID: "wl", Assertion: &SecretSource{File: p}})
	cs, err := f.connect(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	callOK(t, ctx, cs, "whoami")
	// The flow's token expires (as the bridge sees it): the next request goes without it, the server's
	// 401 runs the grant again, with the rotated assertion.
	m := s.flow().sdk.(*machineFlow)
	m.mu.Lock()
	m.tok = (&oauth2.Token{AccessToken: m.tok.AccessToken, Expiry: time.Now().Add(-time.Minute)})
	m.mu.Unlock()
	write("second")
	callOK(t, ctx, cs, "whoami")
	reqs := f.as.Requests("token")
	if len(reqs) != 2 {
		t.Fatalf("%d token requests, want 2", len(reqs))
	}
	if b, _ := os.ReadFile(p); reqs[1].Form.Get("assertion") != string(b) {
		t.Error("the second grant did not read the assertion file again")
	}
}

func TestDPoPThroughTheSessionTransport(t *testing.T) {
	f := newOAuthFixture(t, fixtureOptions{as: testauth.Options{Clients: map[string]string{"svc": "s3cret"}, DPoP: true, DPoPNonce: "n"}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := f.session("alice", &Config{Grant: GrantClientCredentials, ClientID: "svc", ClientSecret: "s3cret", DPoP: true})
	cs, err := f.connect(ctx, s) // with the transport Connect wrapped for DPoP
	if err != nil {
		t.Fatal(err)
	}
	callOK(t, ctx, cs, "whoami")
	for _, a := range f.guard.Tokens() {
		if strings.HasPrefix(a, "Bearer ") {
			t.Errorf("a DPoP-bound token went as Bearer: %q", a[:12])
		}
	}
	if f.as.DPoPProofs() < 3 {
		t.Errorf("%d proofs accepted", f.as.DPoPProofs())
	}
}

// FuzzParsePrivateKey: the operator's key file is outside input; no input panics, and a key that parses
// has a signing algorithm.
func FuzzParsePrivateKey(f *testing.F) {
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKCS8PrivateKey(ec)
	f.Add(string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})))
	jwk, _ := json.Marshal(jose.JSONWebKey{Key: ec})
	f.Add(string(jwk))
	f.Add("-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n")
	f.Add(`{"kty":"EC","crv":"P-256"}`)
	f.Fuzz(func(t *testing.T, in string) {
		k, err := ParsePrivateKey([]byte(in))
		if err != nil {
			return
		}
		if _, err := signingAlg(k, ""); err != nil {
			t.Errorf("parsed key without an algorithm: %v", err)
		}
	})
}
