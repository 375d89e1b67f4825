package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/internal/testauth"
)

// The enterprise grants through the binary (ADR 0011), against internal/testauth: private_key_jwt client
// credentials, the JWT bearer grant of workload identity, Enterprise-Managed Authorization (token exchange
// at an IdP, then the JWT bearer grant), and DPoP with server nonces. Key material and assertions are
// files the bridge reads at every grant: each test rotates one and checks that the next grant uses it,
// and that none of them reaches the bridge's log.

// enterpriseBridge starts a bridge with one server, "secured", at p, whose auth block is authYAML (lines
// indented for the auth block), and files in the configuration's directory.
func enterpriseBridge(t *testing.T, p *protectedServer, authYAML string, files map[string]string) *bridge {
	t.Helper()
	servers := fmt.Sprintf("  secured:\n    url: %q\n    auth:\n      type: oauth\n%s", p.url, authYAML)
	if files == nil {
		files = map[string]string{}
	}
	files["tokens.txt"] = "tok-alice alice\n"
	return start(t, bridgeConfig{
		extraServers: servers,
		extra:        "auth:\n  tokensFile: tokens.txt\noauth:\n  authorizationTimeout: 1m\n",
		files:        files,
	})
}

// configDir is the directory of the running bridge's configuration (where its files are).
func (b *bridge) configDir(t *testing.T) string {
	t.Helper()
	for i, a := range b.cmd.Args {
		if a == "--config" && i+1 < len(b.cmd.Args) {
			return filepath.Dir(b.cmd.Args[i+1])
		}
	}
	t.Fatal("the bridge runs without --config")
	return ""
}

// rotate replaces a file of the bridge's configuration directory.
func (b *bridge) rotate(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(b.configDir(t), name), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// openSecured opens a session to "secured" as alice; no person is asked (machine grants).
func openSecured(t *testing.T, ctx context.Context, b *bridge) string {
	t.Helper()
	r, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "secured"})
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	if st := r.GetSession().GetState(); st != pb.SessionState_SESSION_STATE_READY {
		t.Fatalf("session state %v", st)
	}
	return r.GetSession().GetSessionId()
}

// noSecretsLogged fails if any of secrets appears in the bridge's log.
func noSecretsLogged(t *testing.T, b *bridge, secrets ...string) {
	t.Helper()
	for _, line := range b.logs.all() {
		for _, s := range secrets {
			if s != "" && strings.Contains(line, s) {
				t.Errorf("a secret reached the log: %s", line)
			}
		}
	}
}

func pemKey(t *testing.T, k *ecdsa.PrivateKey) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// lastGrant returns the last token request of grant type grant at as.
func lastGrant(t *testing.T, as *testauth.Server, grant string) testauth.Request {
	t.Helper()
	reqs := as.Requests("token")
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Form.Get("grant_type") == grant {
			return reqs[i]
		}
	}
	t.Fatalf("no %s token request", grant)
	return testauth.Request{}
}

func TestUpstreamClientCredentialsPrivateKeyJWT(t *testing.T) {
	as := testauth.New(testauth.Options{ScopesSupported: []string{"mcp"}})
	t.Cleanup(as.Close)
	p := newProtectedServer(t, as, "one")
	key1, key2 := newKey(t), newKey(t)
	as.SetClientKey("bridge-client", &key1.PublicKey)
	b := enterpriseBridge(t, p,
		"      grant: client_credentials\n      clientId: bridge-client\n      clientKeyFile: client-key.pem\n",
		map[string]string{"client-key.pem": pemKey(t, key1)})
	ctx := withToken(testCtx(t), "tok-alice")

	id := openSecured(t, ctx, b)
	if got := b.whoami(t, ctx, id); got != "this is one" {
		t.Errorf("whoami = %q", got)
	}
	r := lastGrant(t, as, "client_credentials")
	if r.Form.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" ||
		r.Form.Get("client_assertion") == "" || r.Form.Get("client_secret") != "" || r.Header.Get("Authorization") != "" {
		t.Errorf("token request is not private_key_jwt: %v", r.Form)
	}
	if r.Form.Get("resource") != p.url {
		t.Errorf("resource = %q, want %q", r.Form.Get("resource"), p.url)
	}
	// The operator sees the grant (and never its credentials: noSecretsLogged below).
	b.logs.waitFor(t, func(rec map[string]any) bool {
		return rec["msg"] == "upstream token obtained" && rec["server"] == "secured" && rec["grant"] == "client_credentials"
	})

	// The key rotates: the authorization server knows only the new one. Once the token expires, the next
	// grant is signed with the new key, read from the file again.
	as.SetClientKey("bridge-client", &key2.PublicKey)
	b.rotate(t, "client-key.pem", pemKey(t, key2))
	as.ExpireAccessTokens()
	if got := b.whoami(t, ctx, id); got != "this is one" {
		t.Errorf("whoami after the key rotated = %q", got)
	}
	if n := len(as.Requests("token")); n != 2 {
		t.Errorf("%d token requests, want 2", n)
	}
	noSecretsLogged(t, b, pemKey(t, key1), pemKey(t, key2), r.Form.Get("client_assertion"))
}

