package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestConsoleKey(t *testing.T) {
	tests := []struct {
		name    string
		yaml    string
		want    bool
		wantErr string
	}{
		{name: "unset is on", yaml: "listen: {http: 127.0.0.1:8080}\n", want: true},
		{name: "on", yaml: "console: {enabled: true}\n", want: true},
		{name: "off", yaml: "console: {enabled: false}\n", want: false},
		{name: "empty block is on", yaml: "console: {}\n", want: true},
		{name: "unknown key", yaml: "console: {enable: false}\n", wantErr: "console.enable: unknown key"},
		{name: "not a bool", yaml: "console: {enabled: maybe}\n", wantErr: "console.enabled"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("c.yaml", []byte(tt.yaml))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse = %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Console.On(); got != tt.want {
				t.Errorf("Console.On() = %v, want %v", got, tt.want)
			}
		})
	}
	oidcTests := []struct {
		name    string
		yaml    string
		want    *ConsoleOIDC
		wantErr string
	}{
		{name: "defaults", yaml: "auth: {oidc: {issuer: https://idp.example, audience: console}}\nconsole: {oidc: {clientID: console}}\n",
			want: &ConsoleOIDC{ClientID: "console", Scopes: []string{"openid"}, Token: "id_token"}},
		{name: "openid added", yaml: "auth: {oidc: {issuer: https://idp.example, audience: api}}\nconsole: {oidc: {clientID: c, scopes: [email], token: access_token}}\n",
			want: &ConsoleOIDC{ClientID: "c", Scopes: []string{"openid", "email"}, Token: "access_token"}},
		{name: "without auth.oidc", yaml: "console: {oidc: {clientID: c}}\n", wantErr: "console.oidc: needs auth.oidc"},
		{name: "without a client id", yaml: "auth: {oidc: {issuer: https://idp.example, audience: a}}\nconsole: {oidc: {scopes: [email]}}\n", wantErr: "console.oidc.clientID: required"},
		{name: "unknown token", yaml: "auth: {oidc: {issuer: https://idp.example, audience: a}}\nconsole: {oidc: {clientID: c, token: refresh_token}}\n", wantErr: "console.oidc.token"},
	}
	for _, tt := range oidcTests {
		t.Run("oidc "+tt.name, func(t *testing.T) {
			c, err := Parse("c.yaml", []byte(tt.yaml))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse = %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, c.Console.OIDC); diff != "" {
				t.Errorf("console.oidc (-want +got):\n%s", diff)
			}
		})
	}
	if !Default().Console.On() {
		t.Error("the default configuration has the console off")
	}
}
