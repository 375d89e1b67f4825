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
		// 32 writers at once, as sessions are at a restart: the file engine commits them in groups.
		b.Run(e.name+"-32-writers", func(b *testing.B) {
			s := e.open(b)
			defer s.Close()
			ctx := context.Background()
			b.SetParallelism(16)
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

// BenchmarkHopWrites is what one MRTR hop writes, in order (mcpcore/durable.go): the call between rounds,
// the pending request, the request with its accepted answer, then both deleted once the server has it.
// Each engine sealed, as the bridge uses it.
func BenchmarkHopWrites(b *testing.B) {
	call := []byte(strings.Repeat("c", 1500))
	request := []byte(strings.Repeat("r", 1200))
	answer := []byte(strings.Repeat("a", 1600))
	key := make([]byte, 32)
	for _, e := range []struct {
		name string
		opts *state.FileOptions // nil: memory
	}{
		{"memory", nil},
		{"file", &state.FileOptions{}},
		{"file-nosync", &state.FileOptions{NoSync: true}},
	} {
		b.Run(e.name, func(b *testing.B) {
			inner := state.NewMemory()
			if e.opts != nil {
				var err error
				if inner, err = state.OpenFile(filepath.Join(b.TempDir(), "state.db"), *e.opts); err != nil {
					b.Fatal(err)
				}
			}
			ctx := context.Background()
			s, err := state.Sealed(ctx, inner, key)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			i := 0
			for b.Loop() {
				ck, rk := fmt.Sprintf("s-1/call-%d", i), fmt.Sprintf("r-%d", i)
				for _, err := range []error{
					s.Put(ctx, state.KindCall, ck, call),
					s.Put(ctx, state.KindRequest, rk, request),
					s.Put(ctx, state.KindRequest, rk, answer),
					s.Delete(ctx, state.KindRequest, rk),
					s.Delete(ctx, state.KindCall, ck),
				} {
					if err != nil {
						b.Fatal(err)
					}
				}
				i++
			}
		})
	}
}
