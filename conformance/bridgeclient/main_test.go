package main

import (
	"os"
	"strings"
	"testing"

	"github.com/mcp-bridge/mcp-bridge/conformance/internal/scenario"
	"github.com/mcp-bridge/mcp-bridge/internal/config"
)

// The configuration written for a scenario is one the bridge's own loader accepts, with the scenario's
// server and, for the authorization scenarios, its OAuth client; the pre-registered secret travels in the
// environment, never in the file.
func TestWriteConfig(t *testing.T) {
	tests := []struct {
		name       string
		env        scenario.Env
		wantOAuth  bool
		wantClient string
		wantSecret string
	}{
		{name: "plain", env: scenario.Env{Name: "tools_call", URL: "http://localhost:4000/mcp"}},
		{name: "auth", env: scenario.Env{Name: "auth/metadata-default", URL: "http://localhost:4000/mcp"}, wantOAuth: true},
		{
			name: "pre-registration",
			env: scenario.Env{Name: "auth/pre-registration", URL: "http://localhost:4000/mcp",
				Data: map[string]any{"client_id": "pre-registered-client", "client_secret": "pre-registered-secret"}},
			wantOAuth: true, wantClient: "pre-registered-client", wantSecret: "pre-registered-secret",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, extraEnv, err := writeConfig(t.TempDir(), tt.env)
			if err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(path); err != nil {
				t.Fatal(err)
			} else if tt.wantSecret != "" && strings.Contains(string(b), tt.wantSecret) {
				t.Errorf("the client secret is in the configuration file:\n%s", b)
			}
			for _, kv := range extraEnv {
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
			cfg, err := config.Load(path)
			if err != nil {
				t.Fatalf("the bridge refuses the configuration: %v", err)
			}
			s := cfg.MCPServers[serverName]
			if s == nil || len(cfg.MCPServers) != 1 || s.URL != tt.env.URL || s.Transport != config.TransportStreamableHTTP {
				t.Fatalf("servers = %+v, want %s at %s over streamable-http", cfg.MCPServers, serverName, tt.env.URL)
			}
			if got := s.Auth != nil && s.Auth.Type == config.AuthOAuth; got != tt.wantOAuth {
				t.Fatalf("oauth = %v, want %v", got, tt.wantOAuth)
			}
			if !tt.wantOAuth {
				return
			}
			a := s.Auth
			if a.ClientMetadataURL != scenario.ClientMetadataURL || a.RedirectURL != scenario.RedirectURL {
				t.Errorf("client metadata URL %q, redirect URL %q", a.ClientMetadataURL, a.RedirectURL)
			}
			if a.ClientID != tt.wantClient || a.ClientSecret() != tt.wantSecret {
				t.Errorf("client %q with secret %q, want %q with %q", a.ClientID, a.ClientSecret(), tt.wantClient, tt.wantSecret)
			}
		})
	}
}
