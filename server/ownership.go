package server

import (
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
	"github.com/mcp-bridge/mcp-bridge/mcpcore/ownership"
)

// Which replica serves a session is decided by mcpcore/ownership (docs/adr/0070-replicas-share-state.md,
// docs/adr/0103-one-owner-for-session-ownership.md): the session table (tracked.go, lookup) asks it for the session a call names,
// CreateSession whether a session may be opened, and the host streams whether an event ends them because
// the session moved. Its refusals become statuses in errors.go (ownershipStatus).

// replicaRouting is the service's link to the owner of its sessions among the replicas. Service embeds it.
type replicaRouting struct {
	s     *Service
	owner *ownership.Owner // who serves a session among the replicas
}

// movedError is the error that ends a host stream (Connect, WatchEvents) instead of ev, the final state
// event of a session this replica gave up to another: UNAVAILABLE SESSION_MOVED, and the host connects
// again through the proxy. nil for any other event.
func (rr *replicaRouting) movedError(ev mcpcore.Event) error {
	s := rr.s
	return toStatus(s.owner.Moved(ev))
}

// hiddenByMove reports whether ev, an event of a session this replica gave up to another, is one the host
// must not see (ownership.Owner.HiddenByMove).
func (rr *replicaRouting) hiddenByMove(ev mcpcore.Event) bool { return rr.s.owner.HiddenByMove(ev) }

// Owner is the owner of the service's sessions among the replicas (takeovers, misrouted calls).
func (rr *replicaRouting) Owner() *ownership.Owner { return rr.s.owner }
