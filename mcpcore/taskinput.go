package mcpcore

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file holds what the core does for a task that needs input (status input_required), in both eras:
//
//   - 2025-11-25 (basic/utilities/tasks, "Input Required Status"): the server queues its elicitation or
//     sampling request and delivers it on the stream of a tasks/result request, which the client SHOULD
//     send preemptively when it encounters input_required. The core sends that tasks/result (one per
//     task) and the server requests that arrive for it — on its Streamable HTTP response stream, or, over
//     stdio and SSE, carrying the io.modelcontextprotocol/related-task _meta — become pending requests of
//     the task (PendingRequest.TaskID), answered by hosts like any other.
//   - 2026-07-28 tasks extension (SEP-2663, "Task Update Requests"): the task carries inputRequests
//     (MRTR-shaped) in tasks/get and notifications/tasks; the client answers them with tasks/update
//     {taskId, inputResponses}. Each new key becomes a DeliveryMRTR pending request of the task; its answer
//     is sent with tasks/update. A key is raised once per task (the spec's SHOULD deduplicate: the server
//     repeats outstanding requests on every poll until its state reflects the update).
//
// The core learns a task's status from tasks/get (Session.GetTask) and from the server's task status
// notifications; it does not poll on its own.

// maxTaskInputs bounds the goroutines a session runs for tasks that need input (tasks/result calls and
// 2026-07-28 input requests being answered). Past it a task's input is not fetched; the next tasks/get
// that finds the task input_required tries again.
const maxTaskInputs = 32

// maxTrackedTasks bounds the 2026-07-28 tasks whose raised input request keys the session remembers; past
// it the entry of a task with nothing in flight that was touched longest ago is forgotten.
const maxTrackedTasks = 256

// relatedTaskKey is the _meta key that ties a message to a task (MCP 2025-11-25 basic/utilities/tasks,
// "Associating Task-Related Messages").
const relatedTaskKey = "io.modelcontextprotocol/related-task"

// errTaskEnded ends the core's work for a task the server reported finished or the host cancelled.
var errTaskEnded = errors.New("the task ended")

// taskInputs is a session's work for tasks that need input. Its goroutines are owned by the session:
// close (from Session.shutdown, after the session's context was cancelled, which ends them all) waits for
// them. Its methods are safe for concurrent use.
type taskInputs struct {
	s *Session // whose tasks they are

	mu      sync.Mutex // guards the fields below
	closed  bool
	running int                    // goroutines started and not yet ended
	results map[string]*taskResult // 2025-11-25: the tasks/result call of a task, by task id
	asked   map[string]*askedTask  // 2026-07-28: tasks whose input requests were raised, by task id
	wg      sync.WaitGroup         // the goroutines
}

// taskResult is the core's tasks/result call for one 2025-11-25 task.
type taskResult struct {
	call *activeCall
}

// askedTask is what the core raised for one 2026-07-28 task's input requests.
type askedTask struct {
	ctx    context.Context // ends when the task ends or the session closes
	cancel context.CancelCauseFunc
	keys   map[string]bool // input request keys raised
	open   int             // goroutines answering its input requests
	last   time.Time       // when it was last touched (eviction)
}

// close stops new work and waits for the goroutines; the session's context has been cancelled.
func (ts *taskInputs) close() {
	ts.mu.Lock()
	ts.closed = true
	ts.mu.Unlock()
	ts.wg.Wait()
}

// start registers one goroutine; false when the session is closing or the bound is reached. ts.mu held.
func (ts *taskInputs) startLocked() bool {
	if ts.closed || ts.running >= maxTaskInputs {
		return false
	}
	ts.running++
	ts.wg.Add(1)
	return true
}

// done ends one goroutine; forget, if set, runs under ts.mu.
func (ts *taskInputs) done(forget func()) {
	ts.mu.Lock()
	ts.running--
	if forget != nil {
		forget()
	}
	ts.mu.Unlock()
	ts.wg.Done()
}

// end stops the core's work for a 2026-07-28 task that ended (or that the host cancelled): the pending
// requests of its input requests end (OutcomeCallEnded). A 2025-11-25 task's tasks/result call is left to
// end by itself: the server answers it at once for a task in a terminal status (and it is bounded by its
// deadline), so no notifications/cancelled is sent for a request about to be answered.
func (ts *taskInputs) end(taskID string) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if a := ts.asked[taskID]; a != nil {
		a.cancel(errTaskEnded)
		delete(ts.asked, taskID)
	}
}

