package mcpcore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MRTR bounds (MCP 2026-07-28 basic/patterns/mrtr: the client loops with a bound).
const (
	maxInputRounds    = 10 // input_required results answered per call
	maxLoadShedRounds = 3  // input_required results without inputRequests, retried at once
)

// metaLogLevel is the 2026-07-28 per-request log level key (SEP-2577 logging, LOG-03).
const metaLogLevel = "io.modelcontextprotocol/logLevel"

// beginCall registers a host call: it gets an id (opts.CallID or a new "call-…"), a progress token when
// the host wants progress, a request deadline (ServerConfig.RequestTimeout), and a context that ends with
// the host's, with the session, at the deadline, or at end(). The context's cause tells which
// (classify reads it).
func (s *Session) beginCall(ctx context.Context, method, name string, opts CallOptions) (*activeCall, context.Context, func(), error) {
	call := &activeCall{id: opts.CallID, method: method, name: name, opts: opts, ended: make(chan struct{})}
	if call.id == "" {
		call.id = NewCallID()
	}
	// The cancel func is set before the call is registered: CancelCall may find it at once.
	ctx, cancel := context.WithCancelCause(ctx)
	call.cancel = cancel
	s.mu.Lock()
	if _, dup := s.calls[call.id]; dup {
		s.mu.Unlock()
		cancel(nil)
		return nil, nil, nil, errCallInFlight()
	}
	// Reserved under the same lock that finds duplicates; the entry is filled in below.
	s.calls[call.id] = call
	s.mu.Unlock()
	stop := context.AfterFunc(s.ctx, func() { cancel(s.closedError()) })
	call.deadline = newRequestDeadline(s.server.RequestTimeout, s.server.MaxRequestTimeout, func() bool { return s.sessionWaits.Load() > 0 }, func(total bool) {
		d := s.server.RequestTimeout
		what := "requestTimeout"
		if total {
			d, what = s.server.MaxRequestTimeout, "maxRequestTimeout"
		}
		cancel(fmt.Errorf("%w: %w: no response to %s within %v (the server's %s)", ErrRequestTimeout, context.DeadlineExceeded, method, d, what))
	})
	ctx = context.WithValue(ctx, callKey{}, call)
	call.ctx = ctx
	if opts.OnProgress != nil {
		call.token = newID("p-")
	}
	s.mu.Lock()
	if call.token != "" {
		s.tokens[call.token] = call
	}
	s.mu.Unlock()
	return call, ctx, func() {
		call.deadline.stop()
		stop()
		cancel(nil)
		s.ops.forgetOps(call)
		s.mu.Lock()
		if s.calls[call.id] == call {
			delete(s.calls, call.id)
		}
		delete(s.tokens, call.token)
		s.mu.Unlock()
	}, nil
}

// meta builds a request's _meta: the params' own keys, the host's (CallOptions.Meta), the progress token,
// on 2026-07-28 the log level, and the trace context of ctx (traceparent, tracestate, baggage: SEP-414).
// The caller's maps are not modified.
func (s *Session) meta(ctx context.Context, call *activeCall, g *generation, own mcp.Meta) mcp.Meta {
	m := mcp.Meta{}
	maps.Copy(m, own)
	maps.Copy(m, call.opts.Meta)
	if call.token != "" {
		m["progressToken"] = call.token
	}
	if g.modern() {
		s.mu.Lock()
		lvl := s.logLevel
		s.mu.Unlock()
		if lvl != "" {
			m[metaLogLevel] = string(lvl)
		}
	}
	if len(m) == 0 {
		m = nil
	}
	return injectMeta(ctx, m)
}

func (g *generation) modern() bool {
	r := g.cs.InitializeResult()
	return r != nil && r.ProtocolVersion >= "2026-07-28"
}

func (g *generation) serverCaps() *mcp.ServerCapabilities {
	if r := g.cs.InitializeResult(); r != nil && r.Capabilities != nil {
		return r.Capabilities
	}
	return &mcp.ServerCapabilities{}
}

// call runs one host call: it waits for a live connection, runs op on it and classifies the error (see
// run).
func (s *Session) call(ctx context.Context, method, name string, opts CallOptions, idempotent bool, op func(ctx context.Context, g *generation, call *activeCall) error) error {
	call, ctx, end, err := s.beginCall(ctx, method, name, opts)
	if err != nil {
		return err
	}
	defer end()
	return s.run(ctx, call, idempotent, op)
}

