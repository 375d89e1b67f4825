package config

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestUpstreamAuth(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("token", "tok-123\n")
	write("apikey", " key-456 \n")
	write("secret", "s3cret\n")
	write("store.key", strings.Repeat("ab", 32)+"\n")
	t.Setenv("MCPB_TEST_TOKEN", "tok-env")
	t.Setenv("MCPB_TEST_TENANT", "acme")

	content := `
oauth:
  tokenStoreFile: tokens.db
  tokenStoreKeyFile: store.key
  authorizationTimeout: 2m
mcpServers:
  github:
    url: https://api.example.com/mcp
    auth:
      type: oauth
      clientId: bridge
      clientSecretFile: secret
      scopes: [repo, read:org]
      redirectUrl: https://host.example/oauth/callback
      clientMetadataUrl: https://host.example/client.json
      dynamicRegistration: false
  machine:
    url: https://m.example/mcp
    auth: {type: oauth, grant: client_credentials, clientId: svc, clientSecretFile: secret}
  static:
    url: https://s.example/mcp
    headers: {X-Trace: "on"}
    auth: {type: bearer, tokenFile: token}
  envtoken:
    url: https://e.example/mcp
    auth: {type: bearer, tokenEnv: MCPB_TEST_TOKEN}
  keyed:
    url: https://k.example/mcp
    auth:
      type: headers
      headerFiles: {X-Api-Key: apikey}
      headerEnv: {X-Tenant: MCPB_TEST_TENANT}
`
	c, err := Parse(filepath.Join(dir, "c.yaml"), []byte(content))
	if err != nil {
		t.Fatal(err)
	}
	gh := c.MCPServers["github"]
	if gh.Auth.ClientSecret() != "s3cret" || gh.Auth.DynamicRegistrationAllowed() {
		t.Errorf("github auth = %+v", gh.Auth)
	}
	if !c.MCPServers["machine"].Auth.DynamicRegistrationAllowed() {
		t.Error("dynamic registration should default to allowed")
	}
	if c.OAuth.TokenStoreFile != filepath.Join(dir, "tokens.db") || c.OAuth.TokenStoreKey.Reveal() != strings.Repeat("ab", 32) {
		t.Errorf("oauth = %+v", c.OAuth)
	}
	for _, tc := range []struct {
		server string
		want   map[string]string
	}{
		{"static", map[string]string{"X-Trace": "on", "Authorization": "Bearer tok-123"}},
		{"envtoken", map[string]string{"Authorization": "Bearer tok-env"}},
		{"keyed", map[string]string{"X-Api-Key": "key-456", "X-Tenant": "acme"}},
		{"github", nil},
	} {
		if diff := cmp.Diff(tc.want, c.MCPServers[tc.server].UpstreamHeaders()); diff != "" {
			t.Errorf("%s headers (-want +got):\n%s", tc.server, diff)
		}
	}

	// Secrets never print.
	for _, s := range []string{
		fmt.Sprintf("%v %+v %#v %s", c.MCPServers["static"].Auth, *c.MCPServers["keyed"].Auth, c.OAuth, gh.Auth.ClientSecretValue),
		mustJSON(t, c),
	} {
		for _, secret := range []string{"tok-123", "key-456", "acme", "s3cret", strings.Repeat("ab", 32)} {
			if strings.Contains(s, secret) {
				t.Errorf("secret %q printed in %s", secret, s)
			}
		}
	}
}

