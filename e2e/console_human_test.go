package e2e

// More of the operator console in headless Chromium (issue 30, the human edge): a reload keeps the person's
// calls, every page fits a phone's width with every control reachable, no page says "null" or "undefined",
// a new approval raises a desktop notification when the person allowed them, and a session's events outlive
// a visit of another page.

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// selfApprovalServer is the single-person set-up: a probe server "gated" whose tool block waits for the
// approval of local, who may approve their own calls.
var selfApprovalServer = probeServer("gated", "    tools: {approve: [block]}\n    approvers: {principals: [local], allowSelf: true}\n")

// blockCard is the selector of the block tool's card.
const blockCard = `details[data-tool="block"]`

// consoleOn starts a bridge of cfg and a console signed in without a token, on a new session to server
// (once it lists tool); it returns the session's id.
func consoleOn(t *testing.T, cfg bridgeConfig, server, tool string) (*bridge, *browser, string) {
	t.Helper()
	b := start(t, cfg)
	br := newBrowser(t, b)
	br.signIn("")
	return b, br, br.openSession(server, tool)
}

// selfApproving is consoleOn with selfApprovalServer, on a session to gated.
func selfApproving(t *testing.T) (*bridge, *browser, string) {
	t.Helper()
	return consoleOn(t, bridgeConfig{extraServers: selfApprovalServer}, "gated", "block")
}

// runBlock opens block's card, runs it with tag (for 0.01 s once approved) and waits until the call says it
// waits for approval.
func (br *browser) runBlock(tag string) {
	br.t.Helper()
	eval[bool](br, `document.querySelector('`+blockCard+`').open = true`)
	br.do(chromedp.SetValue(chromedp.CSS(field(blockCard, "tag")), tag),
		chromedp.SetValue(chromedp.CSS(field(blockCard, "durationSeconds")), "0.01"),
		chromedp.Click(chromedp.CSS(blockCard+` button[type="submit"]`)))
	br.waitJS("the call waiting for approval", `!!document.querySelector('`+blockCard+` .waits-approval')`)
}

// TestConsoleReloadKeepsCall: with the single-person set-up (allowSelf), a call waiting for approval survives
// a reload of the session page — the console finds it again by its call id (kept in the tab's
// sessionStorage), it waits for approval again, is approved from the same tab, and its result shows — and a
// reload on the overview does the same for a call started on a session page. The call history survives both.
func TestConsoleReloadKeepsCall(t *testing.T) {
	t.Parallel()
	b, br, sid := selfApproving(t)
	blk := blockCard
	runBlock := func(tag string) string {
		br.runBlock(tag)
		return eval[string](br, `document.querySelector('#call-history li[data-state="running"]')?.dataset.callId ?? ''`)
	}
	approve := func() {
		approval := `#inbox section[data-kind="approval"]:not(.ended) button.approve`
		br.waitJSAcross("the approval, asked again", `!!document.querySelector('`+approval+`')`)
		br.do(chromedp.Click(chromedp.CSS(approval)))
	}

	// Reloaded on the session page.
	first := runBlock("reloaded")
	if first == "" {
		t.Fatal("the running call is not in the call history")
	}
	br.do(chromedp.Reload())
	br.waitJSAcross("the call, found again after the reload", `!!document.querySelector('`+blk+` .waits-approval')`)
	if got := eval[string](br, `document.querySelector('#call-history li[data-state="running"]')?.dataset.callId ?? ''`); got != first {
		t.Errorf("the running call after the reload is %q, want %q", got, first)
	}
	if got := eval[string](br, `document.querySelector('`+field(blk, "tag")+`').value + '|' + document.querySelector('`+field(blk, "durationSeconds")+`').value`); got != "reloaded|0.01" {
		t.Errorf("the tool's form after the reload holds %q, want the call's arguments", got)
	}
	br.shot("reloaded-waiting")
	approve()
	br.waitJS("the result", `document.querySelector('`+blk+` .result .text')?.textContent === 'not cancelled'`)
	if line := await(t, b.reports.Lines); line != "started reloaded" {
		t.Errorf("the server saw %q, want the arguments the person gave", line)
	}
	if got := eval[string](br, `document.querySelector('#call-history li[data-call-id="`+first+`"]')?.dataset.state ?? ''`); got != "done" {
		t.Errorf("the call's history entry says %q, want done", got)
	}
	br.shot("reloaded-approved")

	// Reloaded on the overview: the call is taken up again there (the inbox counts it), approved there, and
	// its result is on the session page.
	second := runBlock("overview")
	br.do(chromedp.Click(chromedp.CSS(`main a[href="#/"]`)))
	br.waitJS("the overview", fmt.Sprintf(`!!document.querySelector('tr[data-session=%q]')`, sid))
	br.do(chromedp.Reload())
	br.waitJSAcross("the badge after the reload", `!document.getElementById('inbox-badge').hidden && document.title.startsWith('(1)')`)
	approve()
	br.do(chromedp.Click(chromedp.CSS(fmt.Sprintf(`tr[data-session=%q] a`, sid))))
	br.waitJS("the second result", `document.querySelector('`+blk+` .result .text')?.textContent === 'not cancelled'`)
	if line := await(t, b.reports.Lines); line != "started overview" {
		t.Errorf("the server saw %q, want the arguments the person gave", line)
	}
	hist := br.text("#call-history")
	for _, id := range []string{first, second} {
		if !strings.Contains(hist, id) {
			t.Errorf("the call history %q lacks call %s", hist, id)
		}
	}
}

