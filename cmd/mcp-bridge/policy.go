package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/mcp-bridge/mcp-bridge/internal/config"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
	"github.com/mcp-bridge/mcp-bridge/server"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// Policy wiring (docs/adr/0012-policy.md): principals from an identity provider and client
// certificates, per-server policies, the audit log and rate limits.

// policyOptions fills in the service options of the policy settings. It returns what must be closed
// after the service (the audit log file), or nil.
func policyOptions(cfg *config.Config, o *server.Options) (closer func() error, err error) {
	if oc := cfg.Auth.OIDC; oc != nil {
		client, err := oidcClient(oc.CAFile)
		if err != nil {
			return nil, err
		}
		o.OIDC = &server.OIDCOptions{
			Issuer: oc.Issuer, Audience: oc.Audience, JWKSURL: oc.JWKSURL, PrincipalClaim: oc.PrincipalClaim, GroupsClaim: oc.GroupsClaim,
			Algorithms: oc.Algorithms, ClockSkew: oc.ClockSkew, RefreshInterval: oc.RefreshInterval,
			MinRefreshInterval: oc.MinRefreshInterval, HTTPClient: client,
		}
	}
	o.CertPrincipal = cfg.Auth.MTLS.PrincipalFrom
	o.Caller = callerInfo
	if cfg.RateLimits.Enabled() {
		rl := cfg.RateLimits
		o.RateLimits = func(principal string) server.RateLimit {
			l := rl.For(principal)
			return server.RateLimit{CallsPerSecond: l.CallsPerSecond, Burst: l.Burst, ConcurrentCalls: l.ConcurrentCalls}
		}
	}
	o.AuditPayloads = cfg.Audit.IncludePayloads
	switch out := cfg.Audit.Output; out {
	case "":
	case "stderr", "stdout":
		w := os.Stderr
		if out == "stdout" {
			w = os.Stdout
		}
		o.Audit = slog.New(slog.NewJSONHandler(w, nil)).With("log", "audit")
	default:
		f, err := os.OpenFile(out, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("audit log: %w", err)
		}
		o.Audit = slog.New(slog.NewJSONHandler(f, nil)).With("log", "audit")
		closer = f.Close
	}
	return closer, nil
}

// oidcClient is the HTTP client that fetches the identity provider's keys: the system's roots plus
// caFile's certificates, a bounded time per request.
func oidcClient(caFile string) (*http.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if caFile != "" {
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("auth.oidc.caFile: %v", err)
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("auth.oidc.caFile %s holds no PEM certificate", caFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}, nil
}

// callerInfo tells the service how a call reached it. On the gateway's in-process connection the REST
// client's certificate comes as metadata the gateway itself set (clients cannot: incomingHeaderMatcher
// drops the bridge's keys); on TCP it is the TLS connection's verified chain.
func callerInfo(ctx context.Context) server.CallerInfo {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return server.CallerInfo{Transport: "grpc"}
	}
	switch p.Addr.Network() {
	case gatewayNetwork:
		info := server.CallerInfo{Transport: "rest"}
		md, _ := metadata.FromIncomingContext(ctx)
		if v := md.Get(clientCertMetadataKey); len(v) == 1 {
			if cert, err := x509.ParseCertificate([]byte(v[0])); err == nil {
				info.Cert = cert
			}
		}
		return info
	case "unix":
		return server.CallerInfo{Transport: "unix"}
	}
	info := server.CallerInfo{Transport: "grpc"}
	if ti, ok := p.AuthInfo.(credentials.TLSInfo); ok && len(ti.State.VerifiedChains) > 0 && len(ti.State.VerifiedChains[0]) > 0 {
		info.Cert = ti.State.VerifiedChains[0][0]
	}
	return info
}

// corePolicy translates a server's policy keys; nil when it has none.
func corePolicy(s *config.Server) *mcpcore.Policy {
	if len(s.AllowedPrincipals) == 0 && s.Tools == nil && s.Prompts == nil && s.Resources == nil {
		return nil
	}
	filter := func(f *config.ItemFilter) mcpcore.Filter {
		if f == nil {
			return mcpcore.Filter{}
		}
		return mcpcore.Filter{Allow: f.Allow, Deny: f.Deny}
	}
	p := &mcpcore.Policy{
		AllowedOwners: s.AllowedPrincipals,
		Tools:         filter(s.Tools),
		Prompts:       filter(s.Prompts),
		Resources:     filter(s.Resources),
	}
	if s.Tools != nil && len(s.Tools.Approve) > 0 && s.Approvers != nil {
		p.Approval = &mcpcore.ApprovalPolicy{
			Tools:     s.Tools.Approve,
			Approvers: mcpcore.Approvers{Principals: s.Approvers.Principals, Groups: s.Approvers.Groups, AllowSelf: s.Approvers.AllowSelf},
			Expiry:    s.ApprovalExpiry,
		}
	}
	return p
}

// setRetryAfter gives a REST answer of RESOURCE_EXHAUSTED with google.rpc.RetryInfo a Retry-After
// header (whole seconds, rounded up, as RFC 9110 has it).
func setRetryAfter(w http.ResponseWriter, err error) {
	st, ok := status.FromError(err)
	if !ok {
		return
	}
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok && ri.GetRetryDelay() != nil {
			secs := int64((ri.GetRetryDelay().AsDuration() + time.Second - 1) / time.Second)
			w.Header().Set("Retry-After", strconv.FormatInt(max(secs, 1), 10))
			return
		}
	}
}
