package upstreamauth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/mcp-bridge/mcp-bridge/internal/testauth"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// oauthFixture is an MCP server behind testauth's guard, an upstream OAuth client whose host answers
// authorization requests by fetching the authorization URL without following redirects (the
// authorization server approves at once), and the record of what the host was asked.
type oauthFixture struct {
	t      *testing.T
	as     *testauth.Server
	guard  *testauth.Guard
	url    string // the MCP endpoint
	client *Client

	mu      sync.Mutex // guards asked
	asked   []*mcpcore.AuthorizationRequest
	decline bool
}

type fixtureOptions struct {
	as    testauth.Options
	guard testauth.GuardOptions
	store *TokenStore
}

func newOAuthFixture(t *testing.T, fo fixtureOptions) *oauthFixture {
	t.Helper()
	f := &oauthFixture{t: t}
	f.as = testauth.New(fo.as)
	t.Cleanup(f.as.Close)

	srv := mcp.NewServer(&mcp.Implementation{Name: "guarded", Version: "1.0.0"}, nil)
	for _, name := range []string{"whoami", "admin"} {
		mcp.AddTool(srv, &mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest, map[string]any) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " ok"}}}, nil, nil
			})
	}
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	mux := http.NewServeMux()
	var guard http.Handler = http.NotFoundHandler()
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { guard.ServeHTTP(w, r) }))
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	f.url = hs.URL + "/mcp"
	fo.guard.Resource = f.url
	f.guard = f.as.NewGuard(mcpHandler, fo.guard)
	guard = f.guard

	f.client = NewClient(Options{Store: fo.store})
	return f
}

// ask plays the host and its user (mcpcore.AuthConnection.Ask): it fetches the authorization URL
// without following the redirect and answers with the URL the authorization server redirected to.
func (f *oauthFixture) ask(ctx context.Context, req *mcpcore.AuthorizationRequest) (*mcpcore.AuthorizationAnswer, error) {
	f.mu.Lock()
	f.asked = append(f.asked, req)
	decline := f.decline
	f.mu.Unlock()
	if decline {
		return nil, fmt.Errorf("%w: %s (%s)", mcpcore.ErrAuthorization, "the user closed the window", mcpcore.OutcomeAnswered)
	}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer hc.CloseIdleConnections()
	resp, err := hc.Get(req.AuthorizationURL)
	if err != nil {
		f.t.Errorf("fetching the authorization URL: %v", err)
		return nil, fmt.Errorf("%w: fetch failed", mcpcore.ErrAuthorization)
	}
	resp.Body.Close()
	return &mcpcore.AuthorizationAnswer{RedirectURL: resp.Header.Get("Location")}, nil
}

func (f *oauthFixture) askedCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.asked)
}

// testSession is one session of an owner to the guarded server, as the core would describe its
// connections to the server's authorizer.
type testSession struct {
	f    *oauthFixture
	auth mcpcore.Authorizer
	conn mcpcore.AuthConnection
}

// session makes a session of owner for the guarded server (not connected: connect does that with the
// session's OAuth handler, on the SDK's Streamable HTTP transport).
func (f *oauthFixture) session(owner string, cfg *Config) *testSession {
	f.t.Helper()
	if cfg == nil {
		cfg = &Config{}
	}
	s := &testSession{f: f, auth: f.client.Server(cfg)}
	s.conn = mcpcore.AuthConnection{
		Server: "guarded", URL: f.url, Owner: owner,
		Base:       http.DefaultTransport,
		Logger:     oauthLogger(f.t),
		Ask:        f.ask,
		Connecting: func() bool { return false },
	}
	return s
}

// flow returns the session's shared flow, if one exists.
func (s *testSession) flow() *oauthFlow {
	return s.f.client.Options().Store.existingFlow(grantKey{Server: s.conn.Server, Resource: s.conn.URL, Owner: s.conn.Owner})
}

