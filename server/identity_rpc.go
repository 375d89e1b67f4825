package server

import (
	"context"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// GetIdentity says who the caller is: its principal and groups (as the auth interceptor put them into ctx), how
// it authenticated, and the servers whose approval requests it may decide (each server's approvers admit it,
// mcpcore.Approvers.Admits). It is what a host or the console shows a person as "you are …".
func (ia *identityAPI) GetIdentity(ctx context.Context, _ *pb.GetIdentityRequest) (*pb.GetIdentityResponse, error) {
	s := ia.s
	who := identity(ctx)
	out := &pb.GetIdentityResponse{
		Principal:      who.Principal,
		Groups:         who.Groups,
		Authentication: s.auth.cur.Load().method(ctx),
	}
	for _, c := range s.core.Servers() { // sorted by name
		if c.Policy == nil || c.Policy.Approval == nil {
			continue
		}
		p := c.Policy.Approval
		// "" as the caller: whether who may decide another principal's calls; AllowSelf says whether its own.
		if !p.Approvers.Admits("", who) {
			continue
		}
		out.Approves = append(out.Approves, &pb.ApproverScope{Server: c.Name, Tools: p.Tools, OwnCalls: p.Approvers.AllowSelf})
	}
	out.Approver = len(out.Approves) > 0
	return out, nil
}

// method says how the call of ctx authenticated; it is called after authenticate admitted the call, so a
// bearer token present is a valid one: a static token, else the identity provider's.
func (a *authenticator) method(ctx context.Context) pb.AuthenticationMethod {
	switch {
	case !a.enabled():
		return pb.AuthenticationMethod_AUTHENTICATION_METHOD_NONE
	case bearerToken(ctx) != "":
		if a.staticPrincipal(bearerToken(ctx)) != "" {
			return pb.AuthenticationMethod_AUTHENTICATION_METHOD_TOKEN
		}
		return pb.AuthenticationMethod_AUTHENTICATION_METHOD_OIDC
	default:
		return pb.AuthenticationMethod_AUTHENTICATION_METHOD_MTLS
	}
}
