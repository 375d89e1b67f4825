package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The Python quick start of README.md and of clients/python/README.md, run as written beside a running bridge
// (issue 32): each block talks to the bridge `make run` serves and starts none of its own — before, each
// started a second bridge on the ports `make run` holds (an address-in-use error, then the script silently
// talked to the other bridge). The test runs the block's program with the Python client's venv against a
// bridge started with the default configuration, as `make run` does, at the test's own address.
func TestREADMEQuickStartsBesideMakeRun(t *testing.T) {
	docs := map[string]string{}
	for _, path := range []string{"README.md", "clients/python/README.md", "clients/java/README.md"} {
		b, err := os.ReadFile(filepath.Join("..", path))
		if err != nil {
			t.Fatal(err)
		}
		docs[path] = string(b)
		for _, l := range shellLines(string(b)) {
			if regexp.MustCompile(`(^|\s)(bin/)?mcp-bridge(\s[^|]*)?\s&\s*(#.*)?$`).MatchString(l) {
				t.Errorf("%s starts a bridge of its own beside `make run`: %s", path, l)
			}
		}
	}
	py, err := exec.Command("../scripts/pyclient-venv.sh").Output()
	if err != nil {
		t.Fatalf("scripts/pyclient-venv.sh: %v", err)
	}
	python := strings.TrimSpace(string(py))
	b := start(t, bridgeConfig{defaults: true})
	for _, path := range []string{"README.md", "clients/python/README.md"} {
		t.Run(path, func(t *testing.T) {
			heredoc := regexp.MustCompile(`(?s)\.venv/bin/python - <<'(\w+)'\n(.*?)\n(\w+)\n`).FindStringSubmatch(docs[path])
			if heredoc == nil || heredoc[1] != heredoc[3] {
				t.Fatalf("%s: no `.venv/bin/python - <<'PY' … PY` block", path)
			}
			program := strings.ReplaceAll(heredoc[2], "127.0.0.1:50051", b.grpc)
			cmd := exec.Command(python, "-")
			cmd.Stdin = strings.NewReader(program)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("the quick start failed: %v\n%s", err, out)
			}
			// The block's comments say what each print prints.
			var want []string
			for _, m := range regexp.MustCompile(`print\(.*\)\s+# (.+)`).FindAllStringSubmatch(heredoc[2], -1) {
				want = append(want, strings.TrimSpace(m[1]))
			}
			if got := strings.Split(strings.TrimSpace(string(out)), "\n"); strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("printed %q, the README says %q", got, want)
			}
		})
	}
}
