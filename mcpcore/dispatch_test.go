package mcpcore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"
)

// Every test here checks for leaked goroutines with goleak.VerifyNone(t, goleak.IgnoreCurrent()): scoped
// to the goroutines the test itself started, so that it does not depend on what other tests in the package
// (sessions, subprocesses) are still winding down. The package's TestMain checks the whole run.

// dtHarness is a dispatcher under test with its published events recorded.
type dtHarness struct {
	t   *testing.T
	d   *Dispatcher
	log *dtLogBuffer

	sub *Subscription // the dispatcher's whole feed

	mu      sync.Mutex
	events  []Event // every published event, in publish order, as far as read from sub
	created map[string]bool
}

// dtSessions is the sessionLookup of the dispatcher's own tests: every session id is served, with a pending
// count and no event log.
type dtSessions struct {
	mu sync.Mutex
	m  map[string]*pendingCount
}

func (d *dtSessions) sessionLog(string) *eventLog { return nil }

func (d *dtSessions) sessionPending(id string) *pendingCount {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.m == nil {
		d.m = map[string]*pendingCount{}
	}
	if d.m[id] == nil {
		d.m[id] = &pendingCount{}
	}
	return d.m[id]
}

func newDTHarness(t *testing.T, policy PendingPolicy, limits Limits) *dtHarness {
	t.Helper()
	h := &dtHarness{t: t, log: &dtLogBuffer{}, created: map[string]bool{}}
	logger := slog.New(slog.NewTextHandler(h.log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h.d = newDispatcher(logger, policy, limits, &dtSessions{})
	h.sub = h.d.Watch(nil, 1<<14) // more than any test publishes: a drop would fail the test (sub.Dropped)
	t.Cleanup(func() {
		if n := h.sub.Dropped(); n > 0 {
			t.Errorf("the harness's feed subscription dropped %d events", n)
		}
		h.sub.Close()
	})
	return h
}

// readLocked appends the events published so far to h.events; h.mu is held.
func (h *dtHarness) readLocked() {
	for {
		select {
		case ev := <-h.sub.C():
			h.events = append(h.events, *ev)
		default:
			return
		}
	}
}

// dtResult is what a submit returned.
type dtResult struct {
	answer  Answer
	outcome Outcome
	err     error
}

// start runs submit in a goroutine and returns, once the request is registered (its EventRequestCreated
// published), the request's id and a channel with submit's result. The goroutine ends when submit returns.
func (h *dtHarness) start(ctx context.Context, req *PendingRequest, fallback func() Answer) (string, <-chan dtResult) {
	h.t.Helper()
	h.mu.Lock()
	h.readLocked()
	before := len(h.events)
	h.mu.Unlock()
	res := make(chan dtResult, 1)
	returned := make(chan struct{})
	go func() {
		a, o, err := h.d.submit(ctx, req, fallback)
		res <- dtResult{a, o, err}
		close(returned)
	}()
	// Wait for this request's EventRequestCreated (or an early return of submit).
	h.mu.Lock()
	defer h.mu.Unlock()
	for {
		for _, ev := range h.events[before:] {
			if ev.Kind == EventRequestCreated && ev.Request == req {
				return ev.Request.ID, res
			}
		}
		select {
		case ev := <-h.sub.C():
			h.events = append(h.events, *ev)
		case <-returned:
			h.readLocked()
			for _, ev := range h.events[before:] {
				if ev.Kind == EventRequestCreated && ev.Request == req {
					return ev.Request.ID, res
				}
			}
			return "", res
		case <-time.After(5 * time.Second):
			h.t.Fatalf("no event within 5s; have %d events", len(h.events))
		}
	}
}

// waitLocked waits for the next event, failing the test after a while; h.mu is held (the dispatcher
// publishes without it).
func (h *dtHarness) waitLocked() {
	select {
	case ev := <-h.sub.C():
		h.events = append(h.events, *ev)
	case <-time.After(5 * time.Second):
		h.t.Fatalf("no event within 5s; have %d events", len(h.events))
	}
}

// ended returns the EventRequestEnded of id, waiting for it.
func (h *dtHarness) ended(id string) RequestEnded {
	h.t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	h.readLocked()
	for {
		for _, ev := range h.events {
			if ev.Kind == EventRequestEnded && ev.Ended.RequestID == id {
				return *ev.Ended
			}
		}
		h.waitLocked()
	}
}

// eventsOf returns the kinds of the events about request id, in publish order.
func (h *dtHarness) eventsOf(id string) []EventKind {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.readLocked()
	var kinds []EventKind
	for _, ev := range h.events {
		switch {
		case ev.Kind == EventRequestCreated && ev.Request.ID == id,
			ev.Kind == EventRequestEnded && ev.Ended.RequestID == id:
			kinds = append(kinds, ev.Kind)
		}
	}
	return kinds
}

func dtWait(t *testing.T, res <-chan dtResult) dtResult {
	t.Helper()
	select {
	case r := <-res:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("submit did not return within 5s")
		return dtResult{}
	}
}

// dtLogBuffer is a goroutine-safe log sink.
type dtLogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *dtLogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *dtLogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Requests and answers used across tests.

func dtSamplingReq(owner, session string) *PendingRequest {
	return &PendingRequest{Owner: owner, SessionID: session, Kind: KindSampling, Delivery: DeliveryPush,
		Sampling: &mcp.CreateMessageWithToolsParams{MaxTokens: 100, Messages: []*mcp.SamplingMessageV2{
			{Role: "user", Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}}}}
}

func dtSamplingToolsReq(owner, session string, choice string) *PendingRequest {
	r := dtSamplingReq(owner, session)
	r.Sampling.Tools = []*mcp.Tool{{Name: "get_weather", InputSchema: map[string]any{"type": "object"}}}
	if choice != "" {
		r.Sampling.ToolChoice = &mcp.ToolChoice{Mode: choice}
	}
	return r
}

func dtElicitReq(owner, session string, schema any) *PendingRequest {
	return &PendingRequest{Owner: owner, SessionID: session, Kind: KindElicitation, Delivery: DeliveryPush,
		Elicitation: &mcp.ElicitParams{Mode: "form", Message: "details please", RequestedSchema: schema}}
}

func dtRootsReq(owner, session string) *PendingRequest {
	return &PendingRequest{Owner: owner, SessionID: session, Kind: KindRoots, Delivery: DeliveryPush, Roots: &mcp.ListRootsParams{}}
}

func dtSamplingAnswer() Answer {
	return Answer{Sampling: &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "m1",
		Content: []mcp.Content{&mcp.TextContent{Text: "hello"}}}}
}

func dtRootsAnswer(uris ...string) Answer {
	r := &mcp.ListRootsResult{Roots: []*mcp.Root{}}
	for _, u := range uris {
		r.Roots = append(r.Roots, &mcp.Root{URI: u})
	}
	return Answer{Roots: r}
}

// dtPersonSchema is a requestedSchema with every kind of restricted-schema property, as it arrives from the
// wire (map[string]any).
func dtPersonSchema() any {
	var m map[string]any
	if err := json.Unmarshal([]byte(`{
		"type": "object",
		"properties": {
			"name":  {"type": "string", "minLength": 2, "maxLength": 10},
			"email": {"type": "string", "format": "email"},
			"site":  {"type": "string", "format": "uri"},
			"born":  {"type": "string", "format": "date"},
			"at":    {"type": "string", "format": "date-time"},
			"age":   {"type": "integer", "minimum": 0, "maximum": 150},
			"score": {"type": "number", "minimum": 0.5, "maximum": 9.5},
			"ok":    {"type": "boolean"},
			"size":  {"type": "string", "enum": ["s", "m", "l"]},
			"color": {"type": "string", "oneOf": [{"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}]},
			"tags":  {"type": "array", "minItems": 1, "maxItems": 2, "items": {"type": "string", "enum": ["a", "b", "c"]}},
			"pets":  {"type": "array", "items": {"anyOf": [{"const": "cat", "title": "Cat"}, {"const": "dog", "title": "Dog"}]}},
			"code":  {"type": "string", "pattern": "^[A-Z]{3}$"}
		},
		"required": ["name", "age"]
	}`), &m); err != nil {
		panic(err)
	}
	return m
}

func dtViolationFields(err error) []string {
	var ie *InvalidError
	if !errors.As(err, &ie) {
		return nil
	}
	var fs []string
	for _, v := range ie.Violations {
		fs = append(fs, v.Field)
	}
	return fs
}

func TestDispatchAnswer(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	h := newDTHarness(t, PendingPolicy{}, Limits{})
	req := dtSamplingReq("alice", "s1")
	req.OriginCallID = "call-1"
	id, res := h.start(context.Background(), req, nil)

	if !strings.HasPrefix(id, "req-") || len(id) != 30 {
		t.Errorf("id = %q, want req- and 26 characters", id)
	}
	if got := h.d.List("alice", "s1"); len(got) != 1 || got[0] != req {
		t.Fatalf("List = %v, want the request", got)
	}
	if got, err := h.d.Get("alice", id); err != nil || got != req {
		t.Fatalf("Get = %v, %v", got, err)
	}
	want := dtSamplingAnswer()
	if err := h.d.Respond(context.Background(), "alice", id, want); err != nil {
		t.Fatalf("Respond: %v", err)
	}
	r := dtWait(t, res)
	if r.err != nil || r.outcome != OutcomeAnswered || r.answer.Sampling != want.Sampling {
		t.Fatalf("submit = %+v, want the answer, answered", r)
	}
	if diff := cmp.Diff([]EventKind{EventRequestCreated, EventRequestEnded}, h.eventsOf(id)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if got := h.ended(id); got != (RequestEnded{RequestID: id, SessionID: "s1", Outcome: OutcomeAnswered}) {
		t.Errorf("ended = %+v", got)
	}
	if got, err := h.d.Wait(context.Background(), id); err != nil || got.Outcome != OutcomeAnswered {
		t.Errorf("Wait after end = %+v, %v", got, err)
	}
	if got := h.d.List("", ""); len(got) != 0 {
		t.Errorf("List after end = %v", got)
	}
	if _, err := h.d.Get("alice", id); !errors.Is(err, ErrRequestEnded) {
		t.Errorf("Get after end: %v, want ErrRequestEnded", err)
	}
}

func TestDispatchDoubleAnswer(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	h := newDTHarness(t, PendingPolicy{}, Limits{})
	id, res := h.start(context.Background(), dtRootsReq("alice", "s1"), nil)
	first := dtRootsAnswer("file:///a")
	if err := h.d.Respond(context.Background(), "alice", id, first); err != nil {
		t.Fatal(err)
	}
	err := h.d.Respond(context.Background(), "alice", id, dtRootsAnswer("file:///b"))
	if !errors.Is(err, ErrRequestEnded) {
		t.Fatalf("second Respond: %v, want ErrRequestEnded", err)
	}
	if r := dtWait(t, res); r.answer.Roots != first.Roots {
		t.Errorf("submit got %v, want the first answer", r.answer.Roots)
	}
	if !strings.Contains(h.log.String(), "late answer") {
		t.Errorf("late answer not logged; log:\n%s", h.log)
	}
}

func TestDispatchLateAnswerAfterTimeout(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	h := newDTHarness(t, PendingPolicy{RootsTimeout: 20 * time.Millisecond}, Limits{})
	configured := dtRootsAnswer("file:///configured")
	calls := 0
	id, res := h.start(context.Background(), dtRootsReq("alice", "s1"), func() Answer { calls++; return configured })
	r := dtWait(t, res)
	if r.outcome != OutcomeTimedOut || r.answer.Roots != configured.Roots || calls != 1 {
		t.Fatalf("submit = %+v (fallback calls %d), want the fallback, timed out", r, calls)
	}
	// EventRequestEnded is out before submit returns, even though the timer's goroutine published it.
	if diff := cmp.Diff([]EventKind{EventRequestCreated, EventRequestEnded}, h.eventsOf(id)); diff != "" {
		t.Errorf("events when submit returned (-want +got):\n%s", diff)
	}
	if got := h.ended(id); got.Outcome != OutcomeTimedOut {
		t.Errorf("ended = %+v", got)
	}
	err := h.d.Respond(context.Background(), "alice", id, dtRootsAnswer("file:///late"))
	if !errors.Is(err, ErrRequestEnded) || !strings.Contains(err.Error(), "timed-out") {
		t.Fatalf("late Respond: %v, want ErrRequestEnded (timed-out)", err)
	}
	if !strings.Contains(h.log.String(), "late answer") || !strings.Contains(h.log.String(), id) {
		t.Errorf("late answer not logged with its id; log:\n%s", h.log)
	}
	if strings.Contains(h.log.String(), "file:///late") {
		t.Errorf("the late answer's content was logged:\n%s", h.log)
	}
	// Another owner learns nothing, not even that the request existed.
	if err := h.d.Respond(context.Background(), "mallory", id, dtRootsAnswer()); !errors.Is(err, ErrRequestNotFound) {
		t.Errorf("late Respond by another owner: %v, want ErrRequestNotFound", err)
	}
}

func TestDispatchDefaultFallbacks(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	tests := []struct {
		name  string
		req   *PendingRequest
		check func(Answer) bool
	}{
		{"elicitation cancels", dtElicitReq("o", "s", nil), func(a Answer) bool { return a.Elicitation != nil && a.Elicitation.Action == "cancel" }},
		{"sampling errors", dtSamplingReq("o", "s"), func(a Answer) bool { return a.Error != nil && a.Error.Code == CodeRequestTimedOut }},
		{"roots empty", dtRootsReq("o", "s"), func(a Answer) bool { return a.Roots != nil && len(a.Roots.Roots) == 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newDTHarness(t, PendingPolicy{}, Limits{})
			tt.req.Deadline = time.Now().Add(10 * time.Millisecond)
			_, res := h.start(context.Background(), tt.req, nil)
			r := dtWait(t, res)
			if r.outcome != OutcomeTimedOut || !tt.check(r.answer) {
				t.Errorf("submit = %+v", r)
			}
		})
	}
}

func TestDispatchWrongKind(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	h := newDTHarness(t, PendingPolicy{}, Limits{})
	id, res := h.start(context.Background(), dtSamplingReq("alice", "s1"), nil)
	for _, a := range []Answer{dtRootsAnswer("file:///x"), {Elicitation: &mcp.ElicitResult{Action: "decline"}}} {
		if err := h.d.Respond(context.Background(), "alice", id, a); !errors.Is(err, ErrWrongAnswerKind) {
			t.Errorf("Respond(%+v): %v, want ErrWrongAnswerKind", a, err)
		}
	}
	// A wrong answer does not end the request; an error answer fits every kind.
	if err := h.d.Respond(context.Background(), "alice", id, Answer{Error: &RPCError{Code: -1, Message: "user rejected"}}); err != nil {
		t.Fatal(err)
	}
	if r := dtWait(t, res); r.outcome != OutcomeAnswered || r.answer.Error == nil || r.answer.Error.Code != -1 {
		t.Errorf("submit = %+v", r)
	}
}

func TestDispatchWrongOwner(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	h := newDTHarness(t, PendingPolicy{}, Limits{})
	id, res := h.start(context.Background(), dtRootsReq("alice", "s1"), nil)
	if _, err := h.d.Get("mallory", id); !errors.Is(err, ErrRequestNotFound) {
		t.Errorf("Get by another owner: %v", err)
	}
	if _, err := h.d.Get("", id); !errors.Is(err, ErrRequestNotFound) {
		t.Errorf("Get with an empty owner: %v", err)
	}
	if err := h.d.Respond(context.Background(), "mallory", id, dtRootsAnswer()); !errors.Is(err, ErrRequestNotFound) {
		t.Errorf("Respond by another owner: %v", err)
	}
	if err := h.d.Cancel("mallory", id, "mine now"); !errors.Is(err, ErrRequestNotFound) {
		t.Errorf("Cancel by another owner: %v", err)
	}
	if got := h.d.List("mallory", ""); len(got) != 0 {
		t.Errorf("List by another owner = %v", got)
	}
	if got := h.d.List("", "s1"); len(got) != 1 {
		t.Errorf("List by admin = %v", got)
	}
	if err := h.d.Respond(context.Background(), "alice", "req-doesnotexist", dtRootsAnswer()); !errors.Is(err, ErrRequestNotFound) {
		t.Errorf("Respond to an unknown id: %v", err)
	}
	if err := h.d.Respond(context.Background(), "alice", id, dtRootsAnswer()); err != nil {
		t.Fatal(err)
	}
	dtWait(t, res)
}

func TestDispatchAnswerShape(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	h := newDTHarness(t, PendingPolicy{}, Limits{})
	id, res := h.start(context.Background(), dtRootsReq("alice", "s1"), nil)
	tests := []struct {
		name   string
		answer Answer
		fields []string
	}{
		{"none set", Answer{}, []string{"answer"}},
		{"two set", Answer{Roots: &mcp.ListRootsResult{}, Error: &RPCError{Code: 1, Message: "x"}}, []string{"answer"}},
		{"error without message", Answer{Error: &RPCError{Code: -1}}, []string{"message"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := h.d.Respond(context.Background(), "alice", id, tt.answer)
			if !errors.Is(err, ErrInvalidAnswer) {
				t.Fatalf("Respond: %v, want ErrInvalidAnswer", err)
			}
			if diff := cmp.Diff(tt.fields, dtViolationFields(err)); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
	if err := h.d.Respond(context.Background(), "alice", id, dtRootsAnswer()); err != nil {
		t.Fatal(err)
	}
	dtWait(t, res)
}

func TestDispatchSamplingValidation(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	text := &mcp.TextContent{Text: "ok"}
	toolUse := &mcp.ToolUseContent{ID: "t1", Name: "get_weather", Input: map[string]any{"city": "Paris"}}
	res := func(c ...mcp.Content) *mcp.CreateMessageWithToolsResult {
		return &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "m", Content: c, StopReason: "endTurn"}
	}
	tests := []struct {
		name   string
		req    *PendingRequest
		result *mcp.CreateMessageWithToolsResult
		fields []string // nil: valid
	}{
		{"text", dtSamplingReq("o", "s"), res(text), nil},
		{"image", dtSamplingReq("o", "s"), res(&mcp.ImageContent{Data: []byte("aGk="), MIMEType: "image/png"}), nil},
		{"audio", dtSamplingReq("o", "s"), res(&mcp.AudioContent{Data: []byte("aGk="), MIMEType: "audio/wav"}), nil},
		{"missing all", dtSamplingReq("o", "s"), &mcp.CreateMessageWithToolsResult{}, []string{"role", "model", "content"}},
		{"bad role", dtSamplingReq("o", "s"), &mcp.CreateMessageWithToolsResult{Role: "system", Model: "m", Content: []mcp.Content{text}}, []string{"role"}},
		{"image without data", dtSamplingReq("o", "s"), res(&mcp.ImageContent{}), []string{"content[0].data", "content[0].mimeType"}},
		{"two blocks without tools", dtSamplingReq("o", "s"), res(text, text), []string{"content"}},
		{"tool_use without tools", dtSamplingReq("o", "s"), res(toolUse), []string{"content[0]"}},
		{"tool_use with tools", dtSamplingToolsReq("o", "s", ""), res(text, toolUse), nil},
		{"tool_use with toolChoice none", dtSamplingToolsReq("o", "s", "none"), res(toolUse), []string{"content[0]"}},
		{"tool_use of an unknown tool", dtSamplingToolsReq("o", "s", "auto"), res(&mcp.ToolUseContent{ID: "t", Name: "rm_rf"}), []string{"content[0].name"}},
		{"tool_use without id", dtSamplingToolsReq("o", "s", "required"), res(&mcp.ToolUseContent{Name: "get_weather"}), []string{"content[0].id"}},
		{"tool_result", dtSamplingToolsReq("o", "s", ""), res(&mcp.ToolResultContent{ToolUseID: "t1"}), []string{"content[0]"}},
		{"resource link", dtSamplingReq("o", "s"), res(&mcp.ResourceLink{URI: "file:///x", Name: "x"}), []string{"content[0]"}},
		{"nil block", dtSamplingReq("o", "s"), res(nil), []string{"content[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newDTHarness(t, PendingPolicy{}, Limits{})
			id, done := h.start(context.Background(), tt.req, nil)
			err := h.d.Respond(context.Background(), "o", id, Answer{Sampling: tt.result})
			if tt.fields == nil {
				if err != nil {
					t.Fatalf("Respond: %v", err)
				}
				dtWait(t, done)
				return
			}
			if !errors.Is(err, ErrInvalidAnswer) {
				t.Fatalf("Respond: %v, want ErrInvalidAnswer", err)
			}
			if diff := cmp.Diff(tt.fields, dtViolationFields(err)); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
			if err := h.d.Cancel("o", id, "test over"); err != nil {
				t.Fatal(err)
			}
			dtWait(t, done)
		})
	}
}

// The bridge fills the schema's defaults into accepted content before validating it (a required property
// with a default may be omitted), and leaves the host's map and properties it gave alone.
func TestElicitDefaultsFilled(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	schema := map[string]any{"type": "object", "required": []any{"name", "count"}, "properties": map[string]any{
		"name":  map[string]any{"type": "string"},
		"color": map[string]any{"type": "string", "default": "blue"},
		"count": map[string]any{"type": "integer", "default": 3},
	}}
	tests := []struct {
		name    string
		content map[string]any
		want    map[string]any
	}{
		{"defaults filled", map[string]any{"name": "Ada"}, map[string]any{"name": "Ada", "color": "blue", "count": float64(3)}},
		{"given values kept", map[string]any{"name": "Ada", "color": "red", "count": 1}, map[string]any{"name": "Ada", "color": "red", "count": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newDTHarness(t, PendingPolicy{}, Limits{})
			id, done := h.start(context.Background(), dtElicitReq("o", "s", schema), nil)
			given := maps.Clone(tt.content)
			if err := h.d.Respond(context.Background(), "o", id, Answer{Elicitation: &mcp.ElicitResult{Action: "accept", Content: tt.content}}); err != nil {
				t.Fatalf("Respond: %v", err)
			}
			if diff := cmp.Diff(tt.want, dtWait(t, done).answer.Elicitation.Content); diff != "" {
				t.Errorf("delivered content (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(given, tt.content); diff != "" {
				t.Errorf("the host's content was modified (-before +after):\n%s", diff)
			}
		})
	}
}

func TestElicitAnswerValidation(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	valid := func() map[string]any {
		return map[string]any{
			"name": "Ada", "email": "ada@example.com", "site": "https://example.com/x", "born": "1815-12-10",
			"at": "2025-01-02T03:04:05Z", "age": float64(36), "score": 7.25, "ok": true, "size": "m", "color": "g",
			"tags": []any{"a", "c"}, "pets": []any{"cat"}, "code": "ABC",
		}
	}
	with := func(kv ...any) map[string]any {
		m := valid()
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(m, kv[i].(string))
			} else {
				m[kv[i].(string)] = kv[i+1]
			}
		}
		return m
	}
	accept := func(c map[string]any) *mcp.ElicitResult { return &mcp.ElicitResult{Action: "accept", Content: c} }
	tests := []struct {
		name   string
		result *mcp.ElicitResult
		fields []string // nil: valid
	}{
		{"valid", accept(valid()), nil},
		{"valid with Go ints", accept(with("age", 36, "score", int64(2))), nil},
		{"only required", accept(map[string]any{"name": "Ada", "age": 1}), nil},
		{"decline", &mcp.ElicitResult{Action: "decline"}, nil},
		{"cancel", &mcp.ElicitResult{Action: "cancel"}, nil},
		{"unknown action", &mcp.ElicitResult{Action: "maybe"}, []string{"action"}},
		{"no action", &mcp.ElicitResult{}, []string{"action"}},
		{"decline with content", &mcp.ElicitResult{Action: "decline", Content: valid()}, []string{"content"}},
		{"accept without content", accept(nil), []string{"content"}},
		{"missing required", accept(with("name", nil, "age", nil)), []string{"content.name", "content.age"}},
		{"string too short", accept(with("name", "A")), []string{"content.name"}},
		{"string too long", accept(with("name", "Ada Lovelace King")), []string{"content.name"}},
		{"wrong type", accept(with("name", 5, "ok", "yes")), []string{"content.name", "content.ok"}},
		{"bad email", accept(with("email", "ada at example")), []string{"content.email"}},
		{"bad uri", accept(with("site", "not a uri")), []string{"content.site"}},
		{"bad date", accept(with("born", "10/12/1815")), []string{"content.born"}},
		{"bad date-time", accept(with("at", "2025-01-02 03:04")), []string{"content.at"}},
		{"fractional integer", accept(with("age", 36.5)), []string{"content.age"}},
		{"integer out of range", accept(with("age", float64(200))), []string{"content.age"}},
		{"number below minimum", accept(with("score", 0.1)), []string{"content.score"}},
		{"enum", accept(with("size", "xl")), []string{"content.size"}},
		{"oneOf const", accept(with("color", "blue")), []string{"content.color"}},
		{"array item", accept(with("tags", []any{"a", "z"})), []string{"content.tags[1]"}},
		{"array too long", accept(with("tags", []any{"a", "b", "c"})), []string{"content.tags"}},
		{"array too short", accept(with("tags", []any{})), []string{"content.tags"}},
		{"array of strings", accept(with("tags", []string{"b"})), nil},
		{"anyOf item", accept(with("pets", []any{"cat", "cow"})), []string{"content.pets[1]"}},
		{"not an array", accept(with("pets", "cat")), []string{"content.pets"}},
		{"null value", accept(with("name", nil, "age", 3, "ok", nil)), []string{"content.name"}},
		{"backstop pattern", accept(with("code", "abc")), []string{"content.code"}},
		{"NaN", accept(with("score", nanValue())), []string{"content.score"}},
		{"extra property refused", accept(with("nickname", "ada")), []string{"content.nickname"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newDTHarness(t, PendingPolicy{}, Limits{})
			req := dtElicitReq("o", "s", dtPersonSchema())
			if tt.name == "null value" {
				req.Elicitation.RequestedSchema.(map[string]any)["properties"].(map[string]any)["ok"] =
					map[string]any{"type": []any{"boolean", "null"}}
			}
			id, done := h.start(context.Background(), req, nil)
			err := h.d.Respond(context.Background(), "o", id, Answer{Elicitation: tt.result})
			if tt.fields == nil {
				if err != nil {
					t.Fatalf("Respond: %v", err)
				}
				if r := dtWait(t, done); r.answer.Elicitation != tt.result {
					t.Errorf("submit answer = %+v", r.answer)
				}
				return
			}
			if !errors.Is(err, ErrInvalidAnswer) {
				t.Fatalf("Respond: %v, want ErrInvalidAnswer", err)
			}
			if diff := cmp.Diff(tt.fields, dtViolationFields(err)); diff != "" {
				t.Errorf("violations (-want +got):\n%s\nerror: %v", diff, err)
			}
			if err := h.d.Cancel("o", id, ""); err != nil {
				t.Fatal(err)
			}
			dtWait(t, done)
		})
	}
}

func nanValue() float64 {
	var zero float64
	return zero / zero
}

func TestElicitSchemaForms(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	raw := `{"type":"object","properties":{"n":{"type":"integer","maximum":3}},"required":["n"],"additionalProperties":false}`
	var asMap map[string]any
	if err := json.Unmarshal([]byte(raw), &asMap); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		schema any
	}{
		{"map", asMap},
		{"raw", json.RawMessage(raw)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := compileElicitSchema(tt.schema)
			if err != nil {
				t.Fatal(err)
			}
			got := s.validate(map[string]any{"n": 4, "x": 1})
			want := []FieldViolation{
				{Field: "content.n", Description: "must be at most 3, got 4"},
				{Field: "content.x", Description: "not a property of the requested schema"},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
			if got := s.validate(map[string]any{"n": 2}); len(got) != 0 {
				t.Errorf("valid content: %v", got)
			}
		})
	}
	if s, err := compileElicitSchema(nil); s != nil || err != nil {
		t.Errorf("nil schema = %v, %v", s, err)
	}
	if _, err := compileElicitSchema(map[string]any{"type": "string"}); err == nil {
		t.Error("non-object schema compiled")
	}
	// An unusable schema is not enforced: the host can still answer.
	h := newDTHarness(t, PendingPolicy{}, Limits{})
	id, done := h.start(context.Background(), dtElicitReq("o", "s", map[string]any{"type": 7}), nil)
	if err := h.d.Respond(context.Background(), "o", id, Answer{Elicitation: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"a": 1}}}); err != nil {
		t.Errorf("Respond with an unusable schema: %v", err)
	}
	dtWait(t, done)
}

