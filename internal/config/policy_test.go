package config

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPolicyKeys(t *testing.T) {
	dir := t.TempDir()
	ca := writeFile(t, "ca.pem", "x")
	content := `
mcpServers:
  files:
    command: x
    allowedPrincipals: [alice, "team-*"]
    tools: {allow: ["read_*", echo], deny: [read_secret], approve: ["delete_*"]}
    approvers: {principals: [carol], groups: [ops], allowSelf: true}
    approvalExpiry: 90s
    prompts: {deny: ["*"]}
    resources: {allow: ["file:///docs/*"]}
tls: {certFile: ` + ca + `, keyFile: ` + ca + `, clientCAFile: ` + ca + `}
auth:
  oidc:
    issuer: https://idp.example.com/realms/x
    audience: mcp-bridge
    groupsClaim: groups
    caFile: ` + ca + `
  mtls: {principalFrom: commonName}
audit: {output: audit.log, includePayloads: true}
rateLimits:
  callsPerSecond: 2.5
  concurrentCalls: 4
  principals:
    ci-bot: {callsPerSecond: 100, burst: 200}
`
	c, err := Parse(filepath.Join(dir, "c.yaml"), []byte(content))
	if err != nil {
		t.Fatal(err)
	}
	s := c.MCPServers["files"]
	if diff := cmp.Diff([]string{"alice", "team-*"}, s.AllowedPrincipals); diff != "" {
		t.Errorf("allowedPrincipals (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&ItemFilter{Allow: []string{"read_*", "echo"}, Deny: []string{"read_secret"}, Approve: []string{"delete_*"}}, s.Tools); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(&Approvers{Principals: []string{"carol"}, Groups: []string{"ops"}, AllowSelf: true}, s.Approvers); diff != "" || s.ApprovalExpiry != 90*time.Second {
		t.Errorf("approvers (-want +got):\n%s, expiry %v", diff, s.ApprovalExpiry)
	}
	if s.Prompts == nil || s.Prompts.Deny[0] != "*" || s.Resources == nil || s.Resources.Allow[0] != "file:///docs/*" {
		t.Errorf("prompts %+v, resources %+v", s.Prompts, s.Resources)
	}
	want := &OIDC{
		Issuer: "https://idp.example.com/realms/x", Audience: "mcp-bridge", PrincipalClaim: "sub",
		Algorithms: OIDCAlgorithms, ClockSkew: time.Minute, RefreshInterval: time.Hour, MinRefreshInterval: 30 * time.Second,
		CAFile: ca, GroupsClaim: "groups",
	}
	if diff := cmp.Diff(want, c.Auth.OIDC); diff != "" {
		t.Errorf("oidc (-want +got):\n%s", diff)
	}
	if c.Auth.MTLS.PrincipalFrom != CertCommonName {
		t.Errorf("mtls = %+v", c.Auth.MTLS)
	}
	if c.Audit.Output != filepath.Join(dir, "audit.log") || !c.Audit.IncludePayloads {
		t.Errorf("audit = %+v", c.Audit)
	}
	if got := c.RateLimits.For("alice"); got != (RateLimit{CallsPerSecond: 2.5, ConcurrentCalls: 4}) {
		t.Errorf("limits of alice = %+v", got)
	}
	if got := c.RateLimits.For("ci-bot"); got != (RateLimit{CallsPerSecond: 100, Burst: 200}) {
		t.Errorf("limits of ci-bot = %+v", got)
	}
	if !c.RateLimits.Enabled() {
		t.Error("rate limits not enabled")
	}
}

func TestPolicyErrors(t *testing.T) {
	dir := t.TempDir()
	ca := writeFile(t, "ca.pem", "x")
	for _, tc := range []struct{ name, content, want string }{
		{"filter key", "mcpServers:\n  a:\n    command: x\n    tools: {allowed: [x]}\n", `c.yaml:4:13: mcpServers.a.tools.allowed: unknown key (did you mean "allow"?)`},
		{"filter list", "mcpServers:\n  a:\n    command: x\n    tools: {allow: x}\n", `c.yaml:4:20: mcpServers.a.tools.allow: must be a list, not "x"`},
		{"empty pattern", "mcpServers:\n  a:\n    command: x\n    resources: {deny: [\"\"]}\n", `c.yaml:4:24: mcpServers.a.resources.deny[0]: patterns must be non-empty, without control characters`},
		{"empty principal", "mcpServers:\n  a:\n    command: x\n    allowedPrincipals: [\"\"]\n", `c.yaml:4:25: mcpServers.a.allowedPrincipals[0]: patterns must be non-empty, without control characters`},
		{"oidc issuer", "auth:\n  oidc: {audience: a}\n", `c.yaml:2:3: auth.oidc.issuer: required: the identity provider's issuer URL`},
		{"oidc http", "auth:\n  oidc: {issuer: \"http://idp\", audience: a}\n", `c.yaml:2:10: auth.oidc.issuer: "http://idp" must use https`},
		{"oidc audience", "auth:\n  oidc: {issuer: \"https://idp\"}\n", `c.yaml:2:3: auth.oidc.audience: required: the audience tokens must be issued for`},
		{"oidc alg", "auth:\n  oidc: {issuer: \"https://idp\", audience: a, algorithms: [HS256]}\n", `c.yaml:2:59: auth.oidc.algorithms[0]: unsupported algorithm "HS256": use ` + strings.Join(OIDCAlgorithms, ", ")},
		{"oidc refresh", "auth:\n  oidc: {issuer: \"https://idp\", audience: a, refreshInterval: 10s}\n", `c.yaml:2:3: auth.oidc.minRefreshInterval: must not be longer than refreshInterval`},
		{"mtls value", "auth:\n  mtls: {principalFrom: cn}\n", `c.yaml:2:10: auth.mtls.principalFrom: unknown value "cn": use commonName, subject, dnsName, email or uri`},
		{"mtls without ca", "auth:\n  mtls: {principalFrom: subject}\n", `c.yaml:2:10: auth.mtls.principalFrom: needs tls.clientCAFile: without mutual TLS there are no client certificates`},
		{"rate negative", "rateLimits: {callsPerSecond: -1}\n", `c.yaml:1:14: rateLimits.callsPerSecond: must not be negative`},
		{"rate type", "rateLimits: {callsPerSecond: fast}\n", `c.yaml:1:30: rateLimits.callsPerSecond: must be a number, not "fast"`},
		{"burst alone", "rateLimits:\n  principals:\n    bob: {burst: 3}\n", `c.yaml:3:11: rateLimits.principals.bob.burst: needs callsPerSecond`},
		{"audit key", "audit: {file: x}\n", `c.yaml:1:9: audit.file: unknown key`},
		{"approvers missing", "mcpServers:\n  a:\n    command: x\n    tools: {approve: [send_*]}\n", `c.yaml:2:3: mcpServers.a.approvers: required with tools.approve: name the principals or groups who may approve`},
		{"approvers empty", "mcpServers:\n  a:\n    command: x\n    tools: {approve: [send_*]}\n    approvers: {allowSelf: true}\n", `c.yaml:5:5: mcpServers.a.approvers: required with tools.approve: name the principals or groups who may approve`},
		{"approvers without approve", "mcpServers:\n  a:\n    command: x\n    approvers: {principals: [bob]}\n", `c.yaml:4:5: mcpServers.a.approvers: needs tools.approve: no tool of this server needs approval`},
		{"approve on prompts", "mcpServers:\n  a:\n    command: x\n    prompts: {approve: [x]}\n", `c.yaml:4:15: mcpServers.a.prompts.approve: only tool calls can need approval`},
		{"approval expiry", "mcpServers:\n  a:\n    command: x\n    tools: {approve: [x]}\n    approvers: {groups: [ops]}\n    approvalExpiry: -1s\n", `c.yaml:6:21: mcpServers.a.approvalExpiry: duration "-1s" is negative`},
		{"approver pattern", "mcpServers:\n  a:\n    command: x\n    tools: {approve: [x]}\n    approvers: {principals: [\"\"]}\n", `c.yaml:5:30: mcpServers.a.approvers.principals[0]: patterns must be non-empty, without control characters`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			content := strings.ReplaceAll(tc.content, "CA", ca)
			_, err := Parse(filepath.Join(dir, "c.yaml"), []byte(content))
			if err == nil {
				t.Fatal("Parse succeeded")
			}
			if got := strings.TrimPrefix(err.Error(), dir+string(filepath.Separator)); got != tc.want {
				t.Errorf("error\n got: %s\nwant: %s", got, tc.want)
			}
		})
	}
}