// TestConsoleReloadSentCall: a call the server already runs when the tab reloads — here one waiting for the
// person's answer to an elicitation — goes on (the console starts its calls detached, ADR 0105): after the
// reload the question is shown again, the person answers it, and the call's card shows the result. Before,
// the reload cancelled the call upstream, the question vanished and the call ended CALL_OUTCOME_UNKNOWN.
func TestConsoleReloadSentCall(t *testing.T) {
	t.Parallel()
	b, br, _ := consoleOn(t, bridgeConfig{}, "demo", "elicit")
	eli := `details[data-tool="elicit"]`
	question := `section[data-kind="elicitation"]:not(.ended) [data-field="age"]`
	eval[bool](br, `document.querySelector('`+eli+`').open = true`)
	br.do(chromedp.Click(chromedp.CSS(eli + ` button[type="submit"]`)))
	br.waitJS("the elicitation", `!!document.querySelector('`+question+`')`)
	id := eval[string](br, `document.querySelector('#call-history li[data-state="running"]')?.dataset.callId ?? ''`)
	br.do(chromedp.Reload())
	br.waitJSAcross("the question again after the reload", `!!document.querySelector('`+question+`')`)
	br.do(chromedp.Click(chromedp.Search(`//section[@data-kind="elicitation" and not(contains(@class,"ended"))]//button[text()="Decline"]`)))
	br.waitJS("elicit's result", `document.querySelector('`+eli+` .result .text')?.textContent === 'declined'`)
	if got := eval[string](br, `document.querySelector('#call-history li[data-call-id="`+id+`"]')?.dataset.state ?? ''`); got != "done" {
		t.Errorf("the call's history entry says %q, want done", got)
	}
	// The call was never cancelled upstream.
	for _, line := range b.logs.all() {
		if strings.Contains(line, `"method":"notifications/cancelled"`) {
			t.Errorf("the reload cancelled the call upstream: %s", line)
		}
	}
	br.shot("answered-after-reload")
}

