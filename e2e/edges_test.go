package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/durationpb"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/internal/testpeers"
)

// rawEvents is GET /v1/sessions/{id}/events as a REST host sees it: the status and headers (which must
// arrive before any event), then every line — events and the error that ends a stream.
type rawEvents struct {
	t      *testing.T
	resp   *http.Response
	lines  chan rawLine
	cancel context.CancelFunc
	done   chan struct{}
}

type rawLine struct {
	event *pb.Event
	err   map[string]any // {"code": …, "message": …} of an error line
}

// openEvents returns once the response headers arrived; a stream that sends none within 10 s fails the test.
func (r *rest) openEvents(sessionID string) *rawEvents {
	r.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	client := &http.Client{Transport: &http.Transport{ResponseHeaderTimeout: 10 * time.Second}}
	resp, err := client.Do(r.request(ctx, http.MethodGet, "/v1/sessions/"+sessionID+"/events", ""))
	if err != nil {
		cancel()
		r.t.Fatalf("GET events: no response headers: %v", err)
	}
	e := &rawEvents{t: r.t, resp: resp, lines: make(chan rawLine, 64), cancel: cancel, done: make(chan struct{})}
	go func() { // ends when the response ends or cancel is called
		defer close(e.done)
		defer close(e.lines)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var line struct {
				Result json.RawMessage `json:"result"`
				Error  map[string]any  `json:"error"`
			}
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				e.lines <- rawLine{err: map[string]any{"unparsable": sc.Text()}}
				continue
			}
			if line.Error != nil {
				e.lines <- rawLine{err: line.Error}
				continue
			}
			var ev pb.Event
			if err := protojson.Unmarshal(line.Result, &ev); err != nil {
				e.lines <- rawLine{err: map[string]any{"unparsable": sc.Text()}}
				continue
			}
			e.lines <- rawLine{event: &ev}
		}
	}()
	r.t.Cleanup(func() { cancel(); <-e.done })
	return e
}

// next returns the next event; an error line or the end of the stream fails the test.
func (e *rawEvents) next() *pb.Event {
	e.t.Helper()
	select {
	case l, ok := <-e.lines:
		if !ok {
			e.t.Fatal("event stream ended")
		}
		if l.err != nil {
			e.t.Fatalf("event stream error: %v", l.err)
		}
		return l.event
	case <-time.After(60 * time.Second):
		e.t.Fatal("timed out waiting for an event")
	}
	return nil
}

// until returns the next event matching match, failing on errors as next does.
func (e *rawEvents) until(match func(*pb.Event) bool) *pb.Event {
	e.t.Helper()
	for {
		if ev := e.next(); match(ev) {
			return ev
		}
	}
}

// A REST host that opens the events stream while a request is pending gets the request, with a sequence
// that fits the live events after it, and the stream stays open; an idle stream sends its headers at once.
func TestEventStreamOpenedWhilePending(t *testing.T) {
	b := start(t, bridgeConfig{})
	r := b.rest("")
	sid, _ := r.must("POST", "/v1/sessions", `{"server": "demo", "hostCapabilities": {"sampling": {}}}`)["sessionId"].(string)

	// Idle: no event to send, yet the status and headers come at once.
	idle := r.openEvents(sid)
	if idle.resp.StatusCode != http.StatusOK || !strings.HasPrefix(idle.resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("idle events stream: %d, Content-Type %q", idle.resp.StatusCode, idle.resp.Header.Get("Content-Type"))
	}

	// A stream that fails at once still has its error's HTTP status.
	if gone := r.openEvents("s-nope"); gone.resp.StatusCode != http.StatusNotFound {
		t.Errorf("events of an unknown session: %d, want 404", gone.resp.StatusCode)
	}

	done := r.async("POST", "/v1/sessions/"+sid+"/tools/sample:call", `{"arguments": {"prompt": "Capital of France?"}}`)
	live := idle.until(func(e *pb.Event) bool { return e.GetServerRequest() != nil })
	rid := live.GetServerRequest().GetRequestId()

	// Opened while the request is pending: the replay, then a live stream.
	late := r.openEvents(sid)
	if late.resp.StatusCode != http.StatusOK {
		t.Fatalf("events stream opened while pending: %d", late.resp.StatusCode)
	}
	replay := late.next()
	if replay.GetServerRequest().GetRequestId() != rid {
		t.Fatalf("first event = %v, want the pending request %s", replay, rid)
	}
	if replay.GetSequence() < live.GetSequence() {
		t.Errorf("replayed request has sequence %d, below its live event's %d", replay.GetSequence(), live.GetSequence())
	}
	r.must("POST", "/v1/sessions/"+sid+"/requests/"+rid+":respond", `{"sampling": {"role": "ROLE_ASSISTANT", "model": "m", "content": [{"text": {"text": "Paris"}}]}}`)
	// The live events continue from the replay's position without a gap.
	for prev := replay.GetSequence(); ; {
		ev := late.next()
		if ev.GetSequence() != prev+1 {
			t.Errorf("event %v follows sequence %d: want %d", ev, prev, prev+1)
		}
		prev = ev.GetSequence()
		if ev.GetRequestEnded().GetRequestId() == rid {
			break
		}
	}
	if res := await(t, done); !strings.Contains(compact(res), "Paris") {
		t.Errorf("sample = %s", compact(res))
	}
}

