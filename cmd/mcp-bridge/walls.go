package main

import (
	"log/slog"

	"github.com/mcp-bridge/mcp-bridge/internal/config"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// reportWalls compares the configured limits with what the process may have — its descriptor limit
// (RLIMIT_NOFILE; the Go runtime has raised the soft limit to the hard one since Go 1.19) and the runtime's
// thread limit — and logs what it found: one INFO line always, and a WARN line for each limit the process
// cannot honour, naming the key to change (docs/adr/0094-walls-and-hostile-input.md).
func reportWalls(logger *slog.Logger, cfg *config.Config) {
	w := mcpcore.ProcessWalls()
	l := mcpcore.Limits{MaxSessions: cfg.Limits.MaxSessions, MaxStdioProcesses: cfg.Limits.MaxStdioProcesses,
		DescriptorReserve: cfg.Limits.DescriptorReserve}
	logger.Info("process limits", "descriptors", w.NoFileSoft, "descriptors_hard", w.NoFileHard, "threads", w.MaxThreads,
		"max_sessions", cfg.Limits.MaxSessions, "max_stdio_processes", cfg.Limits.MaxStdioProcesses,
		"descriptor_reserve", mcpcore.DescriptorReserve(l, w.NoFileSoft))
	for _, msg := range w.Check(l) {
		logger.Warn("a configured limit exceeds what the process can have", "detail", msg)
	}
}