// offScreen is a script that lists what does not fit the window: the page wider than the window, and every
// visible control (button, link, field, summary) not wholly inside the window's width — a person on a phone
// could neither see nor press it.
const offScreen = `(() => {
  const vw = document.documentElement.clientWidth;
  const bad = [];
  const sw = document.documentElement.scrollWidth;
  if (sw > window.innerWidth) bad.push('the page is ' + sw + ' px wide in a window of ' + window.innerWidth);
  for (const el of document.querySelectorAll('button, a[href], input:not([type=hidden]), select, textarea, summary')) {
    if (!el.checkVisibility({ visibilityProperty: true })) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (r.left < -1 || r.right > vw + 1) {
      const name = (el.textContent || el.getAttribute('aria-label') || el.name || el.id || '').trim().slice(0, 40);
      bad.push(el.tagName.toLowerCase() + ' "' + name + '" at x ' + Math.round(r.left) + '..' + Math.round(r.right));
    }
  }
  return bad;
})()`

// none fails the test for each finding of script (offScreen, nullText) on the page.
func (br *browser) none(page, script string) {
	br.t.Helper()
	for _, p := range eval[[]string](br, script) {
		br.t.Errorf("%s: %s", page, p)
	}
}

// openAll opens every <details> of the page (tools, inspector, raw views, the inbox) and waits until what
// they load on opening is there.
func (br *browser) openAll() {
	br.t.Helper()
	eval[int](br, `(() => { const d = [...document.querySelectorAll('details:not([open])')]; d.forEach((x) => { x.open = true; }); return d.length; })()`)
	br.waitJS("the opened sections loaded", `![...document.querySelectorAll('details[open]')].some((d) => /Loading…/.test(d.textContent))`)
}

// TestConsoleNarrow: at 360 and 400 px (and 1280) every page of the console — the overview with its servers and
// sessions tables and a request waiting, the approvals inbox with a request, a session page with every tool,
// the inspector, a call waiting for approval, a result, the call history and the events all open — is no
// wider than the window, and every button, link and field is inside it: tables reflow into stacked rows
// rather than hide their controls off the right edge.
func TestConsoleNarrow(t *testing.T) {
	t.Parallel()
	_, br, sid := selfApproving(t)
	echo := `details[data-tool="echo"]`
	eval[bool](br, `document.querySelector('`+echo+`').open = true`)
	br.do(chromedp.SetValue(chromedp.CSS(field(echo, "text")), "a result to show"),
		chromedp.Click(chromedp.CSS(echo+` button[type="submit"]`)))
	br.waitJS("the echo result", `!!document.querySelector('`+echo+` .result')`)
	blk := blockCard
	br.runBlock("narrow")
	eli := `details[data-tool="elicit"]`
	eval[bool](br, `document.querySelector('`+eli+`').open = true`)
	br.do(chromedp.Click(chromedp.CSS(eli + ` button[type="submit"]`)))
	br.waitJS("the elicitation", `!!document.querySelector('section[data-kind="elicitation"]')`)

	for _, w := range []int64{1280, 400, 360} { // 1280 for the screenshots to compare with
		br.viewport(w, 800)
		br.do(chromedp.Navigate(br.base + "/console/#/sessions/" + sid))
		br.waitJS("the session page", `!!document.querySelector('`+blk+` .waits-approval') && !!document.querySelector('section[data-kind="elicitation"]')`)
		br.openAll()
		br.none(fmt.Sprintf("the session page at %d px", w), offScreen)
		br.shot(fmt.Sprintf("session-%d", w))

		br.do(chromedp.Click(chromedp.CSS(`main a[href="#/"]`)))
		br.waitJS("the overview", fmt.Sprintf(`!!document.querySelector('tr[data-session=%q]') && !!document.querySelector('tr[data-server="gated"] button')`, sid))
		br.waitJS("the approval in the inbox", `!!document.querySelector('#inbox section[data-kind="approval"]:not(.ended)')`)
		br.openAll()
		br.none(fmt.Sprintf("the overview at %d px", w), offScreen)
		br.shot(fmt.Sprintf("overview-%d", w))
	}
	br.viewport(1280, 1000)
}

