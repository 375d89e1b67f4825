package mcpcore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-bridge/mcp-bridge/internal/state"
)

func TestCanonicalJSON(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"empty", ``, `{}`},
		{"sorted keys and no white space", `{ "b": 1, "a": [true, null, "x"] }`, `{"a":[true,null,"x"],"b":1}`},
		{"nested objects sorted", `{"z":{"y":1,"x":2},"a":{}}`, `{"a":{},"z":{"x":2,"y":1}}`},
		{"utf-16 order (RFC 8785 3.2.3)", `{"\u20ac":1,"\r":2,"\ud83d\ude00":3,"1":4,"\u00f6":5}`, "{\"\\r\":2,\"1\":4,\"ö\":5,\"€\":1,\"😀\":3}"},
		{"string escapes", `"a\u0001\n\"\\/\u007f"`, "\"a\\u0001\\n\\\"\\\\/\u007f\""},
		{"numbers as ECMAScript writes them", `[1.0, -0, 1e21, 1e20, 0.000001, 1e-7, 123.456e2, 4.50, 2e-3, 9007199254740993]`,
			`[1,0,1e+21,100000000000000000000,0.000001,1e-7,12345.6,4.5,0.002,9007199254740992]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := CanonicalJSON([]byte(tc.in))
			if err != nil {
				t.Fatalf("CanonicalJSON(%s): %v", tc.in, err)
			}
			if string(got) != tc.want {
				t.Errorf("CanonicalJSON(%s) = %s, want %s", tc.in, got, tc.want)
			}
		})
	}
	for _, bad := range []string{`{"a":1,"a":2}`, `{"a":1e999}`, `{"a":`, `{} {}`} {
		if _, err := CanonicalJSON([]byte(bad)); err == nil {
			t.Errorf("CanonicalJSON(%s) succeeded, want an error", bad)
		}
	}
}

func TestApproversAdmit(t *testing.T) {
	a := &Approvers{Principals: []string{"bob", "ops-*"}, Groups: []string{"approvers"}}
	for _, tc := range []struct {
		name string
		who  Identity
		want bool
	}{
		{"listed principal", Identity{Principal: "bob"}, true},
		{"principal glob", Identity{Principal: "ops-carol"}, true},
		{"group", Identity{Principal: "dave", Groups: []string{"staff", "approvers"}}, true},
		{"neither", Identity{Principal: "eve", Groups: []string{"staff"}}, false},
		{"the caller itself", Identity{Principal: "alice", Groups: []string{"approvers"}}, false},
		{"empty principal", Identity{Groups: []string{"approvers"}}, false},
	} {
		if got := a.Admits("alice", tc.who); got != tc.want {
			t.Errorf("%s: Admits = %v, want %v", tc.name, got, tc.want)
		}
	}
	self := &Approvers{Principals: []string{"alice"}, AllowSelf: true}
	if !self.Admits("alice", Identity{Principal: "alice"}) {
		t.Error("AllowSelf: the caller may not approve its own call")
	}
}

// approvalCore is memCore with echo needing approval by bob.
func approvalCore(t *testing.T, expiry time.Duration, edit func(*Options)) *Core {
	return memCore(t, nil, func(o *Options) {
		cfg := o.Servers["mem"]
		cfg.Policy = &Policy{Approval: &ApprovalPolicy{Tools: []string{"ech?"}, Approvers: Approvers{Principals: []string{"bob"}}, Expiry: expiry}}
		o.Servers = map[string]ServerConfig{"mem": cfg}
		if edit != nil {
			edit(o)
		}
	})
}

type callOutcome struct {
	res *mcp.CallToolResult
	err error
}

// callAsync calls echo in the background.
func callAsync(ctx context.Context, s *Session, args map[string]any, callID string) chan callOutcome {
	done := make(chan callOutcome, 1)
	go func() {
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args}, CallOptions{CallID: callID})
		done <- callOutcome{res, err}
	}()
	return done
}

// nextApproval waits for the next approval request bob may decide.
func nextApproval(t *testing.T, w *Subscription) *PendingRequest {
	t.Helper()
	for {
		select {
		case ev := <-w.C():
			if ev.Kind == EventRequestCreated {
				return ev.Request
			}
		case <-tctx(t).Done():
			t.Fatal("no approval request")
		}
	}
}

var bob = Identity{Principal: "bob"}

func TestApproval(t *testing.T) {
	c := approvalCore(t, time.Hour, nil)
	s := open(t, c, "mem", "", allCaps)
	d := c.Dispatcher()
	w := d.Watch(ApprovalFilter(bob), 16)
	defer w.Close()

	t.Run("approve sends the approved arguments", func(t *testing.T) {
		done := callAsync(tctx(t), s, map[string]any{"text": "hi", "b": 2.50}, "call-approve")
		pr := nextApproval(t, w)
		a := pr.Approval
		if a.Caller != "alice" || a.Tool != "echo" || a.Server != "mem" || a.Rule != "ech?" || string(a.Arguments) != `{"b":2.5,"text":"hi"}` || a.Digest != digestOf(a.Arguments) || pr.OriginCallID != "call-approve" {
			t.Fatalf("approval request = %+v", a)
		}
		// Invisible to the caller and to others; visible to bob.
		if _, err := d.Get("alice", pr.ID); !errors.Is(err, ErrRequestNotFound) {
			t.Errorf("caller Get = %v, want ErrRequestNotFound", err)
		}
		if len(d.List("alice", s.ID())) != 0 {
			t.Error("the caller lists its approval request")
		}
		if err := d.RespondFor(tctx(t), Identity{Principal: "eve"}, pr.ID, "", Answer{Approval: &ApprovalAnswer{Approve: true, Digest: a.Digest}}); !errors.Is(err, ErrRequestNotFound) {
			t.Errorf("eve's approval = %v, want ErrRequestNotFound", err)
		}
		if got := d.ListApprovals(bob); len(got) != 1 || got[0].ID != pr.ID {
			t.Errorf("ListApprovals(bob) = %v", got)
		}
		// A decision on other arguments is refused.
		var inv *InvalidError
		if err := d.RespondFor(tctx(t), bob, pr.ID, "", Answer{Approval: &ApprovalAnswer{Approve: true, Digest: digestOf([]byte(`{}`))}}); !errors.As(err, &inv) {
			t.Errorf("approval with another digest = %v, want an InvalidError", err)
		}
		if err := d.RespondFor(tctx(t), bob, pr.ID, "bob-stream", Answer{Approval: &ApprovalAnswer{Approve: true, Digest: a.Digest, Reason: "fine"}}); err != nil {
			t.Fatalf("approve: %v", err)
		}
		out := <-done
		if out.err != nil || textOf(out.res) != "hi" {
			t.Fatalf("call = %v, %v", out.res, out.err)
		}
	})

	t.Run("deny", func(t *testing.T) {
		done := callAsync(tctx(t), s, map[string]any{"text": "no"}, "call-deny")
		pr := nextApproval(t, w)
		if err := d.RespondFor(tctx(t), bob, pr.ID, "", Answer{Approval: &ApprovalAnswer{Reason: "not today"}}); err != nil {
			t.Fatal(err)
		}
		if out := <-done; !errors.Is(out.err, ErrApprovalDenied) {
			t.Fatalf("call = %v, want ErrApprovalDenied", out.err)
		}
		// A resumed call gets the same outcome, without asking again.
		_, err := s.CallTool(tctx(t), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "no"}}, CallOptions{CallID: pr.OriginCallID, Resume: true})
		if !errors.Is(err, ErrApprovalDenied) || len(d.ListApprovals(bob)) != 0 {
			t.Fatalf("resumed denied call = %v (approvals pending: %d), want ErrApprovalDenied", err, len(d.ListApprovals(bob)))
		}
	})

	t.Run("caller gives up", func(t *testing.T) {
		ctx, cancel := context.WithCancel(tctx(t))
		done := callAsync(ctx, s, map[string]any{"text": "bye"}, "call-giveup")
		pr := nextApproval(t, w)
		cancel()
		if out := <-done; !errors.Is(out.err, context.Canceled) {
			t.Fatalf("call = %v, want context.Canceled", out.err)
		}
		ended, err := d.Wait(tctx(t), pr.ID)
		if err != nil || ended.Outcome != OutcomeCallEnded {
			t.Fatalf("approval ended %v, %v; want call-ended", ended, err)
		}
		// Nothing was sent: a resumed call (a client's retry after its connection dropped) is a new call
		// that asks again, not an outcome unknown.
		resumed := make(chan callOutcome, 1)
		go func() {
			res, err := s.CallTool(tctx(t), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "bye"}}, CallOptions{CallID: "call-giveup", Resume: true})
			resumed <- callOutcome{res, err}
		}()
		again := nextApproval(t, w)
		if err := d.RespondFor(tctx(t), bob, again.ID, "", Answer{Approval: &ApprovalAnswer{Approve: true, Digest: again.Approval.Digest}}); err != nil {
			t.Fatal(err)
		}
		if out := <-resumed; out.err != nil || textOf(out.res) != "bye" {
			t.Fatalf("resumed call = %v, %v", out.res, out.err)
		}
	})

	t.Run("other tools need none", func(t *testing.T) {
		if got := callText(t, s, "fail", nil, CallOptions{}); got != "it failed" {
			t.Fatalf("fail = %q", got)
		}
	})
}

func TestApprovalExpires(t *testing.T) {
	c := approvalCore(t, 50*time.Millisecond, nil)
	s := open(t, c, "mem", "", allCaps)
	out := <-callAsync(tctx(t), s, map[string]any{"text": "late"}, "")
	if !errors.Is(out.err, ErrApprovalExpired) {
		t.Fatalf("call = %v, want ErrApprovalExpired", out.err)
	}
}

// TestApprovalRestored: a pending approval survives a restart under its id; the caller's retry with the same
// call id and other arguments is refused, with the same arguments it waits for the decision and sends them.
func TestApprovalRestored(t *testing.T) {
	store := state.NewMemory()
	withStore := func(o *Options) { o.Store = store }
	c1 := approvalCore(t, time.Hour, withStore)
	s1 := open(t, c1, "mem", "", allCaps)
	w1 := c1.Dispatcher().Watch(ApprovalFilter(bob), 4)
	done := callAsync(tctx(t), s1, map[string]any{"text": "kept"}, "call-kept")
	pr := nextApproval(t, w1)
	w1.Close()
	c1.Drain()
	if out := <-done; out.err == nil {
		t.Fatal("the call survived the drain")
	}
	if err := c1.Close(tctx(t)); err != nil {
		t.Fatal(err)
	}

	c2 := approvalCore(t, time.Hour, withStore)
	rep, err := c2.Restore(tctx(t))
	if err != nil || rep.Requests != 1 {
		t.Fatalf("Restore = %+v, %v", rep, err)
	}
	d := c2.Dispatcher()
	if got := d.ListApprovals(bob); len(got) != 1 || got[0].ID != pr.ID || got[0].Approval.Digest != pr.Approval.Digest {
		t.Fatalf("restored approvals = %v", got)
	}
	s2, err := c2.Session(s1.ID())
	if err != nil {
		t.Fatal(err)
	}
	_, err = s2.CallTool(tctx(t), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "changed"}}, CallOptions{CallID: "call-kept"})
	if !errors.Is(err, ErrApprovalArgumentsChanged) {
		t.Fatalf("retry with other arguments = %v, want ErrApprovalArgumentsChanged", err)
	}
	done = callAsync(tctx(t), s2, map[string]any{"text": "kept"}, "call-kept")
	if err := d.RespondFor(tctx(t), bob, pr.ID, "", Answer{Approval: &ApprovalAnswer{Approve: true, Digest: pr.Approval.Digest}}); err != nil {
		t.Fatal(err)
	}
	if out := <-done; out.err != nil || textOf(out.res) != "kept" {
		t.Fatalf("resumed call = %v, %v", out.res, out.err)
	}
	n := 0
	_ = store.List(tctx(t), state.KindRequest, func(string, []byte) error { n++; return nil })
	if n != 0 {
		t.Errorf("%d request records left after the approved call", n)
	}
}

// FuzzCanonicalJSON: CanonicalJSON never panics on outside input; what it accepts comes out as valid JSON that
// means the same, and canonicalizing that again changes nothing.
func FuzzCanonicalJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"b":1,"a":[true,null,"x"]}`, `{"\u20ac":1,"\r":2}`, `[1e21,0.000001,-0]`, `"a\u0001"`, `{"a":{"a":{"a":[]}}}`, `{"a":1,"a":2}`, `1e400`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := CanonicalJSON(in)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("CanonicalJSON(%q) = %q: not valid JSON", in, out)
		}
		again, err := CanonicalJSON(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("not idempotent: %q → %q → %q, %v", in, out, again, err)
		}
		var a, b any
		if json.Unmarshal(in, &a) == nil && json.Unmarshal(out, &b) == nil && !reflect.DeepEqual(a, b) {
			t.Fatalf("CanonicalJSON(%q) = %q: means something else", in, out)
		}
	})
}
