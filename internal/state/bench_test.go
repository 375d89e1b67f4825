package state_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-bridge/mcp-bridge/internal/state"
)

// BenchmarkPut is the cost of one durable write, as an MRTR round or a pending request writes one: a
// 2 KB record (an elicitation with its schema, or a round's requestState and answers), sealed.
func BenchmarkPut(b *testing.B) {
	value := []byte(strings.Repeat("x", 2048))
	key := make([]byte, 32)
	engines := []struct {
		name string
		open func(b *testing.B) state.Store
	}{
		{"memory", func(*testing.B) state.Store { return state.NewMemory() }},
		{"file", func(b *testing.B) state.Store {
			s, err := state.OpenFile(filepath.Join(b.TempDir(), "state.db"), state.FileOptions{})
			if err != nil {
				b.Fatal(err)
			}
			return s
		}},
		{"file-sealed", func(b *testing.B) state.Store {
			s, err := state.OpenFile(filepath.Join(b.TempDir(), "state.db"), state.FileOptions{})
			if err != nil {
				b.Fatal(err)
			}
			ss, err := state.Sealed(context.Background(), s, key)
			if err != nil {
				b.Fatal(err)
			}
			return ss
		}},
		{"file-nosync", func(b *testing.B) state.Store {
			s, err := state.OpenFile(filepath.Join(b.TempDir(), "state.db"), state.FileOptions{NoSync: true})
			if err != nil {
				b.Fatal(err)
			}
			return s
		}},
	}
	for _, e := range engines {
		b.Run(e.name, func(b *testing.B) {
			s := e.open(b)
			defer s.Close()
			ctx := context.Background()
			i := 0
			for b.Loop() {
				if err := s.Put(ctx, state.KindCall, fmt.Sprintf("s-1/call-%d", i%100), value); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
		b.Run(e.name+"-parallel", func(b *testing.B) {
			s := e.open(b)
			defer s.Close()
			ctx := context.Background()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					if err := s.Put(ctx, state.KindCall, fmt.Sprintf("s-1/call-%p-%d", pb, i%100), value); err != nil {
						b.Error(err)
						return
					}
					i++
				}
			})
		})
	}
}