// sparseServer is an MCP server (official Go SDK) that leaves out everything it may: no title, version or
// instructions, tools without descriptions whose results have no content, an elicitation with an empty
// message and untitled fields, a sampling request with an empty text and no system prompt, a log message
// without data, progress without a message, a resource and a prompt without descriptions.
func sparseServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "sparse"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "bare"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info"})
			if tok := req.Params.GetProgressToken(); tok != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok})
			}
			return &mcp.CallToolResult{}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "ask"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{RequestedSchema: map[string]any{
				"type": "object", "properties": map[string]any{"x": map[string]any{"type": "string"}, "n": map[string]any{"type": "number"}},
			}})
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{StructuredContent: res.Content}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "sample"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			if _, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 1,
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{}}}}); err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{}, nil, nil
		})
	s.AddResource(&mcp.Resource{URI: "sparse://r", Name: "r"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "sparse://r"}}}, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "p", Arguments: []*mcp.PromptArgument{{Name: "a"}}}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{}}}}, nil
	})
	return s
}

// nullText is a script that finds a literal null, undefined, NaN or [object Object] standing alone in the
// page's visible text or in an attribute a person reads (title, placeholder, aria-label), with what
// surrounds it.
const nullText = `(() => {
  const re = /(?<![\p{L}\p{N}_])(null|undefined|NaN|\[object Object\])(?![\p{L}\p{N}_])/gu;
  const found = [];
  const look = (where, t) => { for (const m of t.matchAll(re)) found.push(where + ': …' + t.slice(Math.max(0, m.index - 40), m.index + m[0].length + 40).replace(/\s+/g, ' ') + '…'); };
  look('text', document.body.innerText);
  for (const el of document.querySelectorAll('[title], [placeholder], [aria-label]')) {
    for (const a of ['title', 'placeholder', 'aria-label']) if (el.hasAttribute(a)) look(a, el.getAttribute(a));
  }
  return found;
})()`

// TestConsoleNoNull: with a server that leaves out everything it may (sparseServer) and one whose data is
// hostile, every page of the console — the overview, the inbox with an approval and its history, a session
// page with every section open, a form and a sampling request waiting, results without content, a log line
// without data, a resource read and a prompt got — shows no literal "null", "undefined", "NaN" or
// "[object Object]".
func TestConsoleNoNull(t *testing.T) {
	t.Parallel()
	b := start(t, bridgeConfig{extraServers: consolePeer(t, "sparse", "sparse", "    tools: {approve: [bare]}\n    approvers: {principals: [local], allowSelf: true}\n") +
		consolePeer(t, "hostile", "hostile", "")})
	br := newBrowser(t, b)
	br.signIn("")
	br.waitJS("the servers", `!!document.querySelector('tr[data-server="sparse"] button') && !!document.querySelector('tr[data-server="hostile"] button')`)
	br.none("the overview", nullText)
	sid := br.openSession("sparse", "bare")
	for _, tool := range []string{"bare", "ask", "sample"} {
		br.runTool(tool)
	}
	br.waitJS("the approval, the form and the sampling request",
		`!!document.querySelector('#inbox section[data-kind="approval"]:not(.ended)') && !!document.querySelector('main section[data-kind="elicitation"]') && !!document.querySelector('main section[data-kind="sampling"]')`)
	br.openAll()
	br.none("the session page with requests waiting", nullText)
	br.shot("sparse-waiting")
	br.do(chromedp.Click(chromedp.CSS(`#inbox section[data-kind="approval"]:not(.ended) button.approve`)))
	br.waitJS("the bare result", `document.querySelector('details[data-tool="bare"] .result, details[data-tool="bare"] .tool-result .hint:not(.running)') !== null && !document.querySelector('details[data-tool="bare"] .running')`)
	br.do(chromedp.Click(chromedp.CSS(`main section[data-kind="elicitation"] button[type="submit"]`)))
	br.waitJS("the ask result", `!document.querySelector('details[data-tool="ask"] .running')`)
	// The inspector: the resource read, the prompt got.
	br.do(chromedp.Click(chromedp.Search(`//button[text()="Read"]`)))
	br.do(chromedp.Click(chromedp.Search(`//button[text()="Get"]`)))
	br.waitJS("the resource and the prompt shown", `document.querySelectorAll('.inspector .raw').length >= 2`)
	br.openAll()
	br.none("the session page after the answers", nullText)
	br.shot("sparse-answered")

	br.do(chromedp.Click(chromedp.CSS(`main a[href="#/"]`)))
	br.waitJS("the overview", fmt.Sprintf(`!!document.querySelector('tr[data-session=%q]')`, sid))
	br.openAll()
	br.waitJS("the approvals history", `!!document.querySelector('#approval-history li')`)
	br.none("the overview with the inbox's history", nullText)
	br.shot("sparse-overview")

	br.openSession("hostile", "evil")
	br.runTool("evil")
	br.waitJS("the hostile elicitation", `!!document.querySelector('main section[data-kind="elicitation"] .message')`)
	br.openAll()
	br.none("the hostile server's session page", nullText)
}

