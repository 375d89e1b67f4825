package mcpcore

// Re-attaching a restored handshake-era Streamable HTTP session to the server's own session (issue 21,
// docs/adr/0021-what-is-kept.md). A server of the handshake era keeps state per MCP session — requests it
// pushed and still waits for, tasks, subscriptions — under the Mcp-Session-Id it issued. After a bridge
// restart the restored session first tries that session again: the SDK's initialize request is answered
// by the bridge itself from the kept initialize result, with the kept Mcp-Session-Id, so the SDK goes on
// with the server's existing session (notifications/initialized, then its GET stream). If the server no
// longer knows it (404, or 400 naming the session), the session is initialized anew, as after a server
// restart. Requests the server pushed before the restart, and still waits for, are raised again; a host's
// answer is sent to the server as the JSON-RPC response to the server's own request id, under that session.
//
// Servers behind OAuth are not re-attached (their token is the SDK's, per connection): they are
// initialized anew, and their pushed requests end with OutcomeBridgeRestarted.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// reattachState is what a restored session needs to re-attach to the server's session, and how that went.
type reattachState struct {
	upstreamID string          // the server's Mcp-Session-Id
	protocol   string          // the negotiated protocol version
	initialize json.RawMessage // the server's initialize result, as the server sent it

	once sync.Once
	done chan struct{} // closed when the attempt is over; ok is set before
	ok   bool
}

func newReattach(r sessionRecord) *reattachState {
	return &reattachState{upstreamID: r.UpstreamSessionID, protocol: r.ProtocolVersion, initialize: r.Initialize, done: make(chan struct{})}
}

// canReattach reports whether a kept session can try the server's session again.
func canReattach(r sessionRecord, cfg ServerConfig) bool {
	return cfg.Transport == TransportStreamableHTTP && cfg.OAuth == nil && r.UpstreamSessionID != "" &&
		len(r.Initialize) > 0 && r.ProtocolVersion != "" && r.ProtocolVersion < "2026-07-28"
}

// finish records how the attempt went; the first call stands.
func (r *reattachState) finish(ok bool) {
	select {
	case <-r.done:
	default:
		r.ok = ok
		close(r.done)
	}
}

// answerInitialize returns the bridge's own answer to the SDK's initialize request (the kept result under
// the kept session id), once; nil for any other request, or after the first.
func (r *reattachState) answerInitialize(req *http.Request, body []byte) *http.Response {
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		return nil
	}
	call, ok := msg.(*jsonrpc.Request)
	if !ok || call.Method != "initialize" {
		return nil
	}
	var resp *http.Response
	r.once.Do(func() {
		out, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: call.ID, Result: r.initialize})
		if err != nil {
			return
		}
		h := http.Header{}
		h.Set("Content-Type", "application/json")
		h.Set("Mcp-Session-Id", r.upstreamID)
		resp = &http.Response{Status: "200 OK", StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: h, Body: io.NopCloser(bytes.NewReader(out)), ContentLength: int64(len(out)), Request: req}
	})
	return resp
}

// initializeRecord is the kept initialize result of a handshake-era HTTP connection (nil otherwise): the
// server's capabilities as it sent them, with its info and instructions.
func (g *generation) initializeRecord() json.RawMessage {
	if g.s.server.Transport != TransportStreamableHTTP || g.modern() {
		return nil
	}
	r := g.cs.InitializeResult()
	if r == nil {
		return nil
	}
	out := map[string]any{"protocolVersion": r.ProtocolVersion, "serverInfo": r.ServerInfo}
	if r.Instructions != "" {
		out["instructions"] = r.Instructions
	}
	if p := g.rawCaps.Load(); p != nil {
		out["capabilities"] = p.raw
	} else {
		out["capabilities"] = r.Capabilities
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil
	}
	return b
}

// connect makes the first connection of a restored session that can re-attach: the server's own
// session when it still knows it (reported by ra.finish(true)), else a new one.
func (ra *reattachState) connect(s *Session) (*generation, error) {
	s.reattachNext.Store(ra)
	ctx, cancel := context.WithTimeout(s.ctx, handshakeTimeout)
	g, err := s.connect(ctx)
	cancel()
	s.reattachNext.Store(nil)
	if err == nil && g.cs.ID() == ra.upstreamID {
		ra.finish(true)
		s.logger.Info("re-attached to the server's session after a bridge restart")
		return g, nil
	}
	ra.finish(false)
	if g != nil {
		g.close(false)
	}
	if s.ctx.Err() != nil {
		return nil, s.ctx.Err()
	}
	s.logger.Info("the server no longer knows the session; initializing anew", "error", err)
	return nil, err
}

// deliverRestoredPush waits for a host's answer to a pushed request kept from before a restart and sends it
// to the server under its session, as the response to the server's own request id; it runs on a goroutine
// the session owns (restoredWG), which ends when the request does and the answer is sent.
func (ra *reattachState) deliverRestoredPush(s *Session, e *pendingEntry, rpcID jsonrpc.ID) {
	defer s.restoredWG.Done()
	select {
	case <-ra.done:
	case <-s.ctx.Done():
		return
	}
	if !ra.ok {
		s.core.dispatcher.finish(e, OutcomeBridgeRestarted, Answer{}, "the bridge restarted while the request was pending, and the server no longer knows the session it was asked in")
		return
	}
	<-e.done
	var a Answer
	switch e.outcome {
	case OutcomeAnswered, OutcomeCancelledByHost:
		a = e.answer
	case OutcomeTimedOut:
		a = runFallback(e.req.Kind, nil, e.outcome)
	default: // the session closed (drained: kept for the next process), or it ended otherwise
		return
	}
	ctx, cancel := context.WithTimeout(s.ctx, handshakeTimeout)
	defer cancel()
	if err := ra.postResponse(ctx, s, rpcID, a); err != nil {
		s.logger.Warn("the answer to a request kept across the restart did not reach the server", "request_id", e.req.ID, "error", err)
		return
	}
	s.logger.Info("answer to a request kept across the restart sent to the server", "request_id", e.req.ID)
}

// postResponse sends a JSON-RPC response to the server's request id under the kept session (MCP 2025-11-25
// transports: a client's response is POSTed to the endpoint and acknowledged with 202).
func (ra *reattachState) postResponse(ctx context.Context, s *Session, id jsonrpc.ID, a Answer) error {
	resp := &jsonrpc.Response{ID: id}
	result := a.result()
	switch {
	case result != nil:
	case a.Error != nil:
		resp.Error = answerError(a.Error) // handlers.go
	default:
		return fmt.Errorf("no answer to send")
	}
	if result != nil {
		b, err := json.Marshal(result)
		if err != nil {
			return err
		}
		resp.Result = b
	}
	body, err := jsonrpc.EncodeMessage(resp)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.server.URL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", ra.upstreamID)
	req.Header.Set("Mcp-Protocol-Version", ra.protocol)
	base := s.core.httpTransport()
	if s.server.H2C {
		base = s.core.h2cTransport()
	}
	hc := &http.Client{Transport: &httpTap{base: base, headers: s.server.Headers, max: s.core.limits.MaxMessageBytes}}
	r, err := hc.Do(req)
	if err != nil {
		return s.red.err(err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(r.Body, maxErrorBody))
	_ = r.Body.Close()
	if r.StatusCode/100 != 2 {
		return fmt.Errorf("the server answered %s", r.Status)
	}
	return nil
}
