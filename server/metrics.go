package server

import "github.com/mcp-bridge/mcp-bridge/mcpcore"

// HostStreams returns how many host streams are attached to sessions now: each session a Connect stream
// attached to, and each WatchEvents watcher (a StreamCallTool is not counted). It is the bridge's
// mcp_bridge_host_streams gauge. The sessions own the count (mcpcore.Session.HostsAttached); this asks the
// core for their sum. Safe for concurrent use.
func (s *Service) HostStreams() int64 { return s.core.HostsAttached() }

// CoreStats returns the MCP client core's counters (bad messages from servers, dropped stderr lines,
// restarts), for the bridge's metrics.
func (s *Service) CoreStats() mcpcore.Stats { return s.core.Stats() }

// ApprovalHistoryRecords returns how many ended approval requests the approval history holds: the bridge's
// approval_history_records gauge (docs/adr/0091). Safe for concurrent use.
func (s *Service) ApprovalHistoryRecords() int { return s.core.ApprovalHistoryLen() }

// KeptStats describes the outcomes of completed tool calls kept for resumed calls.
func (s *Service) KeptStats() mcpcore.KeptStats { return s.core.KeptStats() }