// run sends one request of call: it waits for a live connection (acquire), runs op on it and classifies
// the error. A request the HTTP server refused because it had lost the session never ran, so it is sent
// again on the re-initialized session whatever its method; an idempotent one that failed because the
// connection broke (or was lost) is retried once on the next connection. A non-idempotent one that may
// have reached the server fails with ErrUnavailable: the bridge cannot know whether it ran.
func (s *Session) run(ctx context.Context, call *activeCall, idempotent bool, op func(ctx context.Context, g *generation, call *activeCall) error) error {
	for attempt := 0; ; attempt++ {
		g, err := s.acquire(ctx)
		if err != nil {
			return err
		}
		call.deadline.alive()
		call.resetAttempt()
		octx, rec := s.ops.beginOp(ctx, call, g)
		err = op(octx, g, call)
		if err == nil {
			s.ops.endOp(rec, call, g, nil)
			return nil
		}
		err = s.classify(ctx, g, call, err)
		s.ops.endOp(rec, call, g, err)
		if attempt == 0 && errors.Is(err, ErrUnavailable) && (call.refusedLost() || (idempotent && g.dead.Load())) {
			s.logger.Info("sending the request again on the re-initialized session", "method", call.method, "call_id", call.id)
			continue
		}
		return err
	}
}

// ctxError is the error of a call whose context ended: its cause when the core ended it (the request
// deadline, the session's end, the drain), else the host's cancellation or deadline.
func ctxError(ctx context.Context) error {
	cause := context.Cause(ctx)
	if cause != nil && !errors.Is(cause, context.Canceled) && cause != context.DeadlineExceeded {
		return cause
	}
	return ctx.Err()
}

// classify turns an error from the SDK into the core's: the end of the call's context gives its cause
// (ctxError); a JSON-RPC error the server sent for this call is an *UpstreamError (wrapped in
// ErrServerRequestTimedOut when the call had waited on a server request nobody answered); a broken or
// lost connection, and the SDK's own transport errors, are ErrUnavailable; a frame the core refused, or
// a response the SDK could not use, is ErrBadMessage. The error's text is redacted of the server's
// secrets (redact.go).
func (s *Session) classify(ctx context.Context, g *generation, call *activeCall, err error) (out error) {
	defer func() {
		out = s.red.err(out)
		if d := call.retryAfter(); d > 0 && errors.Is(out, ErrUnavailable) {
			out = &RetryAfterError{Err: out, After: d} // the server refused the request as busy and said when to retry
		}
	}()
	if ctx.Err() != nil {
		return ctxError(ctx)
	}
	if s.ctx.Err() != nil {
		return s.closedError()
	}
	if isLocalError(err) {
		return fmt.Errorf("%w: %v", ErrBadMessage, err)
	}
	if ie := (*InvalidError)(nil); errors.As(err, &ie) {
		return ie // the request could not be sent as the host gave it (checkHeaders): nothing reached the server
	}
	if call.refusedLost() || errors.Is(err, mcp.ErrSessionMissing) {
		g.lost.Store(true)
		g.markDead("server lost the session")
		return fmt.Errorf("%w: the server lost the session: %v", ErrUnavailable, err)
	}
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		if call.fromServer(we) {
			ue := &UpstreamError{Method: call.method, Err: we}
			if id := call.unansweredRequest(); id != "" {
				return fmt.Errorf("%w: %s, and the server then failed the call: %w", ErrServerRequestTimedOut, id, ue)
			}
			return ue
		}
		// The SDK's own: the transport refused the message (-32005: HTTP server unreachable or answering
		// 5xx), or the connection is closing (-32003, -32004).
		if we.Code == -32005 || we.Code == -32003 || we.Code == -32004 || g.dead.Load() {
			return fmt.Errorf("%w: %s", ErrUnavailable, we.Message)
		}
	}
	if g.dead.Load() || errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) {
		g.markDead("connection lost")
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if call.answered() {
		return s.BadMessage(fmt.Errorf("%w: the server's response to %s: %v", ErrBadMessage, call.method, err))
	}
	return err
}

// requireCap fails with ErrCapabilityMissing when the server did not declare what an op needs
// (MCP 2025-11-25 lifecycle, operation: only use negotiated capabilities).
func requireCap(ok bool, what string) error {
	if !ok {
		return fmt.Errorf("%w: the server does not offer %s", ErrCapabilityMissing, what)
	}
	return nil
}

