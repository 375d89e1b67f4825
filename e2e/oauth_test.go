package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/internal/testauth"
)

// protectedServer is an OAuth-protected Streamable HTTP MCP server on loopback: a Go SDK server with a
// "whoami" tool behind testauth's resource guard, which checks that tokens were issued for its URL.
type protectedServer struct {
	url   string // the MCP endpoint, the resource tokens must be bound to
	guard *testauth.Guard
}

func newProtectedServer(t *testing.T, as *testauth.Server, name string) *protectedServer {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "names the server"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "this is " + name}}}, nil, nil
		})
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	p := &protectedServer{}
	var guard http.Handler
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { guard.ServeHTTP(w, r) }))
	t.Cleanup(hs.Close)
	p.url = hs.URL + "/mcp"
	p.guard = as.NewGuard(mcpHandler, testauth.GuardOptions{Resource: p.url, Scopes: []string{"mcp"}})
	guard = p.guard
	return p
}

// tokens returns the distinct bearer tokens the server received.
func (p *protectedServer) tokens() map[string]bool {
	out := map[string]bool{}
	for _, h := range p.guard.Tokens() {
		if tok, ok := strings.CutPrefix(h, "Bearer "); ok {
			out[tok] = true
		}
	}
	return out
}

// startOAuth starts an authorization server, two protected MCP servers using it, and a bridge configured
// with both (auth type oauth) and two principals, alice and bob.
func startOAuth(t *testing.T) (*bridge, *testauth.Server, *protectedServer, *protectedServer) {
	t.Helper()
	as := testauth.New(testauth.Options{ScopesSupported: []string{"mcp"}})
	t.Cleanup(as.Close)
	one, two := newProtectedServer(t, as, "one"), newProtectedServer(t, as, "two")
	servers := ""
	for name, p := range map[string]*protectedServer{"secured": one, "secured-2": two} {
		servers += fmt.Sprintf("  %s:\n    url: %q\n    auth:\n      type: oauth\n", name, p.url)
	}
	b := start(t, bridgeConfig{
		extraServers: servers,
		extra:        "auth:\n  tokensFile: tokens.txt\noauth:\n  authorizationTimeout: 1m\n",
		files:        map[string]string{"tokens.txt": "tok-alice alice\ntok-bob bob\n"},
	})
	return b, as, one, two
}

// authorize plays the person: it opens the authorization URL without following redirects (the
// authorization server approves at once) and returns where the browser was sent.
func authorize(t *testing.T, r *pb.AuthorizationRequest, wantServer string) string {
	t.Helper()
	if r.GetServerName() != wantServer {
		t.Errorf("authorization request for server %q, want %q", r.GetServerName(), wantServer)
	}
	u, err := url.Parse(r.GetAuthorizationUrl())
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("resource") == "" || q.Get("state") == "" {
		t.Errorf("authorization URL lacks PKCE, resource or state: %s", u)
	}
	client := &http.Client{
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Get(u.String())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusFound || loc == "" {
		t.Fatalf("authorization endpoint: %d, Location %q", resp.StatusCode, loc)
	}
	if !strings.HasPrefix(loc, r.GetRedirectUrl()) {
		t.Errorf("redirected to %q, not to the redirect URL %q", loc, r.GetRedirectUrl())
	}
	return loc
}

// pendingAuthorization waits for an authorization request on session "-" — WatchEvents on "-" delivers the
// pending ones first, then each one raised — and checks that ListPendingRequests lists it (a request is
// listed before its event is published).
func pendingAuthorization(t *testing.T, ctx context.Context, c pb.BridgeServiceClient) *pb.ServerRequest {
	t.Helper()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := c.WatchEvents(wctx, &pb.WatchEventsRequest{SessionId: "-"})
	if err != nil {
		t.Fatal(err)
	}
	var pushed *pb.ServerRequest
	for pushed.GetAuthorization() == nil {
		resp, err := w.Recv()
		if err != nil {
			t.Fatalf("waiting for an authorization request on session -: %v", err)
		}
		pushed = resp.GetEvent().GetServerRequest()
	}
	l, err := c.ListPendingRequests(ctx, &pb.ListPendingRequestsRequest{SessionId: "-"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range l.GetRequests() {
		if r.GetRequestId() == pushed.GetRequestId() {
			return r
		}
	}
	t.Fatalf("ListPendingRequests on - = %v, without the authorization request %s that WatchEvents delivered", l.GetRequests(), pushed.GetRequestId())
	return nil
}

func authAnswer(redirect string) *pb.HostAnswer {
	return &pb.HostAnswer{Answer: &pb.HostAnswer_Authorization{Authorization: &pb.AuthorizationResponse{RedirectUrl: redirect}}}
}

type createResult struct {
	resp *pb.CreateSessionResponse
	err  error
}

func (b *bridge) createAsync(ctx context.Context, server string) <-chan createResult {
	ch := make(chan createResult, 1)
	go func() {
		r, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: server})
		ch <- createResult{r, err}
	}()
	return ch
}

func (b *bridge) whoami(t *testing.T, ctx context.Context, sessionID string) string {
	t.Helper()
	r, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: sessionID, Name: "whoami"})
	if err != nil {
		t.Fatalf("whoami: %v", err)
	}
	return textOf(r.GetResult())
}

