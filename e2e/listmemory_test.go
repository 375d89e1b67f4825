package e2e

import (
	"fmt"
	"sync"
	"testing"

	"google.golang.org/grpc"

	"github.com/mcp-bridge/mcp-bridge/e2e/probe"
	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// Issue 31, item 5 (docs/adr/0097, 0107): a list response's memory is a small multiple of its size. A server
// answers tools/list with 100,000 tools (13 MB); four sessions list them at once, two over gRPC and two
// over REST, and the bridge's peak RSS grows by less than 4× the list's size for each of them. The server
// does not declare listChanged, so the bridge's list cache keeps nothing and every call is answered afresh.
// Before: one list peaked at ~524 MB (the SDK's maps, then a google.protobuf.Struct tree per schema, then
// the encodings), four at once ~1.97 GB; after ADR 0097 ~410 MB (the SDK's tools, pb.Tool messages and the
// encodings of all four lists at once); after ADR 0107 ~150-185 MB (one large list converted at a time).
func TestHostileHugeToolList(t *testing.T) {
	if raceBuilt(t) {
		// The race detector's shadow memory multiplies the heap's RSS (5-10x): the bound would measure it,
		// not the bridge. make test-list-rss runs this test against a plain build.
		t.Skip("RSS bound needs a binary built without -race: MCPBRIDGE_BIN=bin/mcp-bridge (make test-list-rss)")
	}
	const tools = 100_000
	list := string(probe.ToolList(tools))
	answer := func(method string, id json_) string {
		switch method {
		case "initialize":
			return rawInitialize(id, "huge")
		case "tools/list":
			return rpcResult(id, list)
		}
		return ""
	}
	// Every transport's list waits for the slot before the SDK decodes it (the wire tap's received); a JSON
	// body waits with only its first MiB read.
	for _, tr := range []struct {
		name    string
		servers func(t *testing.T) string
	}{
		{"Streamable HTTP JSON", func(t *testing.T) string { return newRawHTTPServer(t, answer).config("huge") }},
		{"Streamable HTTP SSE", func(t *testing.T) string { return serveRaw(t, &rawServer{answer: answer, sse: true}).config("huge") }},
		{"stdio", func(t *testing.T) string {
			return probeYAML(t, "huge", fmt.Sprintf("      %s: \"%d\"\n    protocolVersion: \"2025-11-25\"\n", probe.EnvHugeList, tools))
		}},
	} {
		t.Run(tr.name, func(t *testing.T) { hugeToolLists(t, tr.servers(t), tools, int64(len(list))) })
	}
}

// hugeToolLists lists the tools of four sessions of the server "huge" in servers (YAML under mcpServers) at
// once, two over gRPC and two over REST, each of tools tools (size bytes of JSON), and bounds the bridge's
// peak RSS growth to 4× size a list.
func hugeToolLists(t *testing.T, servers string, tools int, size int64) {
	const lists = 4
	b := start(t, bridgeConfig{
		extraServers: servers,
		extra:        "limits:\n  maxMessageBytes: 67108864\n",
	})
	ctx := testCtx(t)
	pid := b.cmd.Process.Pid
	ids := make([]string, lists)
	for i := range ids {
		s, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "huge"})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = s.GetSession().GetSessionId()
	}
	before := peakRSS(t, pid)
	var wg sync.WaitGroup
	errs := make(chan error, lists)
	for i, id := range ids {
		wg.Go(func() {
			if i%2 == 0 {
				res, err := b.client.ListTools(ctx, &pb.ListToolsRequest{SessionId: id}, grpc.MaxCallRecvMsgSize(64<<20))
				if err != nil {
					errs <- fmt.Errorf("gRPC ListTools: %w", err)
					return
				}
				tl := res.GetTools()
				if len(tl) != tools {
					errs <- fmt.Errorf("gRPC ListTools: %d tools, want %d", len(tl), tools)
					return
				}
				last := tl[tools-1]
				a := last.GetInputSchema().GetFields()["properties"].GetStructValue().GetFields()["a"].GetStructValue()
				if last.GetName() != fmt.Sprintf("tool-%06d", tools-1) || a.GetFields()["maxLength"].GetNumberValue() != float64((tools-1)%1000) {
					errs <- fmt.Errorf("gRPC ListTools: last tool %v", last)
				}
				return
			}
			out := b.rest("").must("GET", "/v1/sessions/"+id+"/tools", "")
			tl, _ := out["tools"].([]any)
			if len(tl) != tools {
				errs <- fmt.Errorf("REST tools: %d tools, want %d", len(tl), tools)
				return
			}
			if got := jsonPath(tl[tools-1], "inputSchema", "properties", "a", "maxLength"); got != float64((tools-1)%1000) {
				errs <- fmt.Errorf("REST tools: last tool's maxLength %v", got)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	peak := peakRSS(t, pid)
	t.Logf("%d concurrent lists of %d tools (%d bytes each): peak RSS %d MB before, %d MB after (grew %d MB = %.1f× the list's size per list); RSS now %d MB",
		lists, tools, size, before>>20, peak>>20, (peak-before)>>20, float64(peak-before)/float64(size*lists), rssBytes(t, pid)>>20)
	if grew := peak - before; grew > 4*lists*size {
		t.Errorf("peak RSS grew by %d MB for %d lists of %d MB, want < 4× each (%d MB)", grew>>20, lists, size>>20, 4*lists*size>>20)
	}
}
