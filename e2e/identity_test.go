package e2e

// Principals from an identity provider (OIDC JWTs checked against the issuer's JWKS, served here by an
// in-test HTTPS server with keys the test generates) and from TLS client certificates, through the real
// binary over gRPC and REST.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// idp is a minimal OpenID Connect identity provider: discovery document and JWKS over HTTPS.
type idp struct {
	srv     *httptest.Server
	jwks    atomic.Pointer[[]byte] // the published key set
	fetches atomic.Int32           // JWKS requests served
}

func newIDP(t *testing.T) *idp {
	p := &idp{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": p.srv.URL, "jwks_uri": p.srv.URL + "/keys"})
	})
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, _ *http.Request) {
		p.fetches.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(*p.jwks.Load())
	})
	p.srv = httptest.NewTLSServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

// publish makes keys the key set (public parts only).
func (p *idp) publish(t *testing.T, keys ...jose.JSONWebKey) {
	var set jose.JSONWebKeySet
	for _, k := range keys {
		set.Keys = append(set.Keys, k.Public())
	}
	raw, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	p.jwks.Store(&raw)
}

// caPEM is the PEM of the provider's TLS certificate, for auth.oidc.caFile.
func (p *idp) caPEM() string {
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.srv.Certificate().Raw}))
}

func rsaKey(t *testing.T, kid string) jose.JSONWebKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return jose.JSONWebKey{Key: k, KeyID: kid, Algorithm: string(jose.RS256), Use: "sig"}
}

func ecKey(t *testing.T, kid string) jose.JSONWebKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return jose.JSONWebKey{Key: k, KeyID: kid, Algorithm: string(jose.ES256), Use: "sig"}
}

// sign issues a JWT signed with key.
func sign(t *testing.T, key jose.JSONWebKey, claims map[string]any) string {
	t.Helper()
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.SignatureAlgorithm(key.Algorithm), Key: key}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestOIDCPrincipals(t *testing.T) {
	p := newIDP(t)
	k1, k2, rogue := rsaKey(t, "k1"), ecKey(t, "k2"), rsaKey(t, "k1") // rogue: same kid, not published
	p.publish(t, k1)
	b := start(t, bridgeConfig{
		extraServers: probeServer("private", "    allowedPrincipals: [\"*@example.com\"]\n"),
		extra: "auth:\n  oidc:\n    issuer: " + p.srv.URL + "\n    audience: mcp-bridge\n    principalClaim: email\n" +
			"    caFile: idp.pem\n    minRefreshInterval: 1ms\n",
		files: map[string]string{"idp.pem": p.caPEM()},
	})
	ctx := testCtx(t)
	now := time.Now()
	claims := func(email string, edit func(map[string]any)) map[string]any {
		c := map[string]any{"iss": p.srv.URL, "aud": []string{"mcp-bridge", "other"}, "sub": "u-" + email, "email": email,
			"iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
		if edit != nil {
			edit(c)
		}
		return c
	}
	alice := sign(t, k1, claims("alice@example.com", nil))
	bob := sign(t, k1, claims("bob@other.org", nil))

	// alice may use the private server; the session is hers over gRPC and REST alike.
	cs, err := b.client.CreateSession(withToken(ctx, alice), &pb.CreateSessionRequest{Server: "private"})
	if err != nil {
		t.Fatalf("alice: CreateSession(private): %v", err)
	}
	sid := cs.GetSession().GetSessionId()
	if got := compact(b.rest(alice).must("GET", "/v1/sessions", "")); !strings.Contains(got, sid) {
		t.Errorf("alice's sessions over REST = %s, want %s", got, sid)
	}
	// bob is someone else: he sees neither the server nor alice's session.
	ls, err := b.client.ListServers(withToken(ctx, bob), &pb.ListServersRequest{})
	if err != nil || slices.Contains(serverNames(ls.GetServers()), "private") {
		t.Errorf("bob's servers = %v, %v", serverNames(ls.GetServers()), err)
	}
	if code, body := b.rest(bob).do("GET", "/v1/sessions/"+sid, ""); code != http.StatusNotFound {
		t.Errorf("bob: GET alice's session = %d %v", code, body)
	}

	// Tokens that must be refused, over gRPC and REST.
	header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
	payload, _ := json.Marshal(claims("alice@example.com", nil))
	for name, tok := range map[string]string{
		"expired":         sign(t, k1, claims("alice@example.com", func(c map[string]any) { c["exp"] = now.Add(-time.Hour).Unix() })),
		"not yet valid":   sign(t, k1, claims("alice@example.com", func(c map[string]any) { c["nbf"] = now.Add(time.Hour).Unix() })),
		"no expiry":       sign(t, k1, claims("alice@example.com", func(c map[string]any) { delete(c, "exp") })),
		"wrong audience":  sign(t, k1, claims("alice@example.com", func(c map[string]any) { c["aud"] = "someone-else" })),
		"wrong issuer":    sign(t, k1, claims("alice@example.com", func(c map[string]any) { c["iss"] = "https://evil.example" })),
		"no email claim":  sign(t, k1, claims("alice@example.com", func(c map[string]any) { delete(c, "email") })),
		"email not text":  sign(t, k1, claims("alice@example.com", func(c map[string]any) { c["email"] = 42 })),
		"unpublished key": sign(t, rogue, claims("alice@example.com", nil)),
		"alg none":        header + "." + base64.RawURLEncoding.EncodeToString(payload) + ".",
		"tampered":        alice[:strings.LastIndex(alice, ".")] + ".AAAA",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := b.client.ListSessions(withToken(ctx, tok), &pb.ListSessionsRequest{})
			if status.Code(err) != codes.Unauthenticated {
				t.Errorf("gRPC = %v, want UNAUTHENTICATED", err)
			}
			if code, body := b.rest(tok).do("GET", "/v1/sessions", ""); code != http.StatusUnauthorized {
				t.Errorf("REST = %d %v, want 401", code, body)
			}
		})
	}

	// Key rotation: a token signed with a key the cached set lacks makes the bridge fetch the keys again.
	p.publish(t, k2)
	before := p.fetches.Load()
	carol := sign(t, k2, claims("carol@example.com", nil))
	if _, err := b.client.CreateSession(withToken(ctx, carol), &pb.CreateSessionRequest{Server: "private"}); err != nil {
		t.Fatalf("carol (new key k2): %v", err)
	}
	if p.fetches.Load() == before {
		t.Error("the keys were not fetched again for an unknown key id")
	}
	// k1 is gone from the set: its tokens are refused now.
	if _, err := b.client.ListSessions(withToken(ctx, alice), &pb.ListSessionsRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Errorf("alice's token after k1 was withdrawn = %v, want UNAUTHENTICATED", err)
	}
}