func TestElicitURLMode(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	tests := []struct {
		name   string
		params *mcp.ElicitParams
		result *mcp.ElicitResult
		fields []string
	}{
		{"accept", &mcp.ElicitParams{Mode: "url", URL: "https://example.com/auth", ElicitationID: "e1"}, &mcp.ElicitResult{Action: "accept"}, nil},
		{"empty mode is form", &mcp.ElicitParams{RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "integer"}}}},
			&mcp.ElicitResult{Action: "accept", Content: map[string]any{"a": "x"}}, []string{"content.a"}},
		{"accept with content", &mcp.ElicitParams{Mode: "url", URL: "https://example.com/auth"}, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"a": 1}}, []string{"content"}},
		{"decline", &mcp.ElicitParams{Mode: "url", URL: "https://example.com/auth"}, &mcp.ElicitResult{Action: "decline"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newDTHarness(t, PendingPolicy{}, Limits{})
			req := &PendingRequest{Owner: "o", SessionID: "s", Kind: KindElicitation, Delivery: DeliveryMRTR, InputKey: "k", Elicitation: tt.params}
			id, done := h.start(context.Background(), req, nil)
			err := h.d.Respond(context.Background(), "o", id, Answer{Elicitation: tt.result})
			if diff := cmp.Diff(tt.fields, dtViolationFields(err)); diff != "" || (tt.fields == nil && err != nil) {
				t.Fatalf("Respond: %v; violations (-want +got):\n%s", err, diff)
			}
			if err != nil {
				_ = h.d.Cancel("o", id, "")
			}
			dtWait(t, done)
		})
	}
}

