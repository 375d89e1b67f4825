package state_test

import (
	"path/filepath"
	"testing"

	"github.com/mcp-bridge/mcp-bridge/internal/state"
	"github.com/mcp-bridge/mcp-bridge/internal/state/statetest"
)

func TestFile(t *testing.T) {
	statetest.RunDurable(t,
		func(t *testing.T) state.Store {
			s, err := state.OpenFile(filepath.Join(t.TempDir(), "state.db"), state.FileOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		func(t *testing.T, s state.Store) state.Store {
			path := state.FilePath(s)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s, err := state.OpenFile(path, state.FileOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
}

func TestMemory(t *testing.T) {
	statetest.Run(t, func(*testing.T) state.Store { return state.NewMemory() })
}