// The authorization-code flow through the binary over gRPC: the browser step is a pending request on
// session "-" while CreateSession runs; once answered the session is ready and calls carry the token. The
// same principal's next session reuses the grant; another principal authorizes on its own; a token goes
// only to the server it was issued for.
func TestUpstreamOAuthOverGRPC(t *testing.T) {
	b, as, one, two := startOAuth(t)
	ctx := testCtx(t)
	alice, bob := withToken(ctx, "tok-alice"), withToken(ctx, "tok-bob")

	// Alice's host has a Connect stream open, attached to nothing: the authorization request of the
	// session being created is pushed to it, and answered on it.
	aliceHost, bobHost := b.connect(alice), b.connect(bob)
	created := b.createAsync(alice, "secured")
	req := aliceHost.NextRequest()
	if req.GetAuthorization() == nil {
		t.Fatalf("pushed request = %v, want an authorization request", req)
	}
	if listed := pendingAuthorization(t, alice, b.client); listed.GetRequestId() != req.GetRequestId() {
		t.Errorf("ListPendingRequests on - = %v, pushed %v", listed, req)
	}
	if l, _ := b.client.ListPendingRequests(bob, &pb.ListPendingRequestsRequest{SessionId: "-"}); len(l.GetRequests()) != 0 {
		t.Errorf("bob sees alice's authorization request: %v", l.GetRequests())
	}
	if ack := aliceHost.Reply(req.GetRequestId(), authAnswer(authorize(t, req.GetAuthorization(), "secured"))); !ack.GetAccepted() {
		t.Fatalf("reply not accepted: %v", ack)
	}
	ended := aliceHost.Next(func(m *pb.ConnectResponse) bool {
		return m.GetEvent().GetRequestEnded().GetRequestId() == req.GetRequestId()
	})
	if o := ended.GetEvent().GetRequestEnded().GetOutcome(); o != pb.RequestOutcome_REQUEST_OUTCOME_ANSWERED {
		t.Errorf("outcome %v", o)
	}
	cr := await(t, created)
	if cr.err != nil {
		t.Fatalf("CreateSession: %v", cr.err)
	}
	if st := cr.resp.GetSession().GetState(); st != pb.SessionState_SESSION_STATE_READY {
		t.Fatalf("session state %v", st)
	}
	if got := b.whoami(t, alice, cr.resp.GetSession().GetSessionId()); got != "this is one" {
		t.Errorf("whoami = %q", got)
	}
	if n := len(as.Requests("authorize")); n != 1 {
		t.Errorf("%d authorizations after the first session, want 1", n)
	}

	// A second session of alice's reuses the grant: no request, no new authorization.
	second, err := b.client.CreateSession(alice, &pb.CreateSessionRequest{Server: "secured"})
	if err != nil {
		t.Fatalf("second CreateSession: %v", err)
	}
	if got := b.whoami(t, alice, second.GetSession().GetSessionId()); got != "this is one" {
		t.Errorf("whoami = %q", got)
	}
	if n := len(as.Requests("authorize")); n != 1 {
		t.Errorf("%d authorizations after alice's second session, want 1", n)
	}

	// Bob authorizes on his own; this time the host polls ListPendingRequests and answers with
	// RespondToRequest on session "-".
	created = b.createAsync(bob, "secured")
	pushed := bobHost.NextRequest()
	req = pendingAuthorization(t, bob, b.client)
	if pushed.GetRequestId() != req.GetRequestId() {
		t.Errorf("bob's stream got %v, want his own request %s", pushed, req.GetRequestId())
	}
	bobRequest := req.GetRequestId()
	if _, err := b.client.RespondToRequest(alice, &pb.RespondToRequestRequest{SessionId: "-", RequestId: req.GetRequestId(), Answer: authAnswer("http://127.0.0.1/x")}); err == nil {
		t.Error("alice answered bob's authorization request")
	}
	if _, err := b.client.RespondToRequest(bob, &pb.RespondToRequestRequest{SessionId: "-", RequestId: req.GetRequestId(), Answer: authAnswer(authorize(t, req.GetAuthorization(), "secured"))}); err != nil {
		t.Fatalf("RespondToRequest: %v", err)
	}
	cr = await(t, created)
	if cr.err != nil {
		t.Fatalf("bob's CreateSession: %v", cr.err)
	}
	if got := b.whoami(t, bob, cr.resp.GetSession().GetSessionId()); got != "this is one" {
		t.Errorf("whoami = %q", got)
	}
	if n := len(as.Requests("authorize")); n != 2 {
		t.Errorf("%d authorizations after bob's session, want 2", n)
	}

	// Alice's grant for the first server is not used for the second: it asks, and gets its own token.
	created = b.createAsync(alice, "secured-2")
	req = aliceHost.NextRequest()
	if listed := pendingAuthorization(t, alice, b.client); listed.GetRequestId() != req.GetRequestId() {
		t.Errorf("listed %v, pushed %v", listed, req)
	}
	if _, err := b.client.RespondToRequest(alice, &pb.RespondToRequestRequest{SessionId: "-", RequestId: req.GetRequestId(), Answer: authAnswer(authorize(t, req.GetAuthorization(), "secured-2"))}); err != nil {
		t.Fatalf("RespondToRequest: %v", err)
	}
	cr = await(t, created)
	if cr.err != nil {
		t.Fatalf("CreateSession secured-2: %v", cr.err)
	}
	if got := b.whoami(t, alice, cr.resp.GetSession().GetSessionId()); got != "this is two" {
		t.Errorf("whoami = %q", got)
	}

	// Alice's stream never got bob's request.
	for _, m := range aliceHost.Pending() {
		if r := m.GetEvent().GetServerRequest(); r != nil && r.GetRequestId() == bobRequest {
			t.Errorf("alice's stream got bob's request")
		}
	}

	// Tokens: each server saw only tokens issued for it, alice and bob used different ones.
	t1, t2 := one.tokens(), two.tokens()
	if len(t1) != 2 || len(t2) != 1 {
		t.Errorf("server one saw %d tokens (want alice's and bob's), server two %d (want alice's)", len(t1), len(t2))
	}
	for tok := range t1 {
		if t2[tok] {
			t.Errorf("a token was sent to both servers")
		}
		if _, ok := as.Verify(tok, one.url); !ok {
			t.Errorf("server one received a token not issued for it")
		}
	}
	for tok := range t2 {
		if _, ok := as.Verify(tok, two.url); !ok {
			t.Errorf("server two received a token not issued for it")
		}
	}
}

