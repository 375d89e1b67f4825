package e2e

// The operator console (internal/console) driven in a real headless Chromium through the Chrome DevTools
// Protocol (github.com/chromedp/chromedp, from the Go module proxy), against the real binary: the browser is
// Debian's chromium (scripts/install-chromium.sh installs it; no browser download). The driver is Go so that
// the tests share this package's harness (start, rest, the probe server) and need no Python or Node runtime.
//
// Each test writes a screenshot of every page it visits to $MCPBRIDGE_SCREENSHOTS, by default
// e2e/screenshots/ (git ignores it).

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	jose "github.com/go-jose/go-jose/v4"
	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/internal/stdiotransport"
)

// envConsolePeer makes this test binary an MCP server of the console tests instead of running tests:
// "hostile" (hostileServer), "forms" (formsServer) or "sparse" (sparseServer).
const envConsolePeer = "MCPBRIDGE_E2E_CONSOLE_PEER"

func init() {
	var s *mcp.Server
	switch os.Getenv(envConsolePeer) {
	case "":
		return
	case "hostile":
		s = hostileServer()
	case "forms":
		s = formsServer()
	case "sparse":
		s = sparseServer()
	}
	if err := s.Run(context.Background(), stdiotransport.New()); err != nil {
		fmt.Fprintln(os.Stderr, "console peer:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// consolePeer is the mcpServers entry of a console test server.
func consolePeer(t *testing.T, name, kind, more string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("  %s:\n    command: %q\n    protocolVersion: \"2025-11-25\"\n    env:\n      %s: %q\n%s", name, exe, envConsolePeer, kind, more)
}

// formsSchema has a field of every kind an elicitation form may ask for (MCP "Requested Schema").
const formsSchema = `{"type": "object", "required": ["email", "age"], "properties": {
	"email":    {"type": "string", "format": "email", "title": "E-mail"},
	"homepage": {"type": "string", "format": "uri"},
	"birthday": {"type": "string", "format": "date"},
	"meeting":  {"type": "string", "format": "date-time"},
	"nickname": {"type": "string", "minLength": 2, "maxLength": 10, "default": "ace"},
	"age":      {"type": "integer", "minimum": 18, "maximum": 99},
	"ratio":    {"type": "number", "minimum": 0, "maximum": 1, "default": 0.5},
	"subscribe": {"type": "boolean", "default": true},
	"size":     {"type": "string", "enum": ["s", "m", "l"], "default": "m"},
	"legacy":   {"type": "string", "enum": ["a", "b"], "enumNames": ["Alpha", "Beta"]},
	"plan":     {"type": "string", "oneOf": [{"const": "free", "title": "Free plan"}, {"const": "pro", "title": "Pro plan"}]},
	"toppings": {"type": "array", "items": {"anyOf": [{"const": "ham", "title": "Ham"}, {"const": "egg", "title": "Egg"}]}},
	"colors":   {"type": "array", "items": {"type": "string", "enum": ["red", "green"]}, "default": ["green"]},
	"__proto__": {"type": "string", "title": "Prototype"}
}}`

// formsServer asks, from its tool "form", for formsSchema and returns the content it received as JSON.
func formsServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "forms", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "form", Description: "Asks for a form with every kind of field and returns what came back."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "Sign up", RequestedSchema: json.RawMessage(formsSchema)})
			if err != nil {
				return nil, nil, err
			}
			b, err := json.Marshal(map[string]any{"action": res.Action, "content": res.Content})
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil, nil
		})
	return s
}

// Markup a hostile server puts in every string it controls; were any of it parsed as HTML, the page's
// window.__pwned would be set (and the CSP would report a violation).
const (
	hostileDescription = `Reads <b>files</b><img src=x onerror="window.__pwned='description'"><script>window.__pwned='script'</script>`
	hostileMessage     = `Confirm <a href="javascript:window.__pwned='link'">here</a><img src=x onerror="window.__pwned='message'">`
	hostileTitle       = `<i onmouseover="window.__pwned='title'">Name</i>`
	hostileResult      = `done <iframe src="javascript:window.__pwned='result'"></iframe>`
)

// Characters a person cannot see, and strings too long to show, a hostile server puts in what it sends.
const (
	rlo        = "\u202E" // RIGHT-TO-LEFT OVERRIDE
	zwsp       = "\u200B" // ZERO WIDTH SPACE
	hostileRTL = "rtl" + rlo + "exe.txt"
	// hostileBidi reads "approved by security team transfer all money" on a page that applies the override.
	hostileBidi  = "note: " + rlo + "yenom lla refsnart maet ytiruces yb devorppa"
	hostileLooks = "pay p\u0430ypal.com" // a Cyrillic а in a Latin word
	megabyte     = 1 << 20
)

// hostileBig is an unbroken 1 MB string with a bidi override near its end (past what is shown at first).
var hostileBig = strings.Repeat("A", megabyte-10) + rlo + "XYZ"

// hostileURLs are the addresses the hostile server's "link" tool asks a person to open, by its argument.
var hostileURLs = map[string]string{
	"js":       "javascript:window.__pwned='url'",
	"data":     "data:text/html,<script>window.__pwned='data'</script>",
	"relative": "/v1/sessions",
	"http":     "http://evil.example/login",
	"https":    "https://login.example.co.uk.evil.example/sign-in?next=/",
}

type linkIn struct {
	Which string `json:"which"`
}

// hostileServer is an MCP server (official Go SDK) whose tool names, descriptions, titles, server info,
// elicitation messages and schemas, sampling texts, URLs and results are markup, hold bidi overrides,
// zero-width and look-alike characters, colliding keys and 1 MB strings.
func hostileServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "hostile<script>", Title: `<img src=x onerror="window.__pwned='info'">` + rlo + "olleh", Version: "1" + zwsp}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "evil", Title: "<u>evil</u>", Description: hostileDescription},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: hostileMessage + " " + hostileBidi, RequestedSchema: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"name": map[string]any{"type": "string", "title": hostileTitle, "description": "<em>your</em> name"},
					"color": map[string]any{"type": "string", "title": "Colour", "oneOf": []any{
						map[string]any{"const": "red", "title": `<b onclick="window.__pwned='enum'">Red</b>` + zwsp},
						map[string]any{"const": "blue", "title": "Blue"},
					}},
				},
			}})
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: hostileResult + " " + res.Action}},
				StructuredContent: map[string]any{"html": "<script>window.__pwned='structured'</script>"},
			}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: hostileRTL, Description: "Lists" + zwsp + " files of " + hostileLooks},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "Returns a 1 MB unbroken string and keys that look alike."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{
				Content:           []mcp.Content{&mcp.TextContent{Text: hostileBig}},
				StructuredContent: map[string]any{"to": "alice", "to" + zwsp: "mallory", "note": hostileBidi},
			}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "link", Description: "Asks the person to open a URL (which: js, data, relative, http, https)."},
		func(ctx context.Context, req *mcp.CallToolRequest, in linkIn) (*mcp.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "url", Message: "Open " + in.Which, URL: hostileURLs[in.Which], ElicitationID: "e-" + in.Which})
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "link " + res.Action}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "sample", Description: "Asks for a completion of a 1 MB message with a bidi override."},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10, SystemPrompt: "Be" + zwsp + " nice",
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: hostileBidi + " " + hostileBig}}}})
			if err != nil {
				return nil, nil, err
			}
			text, _ := res.Content.(*mcp.TextContent)
			if text == nil {
				return nil, nil, fmt.Errorf("no text in the answer")
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sampled " + text.Text}}}, nil, nil
		})
	return s
}

// browser is one headless Chromium tab, and what went wrong in it: uncaught exceptions and Content Security
// Policy violations, which fail the test.
type browser struct {
	t    *testing.T
	ctx  context.Context
	base string

	mu       sync.Mutex // guards problems
	problems []string
}

func newBrowser(t *testing.T, b *bridge) *browser {
	t.Helper()
	ctx, stop := startChromium(t,
		chromedp.WindowSize(1280, 1000),
		// The test identity providers serve HTTPS with certificates of their own.
		chromedp.Flag("ignore-certificate-errors", true),
	)
	br := &browser{t: t, ctx: ctx, base: "http://" + b.http}
	messages := chromedp.Console(ctx) // starts the browser; subscribes before the first page loads
	watched := make(chan struct{})
	go func() { // ends when the tab's context is cancelled (cleanup below)
		defer close(watched)
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.IsException() || m.Source == "security" || strings.Contains(m.Text, "Content Security Policy") {
				br.mu.Lock()
				br.problems = append(br.problems, m.String())
				br.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		stop()
		<-watched
		br.mu.Lock()
		defer br.mu.Unlock()
		for _, p := range br.problems {
			t.Errorf("in the browser: %s", p)
		}
	})
	return br
}

