// Command tally keeps an expected-failures file honest and counts what passed. Both files have its format:
// conformance/expected-failures.yml (conformance/client, mcpcore) and conformance/expected-failures-bridge.yml
// (conformance/bridgeclient, through the bridge); tally runs once per file and requirement set.
//
// scripts/conformance.sh runs it around each run of the official MCP conformance suite:
//
//	tally baseline -expected conformance/expected-failures.yml -revision 2025-11-25 -out baseline.yml
//	    writes the suite's own --expected-failures file ("client:" list) for one requirement set;
//	tally score -expected conformance/expected-failures.yml -revision 2025-11-25 \
//	    -requirements node_modules/@modelcontextprotocol/conformance/requirements/2025-11-25.yaml -results DIR
//	    reads the suite's results (-o DIR: one checks.json per scenario), prints one line per required
//	    scenario and, last, "2025-11-25 P/T" (passed / total required). It exits 1 when a required scenario
//	    fails without an entry in the expected-failures file, when a listed scenario passes (the entry is
//	    stale), when an entry names a scenario the requirement set does not score, or when an entry has no
//	    reason.
//	tally extensions -expected conformance/expected-failures.yml \
//	    -requirements .../2025-11-25.yaml -results DIR1 -requirements .../2026-07-28.yaml -results DIR2
//	    scores the auth extension scenarios (the client scenarios each requirement set runs but does not
//	    score, with reason "extension", named auth/*): one passes when it passes in every run whose set
//	    lists it. Expected failures are the file's "auth-extensions" entries; the same rules apply, and
//	    the last line is "auth extensions P/T".
//
// A scenario passes when its checks include at least one SUCCESS and no FAILURE or WARNING (the suite's
// baseline logic also counts a WARNING as a failure); a required scenario without results fails.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "tally:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: tally baseline|score [flags]")
	}
	fset := flag.NewFlagSet("tally "+args[0], flag.ContinueOnError)
	expectedPath := fset.String("expected", "", "expected-failures file (mcp-bridge format)")
	revision := fset.String("revision", "", "requirement set, e.g. 2025-11-25")
	out := fset.String("out", "", "baseline: where to write the suite's expected-failures file")
	var reqPaths, resultDirs []string
	fset.Func("requirements", "the suite's requirements/<revision>.yaml (extensions: once per run)", func(v string) error {
		reqPaths = append(reqPaths, v)
		return nil
	})
	fset.Func("results", "the suite's -o directory (extensions: once per run, after its -requirements)", func(v string) error {
		resultDirs = append(resultDirs, v)
		return nil
	})
	if err := fset.Parse(args[1:]); err != nil {
		return err
	}
	if args[0] == "extensions" {
		*revision = extensionsKey
	}
	if *expectedPath == "" || *revision == "" {
		return errors.New("-expected and -revision are required")
	}
	expected, err := loadExpected(*expectedPath)
	if err != nil {
		return err
	}
	reqPath, results := new(string), new(string)
	if args[0] == "score" {
		if len(reqPaths) > 1 || len(resultDirs) > 1 {
			return errors.New("score: one -requirements and one -results")
		}
		if len(reqPaths) == 1 {
			*reqPath = reqPaths[0]
		}
		if len(resultDirs) == 1 {
			*results = resultDirs[0]
		}
	}
	switch args[0] {
	case "extensions":
		if len(reqPaths) == 0 || len(reqPaths) != len(resultDirs) {
			return errors.New("extensions: give -requirements and -results once per run, in pairs")
		}
		var names []string
		merged := map[string]outcome{}
		missing := map[string]bool{}
		for i, rp := range reqPaths {
			exts, err := loadExtensions(rp)
			if err != nil {
				return err
			}
			outcomes, err := loadResults(resultDirs[i])
			if err != nil {
				return err
			}
			for _, name := range exts {
				if !slices.Contains(names, name) {
					names = append(names, name)
				}
				o, ran := outcomes[name]
				if !ran {
					missing[name] = true
					continue
				}
				m := merged[name]
				m.success += o.success
				m.failure += o.failure
				m.warning += o.warning
				for _, f := range o.failed {
					m.failed = append(m.failed, f+" ("+filepath.Base(rp)+")")
				}
				merged[name] = m
			}
		}
		for name := range missing {
			delete(merged, name) // a run that lists it has no results: it fails
		}
		if len(names) == 0 {
			return errors.New("extensions: the requirement sets list no auth extension scenario")
		}
		s := score("auth-extensions", names, expected[extensionsKey], merged)
		for _, line := range s.lines {
			fmt.Fprintln(stdout, line)
		}
		fmt.Fprintf(stdout, "auth extensions %d/%d\n", s.passed, s.total)
		if len(s.problems) > 0 {
			return fmt.Errorf("auth extensions: expected-failures file does not match the results:\n  %s",
				strings.Join(s.problems, "\n  "))
		}
		return nil
	case "baseline":
		if *out == "" {
			return errors.New("-out is required")
		}
		return os.WriteFile(*out, suiteBaseline(expected[*revision]), 0o644)
	case "score":
		if *reqPath == "" || *results == "" {
			return errors.New("-requirements and -results are required")
		}
		required, err := loadRequired(*reqPath)
		if err != nil {
			return err
		}
		outcomes, err := loadResults(*results)
		if err != nil {
			return err
		}
		s := score(*revision, required, expected[*revision], outcomes)
		for _, line := range s.lines {
			fmt.Fprintln(stdout, line)
		}
		fmt.Fprintf(stdout, "%s %d/%d\n", *revision, s.passed, s.total)
		if len(s.problems) > 0 {
			return fmt.Errorf("%s: expected-failures file does not match the results:\n  %s",
				*revision, strings.Join(s.problems, "\n  "))
		}
		return nil
	}
	return fmt.Errorf("unknown subcommand %q", args[0])
}

