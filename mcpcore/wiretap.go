package mcpcore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file holds the wire tap: the core's view of every JSON-RPC message of a connection, below the SDK.
// It ties outgoing requests to the host calls that sent them, ties server requests to the call they
// belong to (SEP-2260) by annotating their _meta with a private reference the core's handlers remove,
// captures task results the SDK's types cannot hold, answers bad frames, and surfaces notifications the
// SDK does not know (task status) and the server's cancellations.
//
// The tap sits inside the core's stdio connection, inside a Connection wrapper for in-memory and HTTP+SSE
// transports, and inside the HTTP RoundTripper for Streamable HTTP (whose SDK connection cannot be
// wrapped: the SDK feeds it session updates through an unexported interface).

// metaRef is the private _meta key under which the tap hands a server request's reference to the core's
// handlers; the handlers delete it before anything reaches a host.
const metaRef = "mcp-bridge.internal/ref"

// localErrorMarker marks, in error.data, a JSON-RPC error the core synthesized for a bad frame (RPC-11:
// local errors must not be mistaken for the peer's); see asUpstreamError.
const localErrorMarker = "mcp-bridge.local"

// callKey is the context key of the *activeCall a request is sent for.
type callKey struct{}

func callFrom(ctx context.Context) *activeCall {
	c, _ := ctx.Value(callKey{}).(*activeCall)
	return c
}

// activeCall is one host call in flight (several JSON-RPC requests for MRTR rounds).
type activeCall struct {
	id     string
	method string
	name   string
	opts   CallOptions
	ctx    context.Context
	token  string // progress token, "" when the host asked for no progress
	taskOK bool   // the call may be answered with a task (CallToolOrTask)
	// digest is callDigest of a tools/call's tool and arguments (docs/adr/0106), computed when first asked;
	// set under Session.mu, nil for other methods.
	digest *lazyDigest
	// resume is the call's MRTR round record (durable.go); nil for calls that cannot take input.
	resume *callResume
	// ended is closed when a tools/call has its outcome, kept for resumed calls or not (resume.go).
	ended chan struct{}

	cancel   context.CancelCauseFunc // ends ctx with a cause (see beginCall)
	deadline *requestDeadline

	mu   sync.Mutex // guards task and serializes the host's callbacks
	task json.RawMessage

	amu sync.Mutex // guards attempt and unanswered; never held while calling out
	// attempt is what the wire tap saw of the call's current request (see call.go).
	attempt callAttempt
	// unanswered is the id of a server request of the call that reached its deadline unanswered.
	unanswered string
}

func (c *activeCall) setTask(raw json.RawMessage) {
	c.mu.Lock()
	c.task = raw
	c.mu.Unlock()
}

func (c *activeCall) takeTask() json.RawMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.task
	c.task = nil
	return t
}

// outgoingCall is a request the client sent and awaits a response for.
type outgoingCall struct {
	method string
	call   *activeCall
	sent   time.Time
	// origID is the SDK's own id of a request whose id the tap tagged (wireTap.idTag); its response is
	// given back to the SDK under it.
	origID jsonrpc.ID
}

// serverRequestRef ties a server→client request to its origin call while its handler runs.
type serverRequestRef struct {
	tap       *wireTap
	rpcID     jsonrpc.ID
	call      *activeCall
	pendingID string // set by the handler before it submits the pending request
}

// wireTap is the per-connection state of the tap. Its methods are safe for concurrent use.
type wireTap struct {
	s *Session
	g *generation

	mu       sync.Mutex // guards the maps, the refs' pendingID and the acknowledgement counter
	outgoing map[jsonrpc.ID]*outgoingCall
	byRPC    map[jsonrpc.ID]*serverRequestRef // server requests being handled, by JSON-RPC id
	acks     uint64                           // notifications/subscriptions/acknowledged received
	ackCh    chan struct{}                    // closed and replaced at every acknowledgement

	// idTag, set before the connection is used, makes the ids of the client's requests unique on a server
	// session that an earlier process of the bridge used (a re-attached session, reattach.go): the SDK
	// numbers its requests from 1 again, and the server may still hold the old process's requests in
	// flight under those numbers. Each request goes out as the string idTag+id; its response comes back
	// to the SDK under the SDK's own id.
	idTag string

	badLog logThrottle // the log lines about bad frames (badFrame)
	flood  logThrottle // the server's progress and log notifications (received)
	// dropLog bounds the log lines about dropped notifications as badLog does for bad frames: under a
	// flood one followed every notification that passed (a thousand lines a second); unlogged counts the
	// drops not yet logged.
	dropLog  logThrottle
	unlogged atomic.Uint64
}