func TestDispatchRootsValidation(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	tests := []struct {
		name   string
		answer Answer
		fields []string
	}{
		{"file roots", dtRootsAnswer("file:///home/ada", "file:///srv/data"), nil},
		{"empty list", dtRootsAnswer(), nil},
		{"nil list", Answer{Roots: &mcp.ListRootsResult{}}, nil},
		{"http root", dtRootsAnswer("file:///ok", "https://example.com/x"), []string{"roots[1].uri"}},
		{"relative path", dtRootsAnswer("/home/ada"), []string{"roots[0].uri"}},
		{"empty uri", dtRootsAnswer(""), []string{"roots[0].uri"}},
		{"bad uri", dtRootsAnswer("file://%zz"), []string{"roots[0].uri"}},
		{"nil root", Answer{Roots: &mcp.ListRootsResult{Roots: []*mcp.Root{nil}}}, []string{"roots[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newDTHarness(t, PendingPolicy{}, Limits{})
			id, done := h.start(context.Background(), dtRootsReq("o", "s"), nil)
			err := h.d.Respond(context.Background(), "o", id, tt.answer)
			if diff := cmp.Diff(tt.fields, dtViolationFields(err)); diff != "" || (tt.fields == nil && err != nil) {
				t.Fatalf("Respond: %v; violations (-want +got):\n%s", err, diff)
			}
			if err != nil {
				_ = h.d.Cancel("o", id, "")
			}
			dtWait(t, done)
		})
	}
}

