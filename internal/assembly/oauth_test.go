package assembly

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-bridge/mcp-bridge/internal/config"
)

func TestCoreOptionsUpstreamAuth(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "secret"), []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "key"), []byte(strings.Repeat("0f", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MCPB_TEST_BEARER", "tok")
	cfg, err := config.Parse(filepath.Join(dir, "bridge.yaml"), []byte(`
oauth: {tokenStoreFile: tokens, tokenStoreKeyFile: key, authorizationTimeout: 3m, allowLinkLocal: true}
mcpServers:
  gh:
    url: https://gh.example/mcp
    auth: {type: oauth, clientId: bridge, clientSecretFile: secret, scopes: [repo], dynamicRegistration: false}
  static:
    url: https://s.example/mcp
    auth: {type: bearer, tokenEnv: MCPB_TEST_BEARER}
`))
	if err != nil {
		t.Fatal(err)
	}
	ua, err := upstreamAuth(cfg, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	o := CoreOptions(cfg, slog.New(slog.DiscardHandler), ua)
	if uo := ua.Options(); uo.Store == nil || !uo.AllowLinkLocal || o.OAuth.AuthorizationTimeout != 3*time.Minute {
		t.Errorf("oauth options = %+v", o.OAuth)
	}
	if o.Servers["gh"].OAuth == nil {
		t.Error("gh has no authorizer")
	}
	gh := oauthConfig(cfg.MCPServers["gh"].Auth)
	if gh == nil || gh.ClientID != "bridge" || gh.ClientSecret != "s3cret" || !gh.DisableDynamicRegistration || gh.Scopes[0] != "repo" {
		t.Errorf("gh oauth = %+v", gh)
	}
	if s := o.Servers["static"]; s.OAuth != nil || s.Headers["Authorization"] != "Bearer tok" {
		t.Errorf("static = %+v", s)
	}
	svc, err := Assemble(cfg, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("Assemble with a token store file: %v", err)
	}
	_ = svc.Close(t.Context())
}