func newWireTap(s *Session, g *generation) *wireTap {
	return &wireTap{s: s, g: g, outgoing: map[jsonrpc.ID]*outgoingCall{}, byRPC: map[jsonrpc.ID]*serverRequestRef{}, ackCh: make(chan struct{})}
}

// acked records a notifications/subscriptions/acknowledged (2026-07-28 subscriptions/listen).
func (t *wireTap) acked() {
	t.mu.Lock()
	t.acks++
	close(t.ackCh)
	t.ackCh = make(chan struct{})
	t.mu.Unlock()
}

// ackCount returns the number of acknowledgements so far.
func (t *wireTap) ackCount() uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.acks
}

// waitAck waits until more than n acknowledgements have arrived, for at most d or until ctx ends. A
// server that does not acknowledge (it SHOULD) costs the wait; the subscription stands anyway.
func (t *wireTap) waitAck(ctx context.Context, n uint64, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		t.mu.Lock()
		got, ch := t.acks, t.ackCh
		t.mu.Unlock()
		if got > n {
			return true
		}
		select {
		case <-ch:
		case <-timer.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// sent records an outgoing message. For a task-augmented tools/call on a handshake-era session it returns
// the request with params.task added (the SDK's CallToolParams has no such field).
func (t *wireTap) sent(ctx context.Context, msg jsonrpc.Message) jsonrpc.Message {
	t.trace(ctx, "send", msg, "", 0)
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return msg
	}
	if !req.IsCall() {
		if t.idTag != "" && req.Method == "notifications/cancelled" {
			// The cancelled request goes by the id the server knows it under.
			var p struct {
				RequestID any `json:"requestId"`
			}
			if json.Unmarshal(req.Params, &p) == nil && p.RequestID != nil {
				if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
					if params, err := setParam(req.Params, "requestId", t.idTag+idString(id)); err == nil {
						return &jsonrpc.Request{Method: req.Method, Params: params, Extra: req.Extra}
					}
				}
			}
		}
		return msg
	}
	call := callFrom(ctx)
	if req.Method == discoverAlias {
		req = &jsonrpc.Request{ID: req.ID, Method: "server/discover", Params: req.Params, Extra: req.Extra}
		msg = req
	}
	rec := &outgoingCall{method: req.Method, call: call, sent: time.Now()}
	if t.idTag != "" {
		if tagged, err := jsonrpc.MakeID(t.idTag + idString(req.ID)); err == nil {
			rec.origID = req.ID
			req = &jsonrpc.Request{ID: tagged, Method: req.Method, Params: req.Params, Extra: req.Extra}
			msg = req
		}
	}
	t.mu.Lock()
	t.outgoing[req.ID] = rec
	t.mu.Unlock()
	if call != nil && req.Method == "tools/call" && (call.opts.TaskTTL > 0 || call.opts.Task) && !t.s.Info().modern() && t.g.toolTasks() {
		meta := map[string]any{} // TaskMetadata: without ttl the server decides
		if call.opts.TaskTTL > 0 {
			meta["ttl"] = call.opts.TaskTTL.Milliseconds()
		}
		if p, err := setParam(req.Params, "task", meta); err == nil {
			return &jsonrpc.Request{ID: req.ID, Method: req.Method, Params: p, Extra: req.Extra}
		}
	}
	return msg
}

// observe counts one message of n bytes on the wire for the metrics (Session.ObserveMessage).
func (t *wireTap) observe(sent bool, n int) {
	if t.s != nil { // a tap without a session is a unit test's
		t.s.ObserveMessage(sent, n)
	}
}

