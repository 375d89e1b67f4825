package assembly

import (
	"testing"

	"github.com/mcp-bridge/mcp-bridge/internal/config"
)

// Without authentication everything stays on the API's listeners; with it, the metrics go to the admin
// listener and the health of a server that allowedPrincipals hides leaves the views that ask no token.
func TestExposure(t *testing.T) {
	servers := map[string]*config.Server{"open": {}, "hidden": {AllowedPrincipals: []string{"alice"}}}
	open := &config.Config{MCPServers: servers}
	authed := &config.Config{MCPServers: servers}
	authed.Auth.TokensFile = "tokens"
	if OperatorOnly(open) || HidesHealth(open, "hidden") {
		t.Error("without authentication something is kept from the API's listeners")
	}
	if !OperatorOnly(authed) || !HidesHealth(authed, "hidden") || HidesHealth(authed, "open") || HidesHealth(authed, "unknown") {
		t.Error("with authentication: metrics not operator-only, or the wrong servers' health hidden")
	}
}
