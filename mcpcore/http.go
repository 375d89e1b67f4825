package mcpcore

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/net/http/httpguts"
)

// transport returns the transport for a new generation of s.
func (s *Session) transport(g *generation, tap *wireTap) (mcp.Transport, error) {
	cfg := s.server
	max := s.core.limits.MaxMessageBytes
	switch cfg.Transport {
	case TransportStdio:
		return &stdioTransport{s: s, g: g, tap: tap}, nil
	case TransportStreamableHTTP:
		ra := s.reattachNext.Swap(nil) // a restored session's first connection (reattach.go)
		if ra != nil && tap != nil {
			tap.idTag = "b" + rand.Text()[:8] + "-" // unique among the bridge processes that used the session
		}
		base := s.core.httpTransport()
		if cfg.H2C {
			base = s.core.h2cTransport()
		}
		oauth, base, err := s.auth.authorize(base)
		if err != nil {
			return nil, err
		}
		hc := &http.Client{Transport: &httpTap{base: base, headers: cfg.Headers, tap: tap, max: max, reattach: ra, pace: newStreamPace(max)}}
		return &mcp.StreamableClientTransport{
			Endpoint:     cfg.URL,
			HTTPClient:   hc,
			OAuthHandler: oauth,
			// The tap bounds frames first; the SDK's bound is a backstop above it.
			MaxEventSize: max + 64<<10,
		}, nil
	case TransportSSE:
		if _, _, err := s.auth.authorize(nil); err != nil {
			return nil, err // OAuth is for Streamable HTTP only
		}
		hc := &http.Client{Transport: &httpTap{base: s.core.httpTransport(), headers: cfg.Headers, max: max}}
		return &trackTransport{inner: &mcp.SSEClientTransport{Endpoint: cfg.URL, HTTPClient: hc, MaxEventSize: max}, tap: tap}, nil
	case transportTest:
		t, err := s.core.testDial(cfg)
		if err != nil {
			return nil, err
		}
		return &trackTransport{inner: t, tap: tap}, nil
	}
	return nil, fmt.Errorf("unknown transport %q", cfg.Transport)
}

// transportTest is a transport kind only tests use: Core.testDial supplies the transport.
const transportTest TransportKind = "test"

// httpTransport is the core's shared HTTP transport; Close releases its idle connections.
func (c *Core) httpTransport() http.RoundTripper {
	c.httpOnce.Do(func() {
		c.http = http.DefaultTransport.(*http.Transport).Clone()
	})
	return c.http
}

// h2cTransport is the core's shared transport for servers configured for h2c: HTTP/2 with prior knowledge
// over cleartext. Every session's requests and long-lived streams to such a server are streams of the same
// connection (more open when the server's stream limit is reached), instead of an HTTP/1.1 connection each,
// with its two goroutines and buffers, held by every idle session.
func (c *Core) h2cTransport() http.RoundTripper {
	c.h2cOnce.Do(func() {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.Protocols = new(http.Protocols)
		t.Protocols.SetUnencryptedHTTP2(true)
		c.h2c = t
	})
	return c.h2c
}

// httpTap is the RoundTripper of the core's HTTP transports. It adds the configured headers (secrets:
// never logged) and, when tap is set (Streamable HTTP), runs the wire tap on every message: POST bodies
// going out, JSON and SSE bodies coming in. It bounds incoming frames to max bytes.
type httpTap struct {
	base    http.RoundTripper
	headers map[string]string
	tap     *wireTap
	max     int
	pace    *streamPace // the read budget of the connection's SSE streams (ssepace.go)
	// reattach, on a restored session's first connection, answers the SDK's initialize with the server's
	// kept session (reattach.go).
	reattach *reattachState
}

