package config

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestImportsNoServicePackage: the configuration parser, which the console links too, depends on no package
// of the gRPC service (server/...). go list -deps gives the whole import graph, tests excluded.
func TestImportsNoServicePackage(t *testing.T) {
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := exec.LookPath(goTool); err != nil {
		goTool = "go"
	}
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
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
