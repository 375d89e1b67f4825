package e2e

// Telemetry that a caller cannot turn against the bridge (issue 26, docs/adr/0030): label values that come
// from hosts or servers are bounded, so thousands of made-up tool and prompt names leave the series of
// every metric family where they were, and /metrics is behind the same door as the API.

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// seriesCount is the number of time series of a family as Prometheus stores them: one per label set,
// and for a histogram one per bucket plus _sum and _count.
func seriesCount(f *dto.MetricFamily) int {
	n := 0
	for _, m := range f.GetMetric() {
		if h := m.GetHistogram(); h != nil {
			n += len(h.GetBucket()) + 3 // the buckets, +Inf, _sum, _count
			continue
		}
		if s := m.GetSummary(); s != nil {
			n += len(s.GetQuantile()) + 2
			continue
		}
		n++
	}
	return n
}

// familySeries counts the series of every family of a scrape.
func familySeries(fams map[string]*dto.MetricFamily) (map[string]int, int) {
	out, total := map[string]int{}, 0
	for name, f := range fams {
		out[name] = seriesCount(f)
		total += out[name]
	}
	return out, total
}

// TestMetricSeriesStayFlat calls thousands of tool and prompt names that no server has, over REST and
// gRPC, on both protocol eras, and asks for gRPC methods that do not exist: after the first few calls
// the number of series of every metric family stays where it is, the names appear nowhere in /metrics,
// and the spans of those calls are named and attributed with the folded value, not the caller's.
func TestMetricSeriesStayFlat(t *testing.T) {
	rcv := newOTLPReceiver(t)
	b := start(t, bridgeConfig{env: []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + rcv.srv.URL, "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf"}})
	ctx := testCtx(t)
	r := b.rest("")
	sessions := map[string]string{}
	for _, v := range versions {
		sessions[v.server] = r.must("POST", "/v1/sessions", `{"server": "`+v.server+`"}`)["sessionId"].(string)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	// call makes the unknown calls numbered [from, to) on every session, four at a time, and fails the test
	// unless each is refused the way an unknown tool or prompt is (never a 5xx or a transport error).
	call := func(from, to int) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make(chan string, 4)
		for w := range 4 {
			wg.Go(func() {
				for i := from + w; i < to; i += 4 {
					for _, sid := range sessions {
						for _, path := range []string{"/tools/nosuch-tool-%d:call", "/prompts/nosuch-prompt-%d:get"} {
							req := r.request(ctx, "POST", "/v1/sessions/"+sid+fmt.Sprintf(path, i), `{}`)
							resp, err := client.Do(req)
							if err != nil {
								errs <- err.Error()
								return
							}
							_, _ = io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
							if resp.StatusCode == http.StatusOK || resp.StatusCode >= 500 {
								errs <- fmt.Sprintf("%s: %s", req.URL.Path, resp.Status)
								return
							}
						}
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Fatal(e)
		}
	}
	grpcUnknown := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			sid := sessions[serverModern]
			_, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: sid, Name: fmt.Sprintf("nosuch-grpc-tool-%d", i)})
			if err == nil {
				t.Fatal("an unknown tool succeeded")
			}
			_, err = b.client.GetPrompt(ctx, &pb.GetPromptRequest{SessionId: sid, Name: fmt.Sprintf("nosuch-grpc-prompt-%d", i)})
			if err == nil {
				t.Fatal("an unknown prompt succeeded")
			}
			// Unknown methods: grpc-go runs no interceptor for them (so grpc_server_* stays flat) and starts
			// a stats-handler span it never ends (so none is exported); both are checked below.
			err = b.conn.Invoke(ctx, fmt.Sprintf("/mcpbridge.v1.BridgeService/NoSuchMethod%d", i), &emptypb.Empty{}, &emptypb.Empty{})
			if status.Code(err) != codes.Unimplemented {
				t.Fatalf("an unknown gRPC method = %v, want UNIMPLEMENTED", err)
			}
		}
	}
	// What the host sees as the server's tools and prompts keeps its own name.
	for _, sid := range sessions {
		r.must("GET", "/v1/sessions/"+sid+"/tools", "")
		r.must("GET", "/v1/sessions/"+sid+"/prompts", "")
		r.must("POST", "/v1/sessions/"+sid+"/tools/echo:call", `{"arguments": {"text": "hi"}}`)
	}

	const warmUp, total, grpcCalls = 8, 1500, 200
	call(0, warmUp)
	grpcUnknown(0, warmUp)
	before, beforeTotal := familySeries(scrape(t, b.http))
	call(warmUp, total)
	grpcUnknown(warmUp, grpcCalls)
	fams := scrape(t, b.http)
	after, afterTotal := familySeries(fams)
	t.Logf("%d unknown tool and %d unknown prompt names per session over REST, %d of each and %d unknown gRPC methods over gRPC: %d series before, %d after",
		total, total, grpcCalls, grpcCalls, beforeTotal, afterTotal)
	for _, name := range slices.Sorted(maps.Keys(after)) {
		if after[name] != before[name] {
			t.Errorf("%s: %d series after the first %d unknown names, %d after %d", name, before[name], warmUp, after[name], total)
		}
	}
	leaked := 0
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if strings.Contains(l.GetValue(), "nosuch") || strings.Contains(l.GetValue(), "NoSuch") {
					if leaked++; leaked <= 3 {
						t.Errorf("%s has a caller's name in label %s=%q", name, l.GetName(), l.GetValue())
					}
				}
			}
		}
	}
	if leaked > 3 {
		t.Errorf("… and %d more label values that are a caller's names", leaked-3)
	}
	op := "mcp_client_operation_duration_seconds"
	wantMetric(t, fams, op, map[string]string{"mcp_method_name": "tools/call", "gen_ai_tool_name": "echo", "server": serverModern}, 1)
	for _, v := range versions {
		calls := float64(total) // over REST
		if v.server == serverModern {
			calls += grpcCalls // and over gRPC
		}
		wantMetric(t, fams, op, map[string]string{"mcp_method_name": "tools/call", "gen_ai_tool_name": "_OTHER", "server": v.server}, calls)
		wantMetric(t, fams, op, map[string]string{"mcp_method_name": "prompts/get", "gen_ai_prompt_name": "_OTHER", "server": v.server}, calls)
	}

	// Spans: named by the folded target, which is also their gen_ai.* attribute.
	b.stop()
	otherSpans := 0
	for _, s := range rcv.all() {
		if strings.Contains(s.GetName(), "nosuch") || strings.Contains(s.GetName(), "NoSuch") {
			t.Fatalf("span named by a caller: %q", s.GetName())
		}
		for _, a := range s.GetAttributes() {
			if strings.HasPrefix(a.GetKey(), "gen_ai.") || a.GetKey() == "rpc.method" || a.GetKey() == "error.type" {
				if v := a.GetValue().GetStringValue(); strings.Contains(v, "nosuch") || strings.Contains(v, "NoSuch") {
					t.Fatalf("span %q has a caller's name in %s=%q", s.GetName(), a.GetKey(), v)
				}
			}
		}
		if s.GetName() == "tools/call" && hasAttr(s, "gen_ai.tool.name", "_OTHER") {
			otherSpans++
		}
	}
	if otherSpans == 0 {
		t.Error("no tools/call span with gen_ai.tool.name _OTHER")
	}
}

