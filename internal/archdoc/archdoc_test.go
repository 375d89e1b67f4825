package archdoc

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/mcp-bridge/mcp-bridge"

// root is the module's root, where docs/ is (tests run in their package's directory).
const root = "../.."

// aliases are the short names the import table uses for generated packages.
var aliases = map[string]string{"gen": "gen/go/mcpbridge/v1", "api": "gen/openapiv2"}

func readDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// goList runs the go command in the module's root and returns its output.
func goList(t *testing.T, args ...string) string {
	t.Helper()
	// go test puts the go command that runs it first on PATH.
	goTool := "go"
	cmd := exec.Command(goTool, append([]string{"list"}, args...)...)
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, msg)
	}
	return string(out)
}

// codeSpan is a backticked span of the page; pathLike picks those that name a file or directory of the
// repository: a relative path with a slash, no spaces, no placeholders.
var (
	codeSpan = regexp.MustCompile("`([^`\n]+)`")
	pathLike = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.\-]*(/[A-Za-z0-9_.\-]+)*/?$`)
)

// namedPaths returns the paths the page names in backticks (those containing a slash).
func namedPaths(doc string) []string {
	var paths []string
	for _, m := range codeSpan.FindAllStringSubmatch(doc, -1) {
		p := m[1]
		if strings.Contains(p, "/") && pathLike.MatchString(p) && !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	return paths
}

// TestNamedPathsExist: every path docs/architecture.md names in backticks exists (a name ending in "/" is a
// directory).
func TestNamedPathsExist(t *testing.T) {
	paths := namedPaths(readDoc(t))
	if len(paths) < 20 {
		t.Fatalf("the page names %d paths in backticks; the parser is broken: %q", len(paths), paths)
	}
	for _, p := range paths {
		fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(p)))
		switch {
		case err != nil:
			t.Errorf("docs/architecture.md names `%s`, which does not exist: %v", p, err)
		case strings.HasSuffix(p, "/") && !fi.IsDir():
			t.Errorf("docs/architecture.md names `%s` as a directory; it is a file", p)
		}
	}
}

// table returns the rows (first cell → second cell) of the page's table whose header's first two cells are
// h1 and h2.
func table(t *testing.T, doc, h1, h2 string) map[string]string {
	t.Helper()
	rows := map[string]string{}
	in := false
	sc := bufio.NewScanner(strings.NewReader(doc))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "|") {
			if in {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if len(cells) < 2 {
			continue
		}
		if !in {
			in = cells[0] == h1 && cells[1] == h2
			continue
		}
		if strings.HasPrefix(cells[0], "---") {
			continue
		}
		if _, dup := rows[cells[0]]; dup {
			t.Errorf("table %q names %s twice", h2, cells[0])
		}
		rows[cells[0]] = cells[1]
	}
	if len(rows) == 0 {
		t.Fatalf("docs/architecture.md has no table headed | %s | %s |", h1, h2)
	}
	return rows
}

// names splits a cell's comma-separated package names, resolving the aliases.
func names(cell string) []string {
	var out []string
	for _, n := range strings.Split(cell, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if a, ok := aliases[n]; ok {
			n = a
		}
		out = append(out, n)
	}
	return out
}

// TestImportTable: the import table is the module's direct import graph (tests excluded), both ways, and
// names every package of the module but the generated ones.
func TestImportTable(t *testing.T) {
	want := table(t, readDoc(t), "package", "imports (of this module)")
	got := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(goList(t, "-f", "{{.ImportPath}}\t{{join .Imports \" \"}}", "./...")), "\n") {
		pkg, imports, _ := strings.Cut(line, "\t")
		rel, ok := strings.CutPrefix(pkg, module+"/")
		if !ok || strings.HasPrefix(rel, "gen/") {
			continue
		}
		var own []string
		for _, imp := range strings.Fields(imports) {
			if r, ok := strings.CutPrefix(imp, module+"/"); ok {
				own = append(own, r)
			}
		}
		got[rel] = own
	}
	for pkg, own := range got {
		cell, ok := want[pkg]
		if !ok {
			t.Errorf("package %s is not in docs/architecture.md's import table (it imports %v): add it, and its subsystem", pkg, own)
			continue
		}
		allowed := names(cell)
		for _, imp := range own {
			if !slices.Contains(allowed, imp) {
				t.Errorf("%s imports %s, which docs/architecture.md's import table does not allow", pkg, imp)
			}
		}
		for _, a := range allowed {
			if !slices.Contains(own, a) {
				t.Errorf("docs/architecture.md's import table says %s imports %s; it does not (any more)", pkg, a)
			}
		}
	}
	for pkg := range want {
		if _, ok := got[pkg]; !ok {
			t.Errorf("docs/architecture.md's import table names %s, which is not a package of the module", pkg)
		}
	}
}

// TestForbiddenDependencies: no package reaches, directly or not, what the page says it must never depend on.
func TestForbiddenDependencies(t *testing.T) {
	rules := table(t, readDoc(t), "package", "must not depend on")
	for pkg, cell := range rules {
		deps := strings.Fields(goList(t, "-deps", "-f", "{{.ImportPath}}", "./"+pkg))
		for _, banned := range names(cell) {
			full := banned
			if first, _, _ := strings.Cut(banned, "/"); !strings.Contains(first, ".") {
				full = module + "/" + banned // a package of this module
			}
			for _, d := range deps {
				if d == full || strings.HasPrefix(d, full+"/") {
					t.Errorf("%s depends on %s; docs/architecture.md says it must not depend on %s", pkg, d, banned)
				}
			}
		}
	}
}

// statusLine is the one format of an ADR's status, the first line after its title.
var statusLine = regexp.MustCompile(`^Status: (Accepted|Superseded by \d{4}|Amended by \d{4}(, \d{4})*)( \(.+\))?$`)

// TestADRStatus: every ADR has its status line right under its title.
func TestADRStatus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root, "docs", "adr", "[0-9][0-9][0-9][0-9]-*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no ADRs found: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				lines = append(lines, l)
			}
		}
		name := filepath.Base(f)
		if len(lines) < 2 || !strings.HasPrefix(lines[0], "# ") {
			t.Errorf("%s: no title", name)
			continue
		}
		if !statusLine.MatchString(lines[1]) {
			t.Errorf("%s: the line under the title is %q; want %q, %q or %q (optionally followed by \" (a note)\")",
				name, lines[1], "Status: Accepted", "Status: Superseded by NNNN", "Status: Amended by NNNN[, NNNN]")
		}
	}
}
