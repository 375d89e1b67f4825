package mcpcore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Task is a task a server runs for a tools/call: a 2025-11-25 task-augmented request (experimental, core
// spec) or a 2026-07-28 task of the io.modelcontextprotocol/tasks extension (SEP-2663). The SDK has no
// task support; the core reads tasks off the wire and uses custom methods for tasks/get and tasks/cancel.
type Task struct {
	ID            string
	Status        string // working, input_required, completed, failed, cancelled
	StatusMessage string
	CreatedAt     string // RFC 3339, as the server sent it
	LastUpdatedAt string
	// TTL is how long the server keeps the task; nil when unlimited or not said.
	TTL *time.Duration
	// PollInterval is the server's suggested polling interval; 0 when not said.
	PollInterval time.Duration
	// Result is the tool result of a completed task when the server included it (2026-07-28 tasks/get);
	// Error the JSON-RPC error of a failed one.
	Result *mcp.CallToolResult
	Error  *jsonrpc.Error
	// InputRequests are the outstanding requests of a 2026-07-28 task in input_required (an MRTR-shaped
	// inputRequests object), as the server sent them; the core raises them as pending requests.
	InputRequests json.RawMessage
	// Raw is the task object as the server sent it.
	Raw json.RawMessage
}

// TaskCreatedError is CallTool's error when the server answered with a task (use CallToolOrTask).
type TaskCreatedError struct{ Task *Task }

func (e *TaskCreatedError) Error() string {
	return fmt.Sprintf("%v: task %s", ErrTaskCreated, e.Task.ID)
}
func (e *TaskCreatedError) Unwrap() error { return ErrTaskCreated }

// taskFromResult returns the task object of a tools/call result that is a task: {"task":{…}}
// (2025-11-25 CreateTaskResult) or a flat task with resultType "task" (2026-07-28).
func taskFromResult(result json.RawMessage) (json.RawMessage, bool) {
	var probe struct {
		ResultType string          `json:"resultType"`
		Task       json.RawMessage `json:"task"`
		TaskID     string          `json:"taskId"`
	}
	if json.Unmarshal(result, &probe) != nil {
		return nil, false
	}
	switch {
	case len(probe.Task) > 0 && probe.Task[0] == '{':
		return probe.Task, true
	case probe.ResultType == "task" || (probe.TaskID != "" && probe.ResultType == ""):
		return result, true
	}
	return nil, false
}

// taskFromNotification returns the task of notifications/tasks/status (params = Task) or
// notifications/tasks (2026-07-28 extension: params = DetailedTask).
func taskFromNotification(params json.RawMessage) json.RawMessage {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) == nil {
		if t, ok := p["task"]; ok {
			return t
		}
	}
	return params
}

