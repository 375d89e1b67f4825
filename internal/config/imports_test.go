package config

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsNoServicePackage: the configuration parser, which the console links too, depends on no package
// of the gRPC service (server/...). go list -deps gives the whole import graph, tests excluded.
func TestImportsNoServicePackage(t *testing.T) {
	// go test puts the go command that runs it first on PATH.
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const service = "github.com/mcp-bridge/mcp-bridge/server"
	for _, p := range strings.Fields(string(out)) {
		if p == service || strings.HasPrefix(p, service+"/") {
			t.Errorf("internal/config depends on %s: the service's defaults it needs belong to a leaf package", p)
		}
	}
}
