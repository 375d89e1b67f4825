package config

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/mcp-bridge/mcp-bridge/internal/oidcdefaults"
)

// Policy settings: principals from an identity provider (OIDC) and from client certificates, per-server
// access and item filters, the audit log and per-principal rate limits (docs/adr/0012-policy.md).

// OIDC accepts JWT bearer tokens an OpenID Connect identity provider issued: signed with a key of the
// issuer's JWKS, for the configured audience, not expired (give or take ClockSkew). The principal is the
// value of PrincipalClaim.
type OIDC struct {
	// Issuer is the issuer URL; tokens' iss must equal it. When JWKSURL is empty the keys' URL is
	// discovered from Issuer + "/.well-known/openid-configuration".
	Issuer string `yaml:"issuer"`
	// Audience is the value tokens' aud must hold.
	Audience string `yaml:"audience"`
	// JWKSURL is where the issuer publishes its signing keys (optional: see Issuer).
	JWKSURL string `yaml:"jwksURL"`
	// PrincipalClaim names the claim whose string value is the principal (default "sub").
	PrincipalClaim string `yaml:"principalClaim"`
	// GroupsClaim, if set, names the claim (a string or an array of strings) whose values are the
	// principal's groups, by which approvers may be named (mcpServers.*.approvers.groups).
	GroupsClaim string `yaml:"groupsClaim"`
	// Algorithms are the JWS algorithms accepted (default: RS256, RS384, RS512, PS256, PS384, PS512,
	// ES256, ES384, ES512, EdDSA). Symmetric algorithms and "none" are never accepted.
	Algorithms []string `yaml:"algorithms"`
	// ClockSkew is the leeway for exp, nbf and iat (default 1m).
	ClockSkew time.Duration `yaml:"clockSkew"`
	// RefreshInterval is how often the keys are fetched again (default 1h).
	RefreshInterval time.Duration `yaml:"refreshInterval"`
	// MinRefreshInterval bounds how often a token signed with an unknown key (kid) makes the bridge
	// fetch the keys again (default 30s).
	MinRefreshInterval time.Duration `yaml:"minRefreshInterval"`
	// CAFile, if set, is a PEM file of CA certificates trusted for the issuer's HTTPS, besides the
	// system's. Relative to the config file's directory.
	CAFile string `yaml:"caFile"`
}

// Defaults of OIDC, the token verifier's too: internal/oidcdefaults owns them.
const (
	DefaultPrincipalClaim     = oidcdefaults.PrincipalClaim
	DefaultClockSkew          = oidcdefaults.ClockSkew
	DefaultRefreshInterval    = oidcdefaults.RefreshInterval
	DefaultMinRefreshInterval = oidcdefaults.MinRefreshInterval
)

// OIDCAlgorithms are the JWS algorithms the bridge can accept, the default of OIDC.Algorithms
// (oidcdefaults.Algorithms).
var OIDCAlgorithms = oidcdefaults.Algorithms

// MTLS maps verified TLS client certificates to principals.
type MTLS struct {
	// PrincipalFrom names the part of the client certificate that is the principal: commonName (the
	// subject's CN), subject (the whole subject DN, e.g. "CN=alice,O=Example"), dnsName, email or uri
	// (the first subject alternative name of that kind). Empty: certificates only gate connections.
	PrincipalFrom string `yaml:"principalFrom"`
}

// The values of MTLS.PrincipalFrom.
const (
	CertCommonName = "commonName"
	CertSubject    = "subject"
	CertDNSName    = "dnsName"
	CertEmail      = "email"
	CertURI        = "uri"
)

// ItemFilter allows tools, prompts or resources of a server: an item is allowed when it matches a
// pattern of Allow (or Allow is empty) and none of Deny. Patterns are globs: * matches any run of
// characters, ? one character.
type ItemFilter struct {
	Allow []string `yaml:"allow"`
	Deny  []string `yaml:"deny"`
	// Approve (tools only) are the globs of the tools whose calls wait for an approver's decision
	// before they are sent (docs/adr/0080-approvals.md).
	Approve []string `yaml:"approve"`
}

// Approvers name who may approve a server's tool calls that need approval: principals (names or globs),
// or members of groups (names or globs) that the identity provider's groups claim (auth.oidc.groupsClaim)
// puts the caller in. The caller itself may not approve its own call unless AllowSelf.
type Approvers struct {
	Principals []string `yaml:"principals"`
	Groups     []string `yaml:"groups"`
	AllowSelf  bool     `yaml:"allowSelf"`
}