// ListTools lists one page of the server's tools (MCP tools/list; params may be nil, params.Cursor selects the page).
// The bridge's list cache (listcache.go) may answer it, as the protocol allows.
func (s *Session) ListTools(ctx context.Context, params *mcp.ListToolsParams, opts CallOptions) (*mcp.ListToolsResult, error) {
	bypass := bypassListCache(opts, paramsMeta(params))
	if r, ok := cachedList(s, listTools, cursorOf(params), bypass, s.access.filterTools); ok {
		return r, nil
	}
	var res *mcp.ListToolsResult
	err := s.call(ctx, "tools/list", "", opts, true, func(ctx context.Context, g *generation, call *activeCall) error {
		if err := requireCap(g.serverCaps().Tools != nil, "tools"); err != nil {
			return err
		}
		var p mcp.ListToolsParams
		if params != nil {
			p = *params
		}
		p.Meta = s.meta(ctx, call, g, p.Meta)
		fill := s.lists.listFill(g, listTools, p.Cursor, bypass)
		r, err := g.cs.ListTools(ctx, &p)
		if err == nil {
			fill(r)
		}
		res = s.access.filterTools(r)
		return err
	})
	return res, err
}

// ListResources lists one page of the server's resources (MCP resources/list; params may be nil, params.Cursor selects the page).
// The bridge's list cache (listcache.go) may answer it, as the protocol allows.
func (s *Session) ListResources(ctx context.Context, params *mcp.ListResourcesParams, opts CallOptions) (*mcp.ListResourcesResult, error) {
	bypass := bypassListCache(opts, paramsMeta(params))
	if r, ok := cachedList(s, listResources, cursorOf(params), bypass, s.access.filterResources); ok {
		return r, nil
	}
	var res *mcp.ListResourcesResult
	err := s.call(ctx, "resources/list", "", opts, true, func(ctx context.Context, g *generation, call *activeCall) error {
		if err := requireCap(g.serverCaps().Resources != nil, "resources"); err != nil {
			return err
		}
		var p mcp.ListResourcesParams
		if params != nil {
			p = *params
		}
		p.Meta = s.meta(ctx, call, g, p.Meta)
		fill := s.lists.listFill(g, listResources, p.Cursor, bypass)
		r, err := g.cs.ListResources(ctx, &p)
		if err == nil {
			fill(r)
		}
		res = s.access.filterResources(r)
		return err
	})
	return res, err
}

// ListResourceTemplates lists one page of the server's resource templates (MCP resources/templates/list; params may be nil, params.Cursor selects the page).
// The bridge's list cache (listcache.go) may answer it, as the protocol allows.
func (s *Session) ListResourceTemplates(ctx context.Context, params *mcp.ListResourceTemplatesParams, opts CallOptions) (*mcp.ListResourceTemplatesResult, error) {
	bypass := bypassListCache(opts, paramsMeta(params))
	if r, ok := cachedList(s, listTemplates, cursorOf(params), bypass, s.access.filterTemplates); ok {
		return r, nil
	}
	var res *mcp.ListResourceTemplatesResult
	err := s.call(ctx, "resources/templates/list", "", opts, true, func(ctx context.Context, g *generation, call *activeCall) error {
		if err := requireCap(g.serverCaps().Resources != nil, "resources"); err != nil {
			return err
		}
		var p mcp.ListResourceTemplatesParams
		if params != nil {
			p = *params
		}
		p.Meta = s.meta(ctx, call, g, p.Meta)
		fill := s.lists.listFill(g, listTemplates, p.Cursor, bypass)
		r, err := g.cs.ListResourceTemplates(ctx, &p)
		if err == nil {
			fill(r)
		}
		res = s.access.filterTemplates(r)
		return err
	})
	return res, err
}

// ListPrompts lists one page of the server's prompts (MCP prompts/list; params may be nil, params.Cursor selects the page).
// The bridge's list cache (listcache.go) may answer it, as the protocol allows.
func (s *Session) ListPrompts(ctx context.Context, params *mcp.ListPromptsParams, opts CallOptions) (*mcp.ListPromptsResult, error) {
	bypass := bypassListCache(opts, paramsMeta(params))
	if r, ok := cachedList(s, listPrompts, cursorOf(params), bypass, s.access.filterPrompts); ok {
		return r, nil
	}
	var res *mcp.ListPromptsResult
	err := s.call(ctx, "prompts/list", "", opts, true, func(ctx context.Context, g *generation, call *activeCall) error {
		if err := requireCap(g.serverCaps().Prompts != nil, "prompts"); err != nil {
			return err
		}
		var p mcp.ListPromptsParams
		if params != nil {
			p = *params
		}
		p.Meta = s.meta(ctx, call, g, p.Meta)
		fill := s.lists.listFill(g, listPrompts, p.Cursor, bypass)
		r, err := g.cs.ListPrompts(ctx, &p)
		if err == nil {
			fill(r)
		}
		res = s.access.filterPrompts(r)
		return err
	})
	return res, err
}

