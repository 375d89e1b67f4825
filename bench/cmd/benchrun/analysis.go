package main

import (
	"fmt"
	"strings"
)

// analysis explains where the time and the allocations go, from this run's profiles.
func (b *bench) analysis() string {
	cpu, _ := b.res["cpu_profile_by_package"].(map[string]float64)
	alloc, _ := b.res["alloc_profile_by_package"].(map[string]float64)
	if cpu == nil && alloc == nil {
		return ""
	}
	sdk := func(m map[string]float64) float64 {
		return m["go-sdk JSON (segmentio decoder)"] + m["go-sdk (other)"] + m["jsonschema-go (SDK)"]
	}
	own := func(m map[string]float64) float64 {
		return m["bridge: server (conversions, service)"] + m["bridge: mcpcore"]
	}
	var sb strings.Builder
	sb.WriteString("## Where the cost is, and what would fix it\n\n")
	fmt.Fprintf(&sb, "In the bridge process under gRPC load (the twin's profiles above): the MCP SDK's code takes %.0f %% of "+
		"flat CPU and %.0f %% of allocated bytes (its JSON decoder alone %.0f %% of the bytes); the bridge's own packages "+
		"(server, mcpcore) %.0f %% of CPU and %.0f %% of bytes; grpc-go + protobuf %.0f %% of CPU; the Go runtime (much "+
		"of it garbage collection driven by those allocations) %.0f %%; syscalls and network %.0f %%.\n\n",
		sdk(cpu), sdk(alloc), alloc["go-sdk JSON (segmentio decoder)"], own(cpu), own(alloc),
		cpu["grpc-go (+x/net/http2)"]+cpu["protobuf"], cpu["Go runtime (GC, scheduler, malloc)"], cpu["syscalls, net, os, io"])
	if bpc, ok := num(b.res["bridge_alloc_bytes_per_call"]); ok {
		dpc, _ := num(b.res["direct_client_alloc_bytes_per_call"])
		fmt.Fprintf(&sb, "Per proxied call the bridge process allocates %.1f KB; the bare go-sdk client allocates %.1f KB for "+
			"the same call in the driver (the bridge's SDK client does the same work towards the upstream). The bridge's "+
			"allocation is of the order of the SDK client's alone, so the 32 KB target cannot be met while the SDK "+
			"allocates this much per message; the alloc profile above attributes the bytes.\n\n", bpc/1000, dpc/1000)
	}
	heap := strings.Join(b.heapTops, "\n")
	if strings.Contains(heap, "eventLog).subscribe") {
		sb.WriteString(`**The bridge's own: a 200 KiB event buffer per attached host stream.** Attaching a session to a
` + "`Connect`" + ` stream subscribes to its events with the default buffer (server/host.go ` + "`newEventFeed`" + ` calls
` + "`sess.Subscribe(0)`" + `, i.e. ` + "`Limits.EventBuffer`" + ` = 1024), and the channel holds ` + "`mcpcore.Event`" + ` by value
(200 bytes), so every attachment allocates ~200 KiB up front — the S7 live-heap profile puts ` + "`mcpcore.(*eventLog).subscribe`" + `
at almost all of the per-stream heap. RSS grows less only because the kernel does not back pages nobody has written
yet; the Go heap (and so GC pacing) counts all of it, and reused spans are zeroed and become resident. Fix (mcpcore /
server): give host-stream subscriptions a small buffer (the stream already queues 256 messages of its own), or carry
` + "`*Event`" + ` (8 B a slot), or use a growable ring with a one-slot notify channel.

`)
	}
	if strings.Contains(heap, "bufio.NewReaderSize") {
		sb.WriteString(`**The bridge's own: a 64 KiB reader per SSE response.** mcpcore/http.go wraps every ` + "`text/event-stream`" + `
response body in ` + "`bufio.NewReaderSize(body, 64<<10)`" + ` (` + "`httpTap.RoundTrip`" + `). An idle Streamable HTTP session keeps one
such response open (the standalone GET), so it holds 64 KiB, and every call answered over SSE allocates another 64 KiB
(part of the HTTP rows' allocation per call). Fix: start small (4 KiB) and grow only for long events — the message size
limit can be enforced by counting bytes, not by the buffer — or pool the buffers.

`)
	}
	sb.WriteString(`**The SDK's per-message decoder.** go-sdk v1.8.0's ` + "`internal/json.Unmarshal`" + ` builds a
` + "`segmentio/encoding`" + ` streaming Decoder for every message it reads (` + "`NewDecoder(bytes.NewReader(data)).Decode(v)`" + `),
and every Decoder allocates a 32 KiB read buffer — on the client side the bridge pays it once per response and again for
each nested ` + "`json.RawMessage`" + ` it decodes. Parsing in place (` + "`json.Parse(data, v, DontMatchCaseInsensitiveStructFields)`" + `
after the depth check) removes it; that one-function patch passes the SDK's own mcp, jsonrpc2 and json tests and took an
in-memory CallTool from ~455 KB to ~27 KB allocated in the research measurements
(/work/shared/research/performance-anchors.md §3). It belongs upstream (modelcontextprotocol/go-sdk); until it lands the
bridge could carry a ` + "`replace`" + ` to a patched fork, and this suite should then run both builds.

`)
	return sb.String()
}
