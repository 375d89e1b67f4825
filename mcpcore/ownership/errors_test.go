package ownership

import (
	"errors"
	"testing"

	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// Every refusal wraps its sentinel, and ErrMoved is the core's: a call cut short by a move and a call
// refused because the session is moving read alike.
func TestRefusalsWrapTheirSentinels(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want error
	}{
		{"wrong replica", wrongReplica("s-r2.x", "r2", "r1"), ErrWrongReplica},
		{"one name, two processes", nameShared("s-r1.x", "r1"), ErrWrongReplica},
		{"still held", stillHeld("s-r1.x", "r2", "r1"), mcpcore.ErrSessionMoved},
		{"moved away", movedAway("s-r1.x", "r1"), ErrMoved},
		{"store unavailable", storeUnavailable(), ErrStoreUnavailable},
	} {
		var oe *Error
		if !errors.Is(c.err, c.want) || !errors.As(c.err, &oe) || oe.Message == "" {
			t.Errorf("%s: %v does not wrap %v as an *Error", c.name, c.err, c.want)
		}
	}
}
