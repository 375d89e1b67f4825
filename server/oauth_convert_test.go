package server

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

func TestAuthorizationRequestConversions(t *testing.T) {
	pr := &mcpcore.PendingRequest{
		ID: "req-1", SessionID: "s-1", Owner: "alice", Kind: mcpcore.KindAuthorization,
		Authorization: &mcpcore.AuthorizationRequest{
			AuthorizationURL: "https://as.example/authorize?state=S",
			RedirectURL:      "http://127.0.0.1/cb",
			ServerName:       "github",
			Scopes:           []string{"repo"},
		},
	}
	got, err := serverRequestToProto(pr)
	if err != nil {
		t.Fatal(err)
	}
	want := &pb.AuthorizationRequest{AuthorizationUrl: "https://as.example/authorize?state=S", RedirectUrl: "http://127.0.0.1/cb", ServerName: "github", Scopes: []string{"repo"}}
	if diff := cmp.Diff(want, got.GetAuthorization(), protocmp.Transform()); diff != "" {
		t.Errorf("payload (-want +got):\n%s", diff)
	}
	if got.GetDelivery() != pb.Delivery_DELIVERY_UNSPECIFIED {
		t.Errorf("delivery = %v", got.GetDelivery())
	}

	a, err := answerFromProto(&pb.HostAnswer{Answer: &pb.HostAnswer_Authorization{Authorization: &pb.AuthorizationResponse{RedirectUrl: "http://127.0.0.1/cb?code=c&state=S"}}})
	if err != nil {
		t.Fatal(err)
	}
	if a.Authorization == nil || a.Authorization.RedirectURL != "http://127.0.0.1/cb?code=c&state=S" || answerViolationPrefix(a) != "authorization" {
		t.Errorf("answer = %+v", a)
	}
}
