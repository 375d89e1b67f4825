package mcpcore

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionHandlers are how a session's connections meet its server's requests and notifications: the SDK
// client's options and capabilities (what the host declared), the receiving middleware in front of the
// server→client request handlers, and the notifications the wire tap hands over (progress and log messages
// to the calls in flight, the rest as events). The session holds it as Session.handlers.
type sessionHandlers struct {
	s *Session
}

// clientCapabilities are exactly what the host declared (DESIGN: capabilities follow the host).
func (hs *sessionHandlers) clientCapabilities() *mcp.ClientCapabilities {
	h := hs.s.caps
	caps := &mcp.ClientCapabilities{}
	if h.Roots {
		caps.RootsV2 = &mcp.RootCapabilities{ListChanged: h.RootsListChanged}
	}
	if h.Sampling {
		caps.Sampling = &mcp.SamplingCapabilities{}
		if h.SamplingTools {
			caps.Sampling.Tools = &mcp.SamplingToolsCapabilities{}
		}
		if h.SamplingContext {
			caps.Sampling.Context = &mcp.SamplingContextCapabilities{}
		}
	}
	if h.ElicitationForm || h.ElicitationURL {
		caps.Elicitation = &mcp.ElicitationCapabilities{}
		if h.ElicitationForm {
			caps.Elicitation.Form = &mcp.FormElicitationCapabilities{}
		}
		if h.ElicitationURL {
			caps.Elicitation.URL = &mcp.URLElicitationCapabilities{}
		}
	}
	if h.Tasks {
		caps.AddExtension(TasksExtension, nil)
	}
	return caps
}

// clientOptions configure the SDK client of one connection. Handlers for sampling and elicitation are set
// only when the host declared them; the SDK's automatic MRTR middleware is disabled because the core runs
// MRTR itself (each input request becomes a pending request a host answers).
func (h *sessionHandlers) clientOptions() *mcp.ClientOptions {
	s := h.s
	o := &mcp.ClientOptions{
		Logger:         s.logger,
		Capabilities:   s.handlers.clientCapabilities(),
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		// The core keeps lists itself, by cacheScope and past list_changed (listcache.go, patch 0003).
		DisableListCache: true,
		// Tool schemas stay the server's JSON, encoded once for the host (patch 0004, docs/adr/0097).
		RawToolSchemas: true,
		// Notifications become events in the wire tap (see notification); the SDK's handlers are set only
		// because the SDK opens its 2026-07-28 subscriptions/listen stream for list changes when they are.
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) {},
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) {},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {},
	}
	if s.caps.Sampling {
		o.CreateMessageWithToolsHandler = func(ctx context.Context, r *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			ref := pushRef(ctx)
			return s.requests.handleSampling(ctx, r.Params, DeliveryPush, "", originOf(ref), ref)
		}
	}
	if s.caps.ElicitationForm || s.caps.ElicitationURL {
		o.ElicitationHandler = func(ctx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			ref := pushRef(ctx)
			return s.requests.handleElicitation(ctx, r.Params, DeliveryPush, "", originOf(ref), ref)
		}
	}
	return o
}

// pushKey carries a server request's reference from the receiving middleware to the handler.
type pushKey struct{}

func pushRef(ctx context.Context) *serverRequestRef {
	r, _ := ctx.Value(pushKey{}).(*serverRequestRef)
	return r
}

func originOf(r *serverRequestRef) *activeCall {
	if r == nil {
		return nil
	}
	return r.call
}

// receivingMiddleware sees every request the server sends. It answers -32601 for capabilities the host
// did not declare (the SDK would answer roots/list from its own empty list and report other errors with
// other codes), answers roots/list itself, and moves the tap's reference from _meta into the context.
func (h *sessionHandlers) receivingMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	s := h.s
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		var declared bool
		switch method {
		case "sampling/createMessage":
			declared = s.caps.Sampling
		case "elicitation/create":
			declared = s.caps.ElicitationForm || s.caps.ElicitationURL
		case "roots/list":
			declared = s.caps.Roots
		default:
			return next(ctx, method, req)
		}
		var ref *serverRequestRef
		if p := req.GetParams(); p != nil {
			if m := p.GetMeta(); m != nil {
				ref = s.refs.take(m)
				ctx = extractMeta(ctx, m)
			}
		}
		defer ref.done()
		if !declared {
			s.logger.Info("refused a server request for an undeclared capability", "method", method)
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + method}
		}
		if method == "roots/list" {
			p, _ := req.GetParams().(*mcp.ListRootsParams)
			return s.requests.handleRoots(ctx, p, DeliveryPush, "", originOf(ref), ref)
		}
		return next(context.WithValue(ctx, pushKey{}, ref), method, req)
	}
}