func TestDispatchDeadlines(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	custom := PendingPolicy{SamplingTimeout: time.Minute, ElicitationTimeout: 2 * time.Minute, RootsTimeout: 3 * time.Second}
	fixed := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		policy PendingPolicy
		req    *PendingRequest
		want   time.Duration // Deadline - Created
	}{
		{"sampling default", PendingPolicy{}, dtSamplingReq("o", "s"), 5 * time.Minute},
		{"elicitation default", PendingPolicy{}, dtElicitReq("o", "s", nil), 10 * time.Minute},
		{"roots default", PendingPolicy{}, dtRootsReq("o", "s"), 30 * time.Second},
		{"sampling policy", custom, dtSamplingReq("o", "s"), time.Minute},
		{"elicitation policy", custom, dtElicitReq("o", "s", nil), 2 * time.Minute},
		{"roots policy", custom, dtRootsReq("o", "s"), 3 * time.Second},
		{"explicit deadline", PendingPolicy{}, func() *PendingRequest {
			r := dtRootsReq("o", "s")
			r.Created, r.Deadline = fixed, fixed.Add(time.Hour)
			return r
		}(), time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newDTHarness(t, tt.policy, Limits{})
			h.d.now = func() time.Time { return fixed } // the deadline timer runs on real time from this "now"
			id, done := h.start(context.Background(), tt.req, nil)
			if got := tt.req.Deadline.Sub(tt.req.Created); got != tt.want {
				t.Errorf("deadline - created = %v, want %v", got, tt.want)
			}
			if !tt.req.Created.Equal(fixed) {
				t.Errorf("created = %v, want %v", tt.req.Created, fixed)
			}
			_ = h.d.Cancel("o", id, "")
			dtWait(t, done)
		})
	}
}

