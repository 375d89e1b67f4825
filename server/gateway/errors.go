package gateway

import (
	"context"
	"errors"
	"net/http"
	"strconv"
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
	runtime.DefaultHTTPErrorHandler(ctx, mux, m, w, r, err)
}

// setRetryAfter gives a REST answer of RESOURCE_EXHAUSTED with google.rpc.RetryInfo a Retry-After
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