func TestUpstreamWorkloadIdentityJWTBearer(t *testing.T) {
	platform := testauth.NewIssuer("https://kubernetes.default.svc.cluster.local")
	as := testauth.New(testauth.Options{
		ScopesSupported: []string{"mcp"},
		Clients:         map[string]string{"workload": ""}, // a public client: the assertion is the credential
	})
	as.SetTrustedIssuer(platform.Name, platform.Public())
	t.Cleanup(as.Close)
	p := newProtectedServer(t, as, "one")
	mint := func(sub string) string {
		return platform.Mint(map[string]any{"sub": sub, "aud": as.Issuer}, "", time.Hour)
	}
	tok1, tok2 := mint("system:serviceaccount:ns:first"), mint("system:serviceaccount:ns:second")
	b := enterpriseBridge(t, p,
		"      grant: jwt_bearer\n      clientId: workload\n      assertionFile: sa-token\n",
		map[string]string{"sa-token": tok1 + "\n"})
	ctx := withToken(testCtx(t), "tok-alice")

	id := openSecured(t, ctx, b)
	if got := b.whoami(t, ctx, id); got != "this is one" {
		t.Errorf("whoami = %q", got)
	}
	if r := lastGrant(t, as, "urn:ietf:params:oauth:grant-type:jwt-bearer"); r.Form.Get("assertion") != tok1 || r.Form.Get("client_id") != "workload" {
		t.Errorf("jwt-bearer request: assertion is not the token file's, or client_id %q", r.Form.Get("client_id"))
	}

	// The platform rotates the projected token: the next grant presents the new one.
	b.rotate(t, "sa-token", tok2)
	as.ExpireAccessTokens()
	if got := b.whoami(t, ctx, id); got != "this is one" {
		t.Errorf("whoami after rotation = %q", got)
	}
	if r := lastGrant(t, as, "urn:ietf:params:oauth:grant-type:jwt-bearer"); r.Form.Get("assertion") != tok2 {
		t.Error("the grant after rotation did not present the rotated token")
	}

	// A token the authorization server refuses (another audience) fails the session with the server's
	// error code, once, without the token in the error.
	bad := platform.Mint(map[string]any{"sub": "x", "aud": "https://elsewhere.example"}, "", time.Hour)
	b.rotate(t, "sa-token", bad)
	as.ExpireAccessTokens()
	before := len(as.Requests("token"))
	_, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "secured"})
	if err == nil || !strings.Contains(err.Error(), "invalid_grant") || strings.Contains(err.Error(), bad) {
		t.Errorf("CreateSession with a refused assertion: %v", err)
	}
	if n := len(as.Requests("token")) - before; n != 1 {
		t.Errorf("%d token requests for a refused assertion, want 1 (no retry)", n)
	}
	noSecretsLogged(t, b, tok1, tok2, bad)
}

