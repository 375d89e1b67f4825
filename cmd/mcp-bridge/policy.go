package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/mcp-bridge/mcp-bridge/internal/config"
	"github.com/mcp-bridge/mcp-bridge/server"
	"github.com/mcp-bridge/mcp-bridge/server/gateway"
)

// Policy wiring (docs/adr/0012-policy.md): principals from an identity provider and client
// certificates, per-server policies, the audit log and rate limits.

// policyOptions fills in the service options of the policy settings. It returns the audit log file in
// force, which must be closed after the service.
func policyOptions(cfg *config.Config, o *server.Options) (*auditFile, error) {
	live, err := liveOptions(cfg)
	if err != nil {
		return nil, err
	}
	o.Tokens, o.OIDC, o.CertPrincipal, o.RateLimits = live.Tokens, live.OIDC, live.CertPrincipal, live.RateLimits
	o.Caller = gateway.CallerInfo
	o.AuditPayloads = cfg.Audit.IncludePayloads
	audit, closer, err := openAudit(cfg.Audit)
	if err != nil {
		return nil, err
	}
	o.Audit = audit
	return &auditFile{close: closer}, nil
}

// openAudit opens the audit log audit.output names: nil when off; closer is nil unless it is a file.
func openAudit(a config.Audit) (log *slog.Logger, closer func() error, err error) {
	switch out := a.Output; out {
	case "":
	case "stderr", "stdout":
		w := os.Stderr
		if out == "stdout" {
			w = os.Stdout
		}
		log = slog.New(slog.NewJSONHandler(w, nil)).With("log", "audit")
	default:
		f, err := os.OpenFile(out, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("audit log: %w", err)
		}
		log = slog.New(slog.NewJSONHandler(f, nil)).With("log", "audit")
		closer = f.Close
	}
	return log, closer, nil
}

// auditFile is the audit log file in force (none: a nil close); a reload that changes audit.output
// replaces it.
type auditFile struct {
	mu    sync.Mutex
	close func() error
}

// replace makes closer the file in force and returns the one it replaces (nil: none).
func (a *auditFile) replace(closer func() error) (old func() error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	old, a.close = a.close, closer
	return old
}

// Close closes the file in force. a may be nil.
func (a *auditFile) Close() error {
	if a == nil {
		return nil
	}
	if c := a.replace(nil); c != nil {
		return c()
	}
	return nil
}

// liveOptions are the service's options that a reload changes (reload.go): principals and tokens, the
// identity provider, the certificate rule, rate limits and the servers' descriptions.
func liveOptions(cfg *config.Config) (server.LiveOptions, error) {
	var o server.LiveOptions
	if oc := cfg.Auth.OIDC; oc != nil {
		client, err := oidcClient(oc.CAFile)
		if err != nil {
			return o, err
		}
		o.OIDC = &server.OIDCOptions{
			Issuer: oc.Issuer, Audience: oc.Audience, JWKSURL: oc.JWKSURL, PrincipalClaim: oc.PrincipalClaim, GroupsClaim: oc.GroupsClaim,
			Algorithms: oc.Algorithms, ClockSkew: oc.ClockSkew, RefreshInterval: oc.RefreshInterval,
			MinRefreshInterval: oc.MinRefreshInterval, HTTPClient: client,
		}
	}
	o.Tokens = cfg.Auth.Tokens
	o.MaxEventStreamsPerPrincipal = cfg.Limits.MaxEventStreamsPerPrincipal
	o.CertPrincipal = cfg.Auth.MTLS.PrincipalFrom
	if cfg.RateLimits.Enabled() {
		rl := cfg.RateLimits
		o.RateLimits = func(principal string) server.RateLimit {
			l := rl.For(principal)
			return server.RateLimit{CallsPerSecond: l.CallsPerSecond, Burst: l.Burst, ConcurrentCalls: l.ConcurrentCalls}
		}
	}
	for _, name := range cfg.ServerNames() {
		o.Servers = append(o.Servers, server.ServerDescription{Name: name, Description: cfg.MCPServers[name].Description})
	}
	return o, nil
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