// Audit configures the audit log: one JSON record per session created or deleted, tool called and
// server request answered.
type Audit struct {
	// Output is "stderr", "stdout" or a file path (appended to, created with mode 0600; relative to the
	// config file's directory). Empty turns the audit log off.
	Output string `yaml:"output"`
	// IncludePayloads adds tool arguments and hosts' answers to server requests to the records.
	IncludePayloads bool `yaml:"includePayloads"`
}

// RateLimit bounds the calls of one principal.
type RateLimit struct {
	// CallsPerSecond is the sustained rate of calls (0: no rate limit).
	CallsPerSecond float64 `yaml:"callsPerSecond"`
	// Burst is how many calls may come at once above the rate (default: CallsPerSecond rounded up).
	Burst int `yaml:"burst"`
	// ConcurrentCalls bounds the calls in flight (0: no bound).
	ConcurrentCalls int `yaml:"concurrentCalls"`
}

// RateLimits are RateLimit for every principal; Principals overrides them for the principals it names.
type RateLimits struct {
	CallsPerSecond  float64              `yaml:"callsPerSecond"`
	Burst           int                  `yaml:"burst"`
	ConcurrentCalls int                  `yaml:"concurrentCalls"`
	Principals      map[string]RateLimit `yaml:"principals"`
}

// For returns the limits of principal.
func (r RateLimits) For(principal string) RateLimit {
	if l, ok := r.Principals[principal]; ok {
		return l
	}
	return RateLimit{CallsPerSecond: r.CallsPerSecond, Burst: r.Burst, ConcurrentCalls: r.ConcurrentCalls}
}

// Enabled reports whether any principal has a limit.
func (r RateLimits) Enabled() bool {
	if r.CallsPerSecond > 0 || r.ConcurrentCalls > 0 {
		return true
	}
	for _, l := range r.Principals {
		if l.CallsPerSecond > 0 || l.ConcurrentCalls > 0 {
			return true
		}
	}
	return false
}

func (c *Config) resolvePolicyPaths(abs func(*string)) {
	if c.Auth.OIDC != nil {
		abs(&c.Auth.OIDC.CAFile)
	}
	if o := c.Audit.Output; o != "" && o != "stderr" && o != "stdout" {
		abs(&c.Audit.Output)
	}
}

func (c *Config) applyPolicyDefaults() {
	if o := c.Auth.OIDC; o != nil {
		if o.PrincipalClaim == "" {
			o.PrincipalClaim = DefaultPrincipalClaim
		}
		if len(o.Algorithms) == 0 {
			o.Algorithms = slices.Clone(OIDCAlgorithms)
		}
		if o.ClockSkew == 0 {
			o.ClockSkew = DefaultClockSkew
		}
		if o.RefreshInterval == 0 {
			o.RefreshInterval = DefaultRefreshInterval
		}
		if o.MinRefreshInterval == 0 {
			o.MinRefreshInterval = DefaultMinRefreshInterval
		}
	}
}

// validatePolicy checks the policy settings.
func (c *Config) validatePolicy() error {
	if err := c.validateOIDC(); err != nil {
		return err
	}
	switch c.Auth.MTLS.PrincipalFrom {
	case "", CertCommonName, CertSubject, CertDNSName, CertEmail, CertURI:
	default:
		return c.errorAt("auth.mtls.principalFrom", fmt.Sprintf("unknown value %q: use commonName, subject, dnsName, email or uri", c.Auth.MTLS.PrincipalFrom))
	}
	if c.Auth.MTLS.PrincipalFrom != "" && !c.TLS.MutualTLS() {
		return c.errorAt("auth.mtls.principalFrom", "needs tls.clientCAFile: without mutual TLS there are no client certificates")
	}
	for _, name := range c.ServerNames() {
		s, path := c.MCPServers[name], c.serverPath(name)
		if err := c.checkPatterns(joinPath(path, "allowedPrincipals"), s.AllowedPrincipals); err != nil {
			return err
		}
		for key, f := range map[string]*ItemFilter{"tools": s.Tools, "prompts": s.Prompts, "resources": s.Resources} {
			if f == nil {
				continue
			}
			if err := c.checkPatterns(joinPath(joinPath(path, key), "allow"), f.Allow); err != nil {
				return err
			}
			if err := c.checkPatterns(joinPath(joinPath(path, key), "deny"), f.Deny); err != nil {
				return err
			}
			if len(f.Approve) > 0 && key != "tools" {
				return c.errorAt(joinPath(joinPath(path, key), "approve"), "only tool calls can need approval")
			}
		}
		if err := c.validateApprovals(path, s); err != nil {
			return err
		}
	}
	return c.validateRateLimits()
}

