package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestScore(t *testing.T) {
	required := []string{"a", "b", "auth/c"}
	pass := outcome{success: 2}
	fail := outcome{success: 1, failure: 1, failed: []string{"x"}}
	warn := outcome{success: 1, warning: 1, failed: []string{"y (warning)"}}
	tests := []struct {
		name         string
		expected     []Entry
		results      map[string]outcome
		passed       int
		wantProblems int
	}{
		{"all pass", nil, map[string]outcome{"a": pass, "b": pass, "auth/c": pass}, 3, 0},
		{"expected failure", []Entry{{"auth/c", "oauth later"}}, map[string]outcome{"a": pass, "b": pass, "auth/c": fail}, 2, 0},
		{"unexpected failure", nil, map[string]outcome{"a": pass, "b": fail, "auth/c": pass}, 2, 1},
		{"warning is a failure", nil, map[string]outcome{"a": pass, "b": warn, "auth/c": pass}, 2, 1},
		{"missing results fail", nil, map[string]outcome{"a": pass, "b": pass}, 2, 1},
		{"no successful check fails", nil, map[string]outcome{"a": pass, "b": pass, "auth/c": {}}, 2, 1},
		{"stale entry", []Entry{{"a", "was broken"}}, map[string]outcome{"a": pass, "b": pass, "auth/c": pass}, 3, 1},
		{"entry without reason", []Entry{{"auth/c", ""}}, map[string]outcome{"a": pass, "b": pass, "auth/c": fail}, 2, 1},
		{"entry not required", []Entry{{"z", "gone"}}, map[string]outcome{"a": pass, "b": pass, "auth/c": pass}, 3, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := score("2025-11-25", required, tt.expected, tt.results)
			if s.passed != tt.passed || s.total != len(required) {
				t.Errorf("score = %d/%d, want %d/%d", s.passed, s.total, tt.passed, len(required))
			}
			if len(s.problems) != tt.wantProblems {
				t.Errorf("problems = %q, want %d", s.problems, tt.wantProblems)
			}
		})
	}
}

func TestLoadResults(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, body string) {
		t.Helper()
		p := filepath.Join(dir, rel, "checks.json")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("tools_call-2026-11-21T18-14-55-243Z", `[{"id":"tool-add-numbers","status":"SUCCESS"},{"id":"server-info","status":"INFO"}]`)
	write("auth/metadata-default-2026-11-21T18-14-55-243Z", `[{"id":"a","status":"SUCCESS"},{"id":"b","status":"FAILURE"}]`)
	got, err := loadResults(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]outcome{
		"tools_call":            {success: 1},
		"auth/metadata-default": {success: 1, failure: 1, failed: []string{"b"}},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(outcome{})); diff != "" {
		t.Errorf("loadResults (-want +got):\n%s", diff)
	}
}

func TestBaselineRoundTrip(t *testing.T) {
	dir := t.TempDir()
	exp := filepath.Join(dir, "expected.yml")
	if err := os.WriteFile(exp, []byte(`
2025-11-25:
  - scenario: auth/metadata-default
    reason: OAuth is issue 7
2026-07-28: []
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for rev, want := range map[string]string{
		"2025-11-25": "client:\n  - \"auth/metadata-default\"\n",
		"2026-07-28": "client: []\n",
	} {
		out := filepath.Join(dir, rev+".yml")
		if err := run([]string{"baseline", "-expected", exp, "-revision", rev, "-out", out}, nil); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(string(b), want) {
			t.Errorf("%s baseline = %q, want suffix %q", rev, b, want)
		}
	}
}

func TestLoadExpectedRejectsUnknownFields(t *testing.T) {
	p := filepath.Join(t.TempDir(), "e.yml")
	if err := os.WriteFile(p, []byte("2025-11-25:\n  - scenario: x\n    why: typo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := loadExpected(p); err == nil {
		t.Fatal("loadExpected accepted an unknown field")
	}
}

func TestExtensions(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, body string) string {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	req := `client: [initialize]
not_scored:
  - {scenario: auth/dpop, leg: client, reason: extension}
  - {scenario: auth/wif-jwt-bearer, leg: client, reason: extension}
  - {scenario: json-schema-2020-12-preservation, leg: client, reason: added-after-release}
  - {scenario: tasks-lifecycle, leg: server, reason: extension}
`
	r1 := write("req/2025-11-25.yaml", req)
	r2 := write("req/2026-07-28.yaml", req)
	pass := `[{"id":"a","status":"SUCCESS"}]`
	fail := `[{"id":"a","status":"SUCCESS"},{"id":"b","status":"FAILURE"}]`
	write("one/auth/dpop-2026-11-21T18-14-55-243Z/checks.json", pass)
	write("one/auth/wif-jwt-bearer-2026-11-21T18-14-55-243Z/checks.json", pass)
	write("two/auth/dpop-2026-11-21T18-14-55-243Z/checks.json", pass)
	write("two/auth/wif-jwt-bearer-2026-11-21T18-14-55-243Z/checks.json", fail)
	args := func(exp string) []string {
		return []string{"extensions", "-expected", exp,
			"-requirements", r1, "-results", filepath.Join(dir, "one"),
			"-requirements", r2, "-results", filepath.Join(dir, "two")}
	}
	tests := []struct {
		name     string
		expected string
		wantLast string
		wantErr  bool
	}{
		{"failure in one run fails", "2025-11-25:\nauth-extensions:\n", "auth extensions 1/2", true},
		{"listed failure", "auth-extensions:\n  - scenario: auth/wif-jwt-bearer\n    reason: known\n", "auth extensions 1/2", false},
		{"stale entry", "auth-extensions:\n  - scenario: auth/dpop\n    reason: was broken\n  - scenario: auth/wif-jwt-bearer\n    reason: known\n", "auth extensions 1/2", true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exp := write(filepath.Join("exp", string(rune('a'+i))+".yml"), tt.expected)
			var out strings.Builder
			err := run(args(exp), &out)
			if (err != nil) != tt.wantErr {
				t.Errorf("run: err = %v, want error %v", err, tt.wantErr)
			}
			lines := strings.Split(strings.TrimSpace(out.String()), "\n")
			if got := lines[len(lines)-1]; got != tt.wantLast {
				t.Errorf("last line = %q, want %q (output %q)", got, tt.wantLast, out.String())
			}
		})
	}
	// A run whose set lists a scenario but has no results for it fails that scenario.
	if err := os.RemoveAll(filepath.Join(dir, "one", "auth", "dpop-2026-11-21T18-14-55-243Z")); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	err := run(args(write("exp/z.yml", "auth-extensions:\n  - scenario: auth/wif-jwt-bearer\n    reason: known\n")), &out)
	if err == nil || !strings.Contains(out.String(), "FAIL  auth/dpop — no results") {
		t.Errorf("missing results: err = %v, output %q", err, out.String())
	}
}