// connect opens an SDK client session to the guarded server with s's OAuth handler.
func (f *oauthFixture) connect(ctx context.Context, s *testSession) (*mcp.ClientSession, error) {
	f.t.Helper()
	tr := &http.Transport{}
	f.t.Cleanup(tr.CloseIdleConnections)
	s.conn.Base = tr
	h, rt, err := s.auth.Connect(s.conn)
	if err != nil {
		return nil, err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "oauth-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:             f.url,
		HTTPClient:           &http.Client{Transport: rt},
		OAuthHandler:         h,
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return nil, err
	}
	f.t.Cleanup(func() { _ = cs.Close() })
	return cs, nil
}

func callOK(t *testing.T, ctx context.Context, cs *mcp.ClientSession, tool string) {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("tools/call %s: %v", tool, err)
	}
	if res.IsError {
		t.Fatalf("tools/call %s: error result", tool)
	}
}

func TestOAuthAuthorizationCodeThroughHost(t *testing.T) {
	f := newOAuthFixture(t, fixtureOptions{guard: testauth.GuardOptions{Scopes: []string{"mcp:read"}}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	alice := f.session("alice", nil)
	cs, err := f.connect(ctx, alice)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	callOK(t, ctx, cs, "whoami")
	if n := f.askedCount(); n != 1 {
		t.Fatalf("host asked %d times, want 1", n)
	}
	got := f.asked[0]
	if got.ServerName != "guarded" || got.RedirectURL != DefaultRedirectURL || !slices.Equal(got.Scopes, []string{"mcp:read"}) {
		t.Errorf("authorization request = %+v", got)
	}

	// The authorization and token requests carried PKCE S256 and the resource indicator (RFC 8707).
	authz := f.as.Requests("authorize")
	if len(authz) != 1 {
		t.Fatalf("authorize requests = %d, want 1", len(authz))
	}
	if q := authz[0].Form; q.Get("code_challenge_method") != "S256" || q.Get("resource") != f.url {
		t.Errorf("authorize query = %v", q)
	}
	for _, r := range f.as.Requests("token") {
		if r.Form.Get("resource") != f.url && r.Form.Get("grant_type") == "authorization_code" {
			t.Errorf("token request without the resource: %v", r.Form)
		}
		if r.Form.Get("code_verifier") == "" && r.Form.Get("grant_type") == "authorization_code" {
			t.Errorf("token request without the PKCE verifier")
		}
	}

	// Another session of the same owner shares the grant: no second question.
	cs2, err := f.connect(ctx, f.session("alice", nil))
	if err != nil {
		t.Fatalf("second connect: %v", err)
	}
	callOK(t, ctx, cs2, "whoami")
	if n := f.askedCount(); n != 1 {
		t.Errorf("host asked %d times after alice's second session, want 1", n)
	}

	// Another owner authorizes on its own.
	cs3, err := f.connect(ctx, f.session("bob", nil))
	if err != nil {
		t.Fatalf("bob's connect: %v", err)
	}
	callOK(t, ctx, cs3, "whoami")
	if n := f.askedCount(); n != 2 {
		t.Errorf("host asked %d times after bob's session, want 2", n)
	}

	// Only tokens the authorization server issued for this server ever reached it.
	for _, h := range f.guard.Tokens() {
		tok, ok := strings.CutPrefix(h, "Bearer ")
		if h == "" {
			continue
		}
		if !ok {
			t.Errorf("the server received Authorization %q", h)
			continue
		}
		if _, valid := f.as.Verify(tok, f.url); !valid {
			t.Errorf("the server received a token not valid for it")
		}
	}
}

func TestOAuthStepUpUnionsScopes(t *testing.T) {
	f := newOAuthFixture(t, fixtureOptions{guard: testauth.GuardOptions{
		Scopes:     []string{"mcp:read"},
		ToolScopes: map[string][]string{"admin": {"mcp:admin"}},
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := f.connect(ctx, f.session("alice", nil))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	callOK(t, ctx, cs, "whoami")
	callOK(t, ctx, cs, "admin") // 403 insufficient_scope → second authorization → retried
	if n := f.askedCount(); n != 2 {
		t.Fatalf("host asked %d times, want 2", n)
	}
	if got, want := f.asked[1].Scopes, []string{"mcp:read", "mcp:admin"}; !sameSet(got, want) {
		t.Errorf("step-up scopes = %v, want %v", got, want)
	}
	callOK(t, ctx, cs, "whoami") // the new token still carries the first scope
}

func TestOAuthStepUpGivesUpWhenGrantedScopesAreRefused(t *testing.T) {
	f := newOAuthFixture(t, fixtureOptions{guard: testauth.GuardOptions{
		Scopes:     []string{"mcp:read"},
		ToolScopes: map[string][]string{"admin": {"mcp:admin"}},
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := f.session("alice", nil)
	cs, err := f.connect(ctx, s)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	callOK(t, ctx, cs, "whoami")
	// Pretend the last grant had the admin scope although the token does not: the server's refusal
	// cannot be fixed by asking the person again.
	s.flow().setGranted([]string{"mcp:read", "mcp:admin"})
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "admin", Arguments: map[string]any{}}); err == nil {
		t.Fatal("admin call succeeded")
	}
	if n := f.askedCount(); n != 1 {
		t.Errorf("host asked %d times, want 1", n)
	}
}

func TestOAuthRefreshWithoutAskingAgain(t *testing.T) {
	// Tokens that live 5s count as expired at once for golang.org/x/oauth2 (10s early expiry): every use
	// refreshes.
	f := newOAuthFixture(t, fixtureOptions{as: testauth.Options{TokenTTL: 5 * time.Second}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := f.connect(ctx, f.session("alice", nil))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	callOK(t, ctx, cs, "whoami")
	callOK(t, ctx, cs, "whoami")
	refreshes := 0
	for _, r := range f.as.Requests("token") {
		if r.Form.Get("grant_type") == "refresh_token" {
			refreshes++
		}
	}
	if refreshes == 0 {
		t.Error("no refresh_token grant was used")
	}
	if n := f.askedCount(); n != 1 {
		t.Errorf("host asked %d times, want 1", n)
	}
}

func TestOAuthDeclinedByHost(t *testing.T) {
	f := newOAuthFixture(t, fixtureOptions{})
	f.decline = true
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := f.connect(ctx, f.session("alice", nil))
	if err == nil {
		t.Fatal("connect succeeded without authorization")
	}
	if !strings.Contains(err.Error(), mcpcore.ErrAuthorization.Error()) || !strings.Contains(err.Error(), "closed the window") {
		t.Errorf("error = %v", err)
	}
}

func TestOAuthDeniedByAuthorizationServer(t *testing.T) {
	f := newOAuthFixture(t, fixtureOptions{as: testauth.Options{Deny: true}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := f.connect(ctx, f.session("alice", nil))
	if err == nil || !strings.Contains(err.Error(), "access_denied") {
		t.Fatalf("connect error = %v, want access_denied", err)
	}
}

func TestOAuthPreRegisteredClient(t *testing.T) {
	f := newOAuthFixture(t, fixtureOptions{as: testauth.Options{
		NoRegistration: true,
		Clients:        map[string]string{"bridge": "s3cret"},
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := f.connect(ctx, f.session("alice", &Config{ClientID: "bridge", ClientSecret: "s3cret"}))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	callOK(t, ctx, cs, "whoami")
	if n := len(f.as.Requests("register")); n != 0 {
		t.Errorf("%d registrations, want 0", n)
	}
}

func TestOAuthClientCredentials(t *testing.T) {
	f := newOAuthFixture(t, fixtureOptions{as: testauth.Options{Clients: map[string]string{"svc": "s3cret"}}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := f.connect(ctx, f.session("alice", &Config{Grant: GrantClientCredentials, ClientID: "svc", ClientSecret: "s3cret"}))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	callOK(t, ctx, cs, "whoami")
	if n := f.askedCount(); n != 0 {
		t.Errorf("host asked %d times, want 0", n)
	}
}

func TestOAuthTokensPersistInEncryptedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	key := bytes.Repeat([]byte{7}, 32)
	store, err := OpenTokenStore(path, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := newOAuthFixture(t, fixtureOptions{store: store})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := f.connect(ctx, f.session("alice", nil))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	callOK(t, ctx, cs, "whoami")

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("at-")) || bytes.Contains(data, []byte("rt-")) {
		t.Error("the token file holds a token in the clear")
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("token file mode = %v (%v), want 0600", fi.Mode().Perm(), err)
	}

	// A second store from the same file (a restarted bridge) needs no authorization.
	store2, err := OpenTokenStore(path, key, nil)
	if err != nil {
		t.Fatalf("reopening: %v", err)
	}
	f.client = NewClient(Options{Store: store2})
	cs2, err := f.connect(ctx, f.session("alice", nil))
	if err != nil {
		t.Fatalf("connect with the reopened store: %v", err)
	}
	callOK(t, ctx, cs2, "whoami")
	if n := f.askedCount(); n != 1 {
		t.Errorf("host asked %d times, want 1", n)
	}

	if _, err := OpenTokenStore(path, bytes.Repeat([]byte{8}, 32), nil); err == nil {
		t.Error("the file opened with another key")
	}
}

func TestTokenStoreForget(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	key := bytes.Repeat([]byte{1}, 32)
	s, err := OpenTokenStore(path, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	k := grantKey{Server: "a", Resource: "https://a.example/mcp", Owner: "alice"}
	s.put(k, &oauth2.Config{ClientID: "c", Endpoint: oauth2.Endpoint{TokenURL: "https://as.example/token"}},
		&oauth2.Token{AccessToken: "at-1", RefreshToken: "rt-1", Expiry: time.Now().Add(time.Hour)}, context.Background())
	s2, err := OpenTokenStore(path, key, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ts := s2.restore(k, http.DefaultClient); ts == nil {
		t.Fatal("grant not restored")
	} else if tok, err := ts.Token(); err != nil || tok.AccessToken != "at-1" {
		t.Fatalf("restored token = %v, %v", tok, err)
	}
	if ts := s2.restore(grantKey{Server: "a", Resource: "https://a.example/mcp", Owner: "bob"}, http.DefaultClient); ts != nil {
		t.Error("bob got alice's grant")
	}
	if ts := s2.restore(grantKey{Server: "a", Resource: "https://evil.example/mcp", Owner: "alice"}, http.DefaultClient); ts != nil {
		t.Error("a grant was restored for another endpoint")
	}
	if err := s2.Forget("a", "alice"); err != nil {
		t.Fatal(err)
	}
	s3, _ := OpenTokenStore(path, key, nil)
	if s3.restore(k, http.DefaultClient) != nil {
		t.Error("a forgotten grant came back")
	}
}

func TestParseTokenStoreKey(t *testing.T) {
	raw := bytes.Repeat([]byte{0xab}, 32)
	for _, tc := range []struct {
		name string
		in   string
		ok   bool
	}{
		{"hex", strings.Repeat("ab", 32) + "\n", true},
		{"base64", "q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s=", true},
		{"raw base64url", "q6urq6urq6urq6urq6urq6urq6urq6urq6urq6urq6s", true},
		{"raw bytes", string(raw), true},
		{"short", "abcd", false},
		{"empty", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := ParseTokenStoreKey([]byte(tc.in))
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok=%v", err, tc.ok)
			}
			if tc.ok && !bytes.Equal(k, raw) {
				t.Errorf("key = %x", k)
			}
		})
	}
}

func TestAuthorizationResultKeepsIssVerbatim(t *testing.T) {
	// RFC 9207: simple string comparison; nothing may normalize the value (a trailing slash, case).
	res, err := authorizationResult(&mcpcore.AuthorizationAnswer{RedirectURL: "http://127.0.0.1/cb?code=c&state=s&iss=HTTPS%3A%2F%2FAS.example%2F"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Iss != "HTTPS://AS.example/" || res.Code != "c" || res.State != "s" {
		t.Errorf("result = %+v", res)
	}
	if _, err := authorizationResult(&mcpcore.AuthorizationAnswer{RedirectURL: "http://127.0.0.1/cb?error=%3Cscript%3E&error_description=evil"}); err == nil ||
		strings.Contains(err.Error(), "script") || strings.Contains(err.Error(), "evil") {
		t.Errorf("error = %v: must fail without echoing the authorization server's text", err)
	}
}

func TestAuthorizationURLMustBeSafe(t *testing.T) {
	c := NewClient(Options{})
	a := c.Server(&Config{}).(*serverAuth)
	conn := mcpcore.AuthConnection{
		Server: "x", URL: "https://mcp.example/mcp", Owner: "alice",
		Ask: func(context.Context, *mcpcore.AuthorizationRequest) (*mcpcore.AuthorizationAnswer, error) {
			t.Error("the host was asked")
			return nil, mcpcore.ErrAuthorization
		},
	}
	for _, u := range []string{"javascript:alert(1)", "file:///etc/passwd", "http://as.example/authorize", "https://169.254.169.254/authorize", "data:text/html,x"} {
		if _, err := a.ask(context.Background(), conn, &oauthFlow{}, u); err == nil || !errors.Is(err, mcpcore.ErrAuthorization) {
			t.Errorf("ask(%q) = %v, want a refusal", u, err)
		}
	}
}

func TestCheckOAuthURL(t *testing.T) {
	for _, tc := range []struct {
		url       string
		allowHTTP bool
		ok        bool
	}{
		{"https://as.example/token", false, true},
		{"http://localhost:8080/token", false, true},
		{"http://127.0.0.1/token", false, true},
		{"http://[::1]:9/token", false, true},
		{"http://as.example/token", false, false},
		{"http://as.example/token", true, true},
		{"ftp://as.example/token", true, false},
		{"https://user:pw@as.example/token", false, false},
		{"https://169.254.169.254/latest/meta-data", false, false},
		{"https://[fe80::1]/x", false, false},
		{"https://[fd00:ec2::254]/x", false, false},
		{"https://100.100.100.200/x", false, false},
		{"https://10.0.0.5/token", false, true}, // private ranges are allowed: in-cluster authorization servers
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkOAuthURL(u, tc.allowHTTP); (err == nil) != tc.ok {
			t.Errorf("checkOAuthURL(%s, allowHTTP=%v) = %v, want ok=%v", tc.url, tc.allowHTTP, err, tc.ok)
		}
	}
}

func TestOAuthClientRefusesForbiddenAddresses(t *testing.T) {
	for _, tc := range []struct {
		addr string
		ok   bool
	}{
		{"169.254.169.254:80", false},
		{"[fe80::1]:443", false},
		{"[::ffff:169.254.169.254]:80", false},
		{"0.0.0.0:80", false},
		{"127.0.0.1:80", true},
		{"10.1.2.3:443", true},
		{"[2001:db8::1]:443", true},
	} {
		if err := dialControl("tcp", tc.addr, nil); (err == nil) != tc.ok {
			t.Errorf("dialControl(%s) = %v, want ok=%v", tc.addr, err, tc.ok)
		}
	}
	// Through the client: a name that resolves to a forbidden address is refused at the dial.
	hc := newOAuthHTTPClient(http.DefaultTransport.(*http.Transport), Options{AllowInsecureHTTP: true})
	_, err := hc.Get("http://169.254.169.254.nip.invalid/") // does not resolve: refused or unresolvable
	if err == nil {
		t.Error("request succeeded")
	}
	_, err = hc.Get("http://169.254.169.254/latest/meta-data")
	if !errors.Is(err, errForbiddenAddress) {
		t.Errorf("request to the metadata address = %v, want errForbiddenAddress", err)
	}
	if !forbiddenAddr(netip.MustParseAddr("::ffff:169.254.1.1")) {
		t.Error("an IPv4-mapped link-local address is allowed")
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// oauthLogger logs to the test's output.
func oauthLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}