// sendFailed forgets an outgoing request that never reached the server.
func (t *wireTap) sendFailed(msg jsonrpc.Message) {
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		t.mu.Lock()
		delete(t.outgoing, req.ID)
		t.mu.Unlock()
	}
}

// received processes an incoming message. origin is the call whose response stream carried it (Streamable
// HTTP), or nil. It returns the message to deliver to the SDK, or false to drop it.
func (t *wireTap) received(msg jsonrpc.Message, origin *activeCall) (jsonrpc.Message, bool) {
	switch m := msg.(type) {
	case *jsonrpc.Response:
		if m.Error == nil && JSONTooDeep(m.Result, MaxNestingDepth) { // walls.go: the server's bad message
			t.s.reportBad(&t.badLog, false, "nested too deeply", "max_depth", MaxNestingDepth)
			data, _ := json.Marshal(map[string]string{localErrorMarker: "nested too deeply"})
			m = &jsonrpc.Response{ID: m.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
				Message: fmt.Sprintf("the server's response was nested deeper than %d levels", MaxNestingDepth), Data: data}, Extra: m.Extra}
			msg = m
		}
		if m.Error == nil && bytes.Contains(m.Result, []byte(`"inputRequests"`)) {
			if r, ok := normalizeInputRequests(m.Result); ok {
				m = &jsonrpc.Response{ID: m.ID, Result: r, Extra: m.Extra}
				msg = m
			}
		}
		t.mu.Lock()
		rec := t.outgoing[m.ID]
		delete(t.outgoing, m.ID)
		t.mu.Unlock()
		if rec != nil && rec.origID.IsValid() {
			m = &jsonrpc.Response{ID: rec.origID, Result: m.Result, Error: m.Error, Extra: m.Extra}
			msg = m
		}
		if rec != nil {
			t.trace(context.Background(), "receive", m, rec.method, time.Since(rec.sent))
		} else {
			t.trace(context.Background(), "receive", m, "", 0)
		}
		if rec == nil {
			if isLocalError(m.Error) {
				return nil, false // a synthesized answer for a request we are not waiting for
			}
			return msg, true
		}
		if rec.call != nil {
			rec.call.sawResponse(m.Error)
			if rec.method == "tools/list" && m.Error == nil && len(m.Result) > LargeListBytes {
				t.s.holdLargeList(rec.call) // largelist.go: before the SDK decodes it, whatever the transport
			}
		}
		if (rec.method == "initialize" || rec.method == "server/discover") && m.Error == nil {
			var r struct {
				Capabilities json.RawMessage `json:"capabilities"`
			}
			if json.Unmarshal(m.Result, &r) == nil && len(r.Capabilities) > 0 {
				t.g.rawCaps.Store(newRawCapabilities(r.Capabilities))
			}
		}
		if rec.method == "tools/list" && m.Error == nil && hasToolExecution(m.Result) {
			if r, ok := carryToolExecution(m.Result); ok {
				msg = &jsonrpc.Response{ID: m.ID, Result: r, Extra: m.Extra}
			}
		}
		if rec.method == "tools/call" && rec.call != nil && rec.call.taskOK && m.Error == nil && bytes.Contains(m.Result, []byte(`"task`)) {
			if raw, ok := taskFromResult(m.Result); ok {
				rec.call.setTask(raw)
			}
		}
		return msg, true
	case *jsonrpc.Request:
		t.trace(context.Background(), "receive", m, "", 0)
		if m.IsCall() {
			switch m.Method {
			case "sampling/createMessage", "elicitation/create", "roots/list":
				// A request is tied to a call only with certainty: it came on that call's response stream
				// (Streamable HTTP). Over stdio and SSE a pushed request names no request of the client,
				// and the call that happens to be in flight may have nothing to do with it (a server's
				// own roots/list): it belongs to the session, and outlives the calls.
				if origin == nil {
					// A request of a task names it (related-task _meta): it belongs to the core's
					// tasks/result call for that task, if one is in flight (taskinput.go).
					origin = t.s.tasks.callFor(m.Params)
				}
				r := &serverRequestRef{tap: t, rpcID: m.ID, call: origin}
				ref := t.s.refs.add(r)
				t.mu.Lock()
				t.byRPC[m.ID] = r
				t.mu.Unlock()
				if p, err := setMeta(m.Params, metaRef, ref); err == nil {
					return &jsonrpc.Request{ID: m.ID, Method: m.Method, Params: p, Extra: m.Extra}, true
				}
			}
			return msg, true
		}
		// A server's share of the bridge is bounded: progress and log notifications beyond a rate per
		// session are dropped here, before the SDK decodes them and the bridge fans them out; they are
		// counted, and the session's watchers are told how many were lost (an EventDropped) when the
		// next one passes (events.go).
		if m.Method == "notifications/progress" || m.Method == "notifications/message" {
			ok, dropped := t.flood.allow(notificationBurst, time.Second/notificationRate)
			if !ok {
				if t.s.core != nil {
					t.s.core.stats.notificationsDropped.Add(1)
				}
				return nil, false
			}
			if dropped > 0 {
				t.unlogged.Add(dropped)
				if ok, _ := t.dropLog.allow(badFrameLogBurst, badFrameLogWindow); ok {
					t.s.logger.Warn("server notifications dropped: over the rate a session may send", "dropped", t.unlogged.Swap(0), "rate", notificationRate)
				}
				if t.s.events != nil {
					t.s.events.publish(Event{Kind: EventDropped, Dropped: dropped})
				}
			}
		}
		// A list_changed drops the server's cached lists before anyone hears of it (listcache.go).
		if t.s.core != nil {
			t.s.core.lists.listChanged(t.s.server.Name, m.Method)
		}
		if !t.s.handlers.notification(m.Method, m.Params, t, origin) {
			return nil, false // the SDK does not know it; it would only log it
		}
		return msg, true
	}
	return msg, true
}