// TestMetricsBehindTheDoor: with bearer tokens configured, /metrics on the API's HTTP listener answers no
// one — without a token, with a host's token — and tells nothing of a server that allowedPrincipals hides
// or of the tools called; nor do the other paths that need no token (health, readiness, gRPC health).
// The admin listener serves the metrics and the servers' health to the operator.
func TestMetricsBehindTheDoor(t *testing.T) {
	b := start(t, bridgeConfig{
		extraServers: probeServer("private-hidden", "    allowedPrincipals: [alice]\n"),
		extra:        "auth:\n  tokensFile: tokens.txt\n",
		files:        map[string]string{"tokens.txt": "tok-alice alice\ntok-bob bob\n"},
		args:         []string{"--admin-addr", "127.0.0.1:0"},
	})
	alice := b.rest("tok-alice")
	sid := alice.must("POST", "/v1/sessions", `{"server": "private-hidden"}`)["sessionId"].(string)
	alice.must("GET", "/v1/sessions/"+sid+"/tools", "")
	alice.must("POST", "/v1/sessions/"+sid+"/tools/echo:call", `{"arguments": {"text": "hi"}}`)

	for _, token := range []string{"", "tok-bob", "tok-alice", "not-a-token"} {
		req, err := http.NewRequestWithContext(context.Background(), "GET", "http://"+b.http+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("GET /metrics on the API listener with token %q = 200, want it refused", token)
		}
		for _, secret := range []string{"private-hidden", "echo", "mcp_client_operation"} {
			if strings.Contains(string(body), secret) {
				t.Errorf("GET /metrics on the API listener with token %q reveals %q: %.300s", token, secret, body)
			}
		}
	}
	// The other doors that need no token: health, readiness, the API description, gRPC health. A hidden
	// server answers exactly as a server that does not exist.
	get := func(addr, path string) (int, string) {
		resp, err := http.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	for _, path := range []string{"/readyz", "/healthz", "/openapi.json", "/healthz?service=servers/private-hidden"} {
		if code, body := get(b.http, path); strings.Contains(body, "private-hidden") {
			t.Errorf("GET %s without a token = %d and names the hidden server: %.300s", path, code, body)
		}
	}
	hiddenCode, hiddenBody := get(b.http, "/healthz?service=servers/private-hidden")
	noneCode, noneBody := get(b.http, "/healthz?service=servers/nonesuch")
	if hiddenCode != noneCode || strings.ReplaceAll(hiddenBody, "private-hidden", "X") != strings.ReplaceAll(noneBody, "nonesuch", "X") {
		t.Errorf("health of the hidden server = %d %s; of a missing one %d %s", hiddenCode, hiddenBody, noneCode, noneBody)
	}
	hc := healthpb.NewHealthClient(b.conn)
	_, errHidden := hc.Check(context.Background(), &healthpb.HealthCheckRequest{Service: "servers/private-hidden"})
	_, errNone := hc.Check(context.Background(), &healthpb.HealthCheckRequest{Service: "servers/nonesuch"})
	if status.Code(errHidden) != status.Code(errNone) {
		t.Errorf("gRPC health of the hidden server = %v; of a missing one %v", errHidden, errNone)
	}
	if list, err := hc.List(context.Background(), &healthpb.HealthListRequest{}); err == nil {
		for name := range list.GetStatuses() {
			if strings.Contains(name, "private-hidden") {
				t.Errorf("gRPC health List without a token names the hidden server: %s", name)
			}
		}
	}
	// Readiness with the servers' health, for the operator: on the admin listener.
	if code, body := get(b.admin, "/readyz"); code != http.StatusOK || !strings.Contains(body, `"private-hidden"`) {
		t.Errorf("GET /readyz on the admin listener = %d %s, want the hidden server's health", code, body)
	}

	// The scraper's door.
	fams := scrape(t, b.admin)
	wantMetric(t, fams, "mcp_bridge_sessions", map[string]string{"server": "private-hidden", "state": "ready"}, 1)
	wantMetric(t, fams, "mcp_client_operation_duration_seconds", map[string]string{"gen_ai_tool_name": "echo", "server": "private-hidden"}, 1)
	// What does not reveal anything stays open: health and readiness, for probes.
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, body := get(b.http, path); code != http.StatusOK {
			t.Errorf("GET %s = %d %s", path, code, body)
		}
	}
}
