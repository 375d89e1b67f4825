package mcpcore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// refusingHandler answers a tools/call of the tool "refuse" with a plain HTTP error (status from the
// call's argument, a text body, no JSON-RPC error) and serves everything else with the SDK's handler.
type refusingHandler struct{ next http.Handler }

func (h refusingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"notifications/cancelled"`)) {
			http.Error(w, "no", http.StatusBadRequest) // the spec's refusal of a notification
			return
		}
		if bytes.Contains(body, []byte(`"name":"refuse-rpc"`)) {
			// The spec's refusal: an HTTP error whose body is a JSON-RPC error response without an id.
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","error":{"code":-32602,"message":"no such task"}}`))
			return
		}
		if bytes.Contains(body, []byte(`"name":"refuse"`)) {
			code := 400
			if i := bytes.Index(body, []byte(`"status":`)); i >= 0 {
				code, _ = strconv.Atoi(string(body[i+9 : i+12]))
			}
			if _, v, ok := bytes.Cut(body, []byte(`"retryAfter":"`)); ok {
				v, _, _ = bytes.Cut(v, []byte(`"`))
				w.Header().Set("Retry-After", string(v))
			}
			http.Error(w, "the request was refused", code)
			return
		}
	}
	h.next.ServeHTTP(w, r)
}

// An HTTP error status without a JSON-RPC error, answering one request (a 4xx other than the session's
// 404 and OAuth's 401/403), fails that request as the server's bad answer (ErrBadMessage, 502
// UPSTREAM_BAD_MESSAGE); 429 is the server's transient refusal (ErrUnavailable). Neither touches the
// session: it stays READY, is not re-initialized, and the next call works. Before, the SDK failed the
// connection and supervision re-initialized the session.
func TestHTTPErrorStatusFailsOnlyItsRequest(t *testing.T) {
	for _, era := range []struct {
		name      string
		stateless bool
		pin       string
	}{{"2025-11-25", false, "2025-11-25"}, {"2026-07-28", false, "2026-07-28"}, {"2026-07-28-stateless", true, ""}} {
		t.Run(era.name, func(t *testing.T) {
			srv := newTestServer(nil, nil)
			started, release := make(chan struct{}, 1), make(chan struct{})
			srv.AddTool(&mcp.Tool{Name: "block", InputSchema: objectSchema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				started <- struct{}{}
				<-release // the server never hears of the cancellation: the test ends the handler
				return &mcp.CallToolResult{}, nil
			})
			ts := httptest.NewServer(refusingHandler{next: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
				&mcp.StreamableHTTPOptions{Stateless: era.stateless})})
			t.Cleanup(ts.Close)
			c, _ := newTestCore(t, map[string]ServerConfig{"http": {Transport: TransportStreamableHTTP, URL: ts.URL,
				Restart: RestartPolicy{MaxRestarts: DefaultMaxRestarts}}}, nil)
			s := open(t, c, "http", era.pin, allCaps)
			for _, code := range []int{400, 404, 405, 406, 409, 413, 415, 422, 429} {
				if code == 404 && !era.stateless {
					continue // 404 on a session: the server lost it (TestHTTPSessionLossReinitializes)
				}
				_, err := s.CallTool(tctx(t), &mcp.CallToolParams{Name: "refuse", Arguments: map[string]any{"status": code}}, CallOptions{})
				want := ErrBadMessage
				if code == http.StatusTooManyRequests {
					want = ErrUnavailable
				}
				if got := Classify(err); got != want {
					t.Errorf("HTTP %d: error %v (class %v), want class %v", code, err, got, want)
				}
				if st, why := s.State(); st != StateReady {
					t.Errorf("HTTP %d: session %s (%s), want READY", code, st, why)
				}
				if got := callText(t, s, "echo", map[string]any{"text": "still"}, CallOptions{}); got != "still" {
					t.Errorf("HTTP %d: next call = %q", code, got)
				}
			}
			_, err := s.CallTool(tctx(t), &mcp.CallToolParams{Name: "refuse-rpc"}, CallOptions{})
			if code, ok := UpstreamCode(err); !ok || code != -32602 {
				t.Errorf("HTTP 400 with a JSON-RPC error without id: %v, want the server's -32602", err)
			}
			if st, why := s.State(); st != StateReady {
				t.Errorf("after the JSON-RPC error: session %s (%s), want READY", st, why)
			}
			if n := c.Stats().MalformedMessages; n == 0 {
				t.Error("Stats().MalformedMessages = 0: the refusals without a JSON-RPC error were not counted")
			}
			if !era.stateless && era.pin == "2025-11-25" {
				// A notification the server refuses (notifications/cancelled of a call the host cancelled)
				// is refused alone: the connection is kept.
				ctx, cancel := context.WithCancel(tctx(t))
				errc := make(chan error, 1)
				go func() {
					_, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "block"}, CallOptions{})
					errc <- err
				}()
				<-started
				defer close(release)
				cancel()
				if err := <-errc; !errors.Is(err, context.Canceled) {
					t.Errorf("cancelled call: %v", err)
				}
				if got := callText(t, s, "echo", map[string]any{"text": "after"}, CallOptions{}); got != "after" {
					t.Errorf("after a refused notification: %q", got)
				}
				if st, why := s.State(); st != StateReady {
					t.Errorf("after a refused notification: session %s (%s), want READY", st, why)
				}
			}
			if n := s.Restarts(); n != 0 {
				t.Errorf("Restarts() = %d, want 0", n)
			}
			if n := c.Stats().Reinitialized; n != 0 {
				t.Errorf("Stats().Reinitialized = %d, want 0", n)
			}
		})
	}
}

