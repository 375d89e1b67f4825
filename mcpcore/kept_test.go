package mcpcore

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/mcp-bridge/mcp-bridge/internal/state"
)

func textResult(n int) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", n)}}}
}

// The budget holds: the oldest outcomes are evicted, leave a mark (a resumed call is told so), and the
// newest are returned as they were kept.
func TestKeptResultsBudgetEvictsOldest(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	k := newKeptResults(KeptResultsPolicy{MaxBytes: 64 << 10, TTL: time.Hour})
	defer k.close()
	for i := range 100 {
		if err := k.add("s/c"+string(rune('A'+i%26))+strings.Repeat("-", i/26), &keptOutcome{result: textResult(1000)}); err != nil {
			t.Fatal(err)
		}
	}
	st := k.stats()
	if st.Bytes > 64<<10 || st.Outcomes == 0 || st.Evicted == 0 {
		t.Fatalf("stats %+v: want at most 64 KiB kept, some kept and some evicted", st)
	}
	if _, evicted, ok := k.get("s/cA"); !ok || !evicted {
		t.Fatalf("the first outcome: evicted=%v known=%v, want an evicted mark", evicted, ok)
	}
	o, evicted, ok := k.get("s/cV---") // the last one added
	if !ok || evicted || o.result == nil {
		t.Fatalf("the last outcome: %v evicted=%v known=%v", o, evicted, ok)
	}
	if got := o.result.Content[0].(*mcp.TextContent).Text; len(got) != 1000 {
		t.Fatalf("decoded result text of %d bytes, want 1000", len(got))
	}
	if _, _, ok := k.get("s/never"); ok {
		t.Fatal("an id never kept is known")
	}
	// An outcome larger than the whole budget is not kept, and its id is still known.
	if err := k.add("s/huge", &keptOutcome{result: textResult(100 << 10)}); err == nil {
		t.Fatal("an outcome larger than the budget was kept")
	}
	if _, evicted, ok := k.get("s/huge"); !ok || !evicted {
		t.Fatal("a refused outcome's id is not known")
	}
}

// Expiry runs on the store's own clock: outcomes and marks go at their TTL with no further call. On synctest's
// fake clock: the TTL passes without waiting, and synctest.Wait lets the expiry timer run before the check.
func TestKeptResultsExpireWithoutCalls(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	synctest.Test(t, func(t *testing.T) {
		k := newKeptResults(KeptResultsPolicy{MaxBytes: 8 << 10, TTL: 100 * time.Millisecond})
		defer k.close()
		for _, id := range []string{"s/a", "s/b", "s/c", "s/d"} {
			if err := k.add(id, &keptOutcome{result: textResult(3000)}); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(101 * time.Millisecond) // fake time: just past the TTL
		synctest.Wait()
		k.mu.Lock()
		n := len(k.m)
		k.mu.Unlock()
		if n != 0 {
			t.Fatalf("%d entries still kept just after a 100 ms TTL", n)
		}
		if st := k.stats(); st.Bytes != 0 || st.Expired == 0 || st.Evicted == 0 {
			t.Fatalf("stats %+v after the TTL", st)
		}
	})
}

// A call with a host call id leaves its id in the store while it is in flight (docs/adr/0099): the record
// that a process killed mid-call leaves behind makes the next process refuse the id without resume
// (ErrCallIDUsed) and answer it with resume as unknown; the record stays for whoever serves the session next
// (another restore), and goes with the session. A completed call's id stays too, for the kept results' TTL:
// refused without resume, and with resume its outcome is evicted (it was in the dead process's memory).
func TestInFlightCallIDOutlivesAProcess(t *testing.T) {
	store := state.NewMemory()
	withStore := func(o *Options) { o.Store = store }
	c1 := memCore(t, nil, withStore)
	s1, calls := completeCall(t, c1, store, "call-done")
	// What a process killed while call-lost was in flight upstream left behind.
	rec, _ := json.Marshal(callRecord{Version: recordVersion, SessionID: s1.ID(), CallID: "call-lost", Method: "tools/call", Name: "echo", InFlight: true, Created: time.Now()})
	if err := store.Put(tctx(t), state.KindCall, roundKey(s1.ID(), "call-lost"), rec); err != nil {
		t.Fatal(err)
	}
	c1.Drain()
	if err := c1.Close(tctx(t)); err != nil {
		t.Fatal(err)
	}

	for range 2 { // a restart, then another: the record still speaks for the call
		c2 := memCore(t, nil, withStore)
		rep, err := c2.Restore(tctx(t))
		if err != nil || rep.InFlight != 2 {
			t.Fatalf("Restore = %+v, %v; want 2 call ids (call-done, call-lost)", rep, err)
		}
		s2, err := c2.Session(s1.ID())
		if err != nil {
			t.Fatal(err)
		}
		_, err = s2.CallTool(tctx(t), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "again"}}, CallOptions{CallID: "call-lost"})
		if !errors.Is(err, ErrCallIDUsed) {
			t.Fatalf("call-lost again without resume = %v, want ErrCallIDUsed", err)
		}
		_, err = s2.CallTool(tctx(t), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "again"}}, CallOptions{CallID: "call-lost", Resume: true})
		if !errors.Is(err, ErrCallOutcomeUnknown) {
			t.Fatalf("call-lost resumed = %v, want ErrCallOutcomeUnknown", err)
		}
		_, err = s2.CallTool(tctx(t), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "again"}}, CallOptions{CallID: "call-done"})
		if !errors.Is(err, ErrCallIDUsed) {
			t.Fatalf("call-done again without resume = %v, want ErrCallIDUsed", err)
		}
		_, err = s2.CallTool(tctx(t), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "again"}}, CallOptions{CallID: "call-done", Resume: true})
		if !errors.Is(err, ErrKeptOutcomeEvicted) {
			t.Fatalf("call-done resumed = %v, want ErrKeptOutcomeEvicted", err)
		}
		if got := calls(); len(got) != 2 {
			t.Fatalf("call records after the restore: %v, want call-done's and call-lost's", got)
		}
		c2.Drain()
		if err := c2.Close(tctx(t)); err != nil {
			t.Fatal(err)
		}
	}
	_, s3 := restoredSession(t, withStore, s1.ID())
	if err := s3.Close(tctx(t)); err != nil {
		t.Fatal(err)
	}
	if got := calls(); len(got) != 0 {
		t.Fatalf("call records after the session closed: %v, want none", got)
	}
}