func (h *httpTap) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	InjectTraceHeaders(req.Context(), req.Header)
	if h.tap == nil {
		h.configured(req)
		return h.base.RoundTrip(req)
	}
	if h.tap.s.core.keeping() {
		// The session is kept for the next process (durable.go): the server keeps its session and the
		// requests it waits for, for the restored session to re-attach to (reattach.go). Nothing more is
		// said to it: the SDK's DELETE on close is answered here, and anything else is refused unsent — a
		// reply a held handler gives up with, a notifications/cancelled of a call cut by freeze.
		if req.Method == http.MethodDelete {
			return &http.Response{Status: "202 Accepted", StatusCode: http.StatusAccepted, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
				Header: http.Header{}, Body: http.NoBody, Request: req}, nil
		}
		return nil, errKeptForRestart
	}
	var sent jsonrpc.Message
	var sentID jsonrpc.ID // the wire id of the request posted, if it is one
	var origin *activeCall
	var fake *http.Response // the bridge's own answer to initialize when re-attaching
	if req.Method == http.MethodPost && req.Body != nil {
		body, err := io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		h.tap.observe(true, len(body))
		if msg, err := jsonrpc.DecodeMessage(body); err == nil {
			out := h.tap.sent(req.Context(), msg)
			if out != msg {
				if b, err := jsonrpc.EncodeMessage(out); err == nil {
					body = b
				}
				if r, ok := out.(*jsonrpc.Request); ok && req.Header.Get("Mcp-Method") != "" {
					req.Header.Set("Mcp-Method", r.Method) // the tap may rename (server/discover)
				}
			}
			if r, ok := out.(*jsonrpc.Request); ok && req.Header.Get("Mcp-Method") != "" && req.Header.Get("Mcp-Name") == "" {
				if name, ok := taskRouteName(r.Method, r.Params); ok {
					req.Header.Set("Mcp-Name", name) // the SDK names tools, prompts and resources only
				}
			}
			sent = msg
			if r, ok := msg.(*jsonrpc.Request); ok && r.IsCall() {
				origin = callFrom(req.Context())
			}
			if r, ok := out.(*jsonrpc.Request); ok && r.IsCall() {
				sentID = r.ID
			}
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = int64(len(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		if h.reattach != nil {
			fake = h.reattach.answerInitialize(req, body)
		}
	}
	if err := checkHeaders(req.Header); err != nil {
		// What the request carries from the host (a name, a URI, a task id in Mcp-Name; trace context)
		// cannot be sent: the host's error, refused here before net/http would, and the connection is fine.
		if sent != nil {
			h.tap.sendFailed(sent)
		}
		return nil, err
	}
	h.configured(req)
	resp, err := fake, error(nil)
	if resp == nil {
		resp, err = h.base.RoundTrip(req)
	}
	if err != nil {
		if sent != nil {
			h.tap.sendFailed(sent)
		}
		if req.Context().Err() == nil {
			// The server cannot be reached (refused, reset, DNS): the SDK would keep the connection and
			// fail each call with "rejected by transport"; supervision reconnects, with backoff, instead.
			h.tap.g.markDead("server unreachable: " + err.Error())
		}
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		h.inspectError(req, resp, origin, sent, sentID)
		return resp, nil
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		resp.Body = &jsonBodyTap{body: resp.Body, tap: h.tap, origin: origin, max: h.max}
	case "text/event-stream":
		resp.Body = h.sseBody(req, resp.Body, origin, sentID)
	}
	return resp, nil
}

// sseBody wraps the SSE response body of req in the tap, read at the connection's stream budget
// (ssepace.go). origin and reqID are the call and the wire id of the request a POST's stream answers.
func (h *httpTap) sseBody(req *http.Request, body io.ReadCloser, origin *activeCall, reqID jsonrpc.ID) *sseTap {
	return &sseTap{body: body, br: bufio.NewReaderSize(body, sseReadBuffer), tap: h.tap, origin: origin, max: h.max, reqID: reqID,
		pace: h.pace.stream(req.Context(), req.Method)}
}

// errKeptForRestart refuses what a session kept for the next process would still send (httpTap).
var errKeptForRestart = errors.New("not sent: the bridge is restarting and keeps the server's session")

// maxErrorBody bounds how much of an HTTP error response the tap reads to classify it.
const maxErrorBody = 64 << 10

// inspectError looks at an HTTP error response of the Streamable HTTP transport before the SDK does. A
// JSON-RPC error in its body is the server's answer to the call (recorded on origin, so that classify
// reports it as the server's). A request that carried a session id and was refused because the server
// does not know that session — 404, as MCP 2025-11-25 (transports, session management) requires, or 400
// naming the session, as some servers answer — means the server lost the session (a restart): the
// connection is marked lost and supervision re-initializes at once; the request never ran, so run sends
// it again. Whatever JSON-RPC code the server used for it (-32001, -32600, -32000) does not matter.
// Any other refusal of a posted message is that message's failure, never the connection's (refused).
func (h *httpTap) inspectError(req *http.Request, resp *http.Response, origin *activeCall, sent jsonrpc.Message, sentID jsonrpc.ID) {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	rpcErr, withID := errorBody(body)
	if d, ok := retryAfter(resp); ok && origin != nil {
		origin.sawRetryAfter(d) // the call fails ErrUnavailable, and the host is told when to try again
	}
	if req.Header.Get("Mcp-Session-Id") != "" {
		lost := resp.StatusCode == http.StatusNotFound ||
			(resp.StatusCode == http.StatusBadRequest && mentionsSession(body))
		if lost {
			if origin != nil {
				origin.sawLostSession()
			}
			h.tap.g.lost.Store(true)
			h.tap.g.markDead("server lost the session")
			return
		}
	}
	if rpcErr != nil && origin != nil {
		origin.sawResponse(rpcErr)
	}
	if sent != nil && !withID && refusedAlone(resp.StatusCode) {
		h.refused(resp, rpcErr, sent, sentID)
	}
}

// MaxRetryAfter bounds the delay a server's Retry-After can ask a host for (RetryAfterError): a server may
// say anything, and a host that obeys it should not wait longer than this for the bridge's word.
const MaxRetryAfter = time.Hour

// retryAfter reads the Retry-After of a response refusing a request as busy (429 Too Many Requests, 503
// Service Unavailable): delta-seconds or an HTTP-date (RFC 9110 10.2.3), at most MaxRetryAfter. A date in
// the past is "now" (0 is reported as one second: a host is told to wait, however little).
func retryAfter(resp *http.Response) (time.Duration, bool) {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
		return 0, false
	}
	v := strings.TrimSpace(resp.Header.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	var d time.Duration
	if secs, err := strconv.ParseUint(v, 10, 64); err == nil {
		d = time.Duration(min(secs, uint64(MaxRetryAfter/time.Second))) * time.Second
	} else if at, err := http.ParseTime(v); err == nil {
		d = time.Until(at)
	} else {
		return 0, false
	}
	return min(max(d, time.Second), MaxRetryAfter), true
}

// refusedAlone reports whether an HTTP error status answering a posted message is the failure of that message
// alone: a 4xx other than 401 and 403 (the authorization flow's: authorization.go and the SDK) and 429
// (which the SDK already fails as transient, ErrUnavailable, keeping the connection). MCP's Streamable HTTP
// transport (2025-11-25, "Sending Messages to the Server") answers a request with JSON or SSE, and a
// notification or response it cannot accept with an HTTP error status such as 400, whose body MAY be a
// JSON-RPC error response without an id (many servers answer requests so too). The lost session's 404 is
// decided before (inspectError).
func refusedAlone(code int) bool {
	return code/100 == 4 && code != http.StatusUnauthorized && code != http.StatusForbidden && code != http.StatusTooManyRequests
}

// refused rewrites a refusal that the SDK cannot tie to the request — a plain body, or a JSON-RPC error
// without an id — into a JSON-RPC error response with the request's id, which the SDK fails the request
// with (wrapped in its "rejected by transport", so the connection is kept), where it would otherwise fail
// the connection and supervision would re-initialize the session. The server's own JSON-RPC error stays
// the server's (UPSTREAM_ERROR: origin saw it); a request's status without one is the server's unusable
// answer — the transport answers requests with JSON or SSE — counted and logged as a bad message (502
// UPSTREAM_BAD_MESSAGE through classify's local error). A notification's or response's is the spec's
// refusal: the SDK's caller gets it, nothing is counted.
func (h *httpTap) refused(resp *http.Response, rpcErr *jsonrpc.Error, sent jsonrpc.Message, sentID jsonrpc.ID) {
	h.tap.sendFailed(sent)
	if rpcErr == nil {
		what := fmt.Sprintf("HTTP %d %s without a JSON-RPC error", resp.StatusCode, http.StatusText(resp.StatusCode))
		if sentID.IsValid() {
			h.tap.s.reportBad(&h.tap.badLog, false, "refused with an HTTP error status", "status", resp.StatusCode)
		}
		data, _ := json.Marshal(map[string]string{localErrorMarker: what})
		rpcErr = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the server answered " + what, Data: data}
	}
	id := sentID
	if !id.IsValid() {
		id, _ = jsonrpc.MakeID("refused") // a notification or a response: the SDK reads only the error
	}
	b, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: rpcErr})
	if err != nil {
		return
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	resp.ContentLength = int64(len(b))
	resp.Header.Set("Content-Type", "application/json")
}

// errorBody decodes the JSON-RPC error an HTTP error body carries, if any, and whether it names an id
// (without one the SDK cannot decode it: refused).
func errorBody(body []byte) (rpcErr *jsonrpc.Error, withID bool) {
	body = bytes.TrimSpace(body)
	if msg, err := jsonrpc.DecodeMessage(body); err == nil {
		if r, ok := msg.(*jsonrpc.Response); ok && r.Error != nil {
			errors.As(r.Error, &rpcErr)
			return rpcErr, true
		}
		return nil, false
	}
	var noID struct {
		Version string          `json:"jsonrpc"`
		Error   *jsonrpc.Error  `json:"error"`
		ID      json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &noID) == nil && noID.Version == "2.0" && noID.Error != nil && (len(noID.ID) == 0 || string(noID.ID) == "null") {
		return noID.Error, false
	}
	return nil, false
}

// mentionsSession reports whether an HTTP error body speaks of the session (case-insensitively).
func mentionsSession(body []byte) bool {
	return bytes.Contains(bytes.ToLower(body), []byte("session"))
}

// sseReadBuffer is the read buffer of one SSE response stream. Lines longer than it are read in fragments
// (readSSELine), so it bounds nothing, and it reads from the HTTP connection's own buffer, so its size costs
// no system calls; it is small because every idle Streamable HTTP session holds one (64 KiB here was most of
// an idle session's heap, and every call answered over SSE allocated one).
const sseReadBuffer = 1 << 10

// jsonBodyTap runs the tap over a single-message JSON response body, read lazily (the SDK reads it in its
// own goroutine; reading it in RoundTrip would hold up the SDK's writes).
type jsonBodyTap struct {
	body   io.ReadCloser
	tap    *wireTap
	origin *activeCall
	max    int

	once sync.Once
	out  *bytes.Reader
}

func (j *jsonBodyTap) Read(p []byte) (int, error) {
	j.once.Do(func() {
		data, err := j.read()
		if err != nil {
			j.out = bytes.NewReader(nil)
			return
		}
		j.tap.observe(false, len(data))
		var msg jsonrpc.Message
		if len(data) > j.max {
			msg = j.tap.badFrame(data[:min(len(data), 4<<10)], len(data), true, nil, nil)
		} else if m, derr := jsonrpc.DecodeMessage(data); derr != nil {
			msg = j.tap.badFrame(data, len(data), false, derr, nil)
		} else if out, ok := j.tap.received(m, j.origin); ok {
			if out == m {
				j.out = bytes.NewReader(data) // unchanged: the server's bytes, not a re-encoding
				return
			}
			msg = out
		}
		if msg == nil {
			// Nothing to deliver: the SDK fails the connection on the empty body and supervision
			// reconnects.
			j.out = bytes.NewReader(nil)
			return
		}
		b, _ := jsonrpc.EncodeMessage(msg)
		j.out = bytes.NewReader(b)
	})
	return j.out.Read(p)
}

// read reads the body, up to one byte over the limit. A tools/list response larger than LargeListBytes
// waits for a large-list slot before the rest is read (largelist.go).
func (j *jsonBodyTap) read() ([]byte, error) {
	var buf bytes.Buffer
	limit := int64(j.max) + 1
	if j.origin != nil && j.origin.method == "tools/list" && limit > LargeListBytes+1 {
		if _, err := buf.ReadFrom(io.LimitReader(j.body, LargeListBytes+1)); err != nil {
			return nil, err
		}
		if buf.Len() <= LargeListBytes {
			return buf.Bytes(), nil
		}
		j.tap.s.holdLargeList(j.origin) // before the rest is read: the other large lists wait with 1 MiB read
		limit -= int64(buf.Len())
	}
	_, err := buf.ReadFrom(io.LimitReader(j.body, limit))
	return buf.Bytes(), err
}

func (j *jsonBodyTap) Close() error { return j.body.Close() }

// sseTap runs the tap over an SSE body line by line, rewriting data lines: annotated server requests,
// dropped or synthesized frames. Multi-line data fields pass through untouched.
type sseTap struct {
	body   io.ReadCloser
	br     *bufio.Reader
	tap    *wireTap
	origin *activeCall
	max    int

	reqID jsonrpc.ID    // the wire id of the request this stream answers (a POST's); invalid for GET
	pace  *streamPacing // the stream's share of its connection's read budget (ssepace.go); nil: not paced
	out   []byte
	err   error
	multi bool // inside a data field of several lines (until the blank line that ends the event)
	// answer is set by transform when the line is the server's response to reqID: the budget does not
	// charge it (ssepace.go).
	answer bool
}

// failRequest fails the request this SSE stream answers (a POST's response stream) with the bridge's bad
// message error, since a frame that is not JSON names no id; nil when the stream answers none (the
// standalone GET stream) or the request was already answered.
func (s *sseTap) failRequest(what string) jsonrpc.Message {
	if !s.reqID.IsValid() {
		return nil
	}
	s.tap.mu.Lock()
	_, waiting := s.tap.outgoing[s.reqID]
	s.tap.mu.Unlock()
	if !waiting {
		return nil
	}
	data, _ := json.Marshal(map[string]string{localErrorMarker: what})
	out, ok := s.tap.received(&jsonrpc.Response{ID: s.reqID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the server's response was " + what, Data: data}}, s.origin)
	if !ok {
		return nil
	}
	return out
}

// errSSENotJSON is the cause logged for an SSE data line that is not JSON.
var errSSENotJSON = errors.New("SSE data is not JSON")

func (s *sseTap) Read(p []byte) (int, error) {
	for len(s.out) == 0 && s.err == nil {
		line, size, oversized, err := readSSELine(s.br, s.max, s.holdLargeList)
		s.answer = false
		s.out = s.transform(line, size, oversized)
		s.err = err
		if s.pace != nil && !s.answer && size > 0 { // the response to the POST is read at once (ssepace.go)
			s.pace.wait(s, size)
		}
	}
	if len(s.out) > 0 {
		n := copy(p, s.out)
		s.out = s.out[n:]
		return n, nil
	}
	return 0, s.err
}

// holdLargeList takes the large-list slot for the tools/list call a long line answers — this POST's, else
// the one the line's first bytes name — before the rest is read (largelist.go).
func (s *sseTap) holdLargeList(prefix []byte) { s.tap.holdLargeListFor(prefix, s.origin) }

func (s *sseTap) Close() error {
	if s.pace != nil {
		s.pace.stop() // wakes a Read waiting for its budget
	}
	return s.body.Close()
}

func (s *sseTap) transform(line []byte, size int, oversized bool) []byte {
	data, isData := bytes.CutPrefix(line, []byte("data:"))
	if !isData {
		if len(bytes.TrimSpace(line)) == 0 {
			s.multi = false // the event ends
		}
		return line
	}
	if oversized {
		s.tap.observe(false, size)
		return s.frame(s.tap.badFrame(bytes.TrimSpace(data), size, true, nil, nil))
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return line
	}
	if s.multi || trimmed[0] != '{' {
		if s.multi {
			return line // a later line of a multi-line data field: the SDK joins them
		}
		// Not JSON at all: the server's bad message (502 UPSTREAM_BAD_MESSAGE), not the SDK's parse error.
		s.tap.observe(false, size)
		bad := s.tap.badFrame(trimmed, size, false, errSSENotJSON, nil)
		if bad == nil {
			bad = s.failRequest("malformed")
		}
		return s.frame(bad)
	}
	s.tap.observe(false, size)
	msg, err := jsonrpc.DecodeMessage(trimmed)
	if err != nil {
		if !bytes.HasSuffix(trimmed, []byte("}")) {
			s.multi = true
			return line // probably the first line of a multi-line data field
		}
		return s.frame(s.tap.badFrame(trimmed, size, false, err, nil))
	}
	if r, ok := msg.(*jsonrpc.Response); ok && s.reqID.IsValid() && r.ID == s.reqID {
		s.answer = true
	}
	out, ok := s.tap.received(msg, s.origin)
	if !ok {
		return s.frame(nil)
	}
	if out == msg {
		return line
	}
	return s.frame(out)
}

// frame renders msg as a data line; nil becomes an empty data line, which the SDK skips.
func (s *sseTap) frame(msg jsonrpc.Message) []byte {
	if msg == nil {
		return []byte("data:\n")
	}
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return []byte("data:\n")
	}
	return append(append([]byte("data: "), b...), '\n')
}

// readSSELine reads one line, keeping at most 4 KiB of a line longer than max (oversized); an oversized
// line ends in a newline all the same, so the SSE parser sees where it ends. long, if set, is called before
// the rest of a line longer than LargeListBytes is read, with its first bytes.
func readSSELine(br *bufio.Reader, max int, long func(prefix []byte)) (line []byte, size int, oversized bool, err error) {
	line, size, oversized, err = readBoundedLineHook(br, max+16, 4<<10, LargeListBytes, long)
	if oversized && !bytes.HasSuffix(line, []byte("\n")) {
		line = append(line, '\n')
	}
	return line, size, oversized, err
}

// headerSafe refuses a name or URI that an upstream transport cannot carry: on a 2026-07-28 Streamable
// HTTP session it goes in the Mcp-Name header, where CR, LF and NUL are not allowed (RFC 9110 §5.5), and
// no MCP name or URI (RFC 3986) holds them anyway. It is the host's error, refused before anything is
// sent: the session is not touched (before, the transport's refusal read as the server being down).
func headerSafe(field, v string) error {
	if i := strings.IndexAny(v, "\r\n\x00"); i >= 0 {
		return &InvalidError{Err: errInvalidArguments, Violations: []FieldViolation{{Field: field,
			Description: fmt.Sprintf("must not contain CR, LF or NUL (found at byte %d)", i)}}}
	}
	return nil
}

// configured adds the server's configured headers (secrets: never logged) that req does not carry. They are
// the operator's, checked when the configuration loads, so they are added after checkHeaders, which judges
// what comes from the host.
func (h *httpTap) configured(req *http.Request) {
	for k, v := range h.headers {
		if req.Header.Get(k) == "" {
			req.Header.Set(k, v)
		}
	}
}

// checkHeaders refuses a request whose headers net/http would not send, by the rule net/http applies
// (httpguts: RFC 9110 field names are tokens; field values hold no control character but HTAB), as the
// host's error: the values come from what the host asked for (a name, a URI or a task id mirrored into
// Mcp-Name, trace context), and the server never saw the request. The error names the header, never its
// value. Without this the bridge could tell net/http's refusal from an unreachable server only by its error
// text (docs/adr/0110).
func checkHeaders(hdr http.Header) error {
	for k, vs := range hdr {
		if !httpguts.ValidHeaderFieldName(k) {
			return &InvalidError{Err: errInvalidArguments, Violations: []FieldViolation{{Field: "header",
				Description: "a header name derived from the request is not a valid HTTP field name"}}}
		}
		for _, v := range vs {
			if !httpguts.ValidHeaderFieldValue(v) {
				return &InvalidError{Err: errInvalidArguments, Violations: []FieldViolation{{Field: "header " + k,
					Description: "cannot be carried in this HTTP header: control characters (CR, LF, NUL, ...) are not allowed (RFC 9110 §5.5)"}}}
			}
		}
	}
	return nil
}