// errInvalidArguments is the error of an *InvalidError for a host's bad call input.
var errInvalidArguments = errors.New("invalid arguments")

// toolArguments accepts nil, a JSON object as json.RawMessage or []byte, or any value that marshals to a
// JSON object (map[string]any, a struct).
func toolArguments(args any) (any, error) {
	var raw []byte
	switch a := args.(type) {
	case nil:
		return map[string]any{}, nil
	case json.RawMessage:
		raw = a
	case []byte:
		raw = a
	default:
		b, err := json.Marshal(a)
		if err != nil {
			return nil, &InvalidError{Err: errInvalidArguments, Violations: []FieldViolation{{Field: "arguments", Description: err.Error()}}}
		}
		raw = b
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return map[string]any{}, nil
	}
	if raw[0] != '{' || !json.Valid(raw) {
		return nil, &InvalidError{Err: errInvalidArguments, Violations: []FieldViolation{{Field: "arguments", Description: "must be a JSON object"}}}
	}
	if JSONTooDeep(raw, MaxNestingDepth) { // walls.go
		return nil, &InvalidError{Err: errInvalidArguments, Violations: []FieldViolation{{Field: "arguments",
			Description: fmt.Sprintf("nested deeper than %d levels", MaxNestingDepth)}}}
	}
	return json.RawMessage(raw), nil
}

// CallTool calls a tool (MCP tools/call). params.Arguments is nil, a JSON object (json.RawMessage) or a
// value that marshals to one; params is not modified, and its InputResponses and RequestState are
// ignored (the core runs MRTR). A tool's failure is a result with IsError set, not an error. On
// 2026-07-28 the core answers input_required results itself — each input request becomes a DeliveryMRTR
// pending request that a host answers — and retries, up to a bound. If the server answers with a task,
// CallTool fails with a *TaskCreatedError (errors.Is ErrTaskCreated); use CallToolOrTask to take tasks.
func (s *Session) CallTool(ctx context.Context, params *mcp.CallToolParams, opts CallOptions) (*mcp.CallToolResult, error) {
	res, task, err := s.callTool(ctx, params, opts)
	if err == nil && task != nil {
		return nil, &TaskCreatedError{Task: task}
	}
	return res, err
}

// CallToolOrTask is CallTool that also accepts a task: when err is nil exactly one of the result and the
// task is non-nil. A task is created when opts.Task or opts.TaskTTL is set on a 2025-11-25 session whose server
// supports task-augmented tools/call, or when the host declared HostCapabilities.Tasks on 2026-07-28 and
// the server chose to run the call as a task.
func (s *Session) CallToolOrTask(ctx context.Context, params *mcp.CallToolParams, opts CallOptions) (*mcp.CallToolResult, *Task, error) {
	return s.callTool(ctx, params, opts)
}