func TestUpstreamEnterpriseManagedAuthorization(t *testing.T) {
	corp := testauth.NewIssuer("https://login.corp.example")
	idp := testauth.New(testauth.Options{
		Clients:     map[string]string{"bridge-at-idp": "idp-secret"},
		JAGClientID: "bridge-at-mcp",
	})
	idp.SetTrustedIssuer(corp.Name, corp.Public())
	t.Cleanup(idp.Close)
	as := testauth.New(testauth.Options{
		ScopesSupported: []string{"mcp"},
		Clients:         map[string]string{"bridge-at-mcp": "mcp-secret"},
	})
	as.SetTrustedIssuer(idp.Issuer, idp.JWTIssuer().Public())
	t.Cleanup(as.Close)
	p := newProtectedServer(t, as, "one")
	idToken := corp.Mint(map[string]any{"sub": "alice@corp.example", "aud": "bridge-at-idp"}, "", time.Hour)
	b := enterpriseBridge(t, p, fmt.Sprintf(`      grant: enterprise_managed
      clientId: bridge-at-mcp
      clientSecretFile: mcp-secret
      idp:
        issuer: %q
        clientId: bridge-at-idp
        clientSecretFile: idp-secret
        subjectTokenFile: id-token
`, idp.Issuer), map[string]string{"mcp-secret": "mcp-secret\n", "idp-secret": "idp-secret\n", "id-token": idToken})
	ctx := withToken(testCtx(t), "tok-alice")

	id := openSecured(t, ctx, b)
	if got := b.whoami(t, ctx, id); got != "this is one" {
		t.Errorf("whoami = %q", got)
	}
	x := lastGrant(t, idp, "urn:ietf:params:oauth:grant-type:token-exchange")
	if x.Form.Get("subject_token") != idToken || x.Form.Get("audience") != as.Issuer || x.Form.Get("resource") != p.url ||
		x.Form.Get("requested_token_type") != "urn:ietf:params:oauth:token-type:id-jag" {
		t.Errorf("token exchange at the IdP: audience %q, resource %q, requested %q",
			x.Form.Get("audience"), x.Form.Get("resource"), x.Form.Get("requested_token_type"))
	}
	j := lastGrant(t, as, "urn:ietf:params:oauth:grant-type:jwt-bearer")
	if j.Form.Get("assertion") == "" || !strings.HasPrefix(j.Header.Get("Authorization"), "Basic ") {
		t.Errorf("JWT bearer grant at the authorization server lacks the ID-JAG or client authentication")
	}

	// A new ID token (the user signed in again): the next grant exchanges it.
	idToken2 := corp.Mint(map[string]any{"sub": "alice@corp.example", "aud": "bridge-at-idp"}, "", time.Hour)
	b.rotate(t, "id-token", idToken2)
	as.ExpireAccessTokens()
	if got := b.whoami(t, ctx, id); got != "this is one" {
		t.Errorf("whoami after the ID token changed = %q", got)
	}
	if x := lastGrant(t, idp, "urn:ietf:params:oauth:grant-type:token-exchange"); x.Form.Get("subject_token") != idToken2 {
		t.Error("the second exchange did not present the new ID token")
	}
	noSecretsLogged(t, b, idToken, idToken2, j.Form.Get("assertion"), "mcp-secret", "idp-secret")
}

func TestUpstreamDPoP(t *testing.T) {
	as := testauth.New(testauth.Options{
		ScopesSupported: []string{"mcp"},
		DPoP:            true,
		DPoPNonce:       "nonce-" + rand.Text(),
	})
	t.Cleanup(as.Close)
	p := newProtectedServer(t, as, "one")
	b := enterpriseBridge(t, p, "      dpop: true\n", nil)
	ctx := withToken(testCtx(t), "tok-alice")

	// The authorization-code flow, the host answering the browser step on its Connect stream.
	host := b.connect(ctx)
	created := b.createAsync(ctx, "secured")
	req := host.NextRequest()
	if req.GetAuthorization() == nil {
		t.Fatalf("pushed request = %v, want an authorization request", req)
	}
	if ack := host.Reply(req.GetRequestId(), authAnswer(authorize(t, req.GetAuthorization(), "secured"))); !ack.GetAccepted() {
		t.Fatalf("reply not accepted: %v", ack)
	}
	cr := await(t, created)
	if cr.err != nil {
		t.Fatalf("CreateSession: %v", cr.err)
	}
	id := cr.resp.GetSession().GetSessionId()
	for range 3 {
		if got := b.whoami(t, ctx, id); got != "this is one" {
			t.Errorf("whoami = %q", got)
		}
	}
	// Every request to the server presented the token with the DPoP scheme (none as Bearer), and the
	// token endpoint was asked with proofs (the nonce challenge answered).
	var dpop, bearer int
	for _, h := range p.guard.Tokens() {
		switch {
		case strings.HasPrefix(h, "DPoP "):
			dpop++
		case strings.HasPrefix(h, "Bearer "):
			bearer++
		}
	}
	if dpop == 0 || bearer != 0 {
		t.Errorf("the server saw %d DPoP and %d Bearer presentations, want only DPoP", dpop, bearer)
	}
	code := lastGrant(t, as, "authorization_code")
	if code.Header.Get("DPoP") == "" {
		t.Error("the token request carried no DPoP proof")
	}
	// Proofs accepted: one token request and at least the session's requests and the three calls.
	if n := as.DPoPProofs(); n < 5 {
		t.Errorf("%d DPoP proofs accepted, want at least 5", n)
	}
}
