package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// REST runs unary methods in-process, through the interceptor chain the gRPC server runs, instead of over a
// second gRPC connection (server/gateway/inproc.go). What a REST client gets must be what a gRPC client gets:
// for each outcome, the same code, the same ErrorInfo reason, and the same failure logged by the bridge's
// logging interceptor, which runs only inside the chain.
func TestRESTAndGRPCAgree(t *testing.T) {
	b := start(t, bridgeConfig{
		extra: "auth:\n  tokensFile: tokens.txt\nlimits:\n  maxMessageBytes: 65536\n",
		files: map[string]string{"tokens.txt": "tok-alice alice\ntok-bob bob\n"},
	})
	ctx := testCtx(t)
	alice, bob := withToken(ctx, "tok-alice"), withToken(ctx, "tok-bob")
	created, err := b.client.CreateSession(alice, &pb.CreateSessionRequest{Server: serverModern})
	if err != nil {
		t.Fatal(err)
	}
	sid := created.GetSession().GetSessionId()
	big := strings.Repeat("x", 70_000)
	bigArgs, _ := structpb.NewStruct(map[string]any{"text": big})

	cases := []struct {
		name  string
		grpc  func() error
		token string
		rest  [3]string // method, path, body
		code  codes.Code
	}{
		{"no token", func() error { _, err := b.client.ListSessions(ctx, &pb.ListSessionsRequest{}); return err },
			"", [3]string{"GET", "/v1/sessions", ""}, codes.Unauthenticated},
		{"wrong token", func() error {
			_, err := b.client.ListServers(withToken(ctx, "nope"), &pb.ListServersRequest{})
			return err
		}, "nope", [3]string{"GET", "/v1/servers", ""}, codes.Unauthenticated},
		{"another principal's session", func() error {
			_, err := b.client.GetSession(bob, &pb.GetSessionRequest{SessionId: sid})
			return err
		}, "tok-bob", [3]string{"GET", "/v1/sessions/" + sid, ""}, codes.NotFound},
		{"unknown server", func() error {
			_, err := b.client.CreateSession(alice, &pb.CreateSessionRequest{Server: "nope"})
			return err
		}, "tok-alice", [3]string{"POST", "/v1/sessions", `{"server":"nope"}`}, codes.NotFound},
		{"missing field", func() error { _, err := b.client.CreateSession(alice, &pb.CreateSessionRequest{}); return err },
			"tok-alice", [3]string{"POST", "/v1/sessions", `{}`}, codes.InvalidArgument},
		{"unknown tool", func() error {
			_, err := b.client.CallTool(alice, &pb.CallToolRequest{SessionId: sid, Name: "no-such-tool"})
			return err
		}, "tok-alice", [3]string{"POST", "/v1/sessions/" + sid + "/tools/no-such-tool:call", `{}`}, codes.InvalidArgument},
		{"answer to no request", func() error {
			_, err := b.client.RespondToRequest(alice, &pb.RespondToRequestRequest{SessionId: sid, RequestId: "r-none",
				Answer: &pb.HostAnswer{Answer: &pb.HostAnswer_Error{Error: &pb.JsonRpcError{Code: -1, Message: "x"}}}})
			return err
		}, "tok-alice", [3]string{"POST", "/v1/sessions/" + sid + "/requests/r-none:respond", `{"error":{"code":-1,"message":"x"}}`}, codes.NotFound},
		{"response over the message limit", func() error {
			_, err := b.client.CallTool(alice, &pb.CallToolRequest{SessionId: sid, Name: "echo", Arguments: bigArgs})
			return err
		}, "", [3]string{}, codes.ResourceExhausted},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			gerr := c.grpc()
			if status.Code(gerr) != c.code {
				t.Fatalf("gRPC: %v, want %v", gerr, c.code)
			}
			if c.rest[0] == "" {
				return // REST refuses a body over the limit before the gateway (413), tested elsewhere
			}
			code, body := b.rest(c.token).do(c.rest[0], c.rest[1], c.rest[2])
			if got := codes.Code(body["code"].(float64)); got != c.code {
				t.Errorf("REST %s %s: %d %v, want code %v", c.rest[0], c.rest[1], code, body, c.code)
			}
			if want := reasonOf(gerr); want != "" && !strings.Contains(compact(body), `"reason":"`+want+`"`) {
				t.Errorf("REST %s %s: %v, want reason %s as over gRPC", c.rest[0], c.rest[1], body, want)
			}
			if code == http.StatusOK {
				t.Errorf("REST %s %s: 200", c.rest[0], c.rest[1])
			}
		})
	}

	// The logging interceptor saw the REST failures too: both "another principal's session" calls are logged
	// as refused GetSession calls naming the session (it runs inside the chain, after authentication).
	method := "/" + pb.BridgeService_ServiceDesc.ServiceName + "/GetSession"
	seen := 0
	b.logs.waitFor(t, func(rec map[string]any) bool {
		if rec["msg"] == "rpc refused" && rec["method"] == method && rec["session"] == sid && rec["code"] == "NotFound" {
			seen++
		}
		return seen >= 2
	})
}

// A server that answers with a result of the wrong shape misbehaved: over gRPC that is INTERNAL with reason
// UPSTREAM_BAD_MESSAGE, and over REST the same code and reason with HTTP 502 Bad Gateway, not 500, so that a
// REST host can tell "the server sent garbage" from "the bridge broke".
func TestRESTAndGRPCAgreeOnAWrongShapeResult(t *testing.T) {
	b := startWithWrongShapeServer(t)
	ctx := testCtx(t)
	cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "wrong"})
	if err != nil {
		t.Fatal(err)
	}
	sid := cs.GetSession().GetSessionId()
	_, gerr := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: sid, Name: "x"})
	if status.Code(gerr) != codes.Internal || reasonOf(gerr) != "UPSTREAM_BAD_MESSAGE" {
		t.Fatalf("gRPC: %v (%s), want INTERNAL UPSTREAM_BAD_MESSAGE", gerr, reasonOf(gerr))
	}
	code, body := b.rest("").do("POST", "/v1/sessions/"+sid+"/tools/x:call", `{}`)
	if code != http.StatusBadGateway {
		t.Errorf("REST: HTTP %d, want 502", code)
	}
	if got := codes.Code(body["code"].(float64)); got != codes.Internal || !strings.Contains(compact(body), `"reason":"UPSTREAM_BAD_MESSAGE"`) {
		t.Errorf("REST: %v, want code INTERNAL and reason UPSTREAM_BAD_MESSAGE as over gRPC", body)
	}
}

// A REST call's deadline (the grpc-gateway Grpc-Timeout header) reaches the handler in-process, and the call
// ends with DEADLINE_EXCEEDED (504), as over gRPC.
func TestRESTDeadline(t *testing.T) {
	b := start(t, bridgeConfig{})
	r := b.rest("")
	sid, _ := r.must("POST", "/v1/sessions", `{"server":"`+serverModern+`"}`)["sessionId"].(string)
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	req := r.request(ctx, "POST", "/v1/sessions/"+sid+"/tools/long_operation:call", `{"arguments":{"durationSeconds":30,"steps":30}}`)
	req.Header.Set("Grpc-Timeout", "300m")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusGatewayTimeout {
		t.Errorf("status %d, want 504", resp.StatusCode)
	}
}