func TestDispatchServerCancel(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	h := newDTHarness(t, PendingPolicy{}, Limits{})
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	id, res := h.start(ctx, dtElicitReq("alice", "s1", nil), func() Answer { t.Error("fallback called"); return Answer{} })
	cancel(errors.New("server sent notifications/cancelled: user closed the tab"))
	r := dtWait(t, res)
	if r.err != nil || r.outcome != OutcomeCancelledByServer || r.answer.Error == nil || r.answer.Error.Code != CodeRequestCancelled {
		t.Fatalf("submit = %+v", r)
	}
	got := h.ended(id)
	if got.Outcome != OutcomeCancelledByServer || !strings.Contains(got.Detail, "user closed the tab") {
		t.Errorf("ended = %+v", got)
	}
	if err := h.d.Respond(context.Background(), "alice", id, Answer{Elicitation: &mcp.ElicitResult{Action: "decline"}}); !errors.Is(err, ErrRequestEnded) {
		t.Errorf("Respond after server cancel: %v", err)
	}
	// Already cancelled: never registered.
	done, cancel2 := context.WithCancel(context.Background())
	cancel2()
	a, o, err := h.d.submit(done, dtRootsReq("alice", "s1"), nil)
	if err != nil || o != OutcomeCancelledByServer || a.Error == nil {
		t.Errorf("submit with a done ctx = %+v, %v, %v", a, o, err)
	}
}