// do runs actions, each bounded by a minute.
func (br *browser) do(actions ...chromedp.Action[chromedp.Void]) {
	br.t.Helper()
	ctx, cancel := context.WithTimeout(br.ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		br.shot("failed")
		br.t.Fatal(err)
	}
}

// waitJS waits until the JavaScript expression is truthy.
func (br *browser) waitJS(what, expr string) {
	br.t.Helper()
	if _, err := chromedp.Run(br.ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(time.Minute))); err != nil {
		br.shot("failed")
		br.t.Fatalf("waiting for %s (%s): %v", what, expr, err)
	}
}

// waitJSAcross is waitJS for a condition met only after the page navigates (away and back): polling stops
// when its page goes, so it polls again on the new page until the minute is up.
func (br *browser) waitJSAcross(what, expr string) {
	br.t.Helper()
	deadline := time.Now().Add(time.Minute)
	var err error
	eventually(time.Minute, func() bool { // between tries, the next page is loading
		ctx, cancel := context.WithDeadline(br.ctx, deadline)
		_, err = chromedp.Run(ctx, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(time.Until(deadline))))
		cancel()
		return err == nil || br.ctx.Err() != nil
	})
	if err != nil {
		br.shot("failed")
		br.t.Fatalf("waiting for %s (%s): %v", what, expr, err)
	}
}

