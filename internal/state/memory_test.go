package state_test

import (
	"testing"

	"github.com/mcp-bridge/mcp-bridge/internal/state"
	"github.com/mcp-bridge/mcp-bridge/internal/state/statetest"
)

func TestMemory(t *testing.T) {
	statetest.Run(t, func(*testing.T) state.Store { return state.NewMemory() })
}
