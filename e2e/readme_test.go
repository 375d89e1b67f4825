package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// The README's "Answering a sampling request" walk-through, run as written: the test reads the section's
// shell blocks, replays every curl command's HTTP request against a bridge started with the default
// configuration (as `make run` does), evaluates the jq filters they pipe into, and compares the outputs
// with the `# …` lines under them. Like the reader, it waits for the events stream (terminal 1) to show a
// new server request before it looks the request up.
func TestREADMEAnsweringSampling(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := between(t, string(readme), "<!-- Section: answering what the server asks", "<!-- End of section. -->")
	lines := shellLines(section)
	if len(lines) < 10 {
		t.Fatalf("only %d shell lines in the README section", len(lines))
	}
	b := start(t, bridgeConfig{defaults: true})
	w := &walkthrough{t: t, b: b, vars: map[string]string{}, background: map[string]<-chan map[string]any{}}
	for i, l := range lines {
		if strings.HasPrefix(l, "# ") {
			continue
		}
		t.Logf("$ %s", l)
		out := w.run(l)
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "# ") {
			want := strings.TrimPrefix(lines[i+1], "# ")
			if !jsonEquivalent(out, want) {
				t.Errorf("%s\n got: %s\nwant: %s", l, out, want)
			}
		}
	}
	if w.events == nil {
		t.Fatal("the walk-through never watched events")
	}
	if w.requests != 2 {
		t.Errorf("the events stream showed %d server requests, want 2 (sample, elicit)", w.requests)
	}
}

type walkthrough struct {
	t          *testing.T
	b          *bridge
	vars       map[string]string
	background map[string]<-chan map[string]any // results of `curl … > file &`, by file
	events     *events
	requests   int // server requests the events stream has shown and the walk-through has answered
}

var assignRE = regexp.MustCompile(`^(\w+)=(.*)$`)

// run executes one command line and returns what it prints.
func (w *walkthrough) run(line string) string {
	t := w.t
	t.Helper()
	if m := assignRE.FindStringSubmatch(line); m != nil {
		name, value := m[1], m[2]
		if name == "B" {
			w.vars["B"] = w.b.http // the reader's localhost:8080 is this bridge
			return ""
		}
		inner, ok := strings.CutPrefix(value, "$(")
		if !ok || !strings.HasSuffix(inner, ")") {
			t.Fatalf("unsupported assignment %q", line)
		}
		if name == "RID" {
			w.awaitRequest()
		}
		w.vars[name] = strings.Trim(w.run(strings.TrimSuffix(inner, ")")), "\"")
		return ""
	}
	words := shellWords(line)
	switch words[0] {
	case "wait;": // wait; jq -c FILTER FILE
		if len(words) != 5 || words[1] != "jq" {
			t.Fatalf("unsupported line %q", line)
		}
		res := await(t, w.background[words[4]])
		return jq(t, words[3], res, false)
	case "curl":
	default:
		t.Fatalf("unsupported command %q", line)
	}
	var method, body, url, outFile, filter string
	raw, async := false, false
	for i := 1; i < len(words); i++ {
		switch words[i] {
		case "-s", "-N":
		case "-X":
			i++
			method = words[i]
		case "-d":
			i++
			body = words[i]
		case ">":
			i++
			outFile = words[i]
		case "&":
			async = true
		case "|": // | jq [-r|-c] FILTER
			for i += 2; strings.HasPrefix(words[i], "-"); i++ {
				raw = raw || words[i] == "-r"
			}
			filter = words[i]
		default:
			url = w.expand(words[i])
		}
	}
	if method == "" {
		method = http.MethodGet
		if body != "" {
			method = http.MethodPost
		}
	}
	path := strings.TrimPrefix(url, w.b.http)
	r := w.b.rest("")
	switch {
	case strings.HasSuffix(path, "/events"):
		w.events = r.events(strings.TrimSuffix(strings.TrimPrefix(path, "/v1/sessions/"), "/events"))
		return ""
	case async:
		w.background[outFile] = r.async(method, path, body)
		return ""
	}
	_, out := r.do(method, path, body)
	if filter == "" {
		return compact(out)
	}
	return jq(t, filter, out, raw)
}

// awaitRequest waits, as the reader does, until terminal 1 shows a new server request.
func (w *walkthrough) awaitRequest() {
	w.t.Helper()
	if w.events == nil {
		w.t.Fatal("looking up a request before watching events")
	}
	w.events.next(func(e *pb.Event) bool { return e.GetServerRequest() != nil })
	w.requests++
}

func (w *walkthrough) expand(s string) string {
	return os.Expand(s, func(name string) string { return w.vars[name] })
}

// jq evaluates the filters the README uses: paths of .keys and [n] indexes.
func jq(t *testing.T, filter string, v any, raw bool) string {
	t.Helper()
	var path []any
	for _, part := range regexp.MustCompile(`\.(\w+)|\[(\d+)\]`).FindAllStringSubmatch(filter, -1) {
		if part[1] != "" {
			path = append(path, part[1])
		} else {
			n, _ := strconv.Atoi(part[2])
			path = append(path, n)
		}
	}
	out := jsonPath(v, path...)
	if s, ok := out.(string); ok && raw {
		return s
	}
	return compact(out)
}

func jsonEquivalent(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return a == b
	}
	return compact(x) == compact(y)
}

func between(t *testing.T, s, from, to string) string {
	t.Helper()
	i := strings.Index(s, from)
	j := strings.Index(s, to)
	if i < 0 || j < i {
		t.Fatalf("README has no section %q … %q", from, to)
	}
	return s[i:j]
}

// shellLines returns the lines of the ```sh blocks, continuation lines joined.
func shellLines(md string) []string {
	var out []string
	in := false
	cont := ""
	for _, l := range strings.Split(md, "\n") {
		switch {
		case strings.HasPrefix(l, "```sh"):
			in = true
			continue
		case strings.HasPrefix(l, "```"):
			in = false
			continue
		}
		if !in || strings.TrimSpace(l) == "" {
			continue
		}
		l = cont + strings.TrimSpace(l)
		if strings.HasSuffix(l, "\\") {
			cont = strings.TrimSuffix(l, "\\")
			continue
		}
		cont = ""
		out = append(out, l)
	}
	return out
}

// shellWords splits a command line into words: single quotes keep their content verbatim, and |, > and &
// are words of their own.
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	have := false
	flush := func() {
		if have {
			words = append(words, cur.String())
			cur.Reset()
			have = false
		}
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				panic(fmt.Sprintf("unbalanced quote in %q", line))
			}
			cur.WriteString(line[i+1 : i+1+j])
			have = true
			i += j + 1
		case c == ' ':
			flush()
		case c == '|' || c == '>' || c == '&':
			flush()
			words = append(words, string(c))
		default:
			cur.WriteByte(c)
			have = true
		}
	}
	flush()
	return words
}