// eval returns the value of a JavaScript expression.
func eval[T any](br *browser, expr string) T {
	br.t.Helper()
	v, err := chromedp.Run(br.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		br.t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// text is the text content of the first element sel matches.
func (br *browser) text(sel string) string {
	br.t.Helper()
	s, err := chromedp.Run(br.ctx, chromedp.TextContent(chromedp.CSS(sel)))
	if err != nil {
		br.t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

// shot writes a full-page PNG screenshot (only the window for a name ending in -viewport) named after the
// test and name into $MCPBRIDGE_SCREENSHOTS (default e2e/screenshots). It also fails the test when the page
// shows an error notice, except on the pages expected to.
func (br *browser) shot(name string) {
	br.t.Helper()
	dir := os.Getenv("MCPBRIDGE_SCREENSHOTS")
	if dir == "" {
		dir = "screenshots"
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		br.t.Fatal(err)
	}
	shoot := chromedp.FullScreenshot(100)
	if strings.HasSuffix(name, "-viewport") {
		shoot = chromedp.CaptureScreenshot() // what the window shows, e.g. for docs/console.png
	}
	png, err := chromedp.Run(br.ctx, shoot)
	if err != nil {
		br.t.Logf("screenshot %s: %v", name, err)
		return
	}
	if name != "failed" && name != "signed-out" {
		if notice, _ := chromedp.Run(br.ctx, chromedp.Evaluate[string](`document.getElementById('notice').hidden ? '' : document.getElementById('notice').textContent`)); notice != "" {
			br.t.Errorf("page %s shows an error: %s", name, notice)
		}
	}
	path := filepath.Join(dir, strings.ReplaceAll(br.t.Name(), "/", "_")+"-"+name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		br.t.Fatal(err)
	}
	br.t.Logf("screenshot %s", path)
}

// signIn opens the console and gives it token.
func (br *browser) signIn(token string) {
	br.t.Helper()
	br.do(chromedp.Navigate(br.base+"/console/"), chromedp.WaitVisible(chromedp.CSS("#signin")))
	if token != "" {
		br.do(chromedp.SetValue(chromedp.CSS("#token"), token), chromedp.Click(chromedp.CSS(`#signin button[type="submit"]`)))
	}
}

// openSession opens a session to server from the overview and waits for its page to list tool.
func (br *browser) openSession(server, tool string) string {
	br.t.Helper()
	br.waitJS("the server "+server, fmt.Sprintf(`!!document.querySelector('tr[data-server=%q] button')`, server))
	br.do(chromedp.Click(chromedp.CSS(fmt.Sprintf(`tr[data-server=%q] button`, server))))
	br.waitJS("the tool "+tool, fmt.Sprintf(`!!document.querySelector('details[data-tool=%q]')`, tool))
	br.waitJS("the live event stream", `document.querySelector('.live.on') !== null`)
	return br.text("#session-id")
}

// runTool opens the tool's card and presses Run with the form as it is.
func (br *browser) runTool(tool string) {
	br.t.Helper()
	br.do(chromedp.Click(chromedp.CSS(fmt.Sprintf(`details[data-tool=%q] > summary`, tool))),
		chromedp.Click(chromedp.CSS(fmt.Sprintf(`details[data-tool=%q] button[type="submit"]`, tool))))
}

// TestConsoleElicit: sign in with a bearer token, open a session to the demo server, run elicit, answer
// its form wrongly (the bridge's field errors appear next to the fields, the request stays pending), then
// rightly, and see the tool's result with its structured content.
func TestConsoleElicit(t *testing.T) {
	t.Parallel()
	b := start(t, bridgeConfig{
		extra: "auth:\n  tokensFile: tokens.txt\n",
		files: map[string]string{"tokens.txt": "console-token ada\nother-token bob\n"},
	})
	br := newBrowser(t, b)

	// Without a token the API refuses and the console says so.
	br.signIn("")
	br.waitJS("the sign-in notice", `!document.getElementById('notice').hidden`)
	if got := br.text("#notice"); !strings.Contains(got, "bearer token") {
		t.Errorf("notice without a token = %q", got)
	}
	br.shot("signed-out")

	br.signIn("console-token")
	// The principal: the bridge's own word (GET /v1/identity) where it has one, else what the page can tell.
	br.waitJS("the principal", `["as your token's principal", "as ada"].includes(document.getElementById('token-state').textContent)`)
	// No session to demo was opened yet: the bridge does not know its health.
	br.waitJS("the demo server's health", `document.querySelector('tr[data-server="demo"] .health')?.dataset.health === 'UNKNOWN'`)
	br.shot("overview")
	sid := br.openSession("demo", "elicit")
	if !strings.HasPrefix(sid, "s-") {
		t.Fatalf("session id on the page = %q", sid)
	}
	br.shot("session")

	br.runTool("elicit")
	card := `section[data-kind="elicitation"]`
	br.waitJS("the elicitation", `!!document.querySelector('`+card+` [data-field="age"]')`)
	if got := br.text(card + " .message"); got != "Please tell us your name and age." {
		t.Errorf("elicitation message = %q", got)
	}
	// The form follows the schema: name is a required text field, age a number with its bounds.
	attrs := eval[map[string]string](br, `(() => { const n = document.querySelector('`+card+` [data-field="name"]'), a = document.querySelector('`+card+` [data-field="age"]');
		return {nameType: n.type, ageType: a.type, ageMin: a.min, ageMax: a.max, ageStep: a.step,
			required: document.querySelector('label[for="' + n.id + '"] .req') ? 'yes' : 'no'}; })()`)
	if want := map[string]string{"nameType": "text", "ageType": "number", "ageMin": "0", "ageMax": "150", "ageStep": "1", "required": "yes"}; fmt.Sprint(attrs) != fmt.Sprint(want) {
		t.Errorf("form fields = %v, want %v", attrs, want)
	}

	// Wrongly: no name, an age above the maximum. The bridge refuses; its field errors show by the fields.
	br.do(chromedp.SetValue(chromedp.CSS(card+` [data-field="age"]`), "200"),
		chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
	br.waitJS("the field errors", `document.querySelector('`+card+` [data-error-for="age"]').textContent !== ''`)
	ageErr, nameErr := br.text(card+` [data-error-for="age"]`), br.text(card+` [data-error-for="name"]`)
	if !strings.Contains(ageErr, "150") {
		t.Errorf("error next to age = %q, want the maximum named", ageErr)
	}
	if !strings.Contains(nameErr, "required") {
		t.Errorf("error next to name = %q, want required", nameErr)
	}
	br.shot("elicitation-errors")
	br.shot("elicitation-errors-viewport") // docs/console.png
	// Still pending: the server got nothing.
	pending := b.rest("console-token").must("GET", "/v1/sessions/"+sid+"/requests", "")
	if reqs, _ := pending["requests"].([]any); len(reqs) != 1 {
		t.Fatalf("pending after the wrong answer = %v, want the request", pending)
	}

	// Rightly.
	br.do(chromedp.SetValue(chromedp.CSS(card+` [data-field="name"]`), "Ada"),
		chromedp.SetValue(chromedp.CSS(card+` [data-field="age"]`), "36"),
		chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
	result := `details[data-tool="elicit"] .result`
	br.waitJS("the tool's result", `document.querySelector('`+result+`')?.textContent.includes('accepted: name=Ada age=36')`)
	br.waitJS("the request's end in the events", `[...document.querySelectorAll('#events .event-ended')].some(e => e.textContent.includes('answered'))`)
	if got := br.text(result + " .structured"); !strings.Contains(got, `"action": "accept"`) || !strings.Contains(got, `"age": 36`) {
		t.Errorf("structured content shown = %q", got)
	}
	br.shot("result")

	// The other principal sees none of it: the console shows only what the token's principal may see.
	other := b.rest("other-token").must("GET", "/v1/sessions", "")
	if s, _ := other["sessions"].([]any); len(s) != 0 {
		t.Errorf("bob's sessions = %v, want none", other)
	}
	br.signIn("other-token")
	br.waitJS("bob's empty session list", `document.querySelector('#sessions tbody')?.textContent.includes('You have no sessions')`)
	// The server's health is the bridge's, whoever asks: demo now has a ready session.
	br.waitJS("the demo server's health", `document.querySelector('tr[data-server="demo"] .health')?.dataset.health === 'SERVING'`)
	br.shot("other-principal")
}

// TestConsoleHostile: a server whose tool names, descriptions, titles, server info, elicitation message,
// schema titles, enum titles, URLs, sampling texts and results are markup, hold bidi overrides, zero-width and
// look-alike characters, colliding keys and 1 MB strings: all of it shows as text, every hidden character
// visible in place with a warning on its card, no link but to an absolute https URL, nothing wider than the
// window at 1280 and 400 px; nothing runs, and the page reports no error and no CSP violation.
func TestConsoleHostile(t *testing.T) {
	t.Parallel()
	b := start(t, bridgeConfig{extraServers: consolePeer(t, "hostile", "hostile",
		fmt.Sprintf("    description: %q\n", `<img src=x onerror="window.__pwned='server'">`+rlo+"revres"))})
	br := newBrowser(t, b)
	br.signIn("")
	br.waitJS("the hostile server", `!!document.querySelector('tr[data-server="hostile"]')`)
	if got := br.text(`tr[data-server="hostile"] td:nth-child(4)`); !strings.Contains(got, `<img src=x`) || !strings.Contains(got, "⟨U+202E⟩revres") {
		t.Errorf("server description shown as %q", got)
	}
	br.noOverflow("the overview")
	br.openSession("hostile", "evil")
	if got := br.text(`details[data-tool="evil"] .description`); got != hostileDescription {
		t.Errorf("tool description shown as %q, want the markup as text", got)
	}
	// The tool whose name holds a bidi override: revealed in place, isolated, its card warns.
	rtl := `details[data-tool="` + hostileRTL + `"]`
	if got := br.text(rtl + " summary"); !strings.Contains(got, "rtl⟨U+202E⟩exe.txt") || !strings.Contains(got, "hidden characters") {
		t.Errorf("the tool %q is listed as %q", hostileRTL, got)
	}
	if got := br.text(rtl + " .description"); got != "Lists⟨U+200B⟩ files of pay pа⟨U+0430⟩ypal.com" {
		t.Errorf("its description shows as %q", got)
	}
	if !eval[bool](br, `!!document.querySelector('`+rtl+` .u-warning') && getComputedStyle(document.querySelector('`+rtl+` summary bdi')).unicodeBidi === 'isolate'`) {
		t.Error("the tool's card has no warning, or its name is not isolated")
	}
	if got := br.text("#server-info"); !strings.Contains(got, "⟨U+202E⟩olleh") || !strings.Contains(got, "1⟨U+200B⟩") {
		t.Errorf("server info shown as %q", got)
	}
	br.shot("tools")

	br.runTool("evil")
	card := `section[data-kind="elicitation"]`
	br.waitJS("the elicitation", `!!document.querySelector('`+card+` .message')`)
	if got, want := br.text(card+" .message"), hostileMessage+" note: ⟨U+202E⟩yenom lla refsnart maet ytiruces yb devorppa"; got != want {
		t.Errorf("elicitation message shown as %q, want %q", got, want)
	}
	if got := br.text(card + " .u-warning"); !strings.Contains(got, "2 invisible") {
		t.Errorf("the elicitation's warning = %q", got)
	}
	if got := br.text(card + ` label[for$="-name"]`); !strings.Contains(got, hostileTitle) {
		t.Errorf("field title shown as %q", got)
	}
	if got := eval[string](br, `[...document.querySelector('`+card+` [data-field="color"]').options].map(o => o.textContent).join('|')`); !strings.Contains(got, "Red</b>⟨U+200B⟩") {
		t.Errorf("the enum's options = %q", got)
	}
	br.shot("elicitation")
	br.do(chromedp.SetValue(chromedp.CSS(card+` [data-field="name"]`), "<b>me</b>"),
		chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
	result := `details[data-tool="evil"] .result`
	br.waitJS("the result", `document.querySelector('`+result+`')?.textContent.includes('accept')`)
	if got := br.text(result + " .text"); got != hostileResult+" accept" {
		t.Errorf("result shown as %q", got)
	}

	// 1 MB unbroken, and keys that look alike: collapsed, wrapped, warned.
	br.runTool("big")
	big := `details[data-tool="big"] .result`
	br.waitJS("the big result", `!!document.querySelector('`+big+` .text')`)
	if n := eval[int](br, `document.querySelector('`+big+` .text').textContent.length`); n > 10000 {
		t.Errorf("the 1 MB result shows %d characters at first", n)
	}
	if got := br.text(big + " .u-warning"); !strings.Contains(got, `"to", "to⟨U+200B⟩"`) || !strings.Contains(got, "look the same") {
		t.Errorf("the big result's warning = %q", got)
	}
	br.noOverflow("a session page with a 1 MB result")
	br.shot("big")
	br.do(chromedp.Click(chromedp.CSS(big + " .text button.show-more")))
	br.waitJS("all of it", `document.querySelector('`+big+` .text').textContent.includes('⟨U+202E⟩XYZ')`)
	br.noOverflow("the 1 MB result shown whole")
	br.do(chromedp.Click(chromedp.CSS(big + " .text button.show-less")))
	br.waitJS("it collapsed again", `document.querySelector('`+big+` .text').textContent.length < 10000`)

	// URLs: a link only to an absolute https address, its registrable domain first; nothing else links.
	br.do(chromedp.Click(chromedp.CSS(`details[data-tool="link"] > summary`)))
	for _, c := range []struct{ which, domain string }{{"js", ""}, {"data", ""}, {"relative", ""}, {"http", ""}, {"https", "evil.example"}} {
		const ended = `document.querySelectorAll('#call-history li[data-call-id]:not([data-state="running"])').length`
		before := eval[int](br, ended)
		br.do(chromedp.SetValue(chromedp.CSS(field(`details[data-tool="link"]`, "which")), c.which),
			chromedp.Click(chromedp.CSS(`details[data-tool="link"] button[type="submit"]`)))
		link := `section[data-kind="elicitation"]:not(.ended)`
		// A bridge that checks URL elicitations itself refuses the bad ones back to the server: then the call
		// ends without the person ever being asked, which is as safe.
		br.waitJS("the URL elicitation "+c.which, fmt.Sprintf(`!!document.querySelector('`+link+` .url') || %s > %d`, ended, before))
		if !eval[bool](br, `!!document.querySelector('`+link+` .url')`) {
			if c.domain != "" {
				t.Fatalf("%s: the https URL elicitation never reached the page", c.which)
			}
			if n := eval[int](br, `[...document.querySelectorAll('a')].filter(a => a.getAttribute('href') === `+strconvQuote(hostileURLs[c.which])+`).length`); n != 0 {
				t.Errorf("%s: refused by the bridge, yet linked", c.which)
			}
			continue
		}
		if got := br.text(link + " .url"); got != hostileURLs[c.which] {
			t.Errorf("%s: the URL shown = %q", c.which, got)
		}
		links := eval[[]string](br, `[...document.querySelectorAll('`+link+` .card-body a')].map(a => a.getAttribute('href'))`)
		if c.domain == "" {
			if len(links) != 0 || !eval[bool](br, `!!document.querySelector('`+link+` .refused')`) {
				t.Errorf("%s: links %v, want none and the refusal said", c.which, links)
			}
			if c.which == "relative" && strings.Contains(br.text(link), b.http) {
				t.Errorf("the relative URL is shown as the bridge's own host: %q", br.text(link))
			}
		} else {
			if got := br.text(link + " .domain"); got != c.domain {
				t.Errorf("%s: the domain shown = %q, want %q", c.which, got, c.domain)
			}
			if len(links) != 1 || links[0] != hostileURLs[c.which] {
				t.Errorf("%s: links %v", c.which, links)
			}
			br.shot("url")
		}
		br.do(chromedp.Click(chromedp.Search(`//section[@data-kind="elicitation" and not(contains(@class,"ended"))]//button[text()="Decline"]`)))
		br.waitJS("the link tool's result", `!document.querySelector('section[data-kind="elicitation"]:not(.ended)') && !document.querySelector('details[data-tool="link"] .running') && document.querySelector('details[data-tool="link"] .result .text')?.textContent === 'link decline'`)
	}

	// Sampling: a 1 MB message does not push Send down the page.
	br.runTool("sample")
	sampling := `section[data-kind="sampling"]`
	br.waitJS("the sampling request", `!!document.querySelector('`+sampling+` textarea.answer')`)
	if got := br.text(sampling + " .conversation"); !strings.Contains(got, "note: ⟨U+202E⟩yenom") {
		t.Errorf("the conversation shows %q", got[:min(len(got), 200)])
	}
	if d := eval[float64](br, `(() => { const c = document.querySelector('`+sampling+`'); return document.querySelector('`+sampling+` .actions button.primary').getBoundingClientRect().top - c.getBoundingClientRect().top; })()`); d > 3000 {
		t.Errorf("Send is %.0f px below the top of the sampling card", d)
	}
	br.noOverflow("a 1 MB sampling request")
	br.shot("sampling")

	// At 400 px wide.
	br.viewport(400, 800)
	br.noOverflow("the session page at 400 px")
	br.shot("session-400")
	br.do(chromedp.SetValue(chromedp.CSS(sampling+" textarea.answer"), "fine"),
		chromedp.Click(chromedp.CSS(sampling+" .actions button.primary")))
	br.waitJS("sample's result", `document.querySelector('details[data-tool="sample"] .result .text')?.textContent === 'sampled fine'`)
	br.do(chromedp.Click(chromedp.CSS(`a[href="#/"]`)))
	br.waitJS("the overview", `!!document.querySelector('tr[data-server="hostile"]')`)
	br.noOverflow("the overview at 400 px")
	br.shot("overview-400")

	// Nothing the server sent became an element, and none of its script ran.
	elems := eval[int](br, `document.querySelectorAll('body img, body script, body iframe, body b, body i, body u, body em, body [onerror], body [onclick], body [onmouseover]').length`)
	if elems != 0 {
		t.Errorf("%d elements from the server's markup are on the page", elems)
	}
	pwned := eval[string](br, `String(window.__pwned ?? '')`)
	if pwned != "" {
		t.Errorf("the server's script ran (window.__pwned = %q)", pwned)
	}
}

// strconvQuote quotes s as a JavaScript string literal.
func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// viewport sets the window's size.
func (br *browser) viewport(w, h int64) {
	br.t.Helper()
	br.do(chromedp.EmulateViewport(w, h))
}

// noOverflow fails the test when the page is wider than the window (a horizontal scroll bar).
func (br *browser) noOverflow(what string) {
	br.t.Helper()
	if got := eval[[]float64](br, `[document.documentElement.scrollWidth, window.innerWidth]`); got[0] > got[1] {
		br.t.Errorf("%s: the page is %.0f px wide in a window of %.0f px", what, got[0], got[1])
		br.shot("overflow")
	}
}

// field is the selector of the form field name inside the element sel.
func field(sel, name string) string { return fmt.Sprintf(`%s [data-field=%q]`, sel, name) }

// TestConsoleForms: an elicitation form built from a schema with every kind of field — strings with
// formats and lengths, bounded integers and numbers, a boolean, plain, legacy-titled and titled enums, a
// multi-select — with the schema's defaults filled in; a wrong answer shows the bridge's field errors by the
// fields, a right one reaches the server with exactly the values entered and the defaults.
func TestConsoleForms(t *testing.T) {
	t.Parallel()
	b := start(t, bridgeConfig{extraServers: consolePeer(t, "forms", "forms", "")})
	br := newBrowser(t, b)
	br.signIn("")
	// The overview refreshes every few seconds; the person's focus stays where it is.
	open := `tr[data-server="forms"] button`
	br.waitJS("the server forms", `!!document.querySelector('`+open+`')`)
	br.do(chromedp.Focus(chromedp.CSS(open)))
	n := eval[int](br, `Number(document.getElementById('servers').dataset.refreshes)`)
	br.waitJS("two refreshes", fmt.Sprintf(`Number(document.getElementById('servers').dataset.refreshes) >= %d`, n+2))
	if !eval[bool](br, `document.activeElement === document.querySelector('`+open+`')`) {
		t.Errorf("after a refresh the focus is on %s", eval[string](br, `document.activeElement.outerHTML.slice(0, 80)`))
	}
	// A double click opens one session.
	eval[bool](br, `(() => { const b = document.querySelector('`+open+`'); b.click(); b.click(); return true; })()`)
	br.waitJS("the tool form", `!!document.querySelector('details[data-tool="form"]')`)
	br.waitJS("the live event stream", `document.querySelector('.live.on') !== null`)
	if sessions, _ := b.rest("").must("GET", "/v1/sessions", "")["sessions"].([]any); len(sessions) != 1 {
		t.Errorf("a double click on Open session opened %d sessions", len(sessions))
	}
	br.runTool("form")
	card := `section[data-kind="elicitation"]`
	br.waitJS("the form", `!!document.querySelector('`+field(card, "toppings")+`')`)

	got := eval[map[string]any](br, `(() => {
		const f = (n) => document.querySelector('`+card+` [data-field="' + n + '"]');
		const opts = (n) => [...f(n).options].map(o => o.textContent);
		const req = (n) => !!document.querySelector('label[for="' + f(n).id + '"] .req');
		return {
			email: f('email').type, homepage: f('homepage').type, birthday: f('birthday').type, meeting: f('meeting').type,
			nickname: [f('nickname').value, f('nickname').minLength, f('nickname').maxLength],
			age: [f('age').type, f('age').min, f('age').max, f('age').step],
			ratio: [f('ratio').value, f('ratio').step, f('ratio').max],
			subscribe: [f('subscribe').type, f('subscribe').checked],
			size: [opts('size'), f('size').selectedOptions[0].textContent],
			legacy: opts('legacy'), plan: opts('plan'),
			toppings: [...f('toppings').querySelectorAll('label')].map(l => l.textContent.trim()),
			required: ['email', 'age', 'homepage'].map(req),
			labelOfEmail: document.querySelector('label[for="' + f('email').id + '"]').firstChild.textContent,
		};
	})()`)
	want := map[string]any{
		"email": "email", "homepage": "url", "birthday": "date", "meeting": "datetime-local",
		"nickname":     []any{"ace", 2.0, 10.0},
		"age":          []any{"number", "18", "99", "1"},
		"ratio":        []any{"0.5", "any", "1"},
		"subscribe":    []any{"checkbox", true},
		"size":         []any{[]any{"— none —", "s", "m", "l"}, "m"},
		"legacy":       []any{"— none —", "Alpha", "Beta"},
		"plan":         []any{"— none —", "Free plan", "Pro plan"},
		"toppings":     []any{"Ham", "Egg"},
		"required":     []any{true, true, false},
		"labelOfEmail": "E-mail",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the form (-want +got):\n%s", diff)
	}
	br.shot("form")

	// Wrongly: an e-mail address that is none, an age under the minimum.
	br.do(chromedp.SetValue(chromedp.CSS(field(card, "email")), "not-an-email"),
		chromedp.SetValue(chromedp.CSS(field(card, "age")), "17"),
		chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
	br.waitJS("the field errors", `document.querySelector('`+card+` [data-error-for="age"]').textContent !== ''`)
	if e := br.text(card + ` [data-error-for="email"]`); !strings.Contains(e, "email") {
		t.Errorf("error next to email = %q", e)
	}
	if e := br.text(card + ` [data-error-for="age"]`); !strings.Contains(e, "18") {
		t.Errorf("error next to age = %q", e)
	}
	if e := br.text(card + ` [data-error-for="nickname"]`); e != "" {
		t.Errorf("error next to nickname, which is right = %q", e)
	}
	br.shot("form-errors")

	// By keyboard: what a number field cannot take is flagged, not dropped; the error goes when it is edited.
	br.do(chromedp.SetValue(chromedp.CSS(field(card, "age")), ""), chromedp.Focus(chromedp.CSS(field(card, "age"))),
		chromedp.KeyEvent("2003-6"), chromedp.KeyEvent("\r"))
	br.waitJS("the age's own error", `document.querySelector('`+card+` [data-error-for="age"]').textContent.includes('not a whole number')`)
	if got := eval[[]any](br, `[document.querySelector('`+field(card, "age")+`').validity.badInput, document.activeElement === document.querySelector('`+field(card, "age")+`')]`); fmt.Sprint(got) != "[true true]" {
		t.Errorf("after 2003-6: [the input still holds it, focus on it] = %v", got)
	}
	if reqs, _ := b.rest("").must("GET", "/v1/sessions/-/requests", "")["requests"].([]any); len(reqs) != 1 {
		t.Errorf("the form was answered without the age the person typed: pending %v", reqs)
	}
	br.do(chromedp.SetValue(chromedp.CSS(field(card, "age")), ""), chromedp.KeyEvent("36"))
	if e := br.text(card + ` [data-error-for="age"]`); e != "" {
		t.Errorf("the age's error stays after an edit: %q", e)
	}

	// Rightly.
	br.do(chromedp.SetValue(chromedp.CSS(field(card, "email")), "ada@example.com"),
		chromedp.SetValue(chromedp.CSS(field(card, "age")), "36"),
		chromedp.SetValue(chromedp.CSS(field(card, "homepage")), "https://ada.example/"),
		chromedp.SetValue(chromedp.CSS(field(card, "birthday")), "1990-05-17"),
		chromedp.SetValue(chromedp.CSS(field(card, "meeting")), "2026-12-01T10:30"),
		chromedp.SetValue(chromedp.CSS(field(card, "legacy")), "0"),
		chromedp.SetValue(chromedp.CSS(field(card, "plan")), "1"),
		chromedp.SetValue(chromedp.CSS(field(card, "__proto__")), "kept"),
		chromedp.Click(chromedp.CSS(field(card, "toppings")+` input[value="1"]`)),
		chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
	result := `details[data-tool="form"] .result`
	br.waitJS("the result", `!!document.querySelector('`+result+` .text')`)
	var answer struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if err := json.Unmarshal([]byte(br.text(result+" .text")), &answer); err != nil {
		t.Fatal(err)
	}
	meeting, _ := answer.Content["meeting"].(string)
	if _, err := time.Parse(time.RFC3339, meeting); err != nil {
		t.Errorf("meeting = %q, want an RFC 3339 date-time: %v", meeting, err)
	}
	delete(answer.Content, "meeting")
	wantContent := map[string]any{
		"email": "ada@example.com", "age": 36.0, "homepage": "https://ada.example/", "birthday": "1990-05-17",
		"nickname": "ace", "ratio": 0.5, "subscribe": true, "size": "m", "legacy": "a", "plan": "pro", "toppings": []any{"egg"},
		"colors": []any{"green"}, "__proto__": "kept",
	}
	if diff := cmp.Diff(wantContent, answer.Content); answer.Action != "accept" || diff != "" {
		t.Errorf("the server got %s (-want +got):\n%s", answer.Action, diff)
	}
	br.shot("form-result")
}

// TestConsoleAnswers: the other things a person does on the demo server — answer a sampling request, follow
// a URL elicitation, run a tool from a form built from its input schema, see a tool's error.
func TestConsoleAnswers(t *testing.T) {
	t.Parallel()
	b := start(t, bridgeConfig{})
	br := newBrowser(t, b)
	br.signIn("")
	br.openSession("demo", "sample")

	// A tool from its input schema, and its structured result.
	br.do(chromedp.Click(chromedp.CSS(`details[data-tool="add"] > summary`)),
		chromedp.SetValue(chromedp.CSS(field(`details[data-tool="add"]`, "a")), "2"),
		chromedp.SetValue(chromedp.CSS(field(`details[data-tool="add"]`, "b")), "3"),
		chromedp.Click(chromedp.CSS(`details[data-tool="add"] button[type="submit"]`)))
	br.waitJS("add's result", `document.querySelector('details[data-tool="add"] .result .text')?.textContent === '2 + 3 = 5'`)
	if got := br.text(`details[data-tool="add"] .result .structured`); !strings.Contains(got, `"sum": 5`) {
		t.Errorf("add's structured content = %q", got)
	}

	// A tool that fails: a result with isError, shown as an error.
	br.do(chromedp.Click(chromedp.CSS(`details[data-tool="fail"] > summary`)),
		chromedp.SetValue(chromedp.CSS(field(`details[data-tool="fail"]`, "message")), "boom"),
		chromedp.Click(chromedp.CSS(`details[data-tool="fail"] button[type="submit"]`)))
	br.waitJS("fail's result", `!!document.querySelector('details[data-tool="fail"] .result[data-result="error"]')`)
	if got := br.text(`details[data-tool="fail"] .result`); !strings.Contains(got, "isError") || !strings.Contains(got, "boom") {
		t.Errorf("fail's result = %q", got)
	}
	br.shot("tools")

	// A long call streams its progress; a second one is cancelled from the page.
	long := `details[data-tool="long_operation"]`
	br.do(chromedp.Click(chromedp.CSS(long+` > summary`)),
		chromedp.SetValue(chromedp.CSS(field(long, "durationSeconds")), "3"),
		chromedp.SetValue(chromedp.CSS(field(long, "steps")), "3"),
		chromedp.Click(chromedp.CSS(long+` button[type="submit"]`)))
	br.waitJS("progress", `document.querySelector('`+long+` progress')?.value > 0 && document.querySelector('`+long+` .running').textContent.includes('of 3')`)
	br.shot("progress")
	br.waitJS("long_operation's result", `!!document.querySelector('`+long+` .result[data-result="ok"]')`)
	if visible := eval[bool](br, `document.querySelector('`+long+` button.cancel').checkVisibility()`); visible {
		t.Error("Cancel is visible with no call running")
	}
	br.do(chromedp.SetValue(chromedp.CSS(field(long, "durationSeconds")), "60"),
		chromedp.SetValue(chromedp.CSS(field(long, "steps")), "120"),
		chromedp.Click(chromedp.CSS(long+` button[type="submit"]`)))
	br.waitJS("the running call", `document.querySelector('`+long+` progress')?.value > 0`)
	br.do(chromedp.Click(chromedp.CSS(long + ` button.cancel`)))
	br.waitJS("the cancellation", `!!document.querySelector('`+long+` .cancelled')`)
	// The bridge cancelled the call upstream (the demo server runs over stdio: notifications/cancelled).
	b.logs.waitFor(t, func(rec map[string]any) bool {
		return rec["msg"] == "mcp message" && rec["direction"] == "send" && rec["method"] == "notifications/cancelled"
	})

	// Sampling: the person writes the answer.
	br.do(chromedp.Click(chromedp.CSS(`details[data-tool="sample"] > summary`)),
		chromedp.SetValue(chromedp.CSS(field(`details[data-tool="sample"]`, "prompt")), "Capital of France?"),
		chromedp.Click(chromedp.CSS(`details[data-tool="sample"] button[type="submit"]`)))
	card := `section[data-kind="sampling"]:not(.ended)`
	br.waitJS("the sampling request", `!!document.querySelector('`+card+` textarea.answer')`)
	if got := br.text(card + " .conversation"); !strings.Contains(got, "Capital of France?") {
		t.Errorf("the conversation shown = %q", got)
	}
	br.do(chromedp.SetValue(chromedp.CSS(card+" textarea.answer"), "Paris"))
	br.shot("sampling")
	br.do(chromedp.Click(chromedp.CSS(card + " .actions button.primary")))
	br.waitJS("sample's result", `document.querySelector('details[data-tool="sample"] .result')?.textContent.includes('Paris')`)

	// An elicitation declined.
	br.do(chromedp.Click(chromedp.CSS(`details[data-tool="elicit"] > summary`)),
		chromedp.Click(chromedp.CSS(`details[data-tool="elicit"] button[type="submit"]`)))
	br.waitJS("the elicitation", `!!document.querySelector('section[data-kind="elicitation"]:not(.ended) [data-field="age"]')`)
	br.do(chromedp.Click(chromedp.Search(`//section[@data-kind="elicitation" and not(contains(@class,"ended"))]//button[text()="Decline"]`)))
	br.waitJS("elicit's result", `document.querySelector('details[data-tool="elicit"] .result .text')?.textContent === 'declined'`)
	br.waitJS("the declined card to go", `!document.querySelector('section[data-kind="elicitation"]:not(.ended)')`)

	// URL elicitation: the link to open, then done.
	br.do(chromedp.Click(chromedp.CSS(`details[data-tool="elicit_url"] > summary`)),
		chromedp.Click(chromedp.CSS(`details[data-tool="elicit_url"] button[type="submit"]`)))
	card = `section[data-kind="elicitation"]:not(.ended)`
	br.waitJS("the URL elicitation", `!!document.querySelector('`+card+` a.button')`)
	if href := eval[string](br, `document.querySelector('`+card+` a.button').href`); !strings.HasPrefix(href, "https://example.com/") {
		t.Errorf("link to open = %q", href)
	}
	if rel := eval[string](br, `document.querySelector('`+card+` a.button').rel`); rel != "noopener noreferrer" {
		t.Errorf("link rel = %q", rel)
	}
	br.shot("url-elicitation")
	br.do(chromedp.Click(chromedp.CSS(card + " .actions button.primary")))
	br.waitJS("elicit_url's result", `document.querySelector('details[data-tool="elicit_url"] .result')?.textContent.includes('url elicitation: accept')`)
	br.shot("answered")

	// The rest of MCP: resources (read, subscribe), prompts with completion, log level, ping, raw views.
	br.do(chromedp.Click(chromedp.CSS(`.resources-panel > summary`)))
	br.waitJS("the resources", `!!document.querySelector('.resources-panel li[data-uri="demo://readme"] button.read')`)
	br.do(chromedp.Click(chromedp.CSS(`.resources-panel li[data-uri="demo://readme"] button.read`)))
	br.waitJS("the readme", `document.querySelector('.resources-panel .mcp-out .text')?.textContent.length > 0`)
	if got := br.text(`.resources-panel .mcp-out .raw pre`); !strings.Contains(got, "POST /v1/sessions/") || !strings.Contains(got, `"uri": "demo://readme"`) {
		t.Errorf("the raw view of the read = %q", got)
	}
	br.do(chromedp.Click(chromedp.CSS(`.resources-panel li[data-uri="demo://counter"] button.subscribe`)))
	br.waitJS("the subscription", `document.querySelector('.resources-panel .mcp-out')?.textContent.includes('Subscribed')`)
	br.do(chromedp.Click(chromedp.CSS(`.prompts-panel > summary`)))
	br.waitJS("the prompt", `!!document.querySelector('form[data-prompt="greet"] input[data-arg="name"]')`)
	br.do(chromedp.Focus(chromedp.CSS(`form[data-prompt="greet"] input[data-arg="style"]`)), chromedp.KeyEvent("p"))
	br.waitJS("the completion", `[...document.querySelectorAll('form[data-prompt="greet"] datalist option')].map(o => o.value).includes('pirate')`)
	br.do(chromedp.SetValue(chromedp.CSS(`form[data-prompt="greet"] input[data-arg="style"]`), "pirate"),
		chromedp.SetValue(chromedp.CSS(`form[data-prompt="greet"] input[data-arg="name"]`), "Ada"),
		chromedp.Click(chromedp.CSS(`form[data-prompt="greet"] button[type="submit"]`)))
	br.waitJS("the prompt's messages", `document.querySelector('form[data-prompt="greet"] .conversation')?.textContent.includes('pirate greeting for Ada')`)
	br.do(chromedp.Click(chromedp.CSS(`.utilities-panel > summary`)),
		chromedp.SetValue(chromedp.CSS(`#log-level`), "LOGGING_LEVEL_DEBUG"),
		chromedp.Click(chromedp.CSS(`.utilities-panel button.set-level`)))
	br.waitJS("the log level", `document.querySelector('.utilities-panel .mcp-out')?.textContent.includes('now logs from debug')`)
	br.do(chromedp.Click(chromedp.CSS(`.utilities-panel button.ping`)))
	br.waitJS("the pong", `document.querySelector('.utilities-panel .mcp-out')?.textContent.includes('Pong')`)
	br.shot("inspector")
}

// TestConsoleAuthorization: opening a session to an OAuth-protected server raises an authorization request
// while CreateSession waits; the overview shows it, the person opens the link, pastes where the browser
// landed, and the session opens.
func TestConsoleAuthorization(t *testing.T) {
	t.Parallel()
	b, _, _, _ := startOAuth(t)
	br := newBrowser(t, b)
	br.signIn("tok-alice")
	br.waitJS("the protected server", `!!document.querySelector('tr[data-server="secured"] button')`)
	br.do(chromedp.Click(chromedp.CSS(`tr[data-server="secured"] button`)))
	card := `section[data-kind="authorization"]`
	br.waitJS("the authorization request", `!!document.querySelector('`+card+` a.button')`)
	r := &pb.AuthorizationRequest{
		AuthorizationUrl: eval[string](br, `document.querySelector('`+card+` a.button').href`),
		RedirectUrl:      br.text(card + " label code"),
		ServerName:       br.text(card + " strong"),
	}
	br.shot("authorization")
	landed := authorize(t, r, "secured") // the person signs in; the browser lands on the redirect URL
	br.do(chromedp.SetValue(chromedp.CSS(card+` input[type="url"]`), landed),
		chromedp.Click(chromedp.CSS(card+` button[type="submit"]`)))
	br.waitJS("the new session's tools", `!!document.querySelector('details[data-tool="whoami"]')`)
	br.shot("session")
}

// TestConsoleOIDC: signed in with a JWT of the identity provider the bridge trusts (auth.oidc), the console
// shows what that principal may see — a server only *@example.com may use is listed for alice and not for bob.
func TestConsoleOIDC(t *testing.T) {
	t.Parallel()
	p := newIDP(t)
	key := rsaKey(t, "k1")
	p.publish(t, key)
	b := start(t, bridgeConfig{
		extraServers: probeServer("private", "    allowedPrincipals: [\"*@example.com\"]\n"),
		extra:        "auth:\n  oidc:\n    issuer: " + p.srv.URL + "\n    audience: mcp-bridge\n    principalClaim: email\n    caFile: idp.pem\n",
		files:        map[string]string{"idp.pem": p.caPEM()},
	})
	jwtOf := func(email string) string {
		now := time.Now()
		return sign(t, key, map[string]any{"iss": p.srv.URL, "aud": "mcp-bridge", "sub": "u-" + email, "email": email,
			"iat": now.Unix(), "exp": now.Add(time.Hour).Unix()})
	}
	br := newBrowser(t, b)

	br.signIn(jwtOf("alice@example.com"))
	sid := br.openSession("private", "block")
	br.do(chromedp.Click(chromedp.CSS(`a[href="#/"]`)))
	br.waitJS("alice's session", fmt.Sprintf(`!!document.querySelector('tr[data-session=%q]')`, sid))
	if got := br.text(fmt.Sprintf(`tr[data-session=%q] .principal`, sid)); got != "alice@example.com" {
		t.Errorf("principal of alice's session = %q", got)
	}
	br.shot("alice")

	br.signIn(jwtOf("bob@other.org"))
	br.waitJS("bob's servers", `!!document.querySelector('tr[data-server="demo"]')`)
	br.waitJS("bob's empty session list", `document.querySelector('#sessions tbody')?.textContent.includes('You have no sessions')`)
	if eval[bool](br, `!!document.querySelector('tr[data-server="private"]')`) {
		t.Error("bob's console lists the server only *@example.com may use")
	}
	br.shot("bob")
}

// signInIDP is an OpenID Connect provider a browser signs in at: discovery, keys, an authorization endpoint
// that approves at once (the person is already signed in there) and a token endpoint for public clients with
// PKCE, answering cross-origin requests as providers do for single-page apps.
type signInIDP struct {
	srv   *httptest.Server
	key   jose.JSONWebKey
	mu    sync.Mutex                   // guards codes
	codes map[string]map[string]string // code → the authorization request's parameters
}

func newSignInIDP(t *testing.T, client, email string) *signInIDP {
	p := &signInIDP{key: rsaKey(t, "k1"), codes: map[string]map[string]string{}}
	mux := http.NewServeMux()
	cors := func(w http.ResponseWriter) { w.Header().Set("Access-Control-Allow-Origin", "*") }
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		cors(w)
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": p.srv.URL, "jwks_uri": p.srv.URL + "/keys",
			"authorization_endpoint": p.srv.URL + "/authorize", "token_endpoint": p.srv.URL + "/token"})
	})
	mux.HandleFunc("GET /keys", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{p.key.Public()}})
	})
	mux.HandleFunc("GET /authorize", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("response_type") != "code" || q.Get("client_id") != client || q.Get("code_challenge_method") != "S256" ||
			q.Get("code_challenge") == "" || !strings.Contains(q.Get("scope"), "openid") {
			http.Error(w, "bad authorization request: "+r.URL.RawQuery, http.StatusBadRequest)
			return
		}
		code := rand.Text()
		p.mu.Lock()
		p.codes[code] = map[string]string{"challenge": q.Get("code_challenge"), "redirect": q.Get("redirect_uri"), "nonce": q.Get("nonce")}
		p.mu.Unlock()
		back, err := url.Parse(q.Get("redirect_uri"))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		back.RawQuery = url.Values{"code": {code}, "state": {q.Get("state")}}.Encode()
		http.Redirect(w, r, back.String(), http.StatusFound)
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		cors(w)
		p.mu.Lock()
		req, ok := p.codes[r.FormValue("code")]
		delete(p.codes, r.FormValue("code"))
		p.mu.Unlock()
		sum := sha256.Sum256([]byte(r.FormValue("code_verifier")))
		if !ok || r.FormValue("grant_type") != "authorization_code" || r.FormValue("client_id") != client ||
			r.FormValue("redirect_uri") != req["redirect"] || base64.RawURLEncoding.EncodeToString(sum[:]) != req["challenge"] {
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": "invalid_grant"})
			return
		}
		now := time.Now()
		id := sign(t, p.key, map[string]any{"iss": p.srv.URL, "aud": client, "sub": "u-1", "email": email, "nonce": req["nonce"],
			"iat": now.Unix(), "exp": now.Add(time.Hour).Unix()})
		_ = json.NewEncoder(w).Encode(map[string]any{"id_token": id, "access_token": "opaque", "token_type": "Bearer", "expires_in": 3600})
	})
	p.srv = httptest.NewTLSServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

// TestConsoleOIDCSignIn: with console.oidc, a person signs in at the identity provider (authorization code
// with PKCE) instead of pasting a token, and the console then calls the API as the principal of the ID token.
func TestConsoleOIDCSignIn(t *testing.T) {
	t.Parallel()
	p := newSignInIDP(t, "mcp-bridge-console", "alice@example.com")
	b := start(t, bridgeConfig{
		extraServers: probeServer("private", "    allowedPrincipals: [\"*@example.com\"]\n"),
		extra: "auth:\n  oidc:\n    issuer: " + p.srv.URL + "\n    audience: mcp-bridge-console\n    principalClaim: email\n    caFile: idp.pem\n" +
			"console:\n  oidc:\n    clientID: mcp-bridge-console\n    scopes: [openid, email]\n",
		files: map[string]string{"idp.pem": string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.srv.Certificate().Raw}))},
	})
	br := newBrowser(t, b)
	br.signIn("")
	br.waitJS("the sign-in button", `!!document.getElementById('oidc-signin')`)
	br.do(chromedp.Click(chromedp.CSS("#oidc-signin")))
	// Off to the provider and back; the page exchanges the code and lists what alice may use.
	br.waitJSAcross("alice's servers", `!!document.querySelector('tr[data-server="private"]')`)
	if got := eval[string](br, `location.search + '|' + document.getElementById('token-state').textContent`); got != "|as alice@example.com" {
		t.Errorf("after sign-in: query and token state = %q, want no code in the address bar and a token", got)
	}
	br.openSession("private", "block")
	br.shot("signed-in")
}

