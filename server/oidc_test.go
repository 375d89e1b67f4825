package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

const testIssuer = "https://idp.test"

func testKey(t testing.TB, kid string) jose.JSONWebKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return jose.JSONWebKey{Key: k, KeyID: kid, Algorithm: string(jose.ES256), Use: "sig"}
}

func signClaims(t testing.TB, key jose.JSONWebKey, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.SignatureAlgorithm(key.Algorithm), Key: key}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// fakeIDP serves a key set; it counts fetches and can fail them.
type fakeIDP struct {
	mu      sync.Mutex
	keys    []jose.JSONWebKey
	fail    bool
	fetches atomic.Int32
}

func (f *fakeIDP) RoundTrip(r *http.Request) (*http.Response, error) {
	f.fetches.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	rec := httptest.NewRecorder()
	switch {
	case f.fail:
		rec.WriteHeader(http.StatusServiceUnavailable)
	case r.URL.Path == "/.well-known/openid-configuration":
		_ = json.NewEncoder(rec).Encode(map[string]string{"issuer": testIssuer, "jwks_uri": testIssuer + "/keys"})
	default:
		var set jose.JSONWebKeySet
		for _, k := range f.keys {
			set.Keys = append(set.Keys, k.Public())
		}
		_ = json.NewEncoder(rec).Encode(set)
	}
	return rec.Result(), nil
}

func (f *fakeIDP) set(fail bool, keys ...jose.JSONWebKey) {
	f.mu.Lock()
	f.keys, f.fail = keys, fail
	f.mu.Unlock()
}

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func newTestVerifier(idp *fakeIDP, clk *clock) *oidcVerifier {
	return newOIDCVerifier(OIDCOptions{
		Issuer: testIssuer, Audience: "bridge", PrincipalClaim: "sub",
		RefreshInterval: time.Hour, MinRefreshInterval: time.Minute,
		HTTPClient: &http.Client{Transport: idp}, Now: clk.Now,
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

func claimsFor(sub string, now time.Time) map[string]any {
	return map[string]any{"iss": testIssuer, "aud": "bridge", "sub": sub, "exp": now.Add(time.Hour).Unix(), "iat": now.Unix()}
}

func TestOIDCVerify(t *testing.T) {
	k1 := testKey(t, "k1")
	idp := &fakeIDP{}
	idp.set(false, k1)
	clk := &clock{now: time.Unix(1_800_000_000, 0)}
	v := newTestVerifier(idp, clk)
	ctx := context.Background()
	now := clk.Now()
	edit := func(f func(map[string]any)) map[string]any {
		c := claimsFor("alice", now)
		f(c)
		return c
	}
	if p, err := v.verify(ctx, signClaims(t, k1, claimsFor("alice", now))); err != nil || p != "alice" {
		t.Fatalf("verify = %q, %v", p, err)
	}
	for name, tc := range map[string]struct {
		claims map[string]any
		want   string
	}{
		"expired":        {edit(func(c map[string]any) { c["exp"] = now.Add(-2 * time.Minute).Unix() }), "expired"},
		"within skew":    {edit(func(c map[string]any) { c["exp"] = now.Add(-30 * time.Second).Unix() }), ""},
		"no exp":         {edit(func(c map[string]any) { delete(c, "exp") }), "no exp"},
		"future nbf":     {edit(func(c map[string]any) { c["nbf"] = now.Add(time.Hour).Unix() }), "not valid yet"},
		"wrong issuer":   {edit(func(c map[string]any) { c["iss"] = "https://other" }), "wrong issuer"},
		"wrong audience": {edit(func(c map[string]any) { c["aud"] = []string{"x", "y"} }), "wrong audience"},
		"audience list":  {edit(func(c map[string]any) { c["aud"] = []string{"x", "bridge"} }), ""},
		"no principal":   {edit(func(c map[string]any) { delete(c, "sub") }), "claim sub is missing"},
		"control chars":  {edit(func(c map[string]any) { c["sub"] = "al\nice" }), "claim sub holds invalid"},
		"long principal": {edit(func(c map[string]any) { c["sub"] = strings.Repeat("a", 300) }), "claim sub is longer"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := v.verify(ctx, signClaims(t, k1, tc.claims))
			if tc.want == "" {
				if err != nil {
					t.Fatalf("verify: %v", err)
				}
				return
			}
			if !errors.Is(err, errBadToken) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("verify = %v, want errBadToken %q", err, tc.want)
			}
		})
	}
	// Not a JWT an accepted algorithm signed: HS256 with the public key's bytes as the secret would be
	// the classic confusion attack.
	hs, _ := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: []byte("0123456789abcdef0123456789abcdef")}, nil)
	tok, _ := jwt.Signed(hs).Claims(claimsFor("alice", now)).Serialize()
	if _, err := v.verify(ctx, tok); !errors.Is(err, errBadToken) {
		t.Errorf("HS256 token = %v, want errBadToken", err)
	}
}