func TestDispatchHostCancel(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	tests := []struct {
		name  string
		req   *PendingRequest
		check func(Answer) bool
	}{
		{"elicitation", dtElicitReq("o", "s", nil), func(a Answer) bool { return a.Elicitation != nil && a.Elicitation.Action == "cancel" }},
		{"sampling", dtSamplingReq("o", "s"), func(a Answer) bool {
			return a.Error != nil && a.Error.Code == CodeRequestCancelled && a.Error.Message == "request cancelled by host: user went away"
		}},
		{"roots", dtRootsReq("o", "s"), func(a Answer) bool { return a.Error != nil && a.Error.Code == CodeRequestCancelled }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newDTHarness(t, PendingPolicy{}, Limits{})
			id, res := h.start(context.Background(), tt.req, nil)
			if err := h.d.Cancel("o", id, "user went away"); err != nil {
				t.Fatal(err)
			}
			r := dtWait(t, res)
			if r.outcome != OutcomeCancelledByHost || !tt.check(r.answer) {
				t.Errorf("submit = %+v", r)
			}
			if got := h.ended(id); got.Outcome != OutcomeCancelledByHost || got.Detail != "user went away" {
				t.Errorf("ended = %+v", got)
			}
			if err := h.d.Cancel("o", id, "again"); !errors.Is(err, ErrRequestEnded) {
				t.Errorf("second Cancel: %v", err)
			}
		})
	}
}

