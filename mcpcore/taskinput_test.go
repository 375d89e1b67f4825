package mcpcore

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tasksExtServer is a 2026-07-28 Streamable HTTP server with the tasks extension (SEP-2663), which no
// server we can run implements: the Go SDK's stateless test server, with tasks/get, tasks/update and
// tasks/cancel answered by hand. Task "t-done" is completed; task "t-ask" is input_required with one
// elicitation input request (key "name") until a tasks/update answers it, then completed with the
// answer as its result. It records the Mcp-Method and Mcp-Name headers of every tasks/* request, and
// sends each tasks/update's inputResponses on updates.
type tasksExtServer struct {
	inner   http.Handler
	updates chan json.RawMessage

	mu      sync.Mutex // guards the fields below
	headers []string   // "Mcp-Method Mcp-Name" of each tasks/* request
	answer  json.RawMessage
}

func (ts *tasksExtServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		ts.inner.ServeHTTP(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			TaskID         string          `json:"taskId"`
			InputResponses json.RawMessage `json:"inputResponses"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &msg)
	if !strings.HasPrefix(msg.Method, "tasks/") {
		r.Body = io.NopCloser(bytes.NewReader(body))
		ts.inner.ServeHTTP(w, r)
		return
	}
	ts.mu.Lock()
	ts.headers = append(ts.headers, r.Header.Get("Mcp-Method")+" "+r.Header.Get("Mcp-Name"))
	answer := ts.answer
	if msg.Method == "tasks/update" {
		ts.answer = msg.Params.InputResponses
	}
	ts.mu.Unlock()
	task := map[string]any{"resultType": "complete", "taskId": msg.Params.TaskID, "createdAt": "2026-07-28T00:00:00Z", "lastUpdatedAt": "2026-07-28T00:00:01Z", "ttlMs": 60000, "pollIntervalMs": 100}
	var result any = task
	switch {
	case msg.Method == "tasks/update":
		result = map[string]any{"resultType": "complete"}
		ts.updates <- msg.Params.InputResponses
	case msg.Method == "tasks/cancel":
		result = map[string]any{"resultType": "complete"}
	case msg.Params.TaskID == "t-ask" && answer == nil:
		task["status"] = "input_required"
		task["inputRequests"] = map[string]any{"name": map[string]any{"method": "elicitation/create", "params": map[string]any{
			"mode": "form", "message": "Please enter your name.",
			"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []string{"name"}}}}}
	case msg.Params.TaskID == "t-ask":
		task["status"] = "completed"
		task["result"] = map[string]any{"content": []any{map[string]any{"type": "text", "text": string(answer)}}}
	default:
		task["status"] = "completed"
		task["result"] = map[string]any{"content": []any{map[string]any{"type": "text", "text": "done"}}}
	}
	out, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": msg.ID, "result": result})
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(out)
}

func (ts *tasksExtServer) seen() []string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]string(nil), ts.headers...)
}

func tasksExtCore(t *testing.T) (*Core, *tasksExtServer) {
	t.Helper()
	srv := newTestServer(nil, nil)
	ts := &tasksExtServer{updates: make(chan json.RawMessage, 4),
		inner: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})}
	hs := httptest.NewServer(ts)
	t.Cleanup(hs.Close) // registered first, so it runs after the core's Close
	c, _ := newTestCore(t, map[string]ServerConfig{"tasks": {Transport: TransportStreamableHTTP, URL: hs.URL}}, nil)
	return c, ts
}

// Over 2026-07-28 Streamable HTTP, tasks/get, tasks/update and tasks/cancel carry Mcp-Name: the task id
// (tasks extension, "Streamable HTTP: Routing Headers": the client MUST set it, so that intermediaries can
// route a task's requests to the instance holding it). The SDK sets Mcp-Name only for the requests of
// the core spec that name something.
func TestTaskRequestsCarryMcpName(t *testing.T) {
	c, ts := tasksExtCore(t)
	s := open(t, c, "tasks", "", HostCapabilities{Tasks: true})
	if v := s.Info().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("version %s, want 2026-07-28", v)
	}
	task, err := s.GetTask(tctx(t), "t-done", CallOptions{})
	if err != nil || task.Status != "completed" {
		t.Fatalf("GetTask = %+v, %v", task, err)
	}
	if err := s.CancelTask(tctx(t), "t-done", CallOptions{}); err != nil {
		t.Fatalf("CancelTask: %v", err)
	}
	want := []string{"tasks/get t-done", "tasks/cancel t-done"}
	if got := ts.seen(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("Mcp-Method Mcp-Name of the task requests = %q, want %q", got, want)
	}
}

// A 2026-07-28 task in input_required (tasks extension, "Task Update Requests"): each entry of its
// inputRequests becomes one pending request of the task (DeliveryMRTR, InputKey its key, TaskID), raised
// once however often the host polls; the host's answer goes to the server with tasks/update (carrying
// Mcp-Name too), and the task completes.
func TestModernTaskInputRequests(t *testing.T) {
	c, ts := tasksExtCore(t)
	s := open(t, c, "tasks", "", HostCapabilities{Tasks: true, ElicitationForm: true})
	sub := s.Subscribe(0)
	defer sub.Close()

	for range 2 { // the server repeats an outstanding request on every poll: raised once
		task, err := s.GetTask(tctx(t), "t-ask", CallOptions{})
		if err != nil || task.Status != "input_required" {
			t.Fatalf("GetTask = %+v, %v; want input_required", task, err)
		}
	}
	ev := waitEvent(t, sub, func(e Event) bool { return e.Kind == EventRequestCreated })
	p := ev.Request
	if p.Kind != KindElicitation || p.Delivery != DeliveryMRTR || p.InputKey != "name" || p.TaskID != "t-ask" ||
		p.OriginMethod != "tasks/update" || p.OriginName != "t-ask" || p.Elicitation.Message != "Please enter your name." {
		t.Errorf("pending request = %+v, want the task's elicitation under key name", p)
	}
	if n := len(c.Dispatcher().List("alice", s.ID())); n != 1 {
		t.Errorf("%d pending requests after two polls, want 1", n)
	}
	if err := c.Dispatcher().Respond(tctx(t), "alice", p.ID, Answer{Elicitation: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Jane"}}}); err != nil {
		t.Fatalf("Respond: %v", err)
	}
	var got json.RawMessage
	select {
	case got = <-ts.updates:
	case <-tctx(t).Done():
		t.Fatal("no tasks/update reached the server")
	}
	var resp map[string]struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if err := json.Unmarshal(got, &resp); err != nil || resp["name"].Action != "accept" || resp["name"].Content["name"] != "Jane" {
		t.Errorf("tasks/update inputResponses = %s, want name: accept {name: Jane}", got)
	}
	task, err := s.GetTask(tctx(t), "t-ask", CallOptions{})
	if err != nil || task.Status != "completed" || task.Result == nil || !strings.Contains(textOf(task.Result), "Jane") {
		t.Fatalf("GetTask after the answer = %+v, %v; want completed with the answer", task, err)
	}
	if h := ts.seen(); !strings.Contains(strings.Join(h, ","), "tasks/update t-ask") {
		t.Errorf("task requests %q: no tasks/update with Mcp-Name t-ask", h)
	}
}