func TestOIDCKeyCache(t *testing.T) {
	k1, k2, k3 := testKey(t, "k1"), testKey(t, "k2"), testKey(t, "k3")
	idp := &fakeIDP{}
	idp.set(false, k1)
	clk := &clock{now: time.Unix(1_800_000_000, 0)}
	v := newTestVerifier(idp, clk)
	ctx := context.Background()
	verify := func(k jose.JSONWebKey) error {
		_, err := v.verify(ctx, signClaims(t, k, claimsFor("alice", clk.Now())))
		return err
	}
	if err := verify(k1); err != nil {
		t.Fatal(err)
	}
	base := idp.fetches.Load() // discovery and keys
	// Cached: no fetch.
	if err := verify(k1); err != nil || idp.fetches.Load() != base {
		t.Fatalf("second verify: %v, fetches %d → %d", err, base, idp.fetches.Load())
	}
	// A rotated key is fetched on its first token…
	idp.set(false, k1, k2)
	clk.add(2 * time.Minute)
	if err := verify(k2); err != nil || idp.fetches.Load() != base+1 {
		t.Fatalf("unknown kid: %v, fetches %d", err, idp.fetches.Load()-base)
	}
	// …but unknown key ids cannot make the bridge fetch more than once per MinRefreshInterval.
	for range 5 {
		if err := verify(k3); !errors.Is(err, errBadToken) {
			t.Fatalf("unpublished key = %v", err)
		}
	}
	if got := idp.fetches.Load() - base; got != 1 {
		t.Fatalf("fetches after unknown key ids within MinRefreshInterval = %d, want 1", got)
	}
	// A failed fetch keeps the keys: an outage of the identity provider does not lock everyone out.
	idp.set(true)
	clk.add(2 * time.Hour)
	if err := verify(k2); err != nil {
		t.Fatalf("after a failed periodic refresh: %v", err)
	}
	// The periodic refresh drops withdrawn keys.
	idp.set(false, k2)
	clk.add(2 * time.Minute)
	if err := verify(k1); !errors.Is(err, errBadToken) {
		t.Fatalf("withdrawn key = %v, want errBadToken", err)
	}
}

func TestOIDCProviderDown(t *testing.T) {
	idp := &fakeIDP{}
	idp.set(true)
	clk := &clock{now: time.Unix(1_800_000_000, 0)}
	v := newTestVerifier(idp, clk)
	_, err := v.verify(context.Background(), signClaims(t, testKey(t, "k1"), claimsFor("alice", clk.Now())))
	if !errors.Is(err, errIdentityProviderUnavailable) {
		t.Fatalf("verify with the provider down = %v, want errIdentityProviderUnavailable", err)
	}
}

func TestCertPrincipal(t *testing.T) {
	u, _ := url.Parse("spiffe://example.org/ns/a/sa/b")
	cert := &x509.Certificate{
		Subject:  pkix.Name{CommonName: "alice", Organization: []string{"Example"}},
		DNSNames: []string{"alice.example.org"}, EmailAddresses: []string{"alice@example.org"}, URIs: []*url.URL{u},
	}
	for from, want := range map[string]string{
		CertCommonName: "alice", CertSubject: "CN=alice,O=Example", CertDNSName: "alice.example.org",
		CertEmail: "alice@example.org", CertURI: "spiffe://example.org/ns/a/sa/b",
	} {
		if got, err := certPrincipal(cert, from); err != nil || got != want {
			t.Errorf("certPrincipal(%s) = %q, %v; want %q", from, got, err, want)
		}
	}
	if _, err := certPrincipal(&x509.Certificate{}, CertEmail); err == nil {
		t.Error("a certificate without an email SAN names no principal")
	}
}

// FuzzOIDCToken feeds arbitrary bearer tokens to the verifier (keys cached, no network): it never panics,
// and whatever it accepts names a valid principal.
func FuzzOIDCToken(f *testing.F) {
	k1 := testKey(f, "k1")
	now := time.Unix(1_800_000_000, 0)
	f.Add(signClaims(f, k1, claimsFor("alice", now)))
	f.Add(signClaims(f, k1, map[string]any{"iss": testIssuer, "aud": 7, "sub": []any{1}, "exp": "soon"}))
	f.Add("eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.")
	f.Add("a.b.c")
	f.Add("..")
	v := newTestVerifier(&fakeIDP{}, &clock{now: now})
	v.keys = []jose.JSONWebKey{k1.Public()}
	v.fetched, v.tried = now, now
	f.Fuzz(func(t *testing.T, token string) {
		p, err := v.verify(context.Background(), token)
		if err != nil {
			if !errors.Is(err, errBadToken) {
				t.Fatalf("error %v is not errBadToken", err)
			}
			return
		}
		if checkPrincipal(p) != nil {
			t.Fatalf("accepted principal %q", p)
		}
	})
}

// FuzzOIDCClaims runs the claim checks on arbitrary (already verified) claim sets.
func FuzzOIDCClaims(f *testing.F) {
	now := time.Unix(1_800_000_000, 0)
	good, _ := json.Marshal(claimsFor("alice", now))
	f.Add(good)
	f.Add([]byte(`{"iss":"https://idp.test","aud":["bridge"],"sub":"","exp":1e300}`))
	f.Add([]byte(`{"exp":-1,"nbf":"x","sub":{"a":1}}`))
	v := newTestVerifier(&fakeIDP{}, &clock{now: now})
	f.Fuzz(func(t *testing.T, raw []byte) {
		var std jwt.Claims
		var claims map[string]any
		if json.Unmarshal(raw, &std) != nil || json.Unmarshal(raw, &claims) != nil {
			return
		}
		p, err := v.principalOf(std, claims)
		if err != nil {
			return
		}
		if std.Expiry == nil || std.Issuer != testIssuer || !std.Audience.Contains("bridge") || checkPrincipal(p) != nil {
			t.Fatalf("accepted %s as %q", raw, p)
		}
	})
}
