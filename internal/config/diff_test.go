package config

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestRestartKeys(t *testing.T) {
	dir := t.TempDir()
	load := func(body string) *Config {
		t.Helper()
		path := filepath.Join(dir, "bridge.yaml")
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for name, body := range map[string]string{"tokens.txt": "tok alice\n", "c.pem": "", "k.pem": ""} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	base := "auth:\n  tokensFile: tokens.txt\nmcpServers:\n  a:\n    command: x\n"
	old := load(base)
	for _, tc := range []struct {
		name          string
		body          string
		tokens        string
		changed, hard []string
	}{
		{name: "same", body: base},
		{name: "server added and policy", body: base + "    tools: {deny: [echo]}\n  b:\n    url: http://127.0.0.1:1/mcp\n", changed: []string{"mcpServers"}},
		{name: "servers block renamed", body: "auth:\n  tokensFile: tokens.txt\nservers:\n  a:\n    command: x\n"},
		{name: "rotated token", body: base, tokens: "other alice\n", changed: []string{"auth.tokens"}},
		{name: "rate limits and session limits", body: base + "rateLimits:\n  callsPerSecond: 3\nlimits:\n  maxSessions: 7\n",
			changed: []string{"limits.maxSessions", "rateLimits"}},
		{name: "listener", body: base + "listen:\n  grpc: 127.0.0.1:1\n", changed: []string{"listen.grpc"}, hard: []string{"listen.grpc"}},
		{name: "listener and server", body: base + "  b:\n    command: y\nlisten:\n  admin: 127.0.0.1:2\n",
			changed: []string{"listen.admin", "mcpServers"}, hard: []string{"listen.admin"}},
		{name: "state and replica", body: base + "state:\n  memory: true\nsessions:\n  replica: r1\n",
			changed: []string{"sessions.replica", "state.memory"}, hard: []string{"sessions.replica", "state.memory"}},
		{name: "tls paths and message size", body: base + "tls:\n  certFile: c.pem\n  keyFile: k.pem\nlimits:\n  maxMessageBytes: 100000\n",
			changed: []string{"limits.maxMessageBytes", "tls.certFile", "tls.keyFile"}, hard: []string{"limits.maxMessageBytes", "tls.certFile", "tls.keyFile"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tokens := "tok alice\n"
			if tc.tokens != "" {
				tokens = tc.tokens
			}
			if err := os.WriteFile(filepath.Join(dir, "tokens.txt"), []byte(tokens), 0o600); err != nil {
				t.Fatal(err)
			}
			c, err := func() (*Config, error) {
				path := filepath.Join(dir, "bridge.yaml")
				if err := os.WriteFile(path, []byte(tc.body), 0o600); err != nil {
					return nil, err
				}
				return Load(path)
			}()
			if err != nil {
				t.Fatal(err)
			}
			if got := ChangedKeys(old, c); !slices.Equal(got, tc.changed) {
				t.Errorf("ChangedKeys = %q, want %q", got, tc.changed)
			}
			if got := RestartKeys(old, c); !slices.Equal(got, tc.hard) {
				t.Errorf("RestartKeys = %q, want %q", got, tc.hard)
			}
		})
	}
}

func TestIsLiveKey(t *testing.T) {
	for key, want := range map[string]bool{
		"mcpServers": true, `mcpServers["a.b"].url`: true, "auth.tokens": true, "auth.oidc.issuer": true, "rateLimits.principals": true,
		"limits.maxSessions": true, "limits.maxMessageBytes": false, "listen.grpc": false, "state.file": false, "tls.certFile": false,
		"sessions.replica": false, "auth": false, "someKeyAddedLater": false, "mcpServersX": false,
	} {
		if got := IsLiveKey(key); got != want {
			t.Errorf("IsLiveKey(%q) = %v, want %v", key, got, want)
		}
	}
}
