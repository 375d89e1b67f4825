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
	d := newDispatcher(slog.New(slog.DiscardHandler), PendingPolicy{}, Limits{}, nil)
	feed := d.Watch(nil, 4) // a request's Created and Ended; each is read before the next request
	defer feed.Close()
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
		var id string
		for id == "" {
			if ev := <-feed.C(); ev.Kind == EventRequestCreated {
				id = ev.Request.ID
			}
		}
		if err := d.Respond(ctx, "local", id, ans); err != nil {
			b.Fatal(err)
		}
		if err := <-done; err != nil {
			b.Fatal(fmt.Errorf("submit %d: %w", i, err))
		}
	}
}