func (s *Session) callTool(ctx context.Context, params *mcp.CallToolParams, opts CallOptions) (res *mcp.CallToolResult, task *Task, err error) {
	if opts.Detach {
		return s.callDetached(ctx, params, opts) // detach.go: it calls OnEnd where the call ends
	}
	if onEnd := opts.OnEnd; onEnd != nil {
		opts.OnEnd = nil
		defer func() { safeCall(s, "OnEnd", func() { onEnd(CallOutcome{Result: res, Task: task, Err: err}) }) }()
	}
	if params == nil || params.Name == "" {
		return nil, nil, &InvalidError{Err: errInvalidArguments, Violations: []FieldViolation{{Field: "name", Description: "required"}}}
	}
	if err := headerSafe("name", params.Name); err != nil {
		return nil, nil, err
	}
	if err := s.access.permit(itemTool, params.Name); err != nil {
		return nil, nil, err
	}
	args, err := toolArguments(params.Arguments)
	if err != nil {
		return nil, nil, err
	}
	var rc *restoredCall
	// A call that was waiting for approval when the bridge restarted resumes its approval (approval.go),
	// whether or not the retry says Resume: the call id names the call that was submitted for approval.
	ra, _ := s.restoredApprovals.take(opts.CallID)
	digest := newLazyDigest(params.Name, args)
	// An id the caller minted (MintedID) is new: nothing is known under it, so it needs no check.
	if !opts.Resume && ra == nil && !opts.MintedID {
		// One outcome per call id (resume.go, docs/adr/0106): the same call delivered again (a transparent
		// retry of a proxy's refused stream) is answered as a resumed call; a new call under a known id is
		// refused.
		switch s.outcomes.callIDUse(opts.CallID, digest) {
		case callIDSame:
			opts.Resume = true
		case callIDUsed:
			return nil, nil, errCallIDUsed(opts.CallID)
		}
	}
	if opts.Resume && ra == nil {
		o, err := s.outcomes.resumeCall(ctx, params.Name, opts.CallID)
		switch {
		case err != nil:
			return nil, nil, err
		case o.kept != nil:
			return o.kept.result, o.kept.task, o.kept.err
		case o.round != nil:
			// A call resumed after a bridge restart: its round goes on with what was kept (name, arguments,
			// the server's requestState and the answers), not with what the retry repeats.
			rc = o.round
			params = &mcp.CallToolParams{Meta: params.Meta, Name: rc.rec.Name}
			args = rc.rec.Arguments
			if rc.rec.Digest != "" {
				digest = knownDigest(rc.rec.Digest) // the call's own, not what the retry repeats
			}
		}
	}
	call, ctx, end, err := s.beginCall(ctx, "tools/call", params.Name, opts)
	if err != nil {
		if ra != nil {
			s.restoredApprovals.put(opts.CallID, ra)
		}
		return nil, nil, err
	}
	defer end()
	s.mu.Lock()
	call.digest = digest
	s.mu.Unlock()
	if !opts.Resume && ra == nil && !opts.MintedID {
		// Checked again once the id is reserved: a call under it that ended meanwhile kept its outcome before
		// it gave the id up. Rare (the two arrived together): refused even when it is the same call.
		if s.outcomes.storedUse(opts.CallID, digest) != callIDFree {
			close(call.ended)
			return nil, nil, errCallIDUsed(opts.CallID)
		}
	}
	defer s.outcomes.keepOutcome(call, &res, &task, &err)
	// Approvals (approval.go): a call the policy says needs approval waits here, before anything is sent,
	// and goes on only with the approved arguments.
	if rc == nil {
		if args, err = s.approve(ctx, call, params.Name, args, ra); err != nil {
			return nil, nil, err
		}
	}
	call.taskOK = true // a task result is captured even for CallTool, to report it
	call.resume = s.records.newResume(call, args)
	if rc == nil { // the id outlives a crash from here on (durable.go); a resumed round has its record
		if _, err := s.records.callBegins(call); err != nil {
			return nil, nil, err
		}
	} // keepOutcome settles the id's record once the call ends (callids.go callEnds)
	res, err = mrtrLoop(ctx, s, call, rc, func(ctx context.Context, in mcp.InputResponseMap, state string) (*mcp.CallToolResult, error) {
		var r *mcp.CallToolResult
		err := s.run(ctx, call, false, func(ctx context.Context, g *generation, call *activeCall) error {
			if err := requireCap(g.serverCaps().Tools != nil, "tools"); err != nil {
				return err
			}
			var err error // callTool: with its x-mcp-header parameters (paramheaders.go)
			r, err = g.callTool(ctx, call, &mcp.CallToolParams{Meta: s.meta(ctx, call, g, params.Meta), Name: params.Name, Arguments: args, InputResponses: in, RequestState: state})
			if r != nil && r.IsError {
				markToolError(ctx)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		if raw := call.takeTask(); raw != nil {
			t, perr := ParseTask(raw)
			if perr != nil {
				return nil, s.BadMessage(fmt.Errorf("%w: task result: %v", ErrBadMessage, perr))
			}
			task = t
		}
		return r, nil
	})
	if err != nil {
		return nil, nil, err
	}
	if task != nil {
		return nil, task, nil
	}
	return res, nil, nil
}

// ReadResource reads a resource (MCP resources/read), answering input_required results like CallTool.
func (s *Session) ReadResource(ctx context.Context, params *mcp.ReadResourceParams, opts CallOptions) (*mcp.ReadResourceResult, error) {
	if params == nil || params.URI == "" {
		return nil, &InvalidError{Err: errInvalidArguments, Violations: []FieldViolation{{Field: "uri", Description: "required"}}}
	}
	if err := headerSafe("uri", params.URI); err != nil {
		return nil, err
	}
	if err := s.access.permit(itemResource, params.URI); err != nil {
		return nil, err
	}
	call, ctx, end, err := s.beginCall(ctx, "resources/read", params.URI, opts)
	if err != nil {
		return nil, err
	}
	defer end()
	return mrtrLoop(ctx, s, call, nil, func(ctx context.Context, in mcp.InputResponseMap, state string) (*mcp.ReadResourceResult, error) {
		var r *mcp.ReadResourceResult
		err := s.run(ctx, call, false, func(ctx context.Context, g *generation, call *activeCall) error {
			if err := requireCap(g.serverCaps().Resources != nil, "resources"); err != nil {
				return err
			}
			var err error
			r, err = g.cs.ReadResource(ctx, &mcp.ReadResourceParams{Meta: s.meta(ctx, call, g, params.Meta), URI: params.URI, InputResponses: in, RequestState: state})
			return err
		})
		return r, err
	})
}

// GetPrompt gets a prompt (MCP prompts/get), answering input_required results like CallTool.
func (s *Session) GetPrompt(ctx context.Context, params *mcp.GetPromptParams, opts CallOptions) (*mcp.GetPromptResult, error) {
	if params == nil || params.Name == "" {
		return nil, &InvalidError{Err: errInvalidArguments, Violations: []FieldViolation{{Field: "name", Description: "required"}}}
	}
	if err := headerSafe("name", params.Name); err != nil {
		return nil, err
	}
	if err := s.access.permit(itemPrompt, params.Name); err != nil {
		return nil, err
	}
	call, ctx, end, err := s.beginCall(ctx, "prompts/get", params.Name, opts)
	if err != nil {
		return nil, err
	}
	defer end()
	return mrtrLoop(ctx, s, call, nil, func(ctx context.Context, in mcp.InputResponseMap, state string) (*mcp.GetPromptResult, error) {
		var r *mcp.GetPromptResult
		err := s.run(ctx, call, false, func(ctx context.Context, g *generation, call *activeCall) error {
			if err := requireCap(g.serverCaps().Prompts != nil, "prompts"); err != nil {
				return err
			}
			var err error
			r, err = g.cs.GetPrompt(ctx, &mcp.GetPromptParams{Meta: s.meta(ctx, call, g, params.Meta), Name: params.Name, Arguments: params.Arguments, InputResponses: in, RequestState: state})
			return err
		})
		return r, err
	})
}

// Complete asks for argument completions (MCP completion/complete). params.Meta is merged under opts.Meta.
func (s *Session) Complete(ctx context.Context, params *mcp.CompleteParams, opts CallOptions) (*mcp.CompleteResult, error) {
	if params == nil || params.Ref == nil {
		return nil, &InvalidError{Err: errInvalidArguments, Violations: []FieldViolation{{Field: "ref", Description: "required"}}}
	}
	if err := s.access.permitRef(params.Ref); err != nil {
		return nil, err
	}
	var res *mcp.CompleteResult
	err := s.call(ctx, "completion/complete", "", opts, true, func(ctx context.Context, g *generation, call *activeCall) error {
		if err := requireCap(g.serverCaps().Completions != nil, "completions"); err != nil {
			return err
		}
		p := *params
		p.Meta = s.meta(ctx, call, g, params.Meta)
		r, err := g.cs.Complete(ctx, &p)
		res = r
		return err
	})
	return res, err
}

// SubscribeResource asks for notifications/resources/updated for uri (EventResourceUpdated). On the
// handshake era it sends resources/subscribe; on 2026-07-28 the SDK opens a subscriptions/listen stream
// for the URI. Subscriptions are renewed after supervision reconnects.
func (s *Session) SubscribeResource(ctx context.Context, uri string) error {
	if err := headerSafe("uri", uri); err != nil {
		return err
	}
	if err := s.access.permit(itemResource, uri); err != nil {
		return err
	}
	err := s.call(ctx, "resources/subscribe", uri, CallOptions{}, true, func(ctx context.Context, g *generation, _ *activeCall) error {
		if rc := g.serverCaps().Resources; rc == nil || !rc.Subscribe {
			return requireCap(false, "resource subscriptions")
		}
		acks := g.tap.ackCount()
		if err := g.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			return err
		}
		if g.modern() {
			// The SDK opens the URI's subscriptions/listen stream without waiting; return once the
			// server acknowledged it, so no update after SubscribeResource returns is missed.
			g.tap.waitAck(ctx, acks, listenAckWait)
		}
		return nil
	})
	if err == nil {
		s.mu.Lock()
		s.subs[uri] = true
		s.mu.Unlock()
		s.records.persist()
	}
	return err
}

// UnsubscribeResource ends a subscription made with SubscribeResource.
func (s *Session) UnsubscribeResource(ctx context.Context, uri string) error {
	if err := s.access.permit(itemResource, uri); err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.subs, uri)
	s.mu.Unlock()
	s.records.persist()
	return s.call(ctx, "resources/unsubscribe", uri, CallOptions{}, true, func(ctx context.Context, g *generation, _ *activeCall) error {
		if rc := g.serverCaps().Resources; rc == nil || !rc.Subscribe {
			return requireCap(false, "resource subscriptions")
		}
		return g.cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri})
	})
}