// callFor returns the core's tasks/result call for the task named by a server request's
// _meta[io.modelcontextprotocol/related-task], or nil. Over stdio and SSE this is what ties a request
// the server delivers for that tasks/result to it (the transport does not).
func (ts *taskInputs) callFor(params json.RawMessage) *activeCall {
	id := relatedTaskOf(params)
	if id == "" {
		return nil
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if r := ts.results[id]; r != nil {
		return r.call
	}
	return nil
}

// relatedTaskOf reads _meta[io.modelcontextprotocol/related-task].taskId from a request's params.
func relatedTaskOf(params json.RawMessage) string {
	var p struct {
		Meta struct {
			Related struct {
				TaskID string `json:"taskId"`
			} `json:"io.modelcontextprotocol/related-task"`
		} `json:"_meta"`
	}
	if len(params) == 0 || json.Unmarshal(params, &p) != nil {
		return ""
	}
	return p.Meta.Related.TaskID
}

// relatedTaskInMeta reads the related task from a decoded _meta.
func relatedTaskInMeta(m map[string]any) string {
	v, _ := m[relatedTaskKey].(map[string]any)
	id, _ := v["taskId"].(string)
	return id
}

// taskOf returns the task a pending request serves: the task of the core's tasks/result or tasks/update
// call it belongs to, else the related task its params name.
func taskOf(req *PendingRequest, call *activeCall) string {
	if call != nil && (call.method == "tasks/result" || call.method == "tasks/update") {
		return call.name
	}
	var m map[string]any
	switch {
	case req.Sampling != nil:
		m = req.Sampling.Meta
	case req.Elicitation != nil:
		m = req.Elicitation.Meta
	case req.Roots != nil:
		m = req.Roots.Meta
	}
	return relatedTaskInMeta(m)
}

// isTerminal reports whether a task status is final.
func isTerminal(status string) bool {
	return status == "completed" || status == "failed" || status == "cancelled"
}

// observeTask acts on a task's status as the core learned it (tasks/get, a status notification): a task
// that needs input gets its input fetched (2025-11-25) or its input requests raised (2026-07-28); a task
// that ended ends the core's work for it. It never blocks.
func (ti *taskInputs) observeTask(modern bool, t *Task) {
	s := ti.s
	switch {
	case t == nil:
	case isTerminal(t.Status):
		s.tasks.end(t.ID)
	case t.Status != "input_required":
	case modern:
		s.tasks.raiseTaskInput(t)
	default:
		s.tasks.fetchTaskInput(t.ID)
	}
}

// observeTaskNotification is observeTask for notifications/tasks/status (2025-11-25) and
// notifications/tasks (2026-07-28).
func (ti *taskInputs) observeTaskNotification(params json.RawMessage) {
	s := ti.s
	t, err := ParseTask(taskFromNotification(params))
	if err != nil {
		return
	}
	s.tasks.observeTask(s.Info().modern(), t)
}

// fetchTaskInput sends tasks/result for a 2025-11-25 task in input_required, unless the core already has
// one in flight for it. The server requests delivered for it become pending requests of the task (see
// the file comment). The call ends when the server answers it (the task ended), at its request deadline (ServerConfig.RequestTimeout, which does not run while a host
// is answering), or when the session closes; a later input_required sends it again.
func (ti *taskInputs) fetchTaskInput(taskID string) {
	s := ti.s
	ts := &s.tasks
	ts.mu.Lock()
	if ts.results[taskID] != nil || !ts.startLocked() {
		full := ts.results[taskID] == nil && !ts.closed
		ts.mu.Unlock()
		if full {
			s.logger.Warn("too many tasks need input: not fetching this one's now", "task", taskID, "limit", maxTaskInputs)
		}
		return
	}
	call, ctx, end, err := s.beginCall(s.ctx, "tasks/result", taskID, CallOptions{})
	if err != nil { // a fresh random id is never in flight; the session may be closing
		ts.mu.Unlock()
		return
	}
	r := &taskResult{call: call}
	if ts.results == nil {
		ts.results = map[string]*taskResult{}
	}
	ts.results[taskID] = r
	ts.mu.Unlock()
	go func() { // owned by the session (taskInputs); ends when the tasks/result call ends, as above
		defer ts.done(func() {
			if ts.results[taskID] == r {
				delete(ts.results, taskID)
			}
		})
		defer end()
		err := s.run(ctx, call, true, func(ctx context.Context, g *generation, call *activeCall) error {
			_, err := mcp.CallCustomMethod[*taskParams, *rawResult](ctx, g.cs, "tasks/result", &taskParams{ParamsBase: mcp.ParamsBase{Meta: s.meta(ctx, call, g, nil)}, TaskID: taskID})
			return err
		})
		if err != nil && s.ctx.Err() == nil {
			s.logger.Info("the tasks/result call for a task that needed input ended", "task", taskID, "error", err)
		}
	}()
}

// raiseTaskInput makes each input request of a 2026-07-28 task that the core has not raised yet a
// pending request (DeliveryMRTR, InputKey the request's key) and sends its answer with tasks/update. One
// goroutine per input request, ending when its answer was sent or its pending request ended (the task
// ended, the session closed).
func (ti *taskInputs) raiseTaskInput(t *Task) {
	s := ti.s
	if len(t.InputRequests) == 0 {
		return
	}
	raw := t.InputRequests
	if n, ok := normalizeInputRequests(json.RawMessage(`{"inputRequests":` + string(raw) + `}`)); ok {
		var w struct {
			InputRequests json.RawMessage `json:"inputRequests"`
		}
		if json.Unmarshal(n, &w) == nil {
			raw = w.InputRequests
		}
	}
	var reqs mcp.InputRequestMap
	if err := json.Unmarshal(raw, &reqs); err != nil {
		s.logger.Warn("a task's input requests could not be read", "task", t.ID, "error", err)
		return
	}
	ts := &s.tasks
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.closed {
		return
	}
	a := ts.asked[t.ID]
	if a == nil {
		if ts.asked == nil {
			ts.asked = map[string]*askedTask{}
		}
		ts.evictLocked()
		ctx, cancel := context.WithCancelCause(s.ctx)
		a = &askedTask{ctx: ctx, cancel: cancel, keys: map[string]bool{}}
		ts.asked[t.ID] = a
	}
	a.last = time.Now()
	for key, ir := range reqs {
		if a.keys[key] {
			continue
		}
		if !ts.startLocked() {
			s.logger.Warn("too many tasks need input: not raising this input request now", "task", t.ID, "key", key, "limit", maxTaskInputs)
			return
		}
		a.keys[key] = true
		a.open++
		go func() { // owned by the session (taskInputs); ends as said above
			defer ts.done(func() { a.open-- })
			s.tasks.answerTaskInput(a.ctx, t.ID, key, ir)
		}()
	}
}

// evictLocked forgets, past maxTrackedTasks, the idle task touched longest ago. ts.mu held.
func (ts *taskInputs) evictLocked() {
	if len(ts.asked) < maxTrackedTasks {
		return
	}
	var oldest string
	for id, a := range ts.asked {
		if a.open == 0 && (oldest == "" || a.last.Before(ts.asked[oldest].last)) {
			oldest = id
		}
	}
	if oldest != "" {
		ts.asked[oldest].cancel(nil)
		delete(ts.asked, oldest)
	}
}

// answerTaskInput has a host answer one input request of a 2026-07-28 task and sends the answer with
// tasks/update (SEP-2663). The host call is the core's own: method tasks/update, name the task id.
func (ti *taskInputs) answerTaskInput(ctx context.Context, taskID, key string, ir mcp.InputRequest) {
	s := ti.s
	call, ctx, end, err := s.beginCall(ctx, "tasks/update", taskID, CallOptions{})
	if err != nil { // a fresh random id is never in flight
		return
	}
	defer end()
	resp, err := s.answerInput(ctx, call, key, ir)
	if err != nil {
		if ctx.Err() == nil {
			s.logger.Info("a task's input request got no answer to send", "task", taskID, "key", key, "error", err)
		}
		return
	}
	err = s.run(ctx, call, true, func(ctx context.Context, g *generation, call *activeCall) error {
		_, err := mcp.CallCustomMethod[*updateTaskParams, *rawResult](ctx, g.cs, "tasks/update", &updateTaskParams{
			ParamsBase: mcp.ParamsBase{Meta: s.meta(ctx, call, g, nil)}, TaskID: taskID, InputResponses: map[string]mcp.InputResponse{key: resp}})
		return err
	})
	if err != nil && ctx.Err() == nil {
		s.logger.Warn("tasks/update failed", "task", taskID, "key", key, "error", err)
	}
}

// updateTaskParams are the params of tasks/update (2026-07-28 tasks extension).
type updateTaskParams struct {
	mcp.ParamsBase
	TaskID         string                       `json:"taskId"`
	InputResponses map[string]mcp.InputResponse `json:"inputResponses"`
}

// taskRouteName returns the Mcp-Name header value of a tasks/get, tasks/update or tasks/cancel request:
// its params.taskId (tasks extension, "Streamable HTTP: Routing Headers": the client MUST set it).
func taskRouteName(method string, params json.RawMessage) (string, bool) {
	switch method {
	case "tasks/get", "tasks/update", "tasks/cancel":
	default:
		return "", false
	}
	var p struct {
		TaskID string `json:"taskId"`
	}
	if json.Unmarshal(params, &p) != nil || p.TaskID == "" {
		return "", false
	}
	return p.TaskID, true
}