// TestConsoleApprovals: an approver signed in to the console sees two tool calls of another principal waiting
// for approval — caller, tool, server, the arguments (markup in them shown as text) and their digest — approves
// one, which then reaches the server with those arguments, and denies the other with a reason, which the
// caller gets.
func TestConsoleApprovals(t *testing.T) {
	t.Parallel()
	b := start(t, bridgeConfig{
		extraServers: probeServer("gated", "    tools: {approve: [block]}\n    approvers: {principals: [bob]}\n"),
		extra:        "auth:\n  tokensFile: tokens.txt\n",
		files:        map[string]string{"tokens.txt": "tok-alice alice\ntok-bob bob\n"},
	})
	ctx := testCtx(t)
	alice := withToken(ctx, "tok-alice")
	const approvedTag = `approved <img src=x onerror="window.__pwned='args'">`
	cs, err := b.client.CreateSession(alice, &pb.CreateSessionRequest{Server: "gated"})
	if err != nil {
		t.Fatal(err)
	}
	sid := cs.GetSession().GetSessionId()
	approved := b.callAsync(alice, &pb.CallToolRequest{SessionId: sid, CallId: "call-ok", Name: "block",
		Arguments: args(t, map[string]any{"tag": approvedTag, "durationSeconds": 0.01})})
	denied := b.callAsync(alice, &pb.CallToolRequest{SessionId: sid, CallId: "call-no", Name: "block", Arguments: args(t, map[string]any{"tag": "console-denied"})})
	// Arguments that read "0000001" where a bidi override applies, and are "\u202E1000000".
	tricky := b.callAsync(alice, &pb.CallToolRequest{SessionId: sid, CallId: "call-tricky", Name: "block",
		Arguments: args(t, map[string]any{"tag": rlo + "1000000", "durationSeconds": 0.01})})

	br := newBrowser(t, b)
	br.signIn("tok-bob")
	ok := `section[data-kind="approval"][data-request-id="` + approvalID(t, b, "call-ok") + `"]`
	no := `section[data-kind="approval"][data-request-id="` + approvalID(t, b, "call-no") + `"]`
	br.waitJS("both approvals", `!!document.querySelector('`+ok+`') && !!document.querySelector('`+no+`')`)
	if got := br.text(ok + " .call"); !strings.Contains(got, "alice calls block on gated") || !strings.Contains(got, "call-ok") {
		t.Errorf("the call shown = %q", got)
	}
	if got := br.text(ok + " .arguments"); !strings.Contains(got, `"tag": "approved <img src=x onerror=\"window.__pwned='args'\">"`) {
		t.Errorf("the arguments shown = %q", got)
	}
	if got := br.text(ok + " .digest"); len(got) != 64 {
		t.Errorf("the digest shown = %q", got)
	}
	br.shot("approvals")

	br.do(chromedp.Click(chromedp.CSS(ok + " button.approve")))
	if res := await(t, approved); res.Err != nil || textOf(res.Resp.GetResult()) != "not cancelled" {
		t.Fatalf("approved call = %v, %v", res.Resp, res.Err)
	}
	if line := await(t, b.reports.Lines); line != "started "+approvedTag {
		t.Errorf("the server saw %q", line)
	}
	br.do(chromedp.SetValue(chromedp.CSS(no+" input.reason"), "not from the console"),
		chromedp.Click(chromedp.CSS(no+" button.deny")))
	res := await(t, denied)
	if status.Code(res.Err) != codes.PermissionDenied || reasonOf(res.Err) != "APPROVAL_DENIED" || !strings.Contains(status.Convert(res.Err).Message(), "not from the console") {
		t.Fatalf("denied call = %v, want PERMISSION_DENIED APPROVAL_DENIED with the reason", res.Err)
	}
	br.waitJS("both cards ended", `document.querySelector('`+ok+`').classList.contains('ended') && document.querySelector('`+no+`').classList.contains('ended')`)
	// The decisions stay visible, each with its outcome (once the answer's own reply is back).
	br.waitJS("the outcomes", `document.querySelector('`+ok+`').dataset.outcome === 'approved' && document.querySelector('`+no+`').dataset.outcome === 'denied'`)
	if got := eval[string](br, `document.querySelector('`+ok+`').dataset.outcome + '|' + document.querySelector('`+no+`').dataset.outcome + '|' + document.querySelector('`+no+` .card-status').textContent`); !strings.HasPrefix(got, "approved|denied|Denied") || !strings.Contains(got, "not from the console") {
		t.Errorf("the decided cards say %q", got)
	}
	br.shot("approvals-decided")

	// Hidden characters: revealed in place, a warning, and Approve asks again before it approves.
	tr := `section[data-kind="approval"][data-request-id="` + approvalID(t, b, "call-tricky") + `"]`
	br.waitJS("the tricky approval", `!!document.querySelector('`+tr+`')`)
	if got := br.text(tr + " .arguments"); !strings.Contains(got, `"tag": "⟨U+202E⟩1000000"`) {
		t.Errorf("the tricky arguments shown = %q", got)
	}
	if got := br.text(tr + " .u-warning"); !strings.Contains(got, "1 invisible") {
		t.Errorf("the tricky card's warning = %q", got)
	}
	br.do(chromedp.Click(chromedp.CSS(tr + " button.approve")))
	br.waitJS("the second confirmation", `document.querySelector('`+tr+` .confirm')?.checkVisibility() && document.activeElement === document.querySelector('`+tr+` button.approve-confirm')`)
	if eval[bool](br, `document.querySelector('`+tr+`').classList.contains('ended')`) {
		t.Fatal("one press on Approve approved arguments with hidden characters")
	}
	br.shot("approval-confirm")
	br.do(chromedp.KeyEvent("\r")) // the focused "Approve anyway", by keyboard
	if res := await(t, tricky); res.Err != nil || textOf(res.Resp.GetResult()) != "not cancelled" {
		t.Fatalf("tricky call = %v, %v", res.Resp, res.Err)
	}
	if line := await(t, b.reports.Lines); line != "started "+rlo+"1000000" {
		t.Errorf("the server saw %q", line)
	}
	if n := eval[int](br, `document.querySelectorAll('body img').length`); n != 0 {
		t.Errorf("%d images from the arguments' markup are on the page", n)
	}
	if pwned := eval[string](br, `String(window.__pwned ?? '')`); pwned != "" {
		t.Errorf("the arguments' script ran (window.__pwned = %q)", pwned)
	}
}

