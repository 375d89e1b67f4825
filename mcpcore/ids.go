package mcpcore

// The ids the core mints, each with one owner: session ids (newSessionID, parsed by SessionReplica) and
// pending-request ids (newRequestID). Everyone else asks these functions (docs/adr/0102).

import (
	"crypto/rand"
	"encoding/base32"
	"strings"
)

// newSessionID returns a new session id: "s-<replica>.<random>" with Options.Replica, else "s-<random>".
func (c *Core) newSessionID() string {
	if c.opts.Replica != "" {
		return newID("s-" + c.opts.Replica + ".")
	}
	return newID("s-")
}

// SessionReplica returns the replica named in a session id made by a core with Options.Replica set, and
// false for an id without one. It only parses: the replica need not exist.
func SessionReplica(id string) (string, bool) {
	rest, ok := strings.CutPrefix(id, "s-")
	if !ok {
		return "", false
	}
	replica, _, ok := strings.Cut(rest, ".")
	if !ok || replica == "" {
		return "", false
	}
	return replica, true
}

// requestIDEncoding renders 128 random bits as 26 lower-case characters.
var requestIDEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// newRequestID returns "req-" followed by 128 bits from crypto/rand: unguessable, so that knowing one id
// tells nothing about another.
func newRequestID() string {
	var raw [16]byte
	_, _ = rand.Read(raw[:]) // crypto/rand.Read never returns an error (Go 1.24+); it crashes instead
	var buf [4 + 26]byte
	copy(buf[:], "req-")
	requestIDEncoding.Encode(buf[4:], raw[:])
	return string(buf[:])
}
