package demoserver

import (
	"context"
	"crypto/rand"
	"fmt"
	"hash/fnv"
	"math"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Keys of the input requests the multi round-trip tools issue; the client echoes them back in
// InputResponses.
const (
	inputSample  = "sample"
	inputElicit  = "person"
	inputConsent = "consent"
	inputRoots   = "roots"
)

// Limits on long_operation, so that a demo call cannot tie a server up for hours.
const (
	maxLongOperation = 10 * time.Minute
	maxSteps         = 1000
)

func (d *demo) addTools(s *mcp.Server) {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: new(false)}

	mcp.AddTool(s, &mcp.Tool{
		Name:        "echo",
		Description: "Returns its text argument unchanged.",
		Annotations: readOnly,
	}, d.echo)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "add",
		Description: "Adds two numbers; returns the sum as structured output and as text.",
		Annotations: readOnly,
	}, d.add)
	mcp.AddTool(s, &mcp.Tool{
		Name: "long_operation",
		Description: "Runs for durationSeconds in the given number of steps, reporting progress " +
			"after each step (when the request carries a progress token) and stopping when cancelled.",
		Annotations: readOnly,
	}, d.longOperation)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "sample",
		Description: "Asks the client to run an LLM completion (sampling) for the prompt and returns the reply.",
	}, d.sample)
	mcp.AddTool(s, &mcp.Tool{
		Name: "elicit",
		Description: "Asks the user (form elicitation) for a name and an age and returns what came back: " +
			"accept with the values, decline or cancel.",
	}, d.elicit)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "elicit_url",
		Description: "Sends the user to a URL (URL-mode elicitation) and reports the outcome.",
	}, d.elicitURL)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "list_roots",
		Description: "Lists the roots the client exposes.",
		Annotations: readOnly,
	}, d.listRoots)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "structured",
		Description: "Returns a made-up weather report for a city as structured content with an output schema.",
		Annotations: readOnly,
	}, d.structured)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "fail",
		Description: "Always fails with a tool error (isError: true) carrying the given message.",
		Annotations: readOnly,
	}, d.fail)
	mcp.AddTool(s, &mcp.Tool{
		Name: "log",
		Description: "Sends one log message (notifications/message) at each level from debug to " +
			"emergency; the client receives those at or above the level it set.",
		Annotations: readOnly,
	}, d.log)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "increment",
		Description: "Increments the counter behind demo://counter and notifies its subscribers.",
	}, d.increment)
}

func textResult(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

func toolError(format string, args ...any) *mcp.CallToolResult {
	res := textResult(format, args...)
	res.IsError = true
	return res
}

type echoIn struct {
	Text string `json:"text" jsonschema:"the text to echo"`
}

func (d *demo) echo(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
	return textResult("%s", in.Text), nil, nil
}

type addIn struct {
	A float64 `json:"a" jsonschema:"the first addend"`
	B float64 `json:"b" jsonschema:"the second addend"`
}

type addOut struct {
	Sum float64 `json:"sum" jsonschema:"a + b"`
}

func (d *demo) add(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
	sum := in.A + in.B
	return textResult("%g + %g = %g", in.A, in.B, sum), addOut{Sum: sum}, nil
}

type longOperationIn struct {
	DurationSeconds float64 `json:"durationSeconds,omitempty" jsonschema:"total run time in seconds (default 5, at most 600)"`
	Steps           int     `json:"steps,omitempty" jsonschema:"number of progress steps (default 5, at most 1000)"`
}

// longOperation sleeps through the steps, sending notifications/progress with the request's
// progress token after each (MCP spec "Utilities: Progress"). A cancelled request
// (notifications/cancelled, or a closed response stream) cancels ctx and ends the loop.
func (d *demo) longOperation(ctx context.Context, req *mcp.CallToolRequest, in longOperationIn) (*mcp.CallToolResult, any, error) {
	duration := 5 * time.Second
	if in.DurationSeconds != 0 {
		if in.DurationSeconds < 0 || math.IsNaN(in.DurationSeconds) || in.DurationSeconds > maxLongOperation.Seconds() {
			return toolError("durationSeconds must be between 0 and %g", maxLongOperation.Seconds()), nil, nil
		}
		duration = time.Duration(in.DurationSeconds * float64(time.Second))
	}
	steps := 5
	if in.Steps != 0 {
		if in.Steps < 0 || in.Steps > maxSteps {
			return toolError("steps must be between 1 and %d", maxSteps), nil, nil
		}
		steps = in.Steps
	}
	token := req.Params.GetProgressToken()
	perStep := duration / time.Duration(steps)
	timer := time.NewTimer(perStep)
	defer timer.Stop()
	for step := 1; step <= steps; step++ {
		select {
		case <-ctx.Done():
			d.logger.Info("long_operation cancelled", "step", step, "steps", steps)
			if d.onCancel != nil {
				d.onCancel(step)
			}
			return nil, nil, ctx.Err()
		case <-timer.C:
			timer.Reset(perStep)
		}
		if token != nil {
			err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: token,
				Progress:      float64(step),
				Total:         float64(steps),
				Message:       fmt.Sprintf("step %d of %d", step, steps),
			})
			if err != nil {
				d.logger.Debug("progress notification not sent", "error", err)
			}
		}
	}
	return textResult("long operation finished: %d steps in %s", steps, duration), nil, nil
}

