package mcpcore

// Micro-benchmarks of the dispatcher for make bench (scripts/bench.sh runs every BenchmarkBench…). They
// report cost, never assert on time.

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkBenchDispatchSubmitRespond is one pending request's life: submit (registration, Created
// event, deadline timer), a host's Respond (lookup, validation, finish), the Ended event and submit's
// return.
func BenchmarkBenchDispatchSubmitRespond(b *testing.B) {
	created := make(chan string, 1)
	d := newDispatcher(slog.New(slog.DiscardHandler), PendingPolicy{}, Limits{}, func(_ string, ev Event) {
		if ev.Kind == EventRequestCreated {
			created <- ev.Request.ID
		}
	})
	ans := Answer{Sampling: &mcp.CreateMessageWithToolsResult{
		Role: "assistant", Model: "bench", Content: []mcp.Content{&mcp.TextContent{Text: "ok"}},
	}}
	params := &mcp.CreateMessageWithToolsParams{
		Messages:  []*mcp.SamplingMessageV2{{Role: "user", Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}},
		MaxTokens: 16,
	}
	ctx := context.Background()
	done := make(chan error, 1)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		req := &PendingRequest{SessionID: "s-bench", Owner: "local", OriginCallID: "c", Kind: KindSampling,
			Delivery: DeliveryPush, Sampling: params}
		go func() {
			_, _, err := d.submit(ctx, req, nil)
			done <- err
		}()
		id := <-created
		if err := d.Respond(ctx, "local", id, ans); err != nil {
			b.Fatal(err)
		}
		if err := <-done; err != nil {
			b.Fatal(fmt.Errorf("submit %d: %w", i, err))
		}
	}
}