func TestDispatchCloseSession(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	h := newDTHarness(t, PendingPolicy{}, Limits{})
	fallback := func() Answer { return Answer{Error: &RPCError{Code: CodeSessionClosed, Message: "closed"}} }
	var ids []string
	var results []<-chan dtResult
	for range 3 {
		id, res := h.start(context.Background(), dtSamplingReq("alice", "A"), fallback)
		ids, results = append(ids, id), append(results, res)
	}
	otherID, otherRes := h.start(context.Background(), dtSamplingReq("alice", "B"), fallback)

	h.d.closeSession("A", "session closed")
	// The drained requests' Ended events are published before closeSession returns.
	h.mu.Lock()
	h.readLocked()
	endedNow := 0
	for _, ev := range h.events {
		if ev.Kind == EventRequestEnded && ev.SessionID == "A" {
			endedNow++
			if ev.Ended.Outcome != OutcomeSessionClosed {
				t.Errorf("ended = %+v", ev.Ended)
			}
		}
	}
	h.mu.Unlock()
	if endedNow != 3 {
		t.Errorf("%d EventRequestEnded published by closeSession, want 3", endedNow)
	}
	for i, res := range results {
		if r := dtWait(t, res); r.outcome != OutcomeSessionClosed || r.answer.Error == nil || r.answer.Error.Message != "closed" {
			t.Errorf("request %s: submit = %+v", ids[i], r)
		}
	}
	if got := h.d.List("", "A"); len(got) != 0 {
		t.Errorf("List(A) after close = %v", got)
	}
	if got := h.d.List("", "B"); len(got) != 1 || got[0].ID != otherID {
		t.Errorf("List(B) = %v", got)
	}
	// A request submitted after the session closed ends at once.
	a, o, err := h.d.submit(context.Background(), dtSamplingReq("alice", "A"), fallback)
	if err != nil || o != OutcomeSessionClosed || a.Error == nil {
		t.Errorf("submit after close = %+v, %v, %v", a, o, err)
	}
	h.d.closeSession("A", "session closed") // idempotent
	h.d.closeSession("B", "session closed")
	if r := dtWait(t, otherRes); r.outcome != OutcomeSessionClosed {
		t.Errorf("B: %+v", r)
	}
}

func TestDispatchMaxPendingPerSession(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	h := newDTHarness(t, PendingPolicy{}, Limits{MaxPendingPerSession: 2})
	id1, res1 := h.start(context.Background(), dtRootsReq("o", "s"), nil)
	_, res2 := h.start(context.Background(), dtRootsReq("o", "s"), nil)
	_, _, err := h.d.submit(context.Background(), dtRootsReq("o", "s"), nil)
	if !errors.Is(err, ErrTooManyPending) {
		t.Fatalf("third submit: %v, want ErrTooManyPending", err)
	}
	// Other sessions have their own bound.
	_, res3 := h.start(context.Background(), dtRootsReq("o", "other"), nil)
	// Room again once one ends.
	if err := h.d.Respond(context.Background(), "o", id1, dtRootsAnswer()); err != nil {
		t.Fatal(err)
	}
	dtWait(t, res1)
	_, res4 := h.start(context.Background(), dtRootsReq("o", "s"), nil)
	h.d.closeSession("s", "session closed")
	h.d.closeSession("other", "session closed")
	for _, res := range []<-chan dtResult{res2, res3, res4} {
		if r := dtWait(t, res); r.outcome != OutcomeSessionClosed {
			t.Errorf("submit = %+v", r)
		}
	}
}

func TestDispatchConcurrentAnswers(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	const rounds, answerers = 50, 8
	h := newDTHarness(t, PendingPolicy{}, Limits{})
	for round := range rounds {
		id, res := h.start(context.Background(), dtSamplingReq("o", "s"), nil)
		var wg sync.WaitGroup
		errs := make([]error, answerers)
		answers := make([]Answer, answerers)
		start := make(chan struct{})
		for i := range answerers {
			answers[i] = dtSamplingAnswer()
			wg.Go(func() {
				<-start
				if i == answerers-1 && round%2 == 0 {
					errs[i] = h.d.Cancel("o", id, "race") // a cancel joins the race
					return
				}
				errs[i] = h.d.Respond(context.Background(), "o", id, answers[i])
			})
		}
		close(start)
		wg.Wait()
		winners := 0
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil:
				winners++
				winner = i
			case !errors.Is(err, ErrRequestEnded):
				t.Errorf("round %d answerer %d: %v", round, i, err)
			}
		}
		if winners != 1 {
			t.Fatalf("round %d: %d winners, want 1", round, winners)
		}
		r := dtWait(t, res)
		if r.outcome == OutcomeAnswered && r.answer.Sampling != answers[winner].Sampling {
			t.Errorf("round %d: submit got an answer that was not the winner's", round)
		}
		if r.outcome == OutcomeCancelledByHost && winner != answerers-1 {
			t.Errorf("round %d: cancelled but the cancel did not win", round)
		}
		if got := h.eventsOf(id); len(got) != 2 || got[0] != EventRequestCreated || got[1] != EventRequestEnded {
			t.Fatalf("round %d: events %v", round, got)
		}
	}
}

