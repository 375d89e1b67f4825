package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The binary carries no test helpers: grpc's test packages (bufconn and the like) stay in tests.
func TestBinaryImportsNoTestPackages(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.Contains(p, "/test/") || strings.HasSuffix(p, "/test") || strings.HasSuffix(p, "testing") || p == "testing" {
			t.Errorf("the binary imports the test package %s", p)
		}
	}
}