// A server that refuses a request as busy (429, or 503) and says when to try again (Retry-After, in seconds
// or as a date) fails the call ErrUnavailable with that delay (RetryAfter), at most MaxRetryAfter; without
// the header, or with one that is neither, no delay is claimed. The session stays READY.
func TestHTTPBusyRefusalSaysWhenToRetry(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "busy", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: objectSchema}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a struct{ Text string }
		_ = json.Unmarshal(req.Params.Arguments, &a)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text}}}, nil
	})
	srv.AddTool(&mcp.Tool{Name: "refuse", InputSchema: objectSchema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	})
	ts := httptest.NewServer(refusingHandler{next: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)})
	t.Cleanup(ts.Close)
	c, _ := newTestCore(t, map[string]ServerConfig{"http": {Transport: TransportStreamableHTTP, URL: ts.URL,
		Restart: RestartPolicy{MaxRestarts: DefaultMaxRestarts}}}, nil)
	s := open(t, c, "http", "2025-11-25", allCaps)
	inAMinute := time.Now().Add(time.Minute).UTC().Format(http.TimeFormat)
	for _, tc := range []struct {
		status     int
		retryAfter string
		min, max   time.Duration // 0, 0: no delay claimed
	}{
		{429, "7", 7 * time.Second, 7 * time.Second},
		{503, "120", 2 * time.Minute, 2 * time.Minute},
		{429, inAMinute, 55 * time.Second, time.Minute},
		{429, "0", time.Second, time.Second},
		{503, "99999999999", MaxRetryAfter, MaxRetryAfter},
		{429, "", 0, 0},
		{503, "soon", 0, 0},
	} {
		args := map[string]any{"status": tc.status}
		if tc.retryAfter != "" {
			args["retryAfter"] = tc.retryAfter
		}
		_, err := s.CallTool(tctx(t), &mcp.CallToolParams{Name: "refuse", Arguments: args}, CallOptions{})
		if got := Classify(err); got != ErrUnavailable {
			t.Errorf("HTTP %d Retry-After %q: error %v (class %v), want ErrUnavailable", tc.status, tc.retryAfter, err, got)
		}
		d, ok := RetryAfter(err)
		if tc.max == 0 && ok || tc.max > 0 && (!ok || d < tc.min || d > tc.max) {
			t.Errorf("HTTP %d Retry-After %q: RetryAfter = %v, %v; want %v…%v", tc.status, tc.retryAfter, d, ok, tc.min, tc.max)
		}
		if st, why := s.State(); st != StateReady {
			t.Errorf("HTTP %d: session %s (%s), want READY", tc.status, st, why)
		}
	}
	if got := callText(t, s, "echo", map[string]any{"text": "still"}, CallOptions{}); got != "still" {
		t.Errorf("the next call = %q", got)
	}
}