// The record of a completed call's id goes when the kept results' TTL ends — on the core's clock, with no
// other call on the session — and the outcome with it (docs/adr/0099). On synctest's fake clock: the TTL
// passes without waiting, and synctest.Wait lets the expiry run before the check; the record is still there
// just before the TTL, so the check cannot pass by a record that was never written or went at once.
func TestCompletedCallIDRecordExpiresOnAClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const ttl = 50 * time.Millisecond
		store := state.NewMemory()
		c := memCore(t, nil, func(o *Options) {
			o.Store = store
			o.KeptResults = KeptResultsPolicy{TTL: ttl}
		})
		_, calls := completeCall(t, c, store, "call-done")
		time.Sleep(ttl - time.Millisecond) // fake time: just before the TTL
		synctest.Wait()
		if got := calls(); len(got) != 1 {
			t.Fatalf("call records just before a 50 ms TTL: %v, want call-done's", got)
		}
		time.Sleep(2 * time.Millisecond) // fake time: just past the TTL
		synctest.Wait()
		if got := calls(); len(got) != 0 {
			t.Fatalf("call records just after a 50 ms TTL: %v, want none", got)
		}
	})
}

// completeCall opens a session of c and completes a tools/call under callID; it checks that the call left
// its id's record in store, and returns the session and a function listing the call records there.
func completeCall(t *testing.T, c *Core, store state.Store, callID string) (*Session, func() []string) {
	t.Helper()
	s := open(t, c, "mem", "", allCaps)
	if _, err := s.CallTool(tctx(t), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "done"}}, CallOptions{CallID: callID}); err != nil {
		t.Fatal(err)
	}
	calls := func() (keys []string) {
		_ = store.List(tctx(t), state.KindCall, func(k string, _ []byte) error { keys = append(keys, k); return nil })
		return keys
	}
	if got := calls(); len(got) != 1 {
		t.Fatalf("call records after a completed call: %v, want %s's", got, callID)
	}
	return s, calls
}