// trace logs a message at DEBUG in summary — direction, kind, method, JSON-RPC id, for a response the
// method it answers and the round trip's duration, for an error its code — never params, results or
// _meta, which may hold what hosts and servers exchange. It costs nothing when DEBUG is off.
func (t *wireTap) trace(ctx context.Context, direction string, msg jsonrpc.Message, answers string, took time.Duration) {
	if t.s == nil || !t.s.logger.Enabled(ctx, slog.LevelDebug) {
		return // a tap without a session is a unit test's
	}
	attrs := make([]slog.Attr, 0, 6)
	attrs = append(attrs, slog.String("direction", direction))
	switch m := msg.(type) {
	case *jsonrpc.Request:
		kind := "notification"
		if m.IsCall() {
			kind = "request"
		}
		attrs = append(attrs, slog.String("kind", kind), slog.String("method", m.Method))
		if m.IsCall() {
			attrs = append(attrs, slog.Any("id", m.ID.Raw()))
		}
	case *jsonrpc.Response:
		attrs = append(attrs, slog.String("kind", "response"), slog.Any("id", m.ID.Raw()))
		if answers != "" {
			attrs = append(attrs, slog.String("method", answers), slog.Duration("duration", took))
		}
		var we *jsonrpc.Error
		if errors.As(m.Error, &we) {
			attrs = append(attrs, slog.Int64("error_code", we.Code))
		} else if m.Error != nil {
			attrs = append(attrs, slog.Bool("error", true))
		}
	}
	t.s.logger.LogAttrs(ctx, slog.LevelDebug, "mcp message", attrs...)
}