// The same flow over REST, as curl would do it: POST /v1/sessions blocks while GET /v1/sessions/-/events
// streams the authorization request (and GET /v1/sessions/-/requests lists it); it is answered with POST
// /v1/sessions/-/requests/{id}:respond.
func TestUpstreamOAuthOverREST(t *testing.T) {
	b, as, _, _ := startOAuth(t)
	r := b.rest("tok-alice")
	ev := r.events("-") // authorization requests of sessions being created
	created := r.async(http.MethodPost, "/v1/sessions", `{"server":"secured"}`)
	pushed := ev.next(func(e *pb.Event) bool { return e.GetServerRequest().GetAuthorization() != nil }).GetServerRequest()
	// A request is listed before its event is published: once pushed, it is listed.
	l := r.must(http.MethodGet, "/v1/sessions/-/requests", "")
	reqs, _ := l["requests"].([]any)
	if len(reqs) == 0 {
		t.Fatalf("GET /v1/sessions/-/requests = %v after the authorization request was pushed, want it listed", l)
	}
	req, _ := reqs[0].(map[string]any)
	if req["requestId"] != pushed.GetRequestId() {
		t.Errorf("listed %v, pushed %v", req["requestId"], pushed.GetRequestId())
	}
	authURL, _ := jsonPath(req, "authorization", "authorizationUrl").(string)
	redirectURL, _ := jsonPath(req, "authorization", "redirectUrl").(string)
	loc := authorize(t, &pb.AuthorizationRequest{AuthorizationUrl: authURL, RedirectUrl: redirectURL, ServerName: "secured"}, "secured")
	r.must(http.MethodPost, "/v1/sessions/-/requests/"+req["requestId"].(string)+":respond", compact(map[string]any{"authorization": map[string]any{"redirectUrl": loc}}))
	sess := await(t, created)
	ev.next(func(e *pb.Event) bool { return e.GetRequestEnded().GetRequestId() == pushed.GetRequestId() })
	if sess["state"] != "SESSION_STATE_READY" {
		t.Fatalf("session = %v", sess)
	}
	out := r.must(http.MethodPost, "/v1/sessions/"+sess["sessionId"].(string)+"/tools/whoami:call", `{}`)
	if got := jsonPath(out, "result", "content", 0, "text", "text"); got != "this is one" {
		t.Errorf("whoami = %v", out)
	}
	if n := len(as.Requests("authorize")); n != 1 {
		t.Errorf("%d authorizations, want 1", n)
	}
}
