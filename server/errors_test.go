package server

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

func TestHTTPStatus(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		code int // 0: the code's standard mapping
	}{
		{"wrong-shape result", toStatus(fmt.Errorf("%w: the server's response to tools/call", mcpcore.ErrBadMessage)), http.StatusBadGateway},
		{"the bridge's own internal error", toStatus(errors.New("secret detail")), 0},
		{"upstream unavailable", toStatus(mcpcore.ErrUnavailable), 0},
		{"not a status", errors.New("plain"), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, ok := HTTPStatus(tc.err)
			if ok != (tc.code != 0) || code != tc.code {
				t.Errorf("HTTPStatus = %d, %v; want %d", code, ok, tc.code)
			}
		})
	}
}