type sampleIn struct {
	Prompt       string `json:"prompt" jsonschema:"the user message to send to the client's model"`
	SystemPrompt string `json:"systemPrompt,omitempty" jsonschema:"an optional system prompt"`
	MaxTokens    int64  `json:"maxTokens,omitempty" jsonschema:"maximum tokens to sample (default 100)"`
}

// sample requests a completion from the client (MCP spec "Client features: Sampling").
func (d *demo) sample(_ context.Context, req *mcp.CallToolRequest, in sampleIn) (*mcp.CallToolResult, any, error) {
	if resp, ok := req.Params.InputResponses[inputSample]; ok {
		model, stop, content, err := samplingReply(resp)
		if err != nil {
			return toolError("%v", err), nil, nil
		}
		res := &mcp.CallToolResult{Content: content}
		structured := map[string]any{"model": model}
		if stop != "" {
			structured["stopReason"] = stop
		}
		res.StructuredContent = structured
		return res, nil, nil
	}
	if caps := req.ClientCapabilities(); caps == nil || caps.Sampling == nil {
		return toolError("the client did not declare the sampling capability"), nil, nil
	}
	if strings.TrimSpace(in.Prompt) == "" {
		return toolError("prompt is required"), nil, nil
	}
	maxTokens := in.MaxTokens
	if maxTokens <= 0 {
		maxTokens = 100
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
		inputSample: &mcp.CreateMessageParams{
			Messages:     []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: in.Prompt}}},
			SystemPrompt: in.SystemPrompt,
			MaxTokens:    maxTokens,
		},
	}}, nil, nil
}

// samplingReply unpacks a sampling response. Depending on the protocol era and the path it took
// (MRTR retry or the SDK's legacy fulfilment), it arrives as either result type.
func samplingReply(resp mcp.InputResponse) (model, stopReason string, content []mcp.Content, err error) {
	switch r := resp.(type) {
	case *mcp.CreateMessageResult:
		if r.Content != nil {
			content = []mcp.Content{r.Content}
		}
		return r.Model, r.StopReason, content, nil
	case *mcp.CreateMessageWithToolsResult:
		return r.Model, r.StopReason, r.Content, nil
	default:
		return "", "", nil, fmt.Errorf("unexpected response to the sampling request: %T", resp)
	}
}

type elicitIn struct {
	Message string `json:"message,omitempty" jsonschema:"the message shown to the user (default: ask for name and age)"`
}

// personSchema is the requested schema of the elicit tool: a flat object of primitives, as
// form-mode elicitation requires (MCP spec "Client features: Elicitation").
func personSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"name": map[string]any{"type": "string", "title": "Name", "description": "Your name"},
			"age":  map[string]any{"type": "integer", "title": "Age", "minimum": 0, "maximum": 150},
		},
		"required": []any{"name"},
	}
}