// TestConsoleNotification: the optional desktop notification of a new approval. Without the permission a new
// approval raises none and nothing breaks (the inbox still shows it, "Notify me" is offered); with it granted
// (Browser.setPermission, as a person's "Allow" would), a new approval that arrives while the person is in
// another window raises one naming the caller, the tool and the server. window.Notification is wrapped to
// record what the page creates; the real one is still constructed.
func TestConsoleNotification(t *testing.T) {
	t.Parallel()
	b := start(t, bridgeConfig{extraServers: selfApprovalServer})
	ctx := testCtx(t)
	cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "gated"})
	if err != nil {
		t.Fatal(err)
	}
	sid := cs.GetSession().GetSessionId()
	br := newBrowser(t, b)
	br.signIn("")
	br.waitJS("the overview", fmt.Sprintf(`!!document.querySelector('tr[data-session=%q]')`, sid))
	// The person is in another window: the page has no focus. Every Notification the page creates is recorded.
	eval[bool](br, `(() => {
	  document.hasFocus = () => false;
	  window.__notes = [];
	  const Real = window.Notification;
	  window.Notification = class extends Real {
	    constructor(title, options) { super(title, options); window.__notes.push(title + ' | ' + (options && options.body)); }
	  };
	  return true;
	})()`)
	if got := eval[string](br, `Notification.permission`); got == "granted" {
		t.Fatalf("notifications are granted before the test grants them")
	}
	call1 := b.callAsync(ctx, &pb.CallToolRequest{SessionId: sid, CallId: "call-quiet", Name: "block", Arguments: args(t, map[string]any{"tag": "quiet", "durationSeconds": 0.01})})
	quiet := `section[data-kind="approval"][data-request-id="` + approvalIDAs(t, b, "", "call-quiet") + `"]`
	br.waitJS("the first approval", `!!document.querySelector('`+quiet+`')`)
	if n := eval[int](br, `window.__notes.length`); n != 0 {
		t.Errorf("%d notifications without the permission", n)
	}
	if !eval[bool](br, `document.getElementById('inbox-notify').checkVisibility()`) {
		t.Error(`"Notify me on this computer" is not offered without the permission`)
	}
	br.do(chromedp.Click(chromedp.CSS(quiet + " button.approve")))
	if res := await(t, call1); res.Err != nil {
		t.Fatalf("the first call: %v", res.Err)
	}
	// The decision is in the bridge's history when the person opens it.
	eval[bool](br, `(() => { const d = document.querySelector('#inbox details.history'); d.open = false; d.open = true; return true; })()`)
	br.waitJS("the decision in the history", `/approved.*block/i.test(document.getElementById('approval-history').textContent)`)

	// The person allows notifications.
	perm := struct {
		Permission map[string]string `json:"permission"`
		Setting    string            `json:"setting"`
		Origin     string            `json:"origin"`
	}{map[string]string{"name": "notifications"}, "granted", br.base}
	if err := chromedp.FromContext(br.ctx).Browser.Call(ctx, "Browser.setPermission", perm, nil); err != nil {
		t.Fatal(err)
	}
	br.waitJS("the permission", `Notification.permission === 'granted'`)
	call2 := b.callAsync(ctx, &pb.CallToolRequest{SessionId: sid, CallId: "call-loud", Name: "block", Arguments: args(t, map[string]any{"tag": "loud", "durationSeconds": 0.01})})
	loud := `section[data-kind="approval"][data-request-id="` + approvalIDAs(t, b, "", "call-loud") + `"]`
	br.waitJS("the second approval", `!!document.querySelector('`+loud+`')`)
	br.waitJS("the notification", `window.__notes.length === 1`)
	if got := eval[string](br, `window.__notes[0]`); !strings.Contains(got, "approval wanted") || !strings.Contains(got, "local calls block on gated") {
		t.Errorf("the notification says %q", got)
	}
	br.do(chromedp.Click(chromedp.CSS(loud + " button.approve")))
	if res := await(t, call2); res.Err != nil {
		t.Fatalf("the second call: %v", res.Err)
	}
}

