package mcpcore

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file holds the session's log level, which behaves alike on both protocol eras
// (docs/adr/0006-log-level.md): a level set at Open (OpenParams.LogLevel) or by SetLogLevel applies to
// every connection of the session — on the handshake era as logging/setLevel after each handshake, on
// 2026-07-28 as _meta["io.modelcontextprotocol/logLevel"] on every request (Session.meta) — and SetLogLevel
// fails with ErrCapabilityMissing on either era when the server declares no logging capability.

// SetLogLevel sets the level of log messages the server sends (EventLog, CallOptions.OnLog), for the
// rest of the session, reconnections included. On the handshake era it sends logging/setLevel; on
// 2026-07-28, which removed logging/setLevel, the level is sent as
// _meta["io.modelcontextprotocol/logLevel"] on every later request, which is how that era asks for log
// messages. On either era it fails with ErrCapabilityMissing when the server declares no logging
// capability (MCP 2025-11-25 server/utilities/logging: servers that emit log messages declare it).
func (s *Session) SetLogLevel(ctx context.Context, level mcp.LoggingLevel) error {
	return s.call(ctx, "logging/setLevel", "", CallOptions{}, true, func(ctx context.Context, g *generation, _ *activeCall) error {
		if err := requireCap(g.serverCaps().Logging != nil, "logging"); err != nil {
			return err
		}
		if !g.modern() {
			if err := g.cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: level}); err != nil {
				return err
			}
		}
		s.mu.Lock()
		s.logLevel = level
		s.mu.Unlock()
		s.records.persist()
		return nil
	})
}

// sessionLogLevel brings the session's log level to each new connection. The level itself is the session's
// (Session.logLevel, kept in its record); SetLogLevel, an MCP operation, changes it. The session holds it as
// Session.logLevels.
type sessionLogLevel struct {
	s *Session
}

// applyLogLevel sends the session's log level, if it has one, to a handshake-era server that declares
// logging, on a new connection g: the server's level lives and dies with its session. On 2026-07-28 there
// is nothing to send ahead (the level travels with every request). Best effort: a failure is logged and
// the connection used anyway.
func (l *sessionLogLevel) applyLogLevel(ctx context.Context, g *generation) {
	s := l.s
	s.mu.Lock()
	lvl := s.logLevel
	s.mu.Unlock()
	if lvl == "" || g.modern() || g.serverCaps().Logging == nil {
		return
	}
	if err := g.cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: lvl}); err != nil {
		s.logger.Warn("setting the server's log level failed", "level", string(lvl), "error", err)
	}
}

// renewLogLevel is applyLogLevel on a reconnection, bounded like a handshake.
func (l *sessionLogLevel) renewLogLevel(g *generation) {
	s := l.s
	ctx, cancel := context.WithTimeout(s.ctx, handshakeTimeout)
	defer cancel()
	s.logLevels.applyLogLevel(ctx, g)
}