// ParseTask reads a task object as a server sent it (a CreateTaskResult's task, tasks/get, a
// notifications/tasks/status' params). A task needs a taskId. A ttl or pollInterval that is not a
// non-negative number of milliseconds a time.Duration can hold (NaN, ±Inf, negative, too large) counts as
// not said. It is the one reader of MCP task objects: the gRPC side converts what it returns.
func ParseTask(raw json.RawMessage) (*Task, error) {
	var w struct {
		TaskID         string          `json:"taskId"`
		Status         string          `json:"status"`
		StatusMessage  string          `json:"statusMessage"`
		CreatedAt      string          `json:"createdAt"`
		LastUpdatedAt  string          `json:"lastUpdatedAt"`
		TTL            *float64        `json:"ttl"`
		TTLMs          *float64        `json:"ttlMs"`
		PollInterval   *float64        `json:"pollInterval"`
		PollIntervalMs *float64        `json:"pollIntervalMs"`
		Result         json.RawMessage `json:"result"`
		Error          *jsonrpc.Error  `json:"error"`
		InputRequests  json.RawMessage `json:"inputRequests"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, err
	}
	if w.TaskID == "" {
		return nil, errors.New("task without taskId")
	}
	t := &Task{ID: w.TaskID, Status: w.Status, StatusMessage: w.StatusMessage, CreatedAt: w.CreatedAt, LastUpdatedAt: w.LastUpdatedAt, Error: w.Error, Raw: raw}
	if len(w.InputRequests) > 0 && w.InputRequests[0] == '{' {
		t.InputRequests = w.InputRequests
	}
	ms := func(v *float64) *time.Duration {
		if v == nil || math.IsNaN(*v) || *v < 0 || *v > float64(math.MaxInt64/int64(time.Millisecond)) {
			return nil // +Inf is caught by the upper bound
		}
		d := time.Duration(*v * float64(time.Millisecond))
		return &d
	}
	t.TTL = ms(w.TTLMs)
	if t.TTL == nil {
		t.TTL = ms(w.TTL)
	}
	if p := ms(w.PollIntervalMs); p != nil {
		t.PollInterval = *p
	} else if p := ms(w.PollInterval); p != nil {
		t.PollInterval = *p
	}
	if len(w.Result) > 0 && w.Result[0] == '{' {
		var r mcp.CallToolResult
		if err := json.Unmarshal(w.Result, &r); err == nil {
			t.Result = &r
		}
	}
	return t, nil
}

// TasksExtension is the 2026-07-28 tasks extension's capability key (SEP-2663).
const TasksExtension = "io.modelcontextprotocol/tasks"

// TasksCapability is what a server's tasks capability declares.
type TasksCapability struct {
	List, Cancel bool
	// ToolCall: task-augmented tools/call (2025-11-25 tasks.requests.tools.call).
	ToolCall bool
}

// ParseTasksCapability reads the 2025-11-25 tasks capability
// ({"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}) from a raw capabilities object as the server
// sent it (the SDK's type drops it); nil when there is none. A session parses it once, when the
// capabilities come (Session.TasksCapability).
func ParseTasksCapability(raw json.RawMessage) *TasksCapability {
	if len(raw) == 0 {
		return nil
	}
	var c struct {
		Tasks *struct {
			List     json.RawMessage `json:"list"`
			Cancel   json.RawMessage `json:"cancel"`
			Requests *struct {
				Tools *struct {
					Call json.RawMessage `json:"call"`
				} `json:"tools"`
			} `json:"requests"`
		} `json:"tasks"`
	}
	if json.Unmarshal(raw, &c) != nil || c.Tasks == nil {
		return nil
	}
	set := func(m json.RawMessage) bool { return len(m) > 0 && string(m) != "null" }
	t := &TasksCapability{List: set(c.Tasks.List), Cancel: set(c.Tasks.Cancel)}
	if r := c.Tasks.Requests; r != nil && r.Tools != nil {
		t.ToolCall = set(r.Tools.Call)
	}
	return t
}

// taskParams are the params of tasks/get and tasks/cancel.
type taskParams struct {
	mcp.ParamsBase
	TaskID string `json:"taskId"`
}

// rawResult keeps a custom method's result as it came.
type rawResult struct {
	mcp.ResultBase
	raw json.RawMessage
}

func (r *rawResult) UnmarshalJSON(data []byte) error {
	r.raw = append(json.RawMessage(nil), data...)
	var m struct {
		Meta mcp.Meta `json:"_meta"`
	}
	_ = json.Unmarshal(data, &m)
	r.Meta = m.Meta
	return nil
}

func registerTaskMethods(c *mcp.Client) error {
	for _, m := range []string{"tasks/get", "tasks/cancel", "tasks/result"} {
		if err := mcp.AddSendingCustomMethod[*taskParams, *rawResult](c, m); err != nil {
			return err
		}
	}
	if err := mcp.AddSendingCustomMethod[*updateTaskParams, *rawResult](c, "tasks/update"); err != nil {
		return err
	}
	return mcp.AddSendingCustomMethod[*mcp.DiscoverParams, *rawResult](c, discoverAlias)
}

// GetTask polls a task (tasks/get). When the task has finished, Result (or Error) carries its outcome:
// on 2026-07-28 tasks/get includes it; on 2025-11-25 the core fetches it with tasks/result, which returns
// at once for a finished task. A task found input_required has its input requests raised as pending
// requests of the task (taskinput.go).
func (s *Session) GetTask(ctx context.Context, taskID string, opts CallOptions) (*Task, error) {
	var t *Task
	err := s.call(ctx, "tasks/get", taskID, opts, true, func(ctx context.Context, g *generation, call *activeCall) error {
		r, err := mcp.CallCustomMethod[*taskParams, *rawResult](ctx, g.cs, "tasks/get", &taskParams{ParamsBase: mcp.ParamsBase{Meta: s.meta(ctx, call, g, nil)}, TaskID: taskID})
		if err != nil {
			return err
		}
		raw := r.raw
		if inner, ok := taskFromResult(raw); ok {
			raw = inner
		}
		t, err = ParseTask(raw)
		if err != nil {
			return s.BadMessage(fmt.Errorf("%w: tasks/get: %v", ErrBadMessage, err))
		}
		s.tasks.observeTask(g.modern(), t)
		if !g.modern() && t.Result == nil && t.Error == nil && (t.Status == "completed" || t.Status == "failed") {
			res, err := mcp.CallCustomMethod[*taskParams, *rawResult](ctx, g.cs, "tasks/result", &taskParams{ParamsBase: mcp.ParamsBase{Meta: s.meta(ctx, call, g, nil)}, TaskID: taskID})
			var we *jsonrpc.Error
			switch {
			case errors.As(err, &we):
				t.Error = we
			case err != nil:
				return err
			default:
				var cr mcp.CallToolResult
				if err := json.Unmarshal(res.raw, &cr); err != nil {
					return s.BadMessage(fmt.Errorf("%w: tasks/result: %v", ErrBadMessage, err))
				}
				t.Result = &cr
			}
		}
		return nil
	})
	return t, err
}

// CancelTask asks the server to cancel a task (tasks/cancel; never notifications/cancelled, which the
// spec forbids for tasks). The core's work for the task's input (taskinput.go) ends.
func (s *Session) CancelTask(ctx context.Context, taskID string, opts CallOptions) error {
	defer s.tasks.end(taskID)
	return s.call(ctx, "tasks/cancel", taskID, opts, false, func(ctx context.Context, g *generation, call *activeCall) error {
		_, err := mcp.CallCustomMethod[*taskParams, *rawResult](ctx, g.cs, "tasks/cancel", &taskParams{ParamsBase: mcp.ParamsBase{Meta: s.meta(ctx, call, g, nil)}, TaskID: taskID})
		return err
	})
}