// Invalid UTF-8 in a path or query parameter is the host's bad input: 400 naming the field, for every RPC.
func TestInvalidUTF8IsInvalidArgument(t *testing.T) {
	b := start(t, bridgeConfig{})
	r := b.rest("")
	sid, _ := r.must("POST", "/v1/sessions", `{"server": "demo", "hostCapabilities": {"sampling": {}}}`)["sessionId"].(string)
	tests := []struct {
		name, method, path, body, field string
	}{
		{"session id", "GET", "/v1/sessions/s-%ff", "", "session_id"},
		{"tool name", "POST", "/v1/sessions/" + sid + "/tools/ech%ff:call", `{}`, "name"},
		{"request id", "POST", "/v1/sessions/" + sid + "/requests/req-%ff:respond", `{"roots": {}}`, "request_id"},
		{"page token", "GET", "/v1/sessions/" + sid + "/tools?pageToken=%ff", "", "page_token"},
		{"events stream", "GET", "/v1/sessions/s-%ff/events", "", "session_id"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, body := r.do(tc.method, tc.path, tc.body)
			if code != http.StatusBadRequest || jsonPath(body, "code") != float64(3) {
				t.Fatalf("%s %s = %d %s, want 400 INVALID_ARGUMENT", tc.method, tc.path, code, compact(body))
			}
			if !strings.Contains(compact(body), `"field":"`+tc.field+`"`) {
				t.Errorf("%s %s = %s, want a field violation of %s", tc.method, tc.path, compact(body), tc.field)
			}
		})
	}
}

// startEverything starts the bridge with @modelcontextprotocol/server-everything configured as "everything".
func startEverything(t *testing.T) *bridge {
	cmd := testpeers.EverythingStdio(t)
	var sb strings.Builder
	fmt.Fprintf(&sb, "  everything:\n    command: %q\n    args:\n", cmd.Path)
	for _, a := range cmd.Args {
		fmt.Fprintf(&sb, "      - %q\n", a)
	}
	return start(t, bridgeConfig{extraServers: sb.String()})
}

// Tasks against server-everything: ListTools shows a tool's execution.taskSupport, and cancelling a task
// that already ended is FAILED_PRECONDITION, as the API says (the server's own answer is invalid params).
func TestTasksEverything(t *testing.T) {
	b := startEverything(t)
	ctx := testCtx(t)
	r := b.rest("")
	cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "everything"})
	if err != nil {
		t.Fatal(err)
	}
	sid := cs.GetSession().GetSessionId()

	tools := r.must("GET", "/v1/sessions/"+sid+"/tools", "")
	found := false
	for _, tool := range jsonPath(tools, "tools").([]any) {
		if jsonPath(tool, "name") == "simulate-research-query" {
			found = true
			if got := jsonPath(tool, "execution", "taskSupport"); got != "TASK_SUPPORT_REQUIRED" {
				t.Errorf("simulate-research-query execution.taskSupport = %v, want TASK_SUPPORT_REQUIRED (tool: %s)", got, compact(tool))
			}
			if strings.Contains(compact(tool), "mcp-bridge.internal") {
				t.Errorf("tool shows the bridge's private _meta: %s", compact(tool))
			}
		}
	}
	if !found {
		t.Fatalf("no simulate-research-query tool in %s", compact(tools))
	}

	res, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: sid, Name: "simulate-research-query",
		Arguments: args(t, map[string]any{"topic": "bridges"}), Task: &pb.TaskOptions{Ttl: durationpb.New(time.Minute)}})
	if err != nil {
		t.Fatal(err)
	}
	taskID := res.GetResult().GetTask().GetTaskId()
	if taskID == "" {
		t.Fatalf("CallTool = %v, want a task", res)
	}
	if _, err := b.client.CancelTask(ctx, &pb.CancelTaskRequest{SessionId: sid, TaskId: taskID}); err != nil {
		t.Fatalf("CancelTask of a working task: %v", err)
	}
	_, err = b.client.CancelTask(ctx, &pb.CancelTaskRequest{SessionId: sid, TaskId: taskID})
	if status.Code(err) != codes.FailedPrecondition {
		t.Errorf("CancelTask of a cancelled task = %v, want FAILED_PRECONDITION", err)
	}
	code, body := r.do("POST", "/v1/sessions/"+sid+"/tasks/"+taskID+":cancel", `{}`)
	if code != http.StatusBadRequest || jsonPath(body, "code") != float64(codes.FailedPrecondition) {
		t.Errorf("REST cancel of a cancelled task = %d %s, want 400 FAILED_PRECONDITION", code, compact(body))
	}
}