func rpcError(code int64, format string, args ...any) *jsonrpc.Error {
	return &jsonrpc.Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// notification turns a server notification into events, in the order the connection delivered them, and
// routes progress and log messages to the calls in flight. It runs in the tap, before the SDK sees the
// message, so every notification that preceded a response has reached its call before that call returns
// (the SDK's own notification handlers run on another goroutine, after the response may have been
// delivered). It reports false for notifications the SDK does not know, which the tap then drops.
//
// origin is the call whose response stream carried the notification (Streamable HTTP), or nil.
func (h *sessionHandlers) notification(method string, params json.RawMessage, t *wireTap, origin *activeCall) bool {
	s := h.s
	switch method {
	case "notifications/progress":
		var p mcp.ProgressNotificationParams
		if json.Unmarshal(params, &p) == nil {
			s.handlers.onProgress(&p)
		}
	case "notifications/message":
		var p mcp.LoggingMessageParams
		if json.Unmarshal(params, &p) == nil {
			s.handlers.onLog(&p, origin)
		}
	case "notifications/tools/list_changed":
		s.events.publish(Event{Kind: EventToolsListChanged})
	case "notifications/prompts/list_changed":
		s.events.publish(Event{Kind: EventPromptsListChanged})
	case "notifications/resources/list_changed":
		s.events.publish(Event{Kind: EventResourcesListChanged})
	case "notifications/resources/updated":
		var p mcp.ResourceUpdatedNotificationParams
		if json.Unmarshal(params, &p) == nil && s.access.permit(itemResource, p.URI) == nil { // a denied URI is not told of
			s.events.publish(Event{Kind: EventResourceUpdated, URI: p.URI})
		}
	case "notifications/elicitation/complete":
		var p mcp.ElicitationCompleteParams
		if json.Unmarshal(params, &p) == nil {
			s.events.publish(Event{Kind: EventElicitationComplete, ElicitationID: p.ElicitationID})
		}
	case "notifications/cancelled":
		t.serverCancelled(params)
	case "notifications/subscriptions/acknowledged":
		t.acked()
	case "notifications/tasks/status", "notifications/tasks":
		s.events.publish(Event{Kind: EventTaskStatus, Task: taskFromNotification(params)})
		s.tasks.observeTaskNotification(params)
		return false
	}
	return true
}

// onProgress routes notifications/progress to the call that owns the token (in order, one at a time) and
// publishes it as an event.
func (h *sessionHandlers) onProgress(p *mcp.ProgressNotificationParams) {
	s := h.s
	tok := fmt.Sprint(p.ProgressToken)
	s.mu.Lock()
	call := s.tokens[tok]
	s.mu.Unlock()
	pr := Progress{Token: p.ProgressToken, Progress: p.Progress, Total: p.Total, Message: p.Message}
	if call != nil {
		pr.CallID = call.id
		call.deadline.alive() // MCP basic/lifecycle, timeouts: progress may reset the request timeout
		if f := call.opts.OnProgress; f != nil {
			call.mu.Lock()
			safeCall(s, "OnProgress", func() { f(pr) })
			call.mu.Unlock()
		}
	}
	s.events.publish(Event{Kind: EventProgress, Progress: &pr})
}

// onLog publishes notifications/message and hands it to the calls that asked for logs: the call whose
// response stream carried it when that is known (origin), else every call in flight.
func (h *sessionHandlers) onLog(p *mcp.LoggingMessageParams, origin *activeCall) {
	s := h.s
	var calls []*activeCall
	if origin != nil {
		if origin.opts.OnLog != nil {
			calls = append(calls, origin)
		}
	} else {
		s.mu.Lock()
		for _, c := range s.calls {
			if c.opts.OnLog != nil {
				calls = append(calls, c)
			}
		}
		s.mu.Unlock()
	}
	for _, c := range calls {
		c.mu.Lock()
		safeCall(s, "OnLog", func() { c.opts.OnLog(p) })
		c.mu.Unlock()
	}
	s.events.publish(Event{Kind: EventLog, Log: p})
}

// HostsAttached returns how many hosts are attached to the core's sessions now: the sum of their counts
// (Session.HostsAttached). It takes the core's lock once and reads each session's count.
func (c *Core) HostsAttached() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n int64
	for _, r := range c.sessions {
		n += int64(r.s.hostsAttached.Load())
	}
	return n
}

// TrackHosts makes the core count attached hosts (Session.AttachHost) from now on: before it is called a
// host is always assumed to be attached, as an embedder that answers requests from Dispatcher.Watch is. The
// service calls it when it takes the core. It is idempotent.
func (c *Core) TrackHosts() { c.hostsTracked.Store(true) }

// inFlight returns the session's calls in flight.
func (s *Session) inFlight() []*activeCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Collect(maps.Values(s.calls))
}

// safeCall runs a host callback; a panic in it is logged, never breaks the session (DESIGN 7).
func safeCall(s *Session, name string, f func()) {
	defer func() {
		if r := recover(); r != nil {
			s.logger.Error("host callback panicked", "callback", name, "panic", fmt.Sprint(r))
		}
	}()
	f()
}