// validateApprovals checks a server's approval keys: approvers only with tools.approve and the other way
// round, patterns without control characters, a positive expiry.
func (c *Config) validateApprovals(path string, s *Server) error {
	var approve []string
	if s.Tools != nil {
		approve = s.Tools.Approve
	}
	if err := c.checkPatterns(joinPath(joinPath(path, "tools"), "approve"), approve); err != nil {
		return err
	}
	a := s.Approvers
	switch {
	case len(approve) > 0 && (a == nil || len(a.Principals)+len(a.Groups) == 0):
		return c.errorAt(joinPath(path, "approvers"), "required with tools.approve: name the principals or groups who may approve")
	case len(approve) == 0 && a != nil:
		return c.errorAt(joinPath(path, "approvers"), "needs tools.approve: no tool of this server needs approval")
	case s.ApprovalExpiry < 0:
		return c.errorAt(joinPath(path, "approvalExpiry"), "must not be negative")
	case s.ApprovalExpiry > 0 && len(approve) == 0:
		return c.errorAt(joinPath(path, "approvalExpiry"), "needs tools.approve")
	}
	if a == nil {
		return nil
	}
	if err := c.checkPatterns(joinPath(joinPath(path, "approvers"), "principals"), a.Principals); err != nil {
		return err
	}
	return c.checkPatterns(joinPath(joinPath(path, "approvers"), "groups"), a.Groups)
}

func (c *Config) checkPatterns(path string, patterns []string) error {
	for i, p := range patterns {
		if p == "" || strings.ContainsFunc(p, unicode.IsControl) {
			return c.errorAt(indexPath(path, i), "patterns must be non-empty, without control characters")
		}
	}
	return nil
}

func (c *Config) validateOIDC() error {
	o := c.Auth.OIDC
	if o == nil {
		return nil
	}
	if o.Issuer == "" {
		return c.errorAt("auth.oidc.issuer", "required: the identity provider's issuer URL")
	}
	if err := checkHTTPS(o.Issuer); err != nil {
		return c.errorAt("auth.oidc.issuer", err.Error())
	}
	if o.Audience == "" {
		return c.errorAt("auth.oidc.audience", "required: the audience tokens must be issued for")
	}
	if o.JWKSURL != "" {
		if err := checkHTTPS(o.JWKSURL); err != nil {
			return c.errorAt("auth.oidc.jwksURL", err.Error())
		}
	}
	if o.PrincipalClaim == "" {
		return c.errorAt("auth.oidc.principalClaim", "must not be empty")
	}
	for i, a := range o.Algorithms {
		if !slices.Contains(OIDCAlgorithms, a) {
			return c.errorAt(indexPath("auth.oidc.algorithms", i), fmt.Sprintf("unsupported algorithm %q: use %s", a, strings.Join(OIDCAlgorithms, ", ")))
		}
	}
	if o.MinRefreshInterval > o.RefreshInterval {
		return c.errorAt("auth.oidc.minRefreshInterval", "must not be longer than refreshInterval")
	}
	if o.CAFile != "" {
		if err := checkFile(o.CAFile); err != nil {
			return c.errorAt("auth.oidc.caFile", err.Error())
		}
	}
	return nil
}

// checkHTTPS accepts an https URL with a host: an identity provider's keys fetched over plain HTTP could
// be replaced by anyone on the path.
func checkHTTPS(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%q is not an absolute URL", raw)
	}
	if u.Scheme != "https" {
		return fmt.Errorf("%q must use https", raw)
	}
	return nil
}

func (c *Config) validateRateLimits() error {
	check := func(path string, l RateLimit) error {
		switch {
		case l.CallsPerSecond < 0:
			return c.errorAt(joinPath(path, "callsPerSecond"), "must not be negative")
		case l.Burst < 0:
			return c.errorAt(joinPath(path, "burst"), "must not be negative")
		case l.ConcurrentCalls < 0:
			return c.errorAt(joinPath(path, "concurrentCalls"), "must not be negative")
		case l.Burst > 0 && l.CallsPerSecond == 0:
			return c.errorAt(joinPath(path, "burst"), "needs callsPerSecond")
		}
		return nil
	}
	r := c.RateLimits
	if err := check("rateLimits", RateLimit{CallsPerSecond: r.CallsPerSecond, Burst: r.Burst, ConcurrentCalls: r.ConcurrentCalls}); err != nil {
		return err
	}
	for _, p := range slices.Sorted(maps.Keys(c.RateLimits.Principals)) {
		if err := check(joinPath("rateLimits.principals", p), c.RateLimits.Principals[p]); err != nil {
			return err
		}
	}
	return nil
}
