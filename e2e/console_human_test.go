package e2e

// More of the operator console in headless Chromium (issue 30, the human edge): a reload keeps the person's
// calls, every page fits a phone's width with every control reachable, no page says "null" or "undefined",
// a new approval raises a desktop notification when the person allowed them, and a session's events outlive
// a visit of another page.

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestConsoleReloadKeepsCall: with the single-person set-up (allowSelf), a call waiting for approval survives
// a reload of the session page — the console finds it again by its call id (kept in the tab's
// sessionStorage), it waits for approval again, is approved from the same tab, and its result shows — and a
// reload on the overview does the same for a call started on a session page. The call history survives both.
func TestConsoleReloadKeepsCall(t *testing.T) {
	t.Parallel()
	b := start(t, bridgeConfig{
		extraServers: probeServer("gated", "    tools: {approve: [block]}\n    approvers: {principals: [local], allowSelf: true}\n"),
	})
	br := newBrowser(t, b)
	br.signIn("")
	sid := br.openSession("gated", "block")
	blk := `details[data-tool="block"]`
	runBlock := func(tag string) string {
		eval[bool](br, `document.querySelector('`+blk+`').open = true`)
		br.do(chromedp.SetValue(chromedp.CSS(field(blk, "tag")), tag),
			chromedp.SetValue(chromedp.CSS(field(blk, "durationSeconds")), "0.01"),
			chromedp.Click(chromedp.CSS(blk+` button[type="submit"]`)))
		br.waitJS("the call waiting for approval", `!!document.querySelector('`+blk+` .waits-approval')`)
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