// resubscribe renews the session's resource subscriptions and log level on a new connection (best effort,
// logged).
func (s *Session) resubscribe(g *generation) {
	s.logLevels.renewLogLevel(g)
	s.mu.Lock()
	uris := slices.Sorted(maps.Keys(s.subs))
	s.mu.Unlock()
	for _, uri := range uris {
		ctx, cancel := context.WithTimeout(s.ctx, handshakeTimeout)
		if err := g.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			s.logger.Warn("renewing a resource subscription failed", "uri", uri, "error", err)
		}
		cancel()
	}
}

// Ping sends ping (handshake era). On 2026-07-28, which removed ping, it is a server/discover round trip
// instead.
func (s *Session) Ping(ctx context.Context) error {
	return s.call(ctx, "ping", "", CallOptions{}, true, func(ctx context.Context, g *generation, _ *activeCall) error {
		if g.modern() {
			_, err := mcp.CallCustomMethod[*mcp.DiscoverParams, *rawResult](ctx, g.cs, discoverAlias, &mcp.DiscoverParams{})
			return err
		}
		return g.cs.Ping(ctx, nil)
	})
}

// discoverAlias is the name under which the core sends server/discover through the SDK, which refuses to
// register a standard method as a custom one and has no public server/discover call; the wire tap
// renames it to server/discover on its way out (wireTap.sent).
const discoverAlias = "mcp-bridge.internal/discover"

