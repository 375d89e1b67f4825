package gateway

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/status"

	"github.com/mcp-bridge/mcp-bridge/mcpcore"
	"github.com/mcp-bridge/mcp-bridge/server"
)

// ErrDrainBound is the cause with which the process cuts the REST calls still in flight when the HTTP
// drain bound passes (it cancels the HTTP server's base context with it): each then answers 503 UNAVAILABLE
// with reason SHUTTING_DOWN. It is an mcpcore.ErrShuttingDown, so the service's one error table builds
// its status.
var ErrDrainBound error = drainBound{}

type drainBound struct{}

func (drainBound) Error() string {
	return "the bridge is shutting down: the call was still running at the end of the drain"
}

func (drainBound) Is(target error) bool { return target == mcpcore.ErrShuttingDown }

// errorHandler is grpc-gateway's default error handler, except that a call cut at the drain bound
// answers 503 UNAVAILABLE "the bridge is shutting down" (reason SHUTTING_DOWN) rather than the 499 of a
// client that went away; that a status with google.rpc.RetryInfo gets a Retry-After header; and that an
// error whose reason calls for its own HTTP status gets it (server.HTTPStatus).
func errorHandler(ctx context.Context, mux *runtime.ServeMux, m runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(context.Cause(r.Context()), ErrDrainBound) {
		err = server.ToStatus(ErrDrainBound)
	}
	setRetryAfter(w, err)
	if code, ok := server.HTTPStatus(err); ok {
		err = &runtime.HTTPStatusError{HTTPStatus: code, Err: err}
	}
	runtime.DefaultHTTPErrorHandler(ctx, mux, m, w, r, err) // its WWW-Authenticate is replaced: challengeWriter
}

// BearerChallenge is the WWW-Authenticate of a 401 answer to r (RFC 6750, section 3): the Bearer scheme and
// realm, with error="invalid_token" when r presented a token (which was then not valid), and no error when it
// presented none. The description is fixed: it never repeats the token or what was wrong with it.
func BearerChallenge(r *http.Request) string {
	if scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " "); ok && strings.EqualFold(scheme, "bearer") && strings.TrimSpace(token) != "" {
		return `Bearer realm="mcp-bridge", error="invalid_token", error_description="the bearer token is not valid"`
	}
	return `Bearer realm="mcp-bridge"`
}

// challengeWriter puts the Bearer challenge on a 401, in place of the status message grpc-gateway's
// default handler sets as WWW-Authenticate (and on a stream's 401, where it sets none). New wraps every
// request's writer in one.
type challengeWriter struct {
	http.ResponseWriter
	challenge string
}

func (w *challengeWriter) WriteHeader(code int) {
	if code == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", w.challenge)
	}
	w.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the writer below.
func (w *challengeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// setRetryAfter gives a REST answer with google.rpc.RetryInfo (RESOURCE_EXHAUSTED of a rate limit, UNAVAILABLE
// of a server that refused a call as busy and said when to retry) a Retry-After
// header (whole seconds, rounded up, as RFC 9110 has it).
func setRetryAfter(w http.ResponseWriter, err error) {
	st, ok := status.FromError(err)
	if !ok {
		return
	}
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok && ri.GetRetryDelay() != nil {
			secs := int64((ri.GetRetryDelay().AsDuration() + time.Second - 1) / time.Second)
			w.Header().Set("Retry-After", strconv.FormatInt(max(secs, 1), 10))
			return
		}
	}
}
