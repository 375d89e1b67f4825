package e2e

import (
	"net/http"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// TestGetIdentity: GET /v1/identity and GetIdentity say who the caller is — principal, how it authenticated,
// the servers whose approvals it may decide — and a wrong token gets nothing.
func TestGetIdentity(t *testing.T) {
	t.Run("without auth", func(t *testing.T) {
		b := start(t, bridgeConfig{})
		got := b.rest("").must("GET", "/v1/identity", "")
		if got["principal"] != "local" || got["authentication"] != "AUTHENTICATION_METHOD_NONE" || got["approver"] != nil {
			t.Errorf("GET /v1/identity = %v, want local, NONE, no approver", got)
		}
	})
	t.Run("tokens and approvers", func(t *testing.T) {
		b := start(t, bridgeConfig{
			extraServers: probeServer("gated", "    tools: {approve: [\"bl*\"]}\n    approvers: {principals: [bob, carol], allowSelf: true}\n"),
			extra:        "auth:\n  tokensFile: tokens.txt\n",
			files:        map[string]string{"tokens.txt": "tok-alice alice\ntok-bob bob\n"},
		})
		got := b.rest("tok-bob").must("GET", "/v1/identity", "")
		want := `{"approver":true,"approves":[{"ownCalls":true,"server":"gated","tools":["bl*"]}],"authentication":"AUTHENTICATION_METHOD_TOKEN","principal":"bob"}`
		if compact(got) != want {
			t.Errorf("bob: GET /v1/identity = %s, want %s", compact(got), want)
		}
		got = b.rest("tok-alice").must("GET", "/v1/identity", "")
		if compact(got) != `{"authentication":"AUTHENTICATION_METHOD_TOKEN","principal":"alice"}` {
			t.Errorf("alice: GET /v1/identity = %s", compact(got))
		}
		resp, err := b.client.GetIdentity(withToken(testCtx(t), "tok-bob"), &pb.GetIdentityRequest{})
		if err != nil || resp.GetPrincipal() != "bob" || !resp.GetApprover() || resp.GetAuthentication() != pb.AuthenticationMethod_AUTHENTICATION_METHOD_TOKEN {
			t.Errorf("gRPC GetIdentity as bob = %v, %v", resp, err)
		}
		if _, err := b.client.GetIdentity(withToken(testCtx(t), "wrong"), &pb.GetIdentityRequest{}); status.Code(err) != codes.Unauthenticated {
			t.Errorf("gRPC GetIdentity with a wrong token = %v, want UNAUTHENTICATED", err)
		}
		if code, body := b.rest("wrong").do("GET", "/v1/identity", ""); code != http.StatusUnauthorized {
			t.Errorf("GET /v1/identity with a wrong token = %d %v, want 401", code, body)
		}
	})
}