// certs is a CA with a server certificate for 127.0.0.1 and client certificates.
type certs struct {
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	caPEM  string
	serial int64
}

func newCerts(t *testing.T) *certs {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, NotBefore: time.Now().Add(-time.Hour),
		NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(der)
	return &certs{ca: ca, caKey: key, caPEM: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})), serial: 1}
}

// issue returns a certificate and key (PEM) signed by the CA.
func (c *certs) issue(t *testing.T, cn string, server bool) (certPEM, keyPEM string, pair tls.Certificate) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	c.serial++
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(c.serial), Subject: pkix.Name{CommonName: cn, Organization: []string{"Example"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.ca, &key.PublicKey, c.caKey)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	keyPEM = string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}))
	pair, err = tls.X509KeyPair([]byte(certPEM), []byte(keyPEM))
	if err != nil {
		t.Fatal(err)
	}
	return certPEM, keyPEM, pair
}

func TestClientCertificatePrincipals(t *testing.T) {
	c := newCerts(t)
	srvCert, srvKey, _ := c.issue(t, "mcp-bridge", true)
	_, _, alice := c.issue(t, "alice", false)
	_, _, bob := c.issue(t, "bob", false)
	b := start(t, bridgeConfig{
		extraServers: probeServer("private", "    allowedPrincipals: [alice]\n"),
		extra:        "tls:\n  certFile: server.pem\n  keyFile: server.key\n  clientCAFile: ca.pem\nauth:\n  mtls: {principalFrom: commonName}\n",
		files:        map[string]string{"server.pem": srvCert, "server.key": srvKey, "ca.pem": c.caPEM},
	})
	pool := x509.NewCertPool()
	pool.AddCert(c.ca)
	tlsFor := func(cert tls.Certificate) *tls.Config {
		return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	grpcAs := func(cert tls.Certificate) pb.BridgeServiceClient {
		conn, err := grpc.NewClient(b.grpc, grpc.WithTransportCredentials(credentials.NewTLS(tlsFor(cert))))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close() })
		return pb.NewBridgeServiceClient(conn)
	}
	restAs := func(cert tls.Certificate, method, path, body string) (int, string) {
		client := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsFor(cert)}}
		defer client.CloseIdleConnections()
		var rd *strings.Reader
		if body == "" {
			rd = strings.NewReader("")
		} else {
			rd = strings.NewReader(body)
		}
		req, err := http.NewRequestWithContext(testCtx(t), method, "https://"+b.http+path, rd)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out json.RawMessage
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, string(out)
	}
	ctx := testCtx(t)
	cs, err := grpcAs(alice).CreateSession(ctx, &pb.CreateSessionRequest{Server: "private"})
	if err != nil {
		t.Fatalf("alice: CreateSession(private): %v", err)
	}
	sid := cs.GetSession().GetSessionId()
	// The principal is the certificate's, over REST too (the gateway hands the verified certificate on).
	if code, body := restAs(alice, "GET", "/v1/sessions/"+sid, ""); code != http.StatusOK {
		t.Errorf("alice over REST: GET her session = %d %s", code, body)
	}
	if code, body := restAs(bob, "GET", "/v1/sessions/"+sid, ""); code != http.StatusNotFound {
		t.Errorf("bob over REST: GET alice's session = %d %s, want 404", code, body)
	}
	if _, err := grpcAs(bob).GetSession(ctx, &pb.GetSessionRequest{SessionId: sid}); status.Code(err) != codes.NotFound {
		t.Errorf("bob over gRPC: GetSession = %v, want NOT_FOUND", err)
	}
	ls, err := grpcAs(bob).ListServers(context.Background(), &pb.ListServersRequest{})
	if err != nil || slices.Contains(serverNames(ls.GetServers()), "private") {
		t.Errorf("bob's servers = %v, %v", serverNames(ls.GetServers()), err)
	}
	if code, body := restAs(bob, "POST", "/v1/sessions", `{"server": "private"}`); code != http.StatusNotFound {
		t.Errorf("bob over REST: CreateSession(private) = %d %s, want 404", code, body)
	}
}