func TestUpstreamAuthEnterpriseGrants(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{"key.pem": "-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----\n", "sa-token": "eyJ.wl.sig\n", "id-token": "eyJ.id.sig", "idp-secret": "idp-s3cret"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("MCPB_TEST_ASSERTION", "eyJ.env.sig")
	content := `
mcpServers:
  cc:
    url: https://cc.example/mcp
    auth: {type: oauth, grant: client_credentials, clientId: svc, clientKeyFile: key.pem, clientKeyAlg: ES256, dpop: true}
  wif:
    url: https://wif.example/mcp
    auth: {type: oauth, grant: jwt_bearer, clientId: wl, assertionFile: sa-token}
  wif-env:
    url: https://wif2.example/mcp
    auth: {type: oauth, grant: jwt_bearer, assertionEnv: MCPB_TEST_ASSERTION}
  ema:
    url: https://ema.example/mcp
    auth:
      type: oauth
      grant: enterprise_managed
      clientId: bridge
      idp:
        issuer: https://idp.example
        tokenEndpoint: https://idp.example/token
        clientId: bridge-idp
        clientSecretFile: idp-secret
        subjectTokenFile: id-token
        subjectTokenType: urn:ietf:params:oauth:token-type:id_token
  dpop:
    url: https://d.example/mcp
    auth: {type: oauth, dpop: true}
`
	c, err := Parse(filepath.Join(dir, "c.yaml"), []byte(content))
	if err != nil {
		t.Fatal(err)
	}
	cc := c.MCPServers["cc"].Auth
	if cc.ClientKeyFile != filepath.Join(dir, "key.pem") || cc.ClientKeyAlg != "ES256" || !cc.DPoP {
		t.Errorf("cc auth = %+v", cc)
	}
	if w := c.MCPServers["wif"].Auth; w.AssertionFile != filepath.Join(dir, "sa-token") || w.Grant != GrantJWTBearer {
		t.Errorf("wif auth = %+v", w)
	}
	idp := c.MCPServers["ema"].Auth.IdP
	want := &IdPAuth{
		Issuer: "https://idp.example", TokenEndpoint: "https://idp.example/token", ClientID: "bridge-idp",
		ClientSecretFile: filepath.Join(dir, "idp-secret"), SubjectTokenFile: filepath.Join(dir, "id-token"),
		SubjectTokenType: "urn:ietf:params:oauth:token-type:id_token",
	}
	if diff := cmp.Diff(want, idp); diff != "" {
		t.Errorf("idp (-want +got):\n%s", diff)
	}
	// The values are not kept in the configuration (mcpcore reads them at every use): nothing to print.
	out := fmt.Sprintf("%+v %+v", *c.MCPServers["ema"].Auth, *idp) + mustJSON(t, c)
	for _, secret := range []string{"eyJ.wl.sig", "eyJ.id.sig", "idp-s3cret", "eyJ.env.sig", "BEGIN PRIVATE KEY"} {
		if strings.Contains(out, secret) {
			t.Errorf("%q printed", secret)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestUpstreamAuthErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "token"), []byte("tok"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "empty"), []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := "mcpServers:\n  s:\n    url: https://s.example/mcp\n    auth:\n"
	tests := []struct {
		name, content, want string
	}{
		{"no type", srv + "      tokenFile: token\n", `mcpServers.s.auth.type: required: oauth, bearer or headers`},
		{"unknown type", srv + "      type: basic\n", `mcpServers.s.auth.type: unknown auth type "basic": use oauth, bearer or headers`},
		{"key of another type", srv + "      type: bearer\n      tokenFile: token\n      clientId: x\n", `mcpServers.s.auth.clientId: clientId applies to auth type oauth, not bearer`},
		{"bearer without source", srv + "      type: bearer\n", `mcpServers.s.auth: auth type bearer needs exactly one of tokenFile and tokenEnv`},
		{"bearer file missing", srv + "      type: bearer\n      tokenFile: nope\n", `mcpServers.s.auth.tokenFile`},
		{"bearer file empty", srv + "      type: bearer\n      tokenFile: empty\n", `is empty`},
		{"bearer env unset", srv + "      type: bearer\n      tokenEnv: MCPB_TEST_NEVER_SET\n", `mcpServers.s.auth.tokenEnv: environment variable MCPB_TEST_NEVER_SET is not set`},
		{"headers empty", srv + "      type: headers\n", `auth type headers needs headerFiles or headerEnv`},
		{"bad header name", srv + "      type: headers\n      headerEnv: {\"X Y\": V}\n", `is not a valid HTTP header name`},
		{"oauth on sse", "mcpServers:\n  s:\n    url: https://s.example/sse\n    transport: sse\n    auth: {type: oauth}\n", `auth type oauth needs the streamable-http transport, not sse`},
		{"auth on stdio", "mcpServers:\n  s:\n    command: x\n    auth: {type: oauth}\n", `mcpServers.s.auth: auth applies only to HTTP servers (url)`},
		{"bad grant", srv + "      type: oauth\n      grant: password\n", `unknown grant "password"`},
		{"client credentials without secret", srv + "      type: oauth\n      grant: client_credentials\n      clientId: x\n", `client_credentials needs clientId and a client secret (clientSecretFile, clientSecretEnv) or key (clientKeyFile, clientKeyEnv)`},
		{"key and secret", srv + "      type: oauth\n      grant: client_credentials\n      clientId: x\n      clientKeyFile: token\n      clientSecretFile: token\n", `a client key and a client secret`},
		{"key without client", srv + "      type: oauth\n      grant: client_credentials\n      clientKeyFile: token\n", `mcpServers.s.auth.clientId: a client key needs a clientId`},
		{"key for authorization code", srv + "      type: oauth\n      clientId: x\n      clientKeyFile: token\n", `private_key_jwt applies to the machine grants`},
		{"key file missing", srv + "      type: oauth\n      grant: client_credentials\n      clientId: x\n      clientKeyFile: nope\n", `mcpServers.s.auth.clientKeyFile`},
		{"bad key alg", srv + "      type: oauth\n      grant: client_credentials\n      clientId: x\n      clientKeyFile: token\n      clientKeyAlg: HS256\n", `unknown algorithm "HS256"`},
		{"alg without key", srv + "      type: oauth\n      clientKeyAlg: ES256\n", `clientKeyAlg: needs clientKeyFile or clientKeyEnv`},
		{"jwt bearer without assertion", srv + "      type: oauth\n      grant: jwt_bearer\n", `jwt_bearer needs assertionFile or assertionEnv`},
		{"assertion for another grant", srv + "      type: oauth\n      assertionEnv: X\n", `assertionEnv: applies to grant jwt_bearer`},
		{"assertion env unset", srv + "      type: oauth\n      grant: jwt_bearer\n      assertionEnv: MCPB_TEST_NEVER_SET\n", `mcpServers.s.auth.assertionEnv: environment variable MCPB_TEST_NEVER_SET is not set`},
		{"enterprise without idp", srv + "      type: oauth\n      grant: enterprise_managed\n      clientId: x\n", `enterprise_managed needs an idp block`},
		{"enterprise without client", srv + "      type: oauth\n      grant: enterprise_managed\n", `enterprise_managed needs the client registered`},
		{"idp without endpoint", srv + "      type: oauth\n      grant: enterprise_managed\n      clientId: x\n      idp: {clientId: y, subjectTokenFile: token}\n", `mcpServers.s.auth.idp: needs issuer or tokenEndpoint`},
		{"idp without subject", srv + "      type: oauth\n      grant: enterprise_managed\n      clientId: x\n      idp: {issuer: https://idp.example, clientId: y}\n", `needs exactly one of subjectTokenFile and subjectTokenEnv`},
		{"idp unknown key", srv + "      type: oauth\n      grant: enterprise_managed\n      clientId: x\n      idp: {issuer: https://idp.example, clientId: y, subjectTokenFile: token, audience: z}\n", `audience`},
		{"idp subject file missing", srv + "      type: oauth\n      grant: enterprise_managed\n      clientId: x\n      idp: {issuer: https://idp.example, clientId: y, subjectTokenFile: nope}\n", `mcpServers.s.auth.idp.subjectTokenFile`},
		{"idp for another grant", srv + "      type: oauth\n      idp: {issuer: https://idp.example}\n", `idp: applies to grant enterprise_managed`},
		{"dpop on bearer", srv + "      type: bearer\n      tokenFile: token\n      dpop: true\n", `dpop applies to auth type oauth`},
		{"secret without client", srv + "      type: oauth\n      clientSecretEnv: X\n", `a client secret needs a clientId`},
		{"bad metadata url", srv + "      type: oauth\n      clientMetadataUrl: http://h.example/c.json\n", `must be an https URL with a path`},
		{"bad redirect", srv + "      type: oauth\n      redirectUrl: /callback\n", `is not an absolute URL without a fragment`},
		{"bad scope", srv + "      type: oauth\n      scopes: [\"a b\"]\n", `is not a valid OAuth scope`},
		{"authorization header twice", "mcpServers:\n  s:\n    url: https://s.example/mcp\n    headers: {Authorization: x}\n    auth: {type: oauth}\n", `conflicts with auth type oauth`},
		{"store without key", "oauth:\n  tokenStoreFile: t.db\n", `oauth.tokenStoreFile: needs tokenStoreKeyFile or tokenStoreKeyEnv`},
		{"key without store", "oauth:\n  tokenStoreKeyEnv: K\n", `a token store key without tokenStoreFile`},
		{"negative timeout", "oauth:\n  authorizationTimeout: -1s\n", `oauth.authorizationTimeout: duration "-1s" is negative`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(filepath.Join(dir, "c.yaml"), []byte(tt.content))
			if err == nil {
				t.Fatal("Parse succeeded, want an error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}