// approvalID waits until the approval request of call callID is pending and returns its id.
func approvalID(t *testing.T, b *bridge, callID string) string {
	t.Helper()
	ev := b.rest("tok-bob").events("approvals")
	defer ev.close()
	return ev.next(func(e *pb.Event) bool { return e.GetServerRequest().GetOriginCallId() == callID }).GetServerRequest().GetRequestId()
}

// TestConsoleSelfApproval: with the single-person set-up (approvers: {principals: [local], allowSelf: true}),
// a call started in the console waits for approval and says so (rule, expiry); it goes on while the person
// looks at another page (the badge and the tab's title count it there), is found again on return, and is
// approved from the same tab by keyboard. A second call, denied, shows the denial's reason in words.
func TestConsoleSelfApproval(t *testing.T) {
	t.Parallel()
	b, br, sid := selfApproving(t)
	blk := blockCard
	br.runBlock("self")
	if got := br.text(blk + " .waits-approval"); !strings.Contains(got, "Waiting for approval") || !strings.Contains(got, "rule") || !strings.Contains(got, "expires at") {
		t.Errorf("the waiting call says %q", got)
	}
	br.shot("waiting")

	// Elsewhere: the call goes on, and the inbox counts it.
	br.do(chromedp.Click(chromedp.CSS(`main a[href="#/"]`)))
	br.waitJS("the overview", fmt.Sprintf(`!!document.querySelector('tr[data-session=%q]')`, sid))
	br.waitJS("the badge and the title", `!document.getElementById('inbox-badge').hidden && document.title.startsWith('(1)')`)
	br.shot("overview-badge")
	br.do(chromedp.Click(chromedp.CSS(fmt.Sprintf(`tr[data-session=%q] a`, sid))))
	br.waitJS("the call, found again", `!!document.querySelector('`+blk+` .waits-approval')`)
	if got := eval[string](br, `document.querySelector('`+field(blk, "tag")+`').value + '|' + document.querySelector('`+field(blk, "durationSeconds")+`').value`); got != "self|0.01" {
		t.Errorf("the tool's form after the visit holds %q, want what was typed", got)
	}
	if reqs, _ := b.rest("").must("GET", "/v1/sessions/approvals/requests", "")["requests"].([]any); len(reqs) != 1 {
		t.Fatalf("approvals pending after the navigation = %v, want the call's", reqs)
	}

	// Approved from the same tab, by keyboard: the badge takes the person to the request.
	br.do(chromedp.Focus(chromedp.CSS("#inbox-badge")), chromedp.KeyEvent("\r"))
	br.waitJS("the focus in the approval", `document.activeElement?.closest('section[data-kind="approval"]') !== null`)
	br.do(chromedp.KeyEvent("fine by me"))
	for range 5 { // Tab to Approve
		if eval[bool](br, `document.activeElement?.classList.contains('approve')`) {
			break
		}
		br.do(chromedp.KeyEvent("\t"))
	}
	br.do(chromedp.KeyEvent("\r"))
	br.waitJS("the result", `document.querySelector('`+blk+` .result .text')?.textContent === 'not cancelled'`)
	if line := await(t, b.reports.Lines); line != "started self" {
		t.Errorf("the server saw %q", line)
	}
	if got := br.text("#call-history"); !strings.Contains(got, "block") || !strings.Contains(got, "done") {
		t.Errorf("the call history = %q", got)
	}
	br.shot("approved")

	// Denied with a reason: the caller reads status, reason and the approver's words.
	br.do(chromedp.SetValue(chromedp.CSS(field(blk, "tag")), "denied"),
		chromedp.Click(chromedp.CSS(blk+` button[type="submit"]`)))
	br.waitJS("the second call waiting", `!!document.querySelector('`+blk+` .waits-approval')`)
	approval := `#inbox section[data-kind="approval"]:not(.ended)`
	br.do(chromedp.SetValue(chromedp.CSS(approval+" input.reason"), "not today"),
		chromedp.Click(chromedp.CSS(approval+" button.deny")))
	br.waitJS("the denial", `!!document.querySelector('`+blk+` .api-error')`)
	if got := br.text(blk + " .api-error"); !strings.Contains(got, "PERMISSION_DENIED") || !strings.Contains(got, "APPROVAL_DENIED") || !strings.Contains(got, "not today") || strings.Contains(got, "HTTP 403: HTTP 403") {
		t.Errorf("the denial shows %q", got)
	}
	br.shot("denied")

	// Closing asks first.
	br.do(chromedp.Click(chromedp.CSS("button.close-session")))
	br.waitJS("the question", `document.activeElement === document.querySelector('button.close-confirm')`)
	b.rest("").must("GET", "/v1/sessions/"+sid, "") // still there
	br.do(chromedp.Click(chromedp.Search(`//button[text()="Keep it"]`)))

	// The session closed elsewhere (as after a restart): the page says it is gone and offers a way on.
	b.rest("").must("DELETE", "/v1/sessions/"+sid, "")
	br.waitJS("the session gone", `document.querySelector('.gone')?.checkVisibility()`)
	if got := br.text(".gone"); !strings.Contains(got, "This session is gone") || !strings.Contains(got, "Open a new session to gated") {
		t.Errorf("the gone session says %q", got)
	}
	if got := br.text("#session-state"); got != "gone" {
		t.Errorf("its state says %q", got)
	}
	br.shot("gone")
}
