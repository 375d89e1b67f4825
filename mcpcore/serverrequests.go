package mcpcore

// A session's server requests — sampling, elicitation, roots — raised as pending requests for hosts
// (dispatch.go), pushed by the server or asked for in an MRTR round (ops.go): sessionRequests builds them
// (newPending), hands them to the dispatcher and waits for the answer (submit), and turns the answer into
// the server's result (handleSampling, handleElicitation, handleRoots).

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-bridge/mcp-bridge/internal/untrusted"
)

// sessionRequests raises a session's server requests for hosts. The session holds it as Session.requests.
type sessionRequests struct {
	s *Session
}

// newPending builds a pending request of s for kind, raised by call (may be nil).
func (rq *sessionRequests) newPending(kind RequestKind, d Delivery, key string, call *activeCall) *PendingRequest {
	s := rq.s
	r := &PendingRequest{ID: newRequestID(), SessionID: s.id, Owner: s.owner, Delivery: d, InputKey: key, Kind: kind}
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
func (rq *sessionRequests) submit(ctx context.Context, req *PendingRequest, call *activeCall, ref *serverRequestRef, fallback func() Answer) (Answer, error) {
	s := rq.s
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
			// request timeout from now, as a paused call does when its own request ends. Their clocks
			// restart before the wait is uncounted, so a deadline firing meanwhile either still sees the
			// wait (held) or sees its clock restarted (stale): none expires at the instant the host answered.
			for _, c := range s.inFlight() {
				c.deadline.alive()
			}
			s.sessionWaits.Add(-1)
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
func (rq *sessionRequests) handleSampling(ctx context.Context, p *mcp.CreateMessageWithToolsParams, d Delivery, key string, call *activeCall, ref *serverRequestRef) (*mcp.CreateMessageWithToolsResult, error) {
	s := rq.s
	if !s.caps.Sampling {
		return nil, rpcError(jsonrpc.CodeMethodNotFound, "method not found: sampling/createMessage")
	}
	if p == nil {
		return nil, rpcError(jsonrpc.CodeInvalidParams, "missing params")
	}
	if !s.caps.SamplingTools && (len(p.Tools) > 0 || p.ToolChoice != nil) {
		return nil, rpcError(jsonrpc.CodeInvalidParams, "sampling with tools is not supported by this client")
	}
	req := s.requests.newPending(KindSampling, d, key, call)
	req.Sampling = p
	a, err := s.requests.submit(ctx, req, call, ref, func() Answer {
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
func (rq *sessionRequests) handleElicitation(ctx context.Context, p *mcp.ElicitParams, d Delivery, key string, call *activeCall, ref *serverRequestRef) (*mcp.ElicitResult, error) {
	s := rq.s
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
	req := s.requests.newPending(KindElicitation, d, key, call)
	req.Elicitation = p
	a, err := s.requests.submit(ctx, req, call, ref, func() Answer {
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
func (rq *sessionRequests) handleRoots(ctx context.Context, p *mcp.ListRootsParams, d Delivery, key string, call *activeCall, ref *serverRequestRef) (*mcp.ListRootsResult, error) {
	s := rq.s
	if !s.caps.Roots {
		return nil, rpcError(jsonrpc.CodeMethodNotFound, "method not found: roots/list")
	}
	s.mu.Lock()
	roots, local := slices.Clone(s.roots), s.hostRoots
	s.mu.Unlock()
	if roots == nil {
		roots = []*mcp.Root{}
	}
	if local || !s.requests.hostCouldAnswer(call) {
		return &mcp.ListRootsResult{Roots: roots}, nil
	}
	if p == nil {
		p = &mcp.ListRootsParams{}
	}
	req := s.requests.newPending(KindRoots, d, key, call)
	req.Roots = p
	a, err := s.requests.submit(ctx, req, call, ref, func() Answer {
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

// hostCouldAnswer reports whether a server request of call (nil: none) has a host to reach: the call
// streams its requests to its caller, or a host is attached to the session (AttachHost).
func (r *sessionRequests) hostCouldAnswer(call *activeCall) bool {
	s := r.s
	var origin string
	if call != nil {
		origin = call.id
	}
	if s.core.dispatcher.callWatched(s.id, origin) {
		return true
	}
	return !s.core.hostsTracked.Load() || s.hostsAttached.Load() > 0
}