// SetRoots replaces the roots the session exposes; from now on roots/list is answered with them without
// asking the host. On the handshake era, when the host declared RootsListChanged, the server is sent
// notifications/roots/list_changed (2026-07-28 removed it: servers ask for roots in each request).
func (s *Session) SetRoots(ctx context.Context, roots []*mcp.Root) error {
	if !s.caps.Roots {
		return fmt.Errorf("%w: the host did not declare roots", ErrCapabilityMissing)
	}
	s.mu.Lock()
	s.roots, s.hostRoots = slices.Clone(roots), true
	s.mu.Unlock()
	s.records.persist()
	if !s.caps.RootsListChanged {
		return nil
	}
	return s.call(ctx, "notifications/roots/list_changed", "", CallOptions{}, false, func(ctx context.Context, g *generation, _ *activeCall) error {
		if g.modern() {
			return nil
		}
		return g.notify(ctx, "notifications/roots/list_changed")
	})
}

// notify sends a notification through the connection's SDK session.
func (g *generation) notify(ctx context.Context, method string) error {
	// The SDK has no public way to send notifications/roots/list_changed other than Client.AddRoots, whose
	// list the core does not use (it answers roots/list itself); AddRoots on a private client-side set is
	// exactly one notification per call.
	g.client.AddRoots(&mcp.Root{URI: "mcp-bridge:roots-changed"})
	return nil
}

// mrtrResult is a result that may be input_required (MCP 2026-07-28 basic/patterns/mrtr).
type mrtrResult interface {
	NeedsInput() bool
}

// mrtrLoop runs one MRTR exchange: send, and while the result is input_required, have hosts answer its
// input requests (concurrently, each a DeliveryMRTR pending request) and retry with inputResponses and
// the echoed requestState under a new JSON-RPC id. Each send acquires the session's connection anew: the
// retry carries the answers and the server's request state, so when the server restarted while a host was
// answering (a crashed stdio server, a lost HTTP session) the retry goes to the new connection and the
// call completes (MCP 2026-07-28 is stateless: any server instance can take the retry). A result with requestState but no inputRequests
// (load shedding) is retried at once, a bounded number of times.
func mrtrLoop[R mrtrResult](ctx context.Context, s *Session, call *activeCall, rc *restoredCall, send func(ctx context.Context, in mcp.InputResponseMap, state string) (R, error)) (R, error) {
	var zero R
	var in mcp.InputResponseMap
	var state string
	defer s.records.roundEnds(call) // the round's records go once the call has its outcome (durable.go)
	if rc != nil {
		// Resumed after a bridge restart: the kept round goes on (its answers, once hosts gave them).
		s.records.adoptRound(call, rc)
		var err error
		if in, err = s.records.resumeInput(ctx, rc); err != nil {
			return zero, err
		}
		state = rc.rec.RequestState
	}
	shed := 0
	for round := 0; ; round++ {
		res, err := send(ctx, in, state)
		if err != nil || !res.NeedsInput() {
			return res, err
		}
		reqs, st := inputOf(res)
		if len(reqs) == 0 {
			if shed++; shed > maxLoadShedRounds {
				return zero, fmt.Errorf("%w: the server kept asking to retry (%d times)", ErrUnavailable, maxLoadShedRounds)
			}
			in, state = nil, st
			continue
		}
		if round >= maxInputRounds {
			return zero, s.BadMessage(fmt.Errorf("%w: the server asked for input more than %d times", ErrBadMessage, maxInputRounds))
		}
		s.records.roundEnds(call)
		s.records.roundBegins(call, reqs, st)
		in, err = s.fulfill(ctx, call, reqs)
		if err != nil {
			if ctx.Err() != nil {
				return zero, ctxError(ctx) // the call ended (host, deadline, drain): say so, not the side effect
			}
			return zero, err
		}
		state = st
	}
}