// normalizeInputRequests gives every input request of an input_required result (MCP 2026-07-28 MRTR) that
// has no params an empty params object, and reports whether it changed anything. Params are optional in
// the spec (the Python SDK sends {"method":"roots/list"}), but go-sdk v1.8.0's InputRequestMap.UnmarshalJSON
// fails on a missing params, which would make the whole result undecodable.
func normalizeInputRequests(result json.RawMessage) (json.RawMessage, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(result, &obj) != nil {
		return nil, false
	}
	var reqs map[string]map[string]json.RawMessage
	if raw, ok := obj["inputRequests"]; !ok || json.Unmarshal(raw, &reqs) != nil {
		return nil, false
	}
	changed := false
	for _, r := range reqs {
		if r == nil {
			continue
		}
		if p, ok := r["params"]; !ok || bytes.Equal(bytes.TrimSpace(p), []byte("null")) {
			r["params"] = json.RawMessage("{}")
			changed = true
		}
	}
	if !changed {
		return nil, false
	}
	raw, err := json.Marshal(reqs)
	if err != nil {
		return nil, false
	}
	obj["inputRequests"] = raw
	out, err := json.Marshal(obj)
	if err != nil {
		return nil, false
	}
	return out, true
}

// requestRefs are the references of server requests on their way from the wire tap to a handler
// (Session.refs): the tap registers each request under a reference unique in the session (add) and the
// session's receiving middleware finds it in the request's _meta (take). Safe for concurrent use.
type requestRefs struct {
	m   sync.Map // string → *serverRequestRef
	seq atomic.Uint64
}

// add registers r under a new reference, unique in the session.
func (rs *requestRefs) add(r *serverRequestRef) string {
	ref := strconv.FormatUint(rs.seq.Add(1), 10)
	rs.m.Store(ref, r)
	return ref
}

// take removes the reference a handler found in its params' _meta and returns what it names.
func (rs *requestRefs) take(meta map[string]any) *serverRequestRef {
	v, ok := meta[metaRef]
	if !ok {
		return nil
	}
	delete(meta, metaRef)
	ref, _ := v.(string)
	r, ok := rs.m.LoadAndDelete(ref)
	if !ok {
		return nil
	}
	return r.(*serverRequestRef)
}

// drop forgets the references of server requests of an ended connection whose handlers never ran.
func (rs *requestRefs) drop(t *wireTap) {
	rs.m.Range(func(k, v any) bool {
		if v.(*serverRequestRef).tap == t {
			rs.m.Delete(k)
		}
		return true
	})
}

// setPending records the pending request raised for r, so a server cancellation can name it.
func (r *serverRequestRef) setPending(id string) {
	r.tap.mu.Lock()
	r.pendingID = id
	r.tap.mu.Unlock()
}

// done forgets r once its handler returned.
func (r *serverRequestRef) done() {
	if r == nil {
		return
	}
	r.tap.mu.Lock()
	if r.tap.byRPC[r.rpcID] == r {
		delete(r.tap.byRPC, r.rpcID)
	}
	r.tap.mu.Unlock()
}

// serverCancelled publishes EventCancelled for a server's notifications/cancelled naming one of its
// requests to the client; the SDK cancels the handler's context, which ends the pending request.
func (t *wireTap) serverCancelled(params json.RawMessage) {
	var p struct {
		RequestID any    `json:"requestId"`
		Reason    string `json:"reason"`
	}
	if json.Unmarshal(params, &p) != nil {
		return
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil {
		return
	}
	t.mu.Lock()
	var pendingID string
	if r, ok := t.byRPC[id]; ok {
		pendingID = r.pendingID
	}
	t.mu.Unlock()
	if pendingID != "" {
		t.s.events.publish(Event{Kind: EventCancelled, CancelledRequestID: pendingID, Reason: p.Reason})
	}
}

// badFrame handles a frame from the server that is too large or not valid JSON-RPC: it is counted and
// logged, and when its id can be read from its beginning the request it answers fails with a local
// error (a server request gets an error response instead). It returns the message to deliver, or nil.
func (t *wireTap) badFrame(prefix []byte, size int, oversized bool, cause error, reply func(jsonrpc.Message)) jsonrpc.Message {
	what := "malformed"
	if oversized {
		what = "oversized"
	}
	t.s.reportBad(&t.badLog, oversized, what, "bytes", size, "error", cause, "start", preview(prefix))
	id, isRequest, ok := salvageID(prefix)
	if !ok {
		return nil
	}
	if isRequest {
		if reply != nil {
			reply(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "message is " + what}})
		}
		return nil
	}
	t.mu.Lock()
	_, waiting := t.outgoing[id]
	t.mu.Unlock()
	if !waiting {
		return nil
	}
	data, _ := json.Marshal(map[string]string{localErrorMarker: what})
	return &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the server's response was " + what, Data: data}}
}