func TestDispatchTombstoneBounds(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	h := newDTHarness(t, PendingPolicy{}, Limits{})
	clock := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	var clockMu sync.Mutex
	h.d.now = func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return clock }
	advance := func(dur time.Duration) { clockMu.Lock(); clock = clock.Add(dur); clockMu.Unlock() }
	h.d.tombs = newExpiring[tombstone](time.Minute, 3)

	end := func() string {
		id, res := h.start(context.Background(), dtRootsReq("o", "s"), nil)
		if err := h.d.Respond(context.Background(), "o", id, dtRootsAnswer()); err != nil {
			t.Fatal(err)
		}
		dtWait(t, res)
		return id
	}
	lateErr := func(id string) error { return h.d.Respond(context.Background(), "o", id, dtRootsAnswer()) }

	// Count bound: the oldest of four is forgotten.
	ids := []string{end(), end(), end(), end()}
	if err := lateErr(ids[0]); !errors.Is(err, ErrRequestNotFound) {
		t.Errorf("oldest beyond the count bound: %v, want ErrRequestNotFound", err)
	}
	for _, id := range ids[1:] {
		if err := lateErr(id); !errors.Is(err, ErrRequestEnded) {
			t.Errorf("%s: %v, want ErrRequestEnded", id, err)
		}
	}
	if n := h.d.tombs.len(); n != 3 {
		t.Errorf("%d tombstones, want 3", n)
	}
	// Time bound.
	advance(2 * time.Minute)
	if err := lateErr(ids[3]); !errors.Is(err, ErrRequestNotFound) {
		t.Errorf("expired tombstone: %v, want ErrRequestNotFound", err)
	}
	if _, err := h.d.Wait(context.Background(), ids[3]); !errors.Is(err, ErrRequestNotFound) {
		t.Errorf("Wait on expired tombstone: %v", err)
	}
	end() // an add prunes what expired
	if n := h.d.tombs.len(); n != 1 {
		t.Errorf("%d tombstones after expiry, want 1", n)
	}
}

func TestDispatchExpiringCompacts(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	x := newExpiring[int](time.Hour, 10)
	now := time.Now()
	for i := range 100_000 {
		x.add(fmt.Sprint(i), i, now)
	}
	if x.len() != 10 || len(x.order)-x.head != 10 || cap(x.order) > 4096 {
		t.Errorf("len %d, order %d (head %d, cap %d)", x.len(), len(x.order), x.head, cap(x.order))
	}
	if v, ok := x.get("99999", now); !ok || v != 99999 {
		t.Errorf("newest = %v, %v", v, ok)
	}
	if _, ok := x.get("0", now); ok {
		t.Error("oldest still held")
	}
}

func TestDispatchWait(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	h := newDTHarness(t, PendingPolicy{}, Limits{})
	id, res := h.start(context.Background(), dtRootsReq("o", "s"), nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	if _, err := h.d.Wait(ctx, id); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait with a short ctx: %v", err)
	}
	waited := make(chan RequestEnded, 1)
	go func() {
		e, _ := h.d.Wait(context.Background(), id)
		waited <- e
	}()
	if err := h.d.Respond(context.Background(), "o", id, dtRootsAnswer()); err != nil {
		t.Fatal(err)
	}
	dtWait(t, res)
	if got := <-waited; got.Outcome != OutcomeAnswered || got.RequestID != id {
		t.Errorf("Wait = %+v", got)
	}
	if _, err := h.d.Wait(context.Background(), "req-unknown"); !errors.Is(err, ErrRequestNotFound) {
		t.Errorf("Wait unknown: %v", err)
	}
}

func TestDispatchIDs(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	seen := map[string]bool{}
	for range 10_000 {
		id := newRequestID()
		if seen[id] || !strings.HasPrefix(id, "req-") || len(id) != 30 {
			t.Fatalf("bad or repeated id %q", id)
		}
		seen[id] = true
	}
	// A caller-chosen id is kept, and refused when already used.
	h := newDTHarness(t, PendingPolicy{}, Limits{})
	req := dtRootsReq("o", "s")
	req.ID = "req-chosen"
	id, res := h.start(context.Background(), req, nil)
	if id != "req-chosen" {
		t.Errorf("id = %q", id)
	}
	dup := dtRootsReq("o", "s")
	dup.ID = "req-chosen"
	if _, _, err := h.d.submit(context.Background(), dup, nil); err == nil {
		t.Error("duplicate id accepted")
	}
	_ = h.d.Cancel("o", id, "")
	dtWait(t, res)
}

func TestDispatchListOrder(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	h := newDTHarness(t, PendingPolicy{}, Limits{})
	base := time.Now()
	var want []string
	var results []<-chan dtResult
	for i := range 5 {
		r := dtRootsReq("o", "s")
		r.Created = base.Add(time.Duration(5-i) * time.Second) // registered newest first
		id, res := h.start(context.Background(), r, nil)
		want = append([]string{id}, want...)
		results = append(results, res)
	}
	var got []string
	for _, r := range h.d.List("o", "s") {
		got = append(got, r.ID)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("List order (-want +got):\n%s", diff)
	}
	h.d.closeSession("s", "session closed")
	for _, res := range results {
		dtWait(t, res)
	}
}

func TestDispatchRespondCtxDone(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	h := newDTHarness(t, PendingPolicy{}, Limits{})
	id, res := h.start(context.Background(), dtRootsReq("o", "s"), nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := h.d.Respond(ctx, "o", id, dtRootsAnswer()); !errors.Is(err, context.Canceled) {
		t.Errorf("Respond with a done ctx: %v", err)
	}
	if err := h.d.Respond(context.Background(), "o", id, dtRootsAnswer()); err != nil {
		t.Errorf("Respond after: %v", err)
	}
	dtWait(t, res)
}

// BenchmarkSubmitRespond measures one sampling round trip through the dispatcher: submit on one goroutine,
// the host's Respond on another, as a session handler and a host stream would do it.
func BenchmarkSubmitRespond(b *testing.B) {
	d := newDispatcher(slog.New(slog.DiscardHandler), PendingPolicy{}, Limits{}, nil)
	sub := d.Watch(nil, 4)
	answer := dtSamplingAnswer()
	done := make(chan struct{})
	go func() { // the host; exits when sub is closed
		defer close(done)
		for ev := range sub.C() {
			if ev.Kind != EventRequestCreated {
				continue
			}
			if err := d.Respond(context.Background(), "o", ev.Request.ID, answer); err != nil {
				panic(err)
			}
		}
	}()
	params := dtSamplingReq("o", "s").Sampling
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		req := &PendingRequest{Owner: "o", SessionID: "s", Kind: KindSampling, Delivery: DeliveryPush, Sampling: params}
		if _, o, err := d.submit(ctx, req, nil); err != nil || o != OutcomeAnswered {
			b.Fatal(o, err)
		}
	}
	sub.Close()
	<-done
}
