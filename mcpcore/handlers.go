package mcpcore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-bridge/mcp-bridge/internal/untrusted"
)

// clientCapabilities are exactly what the host declared (DESIGN: capabilities follow the host).
func (s *Session) clientCapabilities() *mcp.ClientCapabilities {
	h := s.caps
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
func (s *Session) clientOptions() *mcp.ClientOptions {
	o := &mcp.ClientOptions{
		Logger:         s.logger,
		Capabilities:   s.clientCapabilities(),
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		// The core keeps lists itself, by cacheScope and past list_changed (listcache.go, patch 0003).
		DisableListCache: true,
		// Notifications become events in the wire tap (see notification); the SDK's handlers are set only
		// because the SDK opens its 2026-07-28 subscriptions/listen stream for list changes when they are.
		ToolListChangedHandler:     func(context.Context, *mcp.ToolListChangedRequest) {},
		PromptListChangedHandler:   func(context.Context, *mcp.PromptListChangedRequest) {},
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {},
	}
	if s.caps.Sampling {
		o.CreateMessageWithToolsHandler = func(ctx context.Context, r *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
			ref := pushRef(ctx)
			return s.handleSampling(ctx, r.Params, DeliveryPush, "", originOf(ref), ref)
		}
	}
	if s.caps.ElicitationForm || s.caps.ElicitationURL {
		o.ElicitationHandler = func(ctx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			ref := pushRef(ctx)
			return s.handleElicitation(ctx, r.Params, DeliveryPush, "", originOf(ref), ref)
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
func (s *Session) receivingMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
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
			return s.handleRoots(ctx, p, DeliveryPush, "", originOf(ref), ref)
		}
		return next(context.WithValue(ctx, pushKey{}, ref), method, req)
	}
}

func rpcError(code int64, format string, args ...any) *jsonrpc.Error {
	return &jsonrpc.Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// newPending builds a pending request of s for kind, raised by call (may be nil).
func (s *Session) newPending(kind RequestKind, d Delivery, key string, call *activeCall) *PendingRequest {
	r := &PendingRequest{ID: newID("req-"), SessionID: s.id, Owner: s.owner, Delivery: d, InputKey: key, Kind: kind}
	if call != nil {
		r.OriginCallID, r.OriginMethod, r.OriginName = call.id, call.method, call.name
	}
	return r
}

// submit hands req to the dispatcher and waits for the answer. ctx is the server request's context
// (push: cancelled by the server's notifications/cancelled or the connection's end) or the originating
// call's (MRTR); a push request also ends when the call it belongs to ends.
//
// The request ends OutcomeCallEnded when the call ends (an MRTR request's ctx is the call's), and
// OutcomeCancelledByServer when a push request's own ctx ends first.
func (s *Session) submit(ctx context.Context, req *PendingRequest, call *activeCall, ref *serverRequestRef, fallback func() Answer) (Answer, error) {
	// The dispatcher tells the two apart by the cancellation cause, so derive a context whose cause is set
	// here rather than inherited.
	parent := ctx
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(parent))
	defer cancel(nil)
	if req.Delivery == DeliveryMRTR {
		stop := context.AfterFunc(parent, func() { cancel(errCallEnded) })
		defer stop()
	} else {
		stop := context.AfterFunc(parent, func() {
			// A server cancels its request because the call it served ended: that is the cause (the
			// two AfterFuncs run on goroutines of their own, in no set order).
			if call != nil && call.ctx.Err() != nil {
				cancel(errCallEnded)
				return
			}
			cancel(context.Cause(parent))
		})
		defer stop()
		if call != nil {
			stopCall := context.AfterFunc(call.ctx, func() { cancel(errCallEnded) })
			defer stopCall()
		}
	}
	// Already over: decide now, so the dispatcher does not register a request that is already dead.
	switch {
	case call != nil && call.ctx.Err() != nil, req.Delivery == DeliveryMRTR && parent.Err() != nil:
		cancel(errCallEnded)
	case parent.Err() != nil:
		cancel(context.Cause(parent))
	}
	req.TaskID = taskOf(req, call)
	if ref != nil {
		ref.setPending(req.ID)
		if req.Delivery == DeliveryPush {
			req.upstreamID = ref.rpcID.Raw()
		}
	}
	if call != nil {
		// The server waits for the bridge now: the call's request deadline does not run meanwhile.
		call.deadline.pause()
		defer call.deadline.resume()
	} else {
		s.sessionWaits.Add(1)
		defer func() {
			// The server may have waited on the bridge on a call's behalf: the calls in flight get a full
			// request timeout from now, as a paused call does when its own request ends.
			if s.sessionWaits.Add(-1) == 0 {
				for _, c := range s.inFlight() {
					c.deadline.alive()
				}
			}
		}()
	}
	endSpan := s.ops.traceServerRequest(parent, req, call)
	a, outcome, err := s.core.dispatcher.submit(ctx, req, fallback)
	endSpan(outcome)
	if err != nil {
		// Refused (ErrTooManyPending): the server gets an error at once.
		return Answer{}, rpcError(jsonrpc.CodeInternalError, "%v", err)
	}
	// The calls that may have waited on the request: its own, or for a request of no known call, every call
	// of the session in flight.
	waiting := []*activeCall{call}
	if call == nil {
		waiting = s.inFlight()
	}
	for _, c := range waiting {
		switch {
		case outcome == OutcomeTimedOut:
			c.noteUnanswered(fmt.Sprintf("%s request %s", req.Kind, req.ID))
		case outcome == OutcomeSessionClosed && s.core.draining.Load():
			// (When the session is kept for a restart, its server is told nothing of this: between MRTR
			// rounds no request is upstream, a stdio server ends with the bridge, and what a kept HTTP
			// session would still send is refused unsent by the httpTap.)
			// The bridge is shutting down: the call that waited on the request fails now with
			// ErrShuttingDown (cancelled upstream), rather than going on with the policy default.
			c.cancel(fmt.Errorf("%w: %s request %s ended by the drain", ErrShuttingDown, req.Kind, req.ID))
		}
	}
	if outcome == OutcomeSessionClosed && s.core.keeping() && ref != nil {
		// Kept for the next process (durable.go): no answer goes upstream. The handler holds until the
		// connection ends: a kept HTTP session's is cut first when the session closes (Session.shutdown)
		// and what it would still send is refused unsent (httpTap), so the server goes on waiting for the
		// host's answer; a stdio server's ends with the session, after the calls that waited were failed.
		if s.server.Transport == TransportStdio {
			<-s.ctx.Done()
		} else {
			<-ref.tap.g.ctx.Done()
		}
		return Answer{}, rpcError(jsonrpc.CodeInternalError, "the bridge is restarting")
	}
	// A request the server cancelled or whose call ended carries an error answer nobody reads.
	return a, nil
}

// answerError turns a host's error answer into the JSON-RPC error sent upstream.
func answerError(e *RPCError) *jsonrpc.Error {
	return &jsonrpc.Error{Code: e.Code, Message: e.Message, Data: e.Data}
}

var errWrongAnswer = errors.New("the dispatcher returned an answer of the wrong kind")

// handleSampling serves sampling/createMessage, pushed or as an MRTR input request (MCP 2025-11-25
// client/sampling). A request with tools from a server when the host did not declare sampling.tools is
// refused with -32602 (the schema's MUST).
func (s *Session) handleSampling(ctx context.Context, p *mcp.CreateMessageWithToolsParams, d Delivery, key string, call *activeCall, ref *serverRequestRef) (*mcp.CreateMessageWithToolsResult, error) {
	if !s.caps.Sampling {
		return nil, rpcError(jsonrpc.CodeMethodNotFound, "method not found: sampling/createMessage")
	}
	if p == nil {
		return nil, rpcError(jsonrpc.CodeInvalidParams, "missing params")
	}
	if !s.caps.SamplingTools && (len(p.Tools) > 0 || p.ToolChoice != nil) {
		return nil, rpcError(jsonrpc.CodeInvalidParams, "sampling with tools is not supported by this client")
	}
	req := s.newPending(KindSampling, d, key, call)
	req.Sampling = p
	a, err := s.submit(ctx, req, call, ref, func() Answer {
		// Not -1, which MCP reserves for a user's rejection: nobody rejected it, nobody answered it.
		return Answer{Error: &RPCError{Code: CodeRequestTimedOut, Message: "no host answered the sampling request before its deadline"}}
	})
	switch {
	case err != nil:
		return nil, err
	case a.Error != nil:
		return nil, answerError(a.Error)
	case a.Sampling != nil:
		return a.Sampling, nil
	}
	return nil, errWrongAnswer
}

// handleElicitation serves elicitation/create (MCP 2025-11-25 client/elicitation). A missing mode is
// form; a mode the host did not declare is refused with -32602.
func (s *Session) handleElicitation(ctx context.Context, p *mcp.ElicitParams, d Delivery, key string, call *activeCall, ref *serverRequestRef) (*mcp.ElicitResult, error) {
	if !s.caps.ElicitationForm && !s.caps.ElicitationURL {
		return nil, rpcError(jsonrpc.CodeMethodNotFound, "method not found: elicitation/create")
	}
	if p == nil {
		return nil, rpcError(jsonrpc.CodeInvalidParams, "missing params")
	}
	switch mode := cmp.Or(p.Mode, "form"); mode {
	case "form":
		if !s.caps.ElicitationForm {
			return nil, rpcError(jsonrpc.CodeInvalidParams, "form elicitation is not supported by this client")
		}
	case "url":
		if !s.caps.ElicitationURL {
			return nil, rpcError(jsonrpc.CodeInvalidParams, "URL elicitation is not supported by this client")
		}
		if p.URL == "" {
			return nil, rpcError(jsonrpc.CodeInvalidParams, "URL elicitation without a url")
		}
		// Only a URL a person can check is shown to one (docs/adr/0091): the host is not bothered with
		// another; the server is told why.
		if _, err := untrusted.CheckURL(p.URL); err != nil {
			return nil, rpcError(jsonrpc.CodeInvalidParams, "URL elicitation refused by the client: %v", err)
		}
	default:
		return nil, rpcError(jsonrpc.CodeInvalidParams, "unsupported elicitation mode %q", mode)
	}
	req := s.newPending(KindElicitation, d, key, call)
	req.Elicitation = p
	a, err := s.submit(ctx, req, call, ref, func() Answer {
		return Answer{Elicitation: &mcp.ElicitResult{Action: "cancel"}}
	})
	switch {
	case err != nil:
		return nil, err
	case a.Error != nil:
		return nil, answerError(a.Error)
	case a.Elicitation != nil:
		return a.Elicitation, nil
	}
	return nil, errWrongAnswer
}

// handleRoots serves roots/list (MCP 2025-11-25 client/roots). When the host gave the session a list
// (OpenParams.Roots or SetRoots) it is the answer; otherwise the host is asked, and at the deadline the
// server's configured roots are the answer — at once when no host could answer (Options.HostAttached).
func (s *Session) handleRoots(ctx context.Context, p *mcp.ListRootsParams, d Delivery, key string, call *activeCall, ref *serverRequestRef) (*mcp.ListRootsResult, error) {
	if !s.caps.Roots {
		return nil, rpcError(jsonrpc.CodeMethodNotFound, "method not found: roots/list")
	}
	s.mu.Lock()
	roots, local := slices.Clone(s.roots), s.hostRoots
	s.mu.Unlock()
	if roots == nil {
		roots = []*mcp.Root{}
	}
	if local || !s.hostCouldAnswer(call) {
		return &mcp.ListRootsResult{Roots: roots}, nil
	}
	if p == nil {
		p = &mcp.ListRootsParams{}
	}
	req := s.newPending(KindRoots, d, key, call)
	req.Roots = p
	a, err := s.submit(ctx, req, call, ref, func() Answer {
		return Answer{Roots: &mcp.ListRootsResult{Roots: roots}}
	})
	switch {
	case err != nil:
		return nil, err
	case a.Error != nil:
		return nil, answerError(a.Error)
	case a.Roots != nil:
		if a.Roots.Roots == nil {
			a.Roots.Roots = []*mcp.Root{}
		}
		return a.Roots, nil
	}
	return nil, errWrongAnswer
}

// notification turns a server notification into events, in the order the connection delivered them, and
// routes progress and log messages to the calls in flight. It runs in the tap, before the SDK sees the
// message, so every notification that preceded a response has reached its call before that call returns
// (the SDK's own notification handlers run on another goroutine, after the response may have been
// delivered). It reports false for notifications the SDK does not know, which the tap then drops.
//
// origin is the call whose response stream carried the notification (Streamable HTTP), or nil.
func (s *Session) notification(method string, params json.RawMessage, t *wireTap, origin *activeCall) bool {
	switch method {
	case "notifications/progress":
		var p mcp.ProgressNotificationParams
		if json.Unmarshal(params, &p) == nil {
			s.onProgress(&p)
		}
	case "notifications/message":
		var p mcp.LoggingMessageParams
		if json.Unmarshal(params, &p) == nil {
			s.onLog(&p, origin)
		}
	case "notifications/tools/list_changed":
		s.events.publish(Event{Kind: EventToolsListChanged})
	case "notifications/prompts/list_changed":
		s.events.publish(Event{Kind: EventPromptsListChanged})
	case "notifications/resources/list_changed":
		s.events.publish(Event{Kind: EventResourcesListChanged})
	case "notifications/resources/updated":
		var p mcp.ResourceUpdatedNotificationParams
		if json.Unmarshal(params, &p) == nil && s.permit(itemResource, p.URI) == nil { // a denied URI is not told of
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
		s.observeTaskNotification(params)
		return false
	}
	return true
}

// onProgress routes notifications/progress to the call that owns the token (in order, one at a time) and
// publishes it as an event.
func (s *Session) onProgress(p *mcp.ProgressNotificationParams) {
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
func (s *Session) onLog(p *mcp.LoggingMessageParams, origin *activeCall) {
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

// AttachHost records that a host that may answer the session's server requests is attached — a Connect
// stream attached to the session, a WatchEvents watcher of it — until the returned release, which is
// idempotent. The session owns the count: a roots request the host must answer is answered at once from the
// server's configured roots when no host is attached and the call that raised it does not stream its
// requests (Dispatcher.WatchCall), instead of waiting for PendingPolicy.RootsTimeout.
func (s *Session) AttachHost() (release func()) {
	s.hostsAttached.Add(1)
	var once sync.Once
	return func() { once.Do(func() { s.hostsAttached.Add(-1) }) }
}

// HostsAttached returns how many hosts are attached to the session now (AttachHost). The session is the one
// owner of that count: the service's idle reaper and its host-streams gauge (Core.HostsAttached) ask it.
func (s *Session) HostsAttached() int { return int(s.hostsAttached.Load()) }

// HostsAttached returns how many hosts are attached to the core's sessions now: the sum of their counts
// (Session.HostsAttached). It takes the core's lock once and reads each session's count.
func (c *Core) HostsAttached() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n int64
	for _, s := range c.live {
		n += int64(s.hostsAttached.Load())
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

// hostCouldAnswer reports whether a server request of call (nil: none) has a host to reach: the call
// streams its requests to its caller, or a host is attached to the session (AttachHost).
func (s *Session) hostCouldAnswer(call *activeCall) bool {
	var origin string
	if call != nil {
		origin = call.id
	}
	if s.core.dispatcher.callWatched(s.id, origin) {
		return true
	}
	return !s.core.hostsTracked.Load() || s.hostsAttached.Load() > 0
}