// Entry is one expected failure: a scenario of a requirement set and why it fails.
type Entry struct {
	Scenario string `yaml:"scenario"`
	Reason   string `yaml:"reason"`
}

// loadExpected reads the expected-failures file: a map from requirement set to entries.
func loadExpected(path string) (map[string][]Entry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m map[string][]Entry
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&m); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// suiteBaseline renders entries in the suite's --expected-failures format.
func suiteBaseline(entries []Entry) []byte {
	var b strings.Builder
	b.WriteString("# generated by conformance/tally from conformance/expected-failures.yml\nclient:")
	if len(entries) == 0 {
		b.WriteString(" []")
	}
	b.WriteString("\n")
	for _, e := range entries {
		fmt.Fprintf(&b, "  - %q\n", e.Scenario)
	}
	return []byte(b.String())
}

// loadRequired returns the client scenarios a requirement set scores (its "client:" list).
func loadRequired(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var req struct {
		Client []string `yaml:"client"`
	}
	if err := yaml.Unmarshal(b, &req); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(req.Client) == 0 {
		return nil, fmt.Errorf("%s: no client scenarios", path)
	}
	return req.Client, nil
}

// extensionsKey is the section of an expected-failures file that lists auth extension scenarios.
const extensionsKey = "auth-extensions"

// loadExtensions returns the auth extension scenarios a requirement set runs without scoring: its
// not_scored client entries with reason extension, named auth/*.
func loadExtensions(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var req struct {
		NotScored []struct {
			Scenario string `yaml:"scenario"`
			Leg      string `yaml:"leg"`
			Reason   string `yaml:"reason"`
		} `yaml:"not_scored"`
	}
	if err := yaml.Unmarshal(b, &req); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []string
	for _, e := range req.NotScored {
		if e.Leg == "client" && e.Reason == "extension" && strings.HasPrefix(e.Scenario, "auth/") {
			out = append(out, e.Scenario)
		}
	}
	return out, nil
}

// check is the part of a suite check result that scoring needs.
type check struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

// outcome summarises one scenario's checks.
type outcome struct {
	success, failure, warning int
	failed                    []string // ids of FAILURE and WARNING checks
}

func (o outcome) passed() bool { return o.success > 0 && o.failure == 0 && o.warning == 0 }

// resultDir matches the timestamp the suite appends to each scenario's result directory.
var resultDir = regexp.MustCompile(`-\d{4}-\d{2}-\d{2}T[\d-]+Z$`)

// loadResults reads every checks.json under dir; the scenario name is its directory's path relative to dir
// without the timestamp (scenario names such as auth/metadata-default make nested directories).
func loadResults(dir string) (map[string]outcome, error) {
	out := map[string]outcome{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "checks.json" {
			return err
		}
		rel, err := filepath.Rel(dir, filepath.Dir(path))
		if err != nil {
			return err
		}
		name := resultDir.ReplaceAllString(filepath.ToSlash(rel), "")
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var checks []check
		if err := json.Unmarshal(b, &checks); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		var o outcome
		for _, c := range checks {
			switch c.Status {
			case "SUCCESS":
				o.success++
			case "FAILURE":
				o.failure++
				o.failed = append(o.failed, c.ID)
			case "WARNING":
				o.warning++
				o.failed = append(o.failed, c.ID+" (warning)")
			}
		}
		if _, dup := out[name]; dup {
			return fmt.Errorf("%s: two result directories for scenario %s (use a fresh -o directory)", dir, name)
		}
		out[name] = o
		return nil
	})
	return out, err
}

type scored struct {
	passed, total int
	lines         []string
	problems      []string
}

// score compares the results of one requirement set's required scenarios with its expected failures.
func score(revision string, required []string, expected []Entry, results map[string]outcome) scored {
	var s scored
	listed := map[string]Entry{}
	for _, e := range expected {
		switch {
		case e.Reason == "":
			s.problems = append(s.problems, fmt.Sprintf("%s: entry has no reason", e.Scenario))
		case !slices.Contains(required, e.Scenario):
			s.problems = append(s.problems, fmt.Sprintf("%s: listed, but %s does not require it", e.Scenario, revision))
		}
		if _, dup := listed[e.Scenario]; dup {
			s.problems = append(s.problems, fmt.Sprintf("%s: listed twice", e.Scenario))
		}
		listed[e.Scenario] = e
	}
	for _, name := range required {
		s.total++
		o, ran := results[name]
		entry, isListed := listed[name]
		switch {
		case ran && o.passed():
			s.passed++
			if isListed {
				s.lines = append(s.lines, fmt.Sprintf("  PASS  %s — listed as an expected failure: remove the entry", name))
				s.problems = append(s.problems, fmt.Sprintf("%s: passes but is listed as an expected failure", name))
			} else {
				s.lines = append(s.lines, fmt.Sprintf("  pass  %s", name))
			}
		case isListed:
			s.lines = append(s.lines, fmt.Sprintf("  xfail %s — %s", name, entry.Reason))
		default:
			why := "no results"
			if ran {
				why = "failed: " + strings.Join(o.failed, ", ")
				if len(o.failed) == 0 {
					why = "no successful check"
				}
			}
			s.lines = append(s.lines, fmt.Sprintf("  FAIL  %s — %s", name, why))
			s.problems = append(s.problems, fmt.Sprintf("%s: unexpected failure (%s)", name, why))
		}
	}
	return s
}