func isLocalError(err error) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we) && bytes.Contains(we.Data, []byte(localErrorMarker))
}

var (
	idPattern     = regexp.MustCompile(`"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?[0-9]+)`)
	methodPattern = regexp.MustCompile(`"method"\s*:`)
)

// salvageID reads the JSON-RPC id from the beginning of a bad frame.
func salvageID(prefix []byte) (id jsonrpc.ID, isRequest, ok bool) {
	m := idPattern.FindSubmatch(prefix)
	if m == nil {
		return id, false, false
	}
	var v any
	if m[1][0] == '"' {
		var s string
		if json.Unmarshal(m[1], &s) != nil {
			return id, false, false
		}
		v = s
	} else {
		n, err := strconv.ParseInt(string(m[1]), 10, 64)
		if err != nil {
			return id, false, false
		}
		v = float64(n)
	}
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		return id, false, false
	}
	return id, methodPattern.Match(prefix), true
}

func preview(b []byte) string {
	const n = 120
	if len(b) > n {
		b = b[:n]
	}
	return string(bytes.ToValidUTF8(b, []byte("?")))
}

// setParam returns params (a JSON object or empty) with key set to v.
func setParam(params json.RawMessage, key string, v any) (json.RawMessage, error) {
	obj := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(params)) > 0 && !bytes.Equal(bytes.TrimSpace(params), []byte("null")) {
		if err := json.Unmarshal(params, &obj); err != nil {
			return nil, err
		}
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	obj[key] = raw
	return json.Marshal(obj)
}

// setMeta returns params with _meta[key] = v.
func setMeta(params json.RawMessage, key string, v any) (json.RawMessage, error) {
	obj := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(params)) > 0 && !bytes.Equal(bytes.TrimSpace(params), []byte("null")) {
		if err := json.Unmarshal(params, &obj); err != nil {
			return nil, err
		}
	}
	meta := map[string]any{}
	if raw, ok := obj["_meta"]; ok {
		if err := json.Unmarshal(raw, &meta); err != nil || meta == nil {
			meta = map[string]any{}
		}
	}
	meta[key] = v
	raw, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	obj["_meta"] = raw
	return json.Marshal(obj)
}

// trackTransport wraps a transport whose connections the core may wrap (in-memory, HTTP+SSE).
type trackTransport struct {
	inner mcp.Transport
	tap   *wireTap
}

func (t *trackTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &trackConn{inner: c, tap: t.tap}, nil
}

// trackConn runs the wire tap on a wrapped connection.
type trackConn struct {
	inner mcp.Connection
	tap   *wireTap
}

func (c *trackConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.inner.Read(ctx)
		if err != nil {
			c.tap.g.markDead(fmt.Sprintf("connection lost: %v", err))
			return nil, err
		}
		c.tap.observe(false, 0) // the wrapped transport knows sizes; this counts messages
		if out, ok := c.tap.received(msg, nil); ok {
			return out, nil
		}
	}
}

func (c *trackConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	out := c.tap.sent(ctx, msg)
	err := c.inner.Write(ctx, out)
	if err != nil {
		c.tap.sendFailed(msg)
	} else {
		c.tap.observe(true, 0)
	}
	return err
}

func (c *trackConn) Close() error      { return c.inner.Close() }
func (c *trackConn) SessionID() string { return c.inner.SessionID() }

// idString renders a JSON-RPC id (an integer or a string) as text, for a tagged id (wireTap.idTag).
func idString(id jsonrpc.ID) string {
	switch v := id.Raw().(type) {
	case int64:
		return strconv.FormatInt(v, 10)
	case string:
		return v
	}
	return fmt.Sprint(id.Raw())
}