// The same call delivered twice (docs/adr/0106): a call WITHOUT resume under a known id, with the same tool
// and arguments, is the host's one call arriving again (a transparent gRPC retry through a proxy) and is
// answered as a resumed call — the kept outcome in this process, and after a restart what resume gets
// (evicted, or unknown for a call in flight at the crash). Other arguments under the id stay ErrCallIDUsed.
func TestSameCallIDSameArgumentsIsTheSameCall(t *testing.T) {
	store := state.NewMemory()
	withStore := func(o *Options) { o.Store = store }
	c1 := memCore(t, nil, withStore)
	s1, _ := completeCall(t, c1, store, "call-done") // echo {"text":"done"}
	done := map[string]any{"text": "done"}
	res, err := s1.CallTool(tctx(t), &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(` { "text" : "done" } `)}, CallOptions{CallID: "call-done"})
	if err != nil || len(res.Content) == 0 {
		t.Fatalf("call-done again with the same arguments = %v, %v; want its kept outcome", res, err)
	}
	_, err = s1.CallTool(tctx(t), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "other"}}, CallOptions{CallID: "call-done"})
	if !errors.Is(err, ErrCallIDUsed) {
		t.Fatalf("call-done again with other arguments = %v, want ErrCallIDUsed", err)
	}
	_, err = s1.CallTool(tctx(t), &mcp.CallToolParams{Name: "echo2", Arguments: done}, CallOptions{CallID: "call-done"})
	if !errors.Is(err, ErrCallIDUsed) {
		t.Fatalf("call-done again with another tool = %v, want ErrCallIDUsed", err)
	}
	// What a process killed while call-lost was in flight upstream left behind, with its digest.
	rec, _ := json.Marshal(callRecord{Version: recordVersion, SessionID: s1.ID(), CallID: "call-lost", Method: "tools/call", Name: "echo",
		Digest: callDigest("echo", json.RawMessage(`{"text":"lost"}`)), InFlight: true, Created: time.Now()})
	if err := store.Put(tctx(t), state.KindCall, roundKey(s1.ID(), "call-lost"), rec); err != nil {
		t.Fatal(err)
	}
	c1.Drain()
	if err := c1.Close(tctx(t)); err != nil {
		t.Fatal(err)
	}
	c2, s2 := restoredSession(t, withStore, s1.ID())
	for _, tc := range []struct {
		id   string
		args map[string]any
		want error
	}{
		{"call-lost", map[string]any{"text": "lost"}, ErrCallOutcomeUnknown},
		{"call-lost", map[string]any{"text": "other"}, ErrCallIDUsed},
		{"call-done", done, ErrKeptOutcomeEvicted},
		{"call-done", map[string]any{"text": "other"}, ErrCallIDUsed},
	} {
		_, err = s2.CallTool(tctx(t), &mcp.CallToolParams{Name: "echo", Arguments: tc.args}, CallOptions{CallID: tc.id})
		if !errors.Is(err, tc.want) {
			t.Errorf("after a restart, %s %v without resume = %v, want %v", tc.id, tc.args, err, tc.want)
		}
	}
	c2.Drain()
	if err := c2.Close(tctx(t)); err != nil {
		t.Fatal(err)
	}
}

// restoredSession starts a core on the store withStore names, restores it, and returns session id from it.
func restoredSession(t *testing.T, withStore func(*Options), id string) (*Core, *Session) {
	t.Helper()
	c := memCore(t, nil, withStore)
	if _, err := c.Restore(tctx(t)); err != nil {
		t.Fatal(err)
	}
	s, err := c.Session(id)
	if err != nil {
		t.Fatal(err)
	}
	return c, s
}

// TestLazyDigest: a call's digest is callDigest of its tool and arguments, computed on the first get and
// not before (most calls never ask), the same from every goroutine; a known one is given back as is.
func TestLazyDigest(t *testing.T) {
	args := json.RawMessage(`{"b":1, "a":[true,null]}`)
	l := newLazyDigest("echo", args)
	if l.d != "" || l.args == nil {
		t.Fatalf("computed before it was asked: %+v", l)
	}
	want := callDigest("echo", json.RawMessage(`{"a":[true,null],"b":1}`))
	var wg sync.WaitGroup
	got := make([]string, 8)
	for i := range got {
		wg.Go(func() { got[i] = l.get() })
	}
	wg.Wait()
	for i, g := range got {
		if g != want {
			t.Errorf("get %d = %q, want %q", i, g, want)
		}
	}
	if l.args != nil {
		t.Error("the arguments are still held once the digest is known")
	}
	if d := knownDigest("abc").get(); d != "abc" {
		t.Errorf("knownDigest = %q", d)
	}
	if d := (*lazyDigest)(nil).get(); d != "" {
		t.Errorf("nil lazyDigest = %q, want \"\"", d)
	}
}