func (d *demo) elicit(_ context.Context, req *mcp.CallToolRequest, in elicitIn) (*mcp.CallToolResult, any, error) {
	if resp, ok := req.Params.InputResponses[inputElicit]; ok {
		r, ok := resp.(*mcp.ElicitResult)
		if !ok {
			return toolError("unexpected response to the elicitation request: %T", resp), nil, nil
		}
		res := elicitOutcome(r)
		return res, nil, nil
	}
	if caps := req.ClientCapabilities(); caps == nil || caps.Elicitation == nil ||
		(caps.Elicitation.Form == nil && caps.Elicitation.URL != nil) {
		return toolError("the client did not declare form elicitation"), nil, nil
	}
	msg := in.Message
	if msg == "" {
		msg = "Please tell us your name and age."
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
		inputElicit: &mcp.ElicitParams{Mode: "form", Message: msg, RequestedSchema: personSchema()},
	}}, nil, nil
}

func elicitOutcome(r *mcp.ElicitResult) *mcp.CallToolResult {
	var res *mcp.CallToolResult
	switch r.Action {
	case "accept":
		var parts []string
		if name, ok := r.Content["name"]; ok {
			parts = append(parts, fmt.Sprintf("name=%v", name))
		}
		if age, ok := r.Content["age"]; ok {
			parts = append(parts, fmt.Sprintf("age=%v", age))
		}
		res = textResult("accepted: %s", strings.Join(parts, " "))
	case "decline":
		res = textResult("declined")
	case "cancel":
		res = textResult("cancelled")
	default:
		return toolError("unknown elicitation action %q", r.Action)
	}
	structured := map[string]any{"action": r.Action}
	if r.Content != nil {
		structured["content"] = r.Content
	}
	res.StructuredContent = structured
	return res
}

type elicitURLIn struct {
	URL string `json:"url,omitempty" jsonschema:"the URL to send the user to (default https://example.com/mcp-bridge-demo/consent)"`
}

// elicitURL uses URL-mode elicitation. The elicitation id travels in the request state; after
// an accept the tool sends notifications/elicitation/complete for it.
func (d *demo) elicitURL(ctx context.Context, req *mcp.CallToolRequest, in elicitURLIn) (*mcp.CallToolResult, any, error) {
	if resp, ok := req.Params.InputResponses[inputConsent]; ok {
		r, ok := resp.(*mcp.ElicitResult)
		if !ok {
			return toolError("unexpected response to the elicitation request: %T", resp), nil, nil
		}
		if r.Action == "accept" && req.Params.RequestState != "" {
			err := req.Session.NotifyElicitationComplete(ctx, &mcp.ElicitationCompleteParams{ElicitationID: req.Params.RequestState})
			if err != nil {
				d.logger.Debug("elicitation complete notification not sent", "error", err)
			}
		}
		res := textResult("url elicitation: %s", r.Action)
		res.StructuredContent = map[string]any{"action": r.Action, "elicitationId": req.Params.RequestState}
		return res, nil, nil
	}
	if caps := req.ClientCapabilities(); caps == nil || caps.Elicitation == nil || caps.Elicitation.URL == nil {
		return toolError("the client did not declare URL elicitation"), nil, nil
	}
	target := in.URL
	if target == "" {
		target = "https://example.com/mcp-bridge-demo/consent"
	}
	id := rand.Text()
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{
			inputConsent: &mcp.ElicitParams{
				Mode:          "url",
				Message:       "Open the link to give your consent.",
				URL:           target,
				ElicitationID: id,
			},
		},
		RequestState: id,
	}, nil, nil
}

type rootOut struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// listRoots asks the client for its roots (MCP spec "Client features: Roots").
func (d *demo) listRoots(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
	if resp, ok := req.Params.InputResponses[inputRoots]; ok {
		r, ok := resp.(*mcp.ListRootsResult)
		if !ok {
			return toolError("unexpected response to the roots request: %T", resp), nil, nil
		}
		roots := make([]rootOut, 0, len(r.Roots))
		var lines []string
		for _, root := range r.Roots {
			roots = append(roots, rootOut{URI: root.URI, Name: root.Name})
			if root.Name != "" {
				lines = append(lines, root.Name+": "+root.URI)
			} else {
				lines = append(lines, root.URI)
			}
		}
		text := fmt.Sprintf("%d root(s)", len(roots))
		if len(lines) > 0 {
			text += "\n" + strings.Join(lines, "\n")
		}
		res := textResult("%s", text)
		res.StructuredContent = map[string]any{"roots": roots}
		return res, nil, nil
	}
	if caps := req.ClientCapabilities(); caps == nil || caps.RootsV2 == nil {
		return toolError("the client did not declare the roots capability"), nil, nil
	}
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{inputRoots: &mcp.ListRootsParams{}}}, nil, nil
}

