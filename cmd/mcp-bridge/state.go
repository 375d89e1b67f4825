package main

import (
	"context"
	"log/slog"

	"github.com/mcp-bridge/mcp-bridge/internal/config"
	"github.com/mcp-bridge/mcp-bridge/internal/state"
	"github.com/mcp-bridge/mcp-bridge/internal/telemetry"
)

// openState opens the state store the configuration names (state block, --state-file, --state-reset) and
// registers its health metric. Its error is one line naming the file and what is wrong: the binary exits
// with status 2 (a corrupt, newer, unwritable or locked file, a wrong key), never resets without the flag.
func openState(ctx context.Context, cfg *config.Config, obs *observability, logger *slog.Logger) (*state.TrackedStore, error) {
	sc := cfg.State
	ro, err := redisOptions(sc.Redis)
	if err != nil {
		return nil, err
	}
	if ro != nil {
		state.RouteRedisLogs(logger)
	}
	s, err := state.Open(ctx, state.Config{
		Redis:     ro,
		File:      sc.File,
		Memory:    sc.Memory,
		Key:       []byte(sc.Key.Reveal()),
		KeySource: sc.KeySource(),
		Reset:     sc.Reset,
		NoSync:    !sc.Sync(),
	}, logger)
	if err != nil {
		return nil, err
	}
	if obs != nil {
		telemetry.RegisterStateHealth(obs.registry, s.Health)
		telemetry.RegisterStateWrites(obs.registry, s.Writes)
	}
	return s, nil
}