func inputOf(r any) (mcp.InputRequestMap, string) {
	switch r := r.(type) {
	case *mcp.CallToolResult:
		return r.InputRequests, r.RequestState
	case *mcp.GetPromptResult:
		return r.InputRequests, r.RequestState
	case *mcp.ReadResourceResult:
		return r.InputRequests, r.RequestState
	}
	return nil, ""
}

// fulfill has every input request answered, concurrently; the first failure cancels the others. It owns
// one goroutine per input request, each ending when its pending request ends; fulfill waits for all.
func (s *Session) fulfill(ctx context.Context, call *activeCall, reqs mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu    sync.Mutex
		out   = make(mcp.InputResponseMap, len(reqs))
		first error
		wg    sync.WaitGroup
	)
	for key, ir := range reqs {
		wg.Go(func() {
			resp, err := s.answerInput(ctx, call, key, ir)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if first == nil {
					first = fmt.Errorf("input request %q: %w", key, err)
					cancel()
				}
				return
			}
			out[key] = resp
		})
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	return out, nil
}

// answerInput runs the same handler (validation, pending request) as the pushed request of the same kind.
func (s *Session) answerInput(ctx context.Context, call *activeCall, key string, ir mcp.InputRequest) (mcp.InputResponse, error) {
	var (
		resp mcp.InputResponse
		err  error
	)
	switch p := ir.(type) {
	case *mcp.ElicitParams:
		if !s.caps.ElicitationForm && !s.caps.ElicitationURL {
			return nil, fmt.Errorf("%w: the server asked for elicitation", ErrCapabilityMissing)
		}
		var r *mcp.ElicitResult
		r, err = s.requests.handleElicitation(ctx, p, DeliveryMRTR, key, call, nil)
		resp = r
	case *mcp.CreateMessageWithToolsParams:
		if !s.caps.Sampling {
			return nil, fmt.Errorf("%w: the server asked for sampling", ErrCapabilityMissing)
		}
		var r *mcp.CreateMessageWithToolsResult
		r, err = s.requests.handleSampling(ctx, p, DeliveryMRTR, key, call, nil)
		resp = r
	case *mcp.CreateMessageParams:
		return s.answerInput(ctx, call, key, samplingWithTools(p))
	case *mcp.ListRootsParams:
		if !s.caps.Roots {
			return nil, fmt.Errorf("%w: the server asked for roots", ErrCapabilityMissing)
		}
		var r *mcp.ListRootsResult
		r, err = s.requests.handleRoots(ctx, p, DeliveryMRTR, key, call, nil)
		resp = r
	default:
		return nil, fmt.Errorf("%w: unknown input request %T", ErrBadMessage, ir)
	}
	var we *jsonrpc.Error
	switch {
	case err == nil:
		return resp, nil
	case !errors.As(err, &we):
		return nil, err
	case call.unansweredRequest() != "":
		// MRTR has no way to send an error upstream: the call fails, and says why.
		return nil, fmt.Errorf("%w: %s", ErrServerRequestTimedOut, call.unansweredRequest())
	}
	return nil, fmt.Errorf("%w: %s (code %d)", ErrInputRefused, we.Message, we.Code)
}

func samplingWithTools(p *mcp.CreateMessageParams) *mcp.CreateMessageWithToolsParams {
	var msgs []*mcp.SamplingMessageV2
	for _, m := range p.Messages {
		msgs = append(msgs, &mcp.SamplingMessageV2{Role: m.Role, Content: []mcp.Content{m.Content}})
	}
	return &mcp.CreateMessageWithToolsParams{
		Meta: p.Meta, IncludeContext: p.IncludeContext, MaxTokens: p.MaxTokens, Messages: msgs, Metadata: p.Metadata,
		ModelPreferences: p.ModelPreferences, StopSequences: p.StopSequences, SystemPrompt: p.SystemPrompt, Temperature: p.Temperature,
	}
}
