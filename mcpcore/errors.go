package mcpcore

import (
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// ErrBadMessage is wrapped when the server sent something the core could not use: a frame over
// Limits.MaxMessageBytes, malformed JSON-RPC, or a result of the wrong shape. The frame is counted
// (Core.Stats) and logged; only the request it belonged to fails.
var ErrBadMessage = errors.New("bad message from the server")

// UpstreamCode returns the JSON-RPC error code when err carries an error the server returned
// (a *jsonrpc.Error, possibly wrapped). Errors the core synthesized for bad frames are not upstream errors.
func UpstreamCode(err error) (int64, bool) {
	var we *jsonrpc.Error
	if errors.As(err, &we) && !isLocalError(we) {
		return we.Code, true
	}
	return 0, false
}
