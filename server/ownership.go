package server

import (
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
	"github.com/mcp-bridge/mcp-bridge/mcpcore/ownership"
)

// Which replica serves a session is decided by mcpcore/ownership (docs/adr/0070-replicas-share-state.md,
// docs/adr/0103-one-owner-for-session-ownership.md): Service.lookup asks it for the session a call names,
// CreateSession whether a session may be opened, and the host streams whether an event ends them because
// the session moved. Its refusals become statuses in errors.go (ownershipStatus).

// movedError is the error that ends a host stream (Connect, WatchEvents) instead of ev, the final state
// event of a session this replica gave up to another: UNAVAILABLE SESSION_MOVED, and the host connects
// again through the proxy. nil for any other event.
func (s *Service) movedError(ev mcpcore.Event) error {
	return toStatus(s.owner.Moved(ev))
}

// hiddenByMove reports whether ev, an event of a session this replica gave up to another, is one the host
// must not see (ownership.Owner.HiddenByMove).
func (s *Service) hiddenByMove(ev mcpcore.Event) bool { return s.owner.HiddenByMove(ev) }

// Owner is the owner of the service's sessions among the replicas (takeovers, misrouted calls).
func (s *Service) Owner() *ownership.Owner { return s.owner }