// One rule for roots from a host — file:// URIs — in CreateSession, SetRoots and an answer to roots/list,
// each a 400 naming the field.
func TestRootsMustBeFileURIs(t *testing.T) {
	b := start(t, bridgeConfig{})
	r := b.rest("")
	check := func(what string, code int, body map[string]any, field string) {
		t.Helper()
		if code != http.StatusBadRequest || !strings.Contains(compact(body), `"field":"`+field+`"`) || !strings.Contains(compact(body), "file://") {
			t.Errorf("%s = %d %s, want 400 with a violation of %s", what, code, compact(body), field)
		}
	}
	code, body := r.do("POST", "/v1/sessions", `{"server": "demo", "hostCapabilities": {"roots": {}}, "roots": [{"uri": "file:///srv"}, {"uri": "http://example.com/srv"}]}`)
	check("CreateSession with an http:// root", code, body, "roots[1].uri")

	sid, _ := r.must("POST", "/v1/sessions", `{"server": "demo", "hostCapabilities": {"roots": {}}}`)["sessionId"].(string)
	code, body = r.do("PUT", "/v1/sessions/"+sid+"/roots", `{"roots": [{"uri": "ftp://example.com/srv"}]}`)
	check("SetRoots with an ftp:// root", code, body, "roots[0].uri")

	ev := r.openEvents(sid)
	done := r.async("POST", "/v1/sessions/"+sid+"/tools/list_roots:call", `{}`)
	rid := ev.until(func(e *pb.Event) bool { return e.GetServerRequest().GetRoots() != nil }).GetServerRequest().GetRequestId()
	code, body = r.do("POST", "/v1/sessions/"+sid+"/requests/"+rid+":respond", `{"roots": {"roots": [{"uri": "http://example.com/srv"}]}}`)
	check("an http:// root answering roots/list", code, body, "answer.roots.roots[0].uri")
	r.must("POST", "/v1/sessions/"+sid+"/requests/"+rid+":respond", `{"roots": {"roots": [{"uri": "file:///srv", "name": "srv"}]}}`)
	if got := compact(await(t, done)); !strings.Contains(got, "file:///srv") {
		t.Errorf("list_roots = %s", got)
	}
}

// A session that declares roots without a list of its own gets the server's configured roots at once when no
// host is attached that could answer; with a watcher attached, the host is asked.
func TestRootsWithoutHostAnswerAtOnce(t *testing.T) {
	rooted := fmt.Sprintf("  rooted:\n    command: %q\n    args: [\"demo-server\"]\n    roots:\n      - uri: file:///srv/configured\n        name: configured\n", binary)
	b := start(t, bridgeConfig{extraServers: rooted, extra: "pending:\n  rootsTimeout: 10m\n"})
	r := b.rest("")
	sid, _ := r.must("POST", "/v1/sessions", `{"server": "rooted", "hostCapabilities": {"roots": {}}}`)["sessionId"].(string)

	// No host: the configured roots, well before the 10-minute rootsTimeout.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(r.request(ctx, "POST", "/v1/sessions/"+sid+"/tools/list_roots:call", `{}`))
	if err != nil {
		t.Fatalf("list_roots without a host: %v (the bridge waited for a host that is not there)", err)
	}
	var res map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&res)
	resp.Body.Close()
	if got := compact(res); !strings.Contains(got, "configured: file:///srv/configured") {
		t.Errorf("list_roots without a host = %s, want the configured roots", got)
	}

	// A watcher is a host that can answer: it is asked.
	ev := r.openEvents(sid)
	done := r.async("POST", "/v1/sessions/"+sid+"/tools/list_roots:call", `{}`)
	rid := ev.until(func(e *pb.Event) bool { return e.GetServerRequest().GetRoots() != nil }).GetServerRequest().GetRequestId()
	r.must("POST", "/v1/sessions/"+sid+"/requests/"+rid+":respond", `{"roots": {"roots": [{"uri": "file:///srv/host", "name": "host"}]}}`)
	if got := compact(await(t, done)); !strings.Contains(got, "host: file:///srv/host") {
		t.Errorf("list_roots with a watcher = %s, want the host's roots", got)
	}
}
