package mcpcore

import (
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// callAttempt is what the wire tap saw of the current request of a host call: it is how the core tells
// an error the server sent from one the SDK or the core made up (classify).
type callAttempt struct {
	result   bool             // the server sent a result
	errors   []*jsonrpc.Error // JSON-RPC errors the server sent (a response, or an HTTP error body)
	lostSess bool             // the HTTP server refused the request: it had lost the session
	// retryAfter is when the HTTP server said to try again, refusing the request as busy (429 or 503 with
	// Retry-After); 0 when it did not say.
	retryAfter time.Duration
}

// resetAttempt forgets what was seen of the previous request (run calls it before each one).
func (c *activeCall) resetAttempt() {
	c.amu.Lock()
	c.attempt = callAttempt{}
	c.amu.Unlock()
}

// sawResponse records a response from the server to one of the call's requests (err is its error, nil
// for a result).
func (c *activeCall) sawResponse(err error) {
	c.amu.Lock()
	defer c.amu.Unlock()
	var e *jsonrpc.Error
	if err == nil || !errors.As(err, &e) {
		c.attempt.result = err == nil
		return
	}
	if len(c.attempt.errors) < 4 {
		c.attempt.errors = append(c.attempt.errors, e)
	}
}

// sawLostSession records that the HTTP server refused one of the call's requests for a lost session.
func (c *activeCall) sawLostSession() {
	c.amu.Lock()
	c.attempt.lostSess = true
	c.amu.Unlock()
}

// sawRetryAfter records that the HTTP server refused the call's request as busy and said when to try again.
func (c *activeCall) sawRetryAfter(d time.Duration) {
	c.amu.Lock()
	c.attempt.retryAfter = d
	c.amu.Unlock()
}

// retryAfter is what sawRetryAfter recorded of the current request, 0 if nothing.
func (c *activeCall) retryAfter() time.Duration {
	c.amu.Lock()
	defer c.amu.Unlock()
	return c.attempt.retryAfter
}

// fromServer reports whether the server sent e (same code and message) for the current request.
func (c *activeCall) fromServer(e *jsonrpc.Error) bool {
	c.amu.Lock()
	defer c.amu.Unlock()
	for _, w := range c.attempt.errors {
		if w.Code == e.Code && w.Message == e.Message {
			return true
		}
	}
	return false
}

// answered reports whether the server sent a result for the current request.
func (c *activeCall) answered() bool {
	c.amu.Lock()
	defer c.amu.Unlock()
	return c.attempt.result
}

// refusedLost reports whether the HTTP server refused the current request because it lost the session:
// the request never ran, so it may be sent again on a new session.
func (c *activeCall) refusedLost() bool {
	c.amu.Lock()
	defer c.amu.Unlock()
	return c.attempt.lostSess
}

// noteUnanswered records that the server request id of the call reached its deadline unanswered.
func (c *activeCall) noteUnanswered(id string) {
	c.amu.Lock()
	c.unanswered = id
	c.amu.Unlock()
}

// unansweredRequest returns the id given to noteUnanswered, or "".
func (c *activeCall) unansweredRequest() string {
	c.amu.Lock()
	defer c.amu.Unlock()
	return c.unanswered
}
