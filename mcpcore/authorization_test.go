package mcpcore

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The flow's own tests are in package upstreamauth; these are the seam's: asking the host and checking
// its answer.

func TestAuthorizationAnswerValidation(t *testing.T) {
	req := &AuthorizationRequest{
		AuthorizationURL: "https://as.example/authorize?client_id=c&state=S1&scope=a+b",
		RedirectURL:      "http://127.0.0.1/cb",
	}
	for _, tc := range []struct {
		name   string
		answer AuthorizationAnswer
		bad    []string // fields with violations
	}{
		{"redirect", AuthorizationAnswer{RedirectURL: "http://127.0.0.1/cb?code=x&state=S1&iss=https%3A%2F%2Fas.example"}, nil},
		{"redirect with error", AuthorizationAnswer{RedirectURL: "http://127.0.0.1/cb?error=access_denied&state=S1"}, nil},
		{"code and state", AuthorizationAnswer{Code: "x", State: "S1"}, nil},
		{"nothing", AuthorizationAnswer{}, []string{"authorization"}},
		{"both", AuthorizationAnswer{RedirectURL: "http://127.0.0.1/cb?code=x&state=S1", Code: "x"}, []string{"authorization"}},
		{"wrong state", AuthorizationAnswer{RedirectURL: "http://127.0.0.1/cb?code=x&state=S2"}, []string{"authorization.redirectUrl"}},
		{"other redirect", AuthorizationAnswer{RedirectURL: "https://evil.example/cb?code=x&state=S1"}, []string{"authorization.redirectUrl"}},
		{"no code", AuthorizationAnswer{RedirectURL: "http://127.0.0.1/cb?state=S1"}, []string{"authorization.redirectUrl"}},
		{"code without state", AuthorizationAnswer{Code: "x"}, []string{"authorization.state"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, v := range validateAuthorizationAnswer(req, &tc.answer) {
				got = append(got, v.Field)
			}
			if diff := cmp.Diff(tc.bad, got); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRespondRefusesABadAuthorizationAnswer(t *testing.T) {
	c := New(Options{Logger: oauthLogger(t)})
	defer c.Close(context.Background())
	s := newSession(c, "s-auth", OpenParams{Owner: "alice"}, ServerConfig{Name: "x", Transport: TransportStreamableHTTP, URL: "http://127.0.0.1:1/mcp", OAuth: nopAuthorizer{}})
	if err := c.register(s); err != nil { // opening: its events are routed
		t.Fatal(err)
	}
	defer func() { c.dispatcher.closeSession(s.id, "session closed"); c.remove(s); s.events.close() }()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	watch := c.dispatcher.Watch(nil, 8)
	defer watch.Close()
	created := make(chan *PendingRequest, 1)
	go func() { // ends when the watch is closed
		for ev := range watch.C() {
			if ev.Kind == EventRequestCreated {
				created <- ev.Request
			}
		}
	}()
	type result struct {
		code string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		res, err := s.auth.askAuthorization(ctx, &AuthorizationRequest{
			AuthorizationURL: "http://127.0.0.1:1/authorize?state=S1&scope=x", RedirectURL: "http://127.0.0.1/mcp-bridge/oauth/callback", ServerName: "x", Scopes: []string{"x"},
		})
		if err != nil {
			done <- result{err: err}
			return
		}
		done <- result{code: res.Code}
	}()
	p := <-created
	if p.Kind != KindAuthorization || p.Authorization.ServerName != "x" || !slices.Equal(p.Authorization.Scopes, []string{"x"}) {
		t.Fatalf("pending request = %+v", p)
	}
	err := c.Dispatcher().Respond(ctx, "alice", p.ID, Answer{Authorization: &AuthorizationAnswer{Code: "c", State: "wrong"}})
	var inv *InvalidError
	if !errors.As(err, &inv) {
		t.Fatalf("Respond with a wrong state = %v, want an InvalidError", err)
	}
	if err := c.Dispatcher().Respond(ctx, "alice", p.ID, Answer{Sampling: &mcp.CreateMessageWithToolsResult{}}); !errors.Is(err, ErrWrongAnswerKind) {
		t.Fatalf("Respond with sampling = %v, want ErrWrongAnswerKind", err)
	}
	if err := c.Dispatcher().Respond(ctx, "alice", p.ID, Answer{Authorization: &AuthorizationAnswer{Code: "c", State: "S1"}}); err != nil {
		t.Fatalf("Respond: %v", err)
	}
	if r := <-done; r.err != nil || r.code != "c" {
		t.Fatalf("askAuthorization = %+v", r)
	}
}

// nopAuthorizer is an Authorizer that adds nothing to a connection.
type nopAuthorizer struct{}

func (nopAuthorizer) Connect(c AuthConnection) (auth.OAuthHandler, http.RoundTripper, error) {
	return nil, c.Base, nil
}

func (nopAuthorizer) Secrets() []string { return nil }

// oauthLogger logs to the test's output.
func oauthLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}
