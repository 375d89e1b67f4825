package mcpcore

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestIDsHaveOneOwner: pending-request ids and session ids are minted only in ids.go — by newRequestID (one
// alphabet) and newSessionID — and every pending request id has the one form.
func TestIDsHaveOneOwner(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || name == "ids.go" {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if v, _ := strconv.Unquote(lit.Value); v == "req-" || v == "s-" {
				t.Errorf("%s mints ids with the prefix %q: ask ids.go", name, v)
			}
			return true
		})
	}
	form := regexp.MustCompile(`^req-[a-z2-7]{26}$`)
	for range 100 {
		if id := newRequestID(); !form.MatchString(id) {
			t.Fatalf("request id %q", id)
		}
	}
	c := &Core{}
	if id := c.newSessionID(); !strings.HasPrefix(id, "s-") {
		t.Errorf("session id %q", id)
	}
	c.opts.Replica = "r1"
	if r, ok := SessionReplica(c.newSessionID()); !ok || r != "r1" {
		t.Errorf("SessionReplica of r1's id = %q, %v", r, ok)
	}
}