// approvalIDAs waits until the approval request of call callID is pending, as the approver with token sees
// it, and returns its id.
func approvalIDAs(t *testing.T, b *bridge, token, callID string) string {
	t.Helper()
	ev := b.rest(token).events("approvals")
	defer ev.close()
	return ev.next(func(e *pb.Event) bool { return e.GetServerRequest().GetOriginCallId() == callID }).GetServerRequest().GetRequestId()
}

// TestConsoleEventsSurviveNavigation: the events a session page showed — a request, its end — are still
// there, once each, after the person looked at the overview and came back, and new ones join them.
func TestConsoleEventsSurviveNavigation(t *testing.T) {
	t.Parallel()
	_, br, sid := consoleOn(t, bridgeConfig{}, "demo", "elicit")
	br.runTool("elicit")
	card := `main section[data-kind="elicitation"]`
	br.waitJS("the elicitation", `!!document.querySelector('`+card+`')`)
	br.do(chromedp.Click(chromedp.Search(`//main//section[@data-kind="elicitation"]//button[text()="Decline"]`)))
	br.waitJS("the request's end among the events", `!!document.querySelector('#events li[data-kind="ended"]')`)
	events := `[...document.querySelectorAll('#events li')].map((li) => li.dataset.kind + ' ' + li.querySelector('.seq').textContent + ' ' + li.querySelector('.text').textContent).join('\n')`
	before := eval[string](br, events)

	br.do(chromedp.Click(chromedp.CSS(`main a[href="#/"]`)))
	br.waitJS("the overview", fmt.Sprintf(`!!document.querySelector('tr[data-session=%q]')`, sid))
	if n := eval[int](br, `document.querySelectorAll('#events li').length`); n != 0 {
		t.Errorf("the overview shows %d session events", n)
	}
	br.do(chromedp.Click(chromedp.CSS(fmt.Sprintf(`tr[data-session=%q] a`, sid))))
	br.waitJS("the session page, live again", `document.querySelector('.live.on') !== null && !!document.querySelector('#events li')`)
	after := eval[string](br, events)
	if !strings.HasPrefix(after, before) {
		t.Errorf("the events after the visit:\n%s\nwant them to start with those before:\n%s", after, before)
	}
	// Once each: the reconnection's replay of what is pending adds no second line.
	seen := map[string]bool{}
	for _, line := range strings.Split(after, "\n") {
		if seen[line] {
			t.Errorf("event shown twice: %s", line)
		}
		seen[line] = true
	}
	// New events join the old ones.
	br.waitJS("the tools", `!!document.querySelector('details[data-tool="elicit"]')`)
	eval[bool](br, `document.querySelector('details[data-tool="elicit"]').open = true`) // open since its call
	br.do(chromedp.Click(chromedp.CSS(`details[data-tool="elicit"] button[type="submit"]`)))
	br.waitJS("a second request among the events", `document.querySelectorAll('#events li[data-kind="elicitation"]').length === 2`)
	br.shot("events-kept")
}