type structuredIn struct {
	City string `json:"city" jsonschema:"the city to report on"`
}

type forecastDay struct {
	Day   string  `json:"day"`
	HighC float64 `json:"highC"`
	LowC  float64 `json:"lowC"`
}

type weatherReport struct {
	City         string        `json:"city"`
	TemperatureC float64       `json:"temperatureC" jsonschema:"current temperature in degrees Celsius"`
	Conditions   string        `json:"conditions" jsonschema:"one of sunny, cloudy, rainy, snowy, windy"`
	HumidityPct  int           `json:"humidityPct"`
	Forecast     []forecastDay `json:"forecast"`
}

// structured returns a deterministic, made-up report: the same city always gets the same one.
func (d *demo) structured(_ context.Context, _ *mcp.CallToolRequest, in structuredIn) (*mcp.CallToolResult, weatherReport, error) {
	city := strings.TrimSpace(in.City)
	if city == "" {
		return toolError("city is required"), weatherReport{}, nil
	}
	h := fnv.New32a()
	h.Write([]byte(strings.ToLower(city)))
	seed := h.Sum32()
	conditions := []string{"sunny", "cloudy", "rainy", "snowy", "windy"}
	r := weatherReport{
		City:         city,
		TemperatureC: float64(int(seed%40) - 5),
		Conditions:   conditions[seed%uint32(len(conditions))],
		HumidityPct:  int(seed/7) % 101,
	}
	for i, day := range []string{"mon", "tue", "wed"} {
		hi := r.TemperatureC + float64((int(seed>>uint(4*i))%5)-2)
		r.Forecast = append(r.Forecast, forecastDay{Day: day, HighC: hi, LowC: hi - 8})
	}
	// Content is left empty: the SDK fills it with the JSON text of the structured content,
	// as the spec recommends for clients that do not read structuredContent.
	return nil, r, nil
}

type failIn struct {
	Message string `json:"message,omitempty" jsonschema:"the error message (default: this tool always fails)"`
}

// fail returns a tool error: a result with isError true, for the model to read, not a protocol
// error (MCP spec "Server features: Tools, Error handling").
func (d *demo) fail(_ context.Context, _ *mcp.CallToolRequest, in failIn) (*mcp.CallToolResult, any, error) {
	msg := in.Message
	if msg == "" {
		msg = "this tool always fails"
	}
	return toolError("%s", msg), nil, nil
}

// logLevels are the MCP log levels in increasing severity (RFC 5424 order).
var logLevels = []mcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

type logIn struct {
	Message string `json:"message,omitempty" jsonschema:"text to put in each log message (default: hello from the demo server)"`
}

// log sends one message per level. ServerSession.Log drops those below the session's level
// (logging/setLevel, or the request's _meta log level on 2026-07-28) and all of them when the
// client never set one.
func (d *demo) log(ctx context.Context, req *mcp.CallToolRequest, in logIn) (*mcp.CallToolResult, any, error) {
	msg := in.Message
	if msg == "" {
		msg = "hello from the demo server"
	}
	for _, level := range logLevels {
		err := req.Session.Log(ctx, &mcp.LoggingMessageParams{
			Level:  level,
			Logger: "demo",
			Data:   map[string]any{"message": msg, "level": string(level)},
		})
		if err != nil {
			return nil, nil, fmt.Errorf("sending log message: %w", err)
		}
	}
	return textResult("sent one log message at each of %d levels", len(logLevels)), nil, nil
}

type incrementOut struct {
	Counter int `json:"counter" jsonschema:"the counter's new value"`
}

func (d *demo) increment(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, incrementOut, error) {
	d.mu.Lock()
	d.counter++
	n := d.counter
	d.mu.Unlock()
	if err := d.srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: counterURI}); err != nil {
		d.logger.Debug("resource updated notification not sent", "error", err)
	}
	return textResult("counter is now %d", n), incrementOut{Counter: n}, nil
}
