package e2e

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// scrape reads addr's /metrics with Prometheus' own parser.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return fams
}

// metric returns the value of the series of name whose labels include want (a counter's or gauge's
// value, a histogram's sample count), and whether there is one. Several matching series are summed.
func metric(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f, ok := fams[name]
	if !ok {
		return 0, false
	}
	var sum float64
	found := false
next:
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if labels[k] != v {
				continue next
			}
		}
		found = true
		switch {
		case m.Counter != nil:
			sum += m.GetCounter().GetValue()
		case m.Gauge != nil:
			sum += m.GetGauge().GetValue()
		case m.Histogram != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		case m.Untyped != nil:
			sum += m.GetUntyped().GetValue()
		}
	}
	return sum, found
}

func wantMetric(t *testing.T, fams map[string]*dto.MetricFamily, name string, labels map[string]string, want float64) {
	t.Helper()
	got, ok := metric(fams, name, labels)
	if !ok {
		t.Errorf("%s%v: no such series", name, labels)
		return
	}
	if got != want {
		t.Errorf("%s%v = %v, want %v", name, labels, got, want)
	}
}

// TestMetrics drives a workload through the bridge (a session, tool calls that succeed, fail as tools and
// fail upstream, a sampling request a host answers, an elicitation nobody answers, the session's end) and
// checks what /metrics says of it, on the HTTP listener and on the admin listener.
func TestMetrics(t *testing.T) {
	b := start(t, bridgeConfig{args: []string{"--admin-addr", "127.0.0.1:0"}, extra: "pending:\n  elicitationTimeout: 200ms\n"})
	ctx := testCtx(t)
	if b.admin == "" {
		t.Fatal("the bridge did not report its admin address")
	}

	before := scrape(t, b.http)
	wantMetric(t, before, "mcp_bridge_sessions", map[string]string{"server": serverModern, "state": "ready"}, 0)
	wantMetric(t, before, "mcp_bridge_pending_requests", map[string]string{"kind": "sampling"}, 0)
	if _, ok := metric(before, "mcp_bridge_build_info", nil); !ok {
		t.Error("no mcp_bridge_build_info")
	}

	cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: serverModern, HostCapabilities: allCaps})
	if err != nil {
		t.Fatal(err)
	}
	id := cs.GetSession().GetSessionId()
	h := b.connect(ctx)
	h.Attach(id)
	listTools(t, b, id) // the names the server listed are the ones metrics carry

	during := scrape(t, b.http)
	wantMetric(t, during, "mcp_bridge_sessions", map[string]string{"server": serverModern, "state": "ready"}, 1)
	wantMetric(t, during, "mcp_bridge_host_streams", nil, 1)

	for i := range 3 {
		if _, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: id, Name: "echo", Arguments: args(t, map[string]any{"text": fmt.Sprint(i)})}); err != nil {
			t.Fatal(err)
		}
	}
	if r, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: id, Name: "fail", Arguments: args(t, map[string]any{"message": "no"})}); err != nil || !r.GetResult().GetIsError() {
		t.Fatalf("fail = %v, %v; want a tool error", r, err)
	}
	if _, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: id, Name: "no-such-tool"}); err == nil {
		t.Fatal("calling an unknown tool succeeded")
	}

	// Sampling, answered by the host.
	done := b.callAsync(ctx, &pb.CallToolRequest{SessionId: id, Name: "sample", Arguments: args(t, map[string]any{"prompt": "Capital of France?"})})
	req := h.NextRequest()
	if ack := h.Reply(req.GetRequestId(), &pb.HostAnswer{Answer: &pb.HostAnswer_Sampling{Sampling: &pb.CreateMessageResult{
		Role: pb.Role_ROLE_ASSISTANT, Model: "m", Content: []*pb.ContentBlock{{Content: &pb.ContentBlock_Text{Text: &pb.TextContent{Text: "Paris"}}}}}}}); !ack.GetAccepted() {
		t.Fatalf("ack = %v", ack)
	}
	if r := <-done; r.Err != nil {
		t.Fatal(r.Err)
	}
	// Elicitation, left unanswered until the policy timeout.
	done = b.callAsync(ctx, &pb.CallToolRequest{SessionId: id, Name: "elicit"})
	h.NextRequest()
	if r := <-done; r.Err != nil {
		t.Fatal(r.Err)
	}

	if _, err := b.client.DeleteSession(ctx, &pb.DeleteSessionRequest{SessionId: id}); err != nil {
		t.Fatal(err)
	}

	for _, addr := range []string{b.http, b.admin} {
		after := scrape(t, addr)
		op := "mcp_client_operation_duration_seconds"
		wantMetric(t, after, op, map[string]string{"mcp_method_name": "tools/call", "gen_ai_tool_name": "echo", "error_type": "",
			"server": serverModern, "mcp_protocol_version": "2026-07-28", "network_transport": "pipe"}, 3)
		wantMetric(t, after, op, map[string]string{"mcp_method_name": "tools/call", "gen_ai_tool_name": "fail", "error_type": "tool_error"}, 1)
		// A name the server did not list is _OTHER (docs/adr/0030).
		if v, ok := metric(after, op, map[string]string{"mcp_method_name": "tools/call", "gen_ai_tool_name": "_OTHER"}); !ok || v != 1 {
			t.Errorf("%s for the unknown tool = %v (found %v), want 1 as _OTHER", op, v, ok)
		} else if _, ok := metric(after, op, map[string]string{"gen_ai_tool_name": "_OTHER", "error_type": ""}); ok {
			t.Errorf("the unknown tool's request has no error_type")
		}
		if _, ok := metric(after, op, map[string]string{"gen_ai_tool_name": "no-such-tool"}); ok {
			t.Errorf("%s has the unknown tool's name", op)
		}
		wantMetric(t, after, "mcp_client_session_duration_seconds", map[string]string{"server": serverModern, "error_type": "", "mcp_protocol_version": "2026-07-28"}, 1)
		wantMetric(t, after, "mcp_bridge_sessions", map[string]string{"server": serverModern}, 0)
		wantMetric(t, after, "mcp_bridge_server_requests_total", map[string]string{"kind": "sampling", "outcome": "answered"}, 1)
		wantMetric(t, after, "mcp_bridge_server_requests_total", map[string]string{"kind": "elicitation", "outcome": "timed-out"}, 1)
		wantMetric(t, after, "mcp_bridge_server_request_wait_seconds", map[string]string{"kind": "sampling"}, 1)
		wantMetric(t, after, "mcp_bridge_pending_requests", nil, 0)
		wantMetric(t, after, "grpc_server_handled_total", map[string]string{"grpc_method": "CallTool", "grpc_code": "OK"}, 6)
		wantMetric(t, after, "grpc_server_handled_total", map[string]string{"grpc_method": "CreateSession", "grpc_code": "OK"}, 1)
		for _, f := range []string{"grpc_server_handling_seconds", "mcp_bridge_upstream_reconnects_total", "mcp_bridge_events_dropped_total",
			"mcp_bridge_upstream_malformed_messages_total", "go_goroutines"} {
			if _, ok := after[f]; !ok {
				t.Errorf("no %s", f)
			}
		}
		// Low cardinality: no ids in any label.
		for name, f := range after {
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					if strings.Contains(l.GetValue(), id) || strings.HasPrefix(l.GetValue(), "req-") || strings.HasPrefix(l.GetValue(), "call-") {
						t.Errorf("%s has an id in label %s=%q", name, l.GetName(), l.GetValue())
					}
				}
			}
		}
	}
}

// listTools lists every page of a session's tools, as a host does before it calls them.
func listTools(t *testing.T, b *bridge, sessionID string) {
	t.Helper()
	for token := ""; ; {
		r, err := b.client.ListTools(testCtx(t), &pb.ListToolsRequest{SessionId: sessionID, PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		if token = r.GetNextPageToken(); token == "" {
			return
		}
	}
}

// otlpReceiver is an in-process OTLP/HTTP trace receiver.
type otlpReceiver struct {
	srv   *httptest.Server
	mu    sync.Mutex // guards spans
	spans []*tracepb.Span
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	r := &otlpReceiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil || req.URL.Path != "/v1/traces" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		var ex collectortrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &ex); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		for _, rs := range ex.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				r.spans = append(r.spans, ss.GetSpans()...)
			}
		}
		r.mu.Unlock()
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *otlpReceiver) all() []*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*tracepb.Span(nil), r.spans...)
}

// TestTraceChain checks the trace of a host's call through the bridge: the host's traceparent (gRPC
// metadata, and an HTTP header over REST) is the parent of the bridge's RPC span, whose child is the
// client span of the upstream request; the upstream server (the Go SDK probe) receives that span in
// params._meta.traceparent; a sampling request the call raises is a span under the call's upstream
// request, and reaches the host with its trace context, which the host continues.
func TestTraceChain(t *testing.T) {
	rcv := newOTLPReceiver(t)
	b := start(t, bridgeConfig{
		extraServers: probeServer("probe", ""),
		env:          []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + rcv.srv.URL, "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf", "OTEL_SERVICE_NAME=mcp-bridge-e2e"},
	})
	ctx := testCtx(t)
	const (
		traceID  = "4bf92f3577b34da6a3ce929d0e0e4736"
		hostSpan = "00f067aa0ba902b7"
	)
	hostCtx := metadata.AppendToOutgoingContext(ctx, "traceparent", "00-"+traceID+"-"+hostSpan+"-01", "baggage", "tenant=e2e")

	cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "probe", HostCapabilities: allCaps})
	if err != nil {
		t.Fatal(err)
	}
	probeID := cs.GetSession().GetSessionId()
	listTools(t, b, probeID)
	res, err := b.client.CallTool(hostCtx, &pb.CallToolRequest{SessionId: probeID, Name: "trace_meta"})
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Traceparent, Baggage string }
	if err := json.Unmarshal([]byte(res.GetResult().GetContent()[0].GetText().GetText()), &got); err != nil {
		t.Fatalf("trace_meta result: %v", err)
	}
	parts := strings.Split(got.Traceparent, "-")
	if len(parts) != 4 || parts[1] != traceID || parts[2] == hostSpan {
		t.Fatalf("upstream _meta.traceparent = %q, want trace %s and the bridge's span", got.Traceparent, traceID)
	}
	if got.Baggage != "tenant=e2e" {
		t.Errorf("upstream _meta.baggage = %q", got.Baggage)
	}
	upstreamParent := parts[2]

	// Over REST, the traceparent header.
	const restTrace = "11111111111111111111111111111111"
	rreq := b.rest("").request(ctx, "POST", "/v1/sessions/"+probeID+"/tools/trace_meta:call", `{}`)
	rreq.Header.Set("traceparent", "00-"+restTrace+"-2222222222222222-01")
	rresp, err := http.DefaultClient.Do(rreq)
	if err != nil {
		t.Fatal(err)
	}
	rbody, _ := io.ReadAll(rresp.Body)
	rresp.Body.Close()
	if !bytes.Contains(rbody, []byte("00-"+restTrace+"-")) {
		t.Errorf("REST call: upstream _meta lacks the header's trace: %s", rbody)
	}

	// Sampling raised by a call (2026-07-28: an input request of the call).
	dcs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: serverModern, HostCapabilities: allCaps})
	if err != nil {
		t.Fatal(err)
	}
	demoID := dcs.GetSession().GetSessionId()
	listTools(t, b, demoID)
	h := b.connect(ctx)
	h.Attach(demoID)
	done := b.callAsync(hostCtx, &pb.CallToolRequest{SessionId: demoID, Name: "sample", Arguments: args(t, map[string]any{"prompt": "Capital of France?"})})
	sreq := h.NextRequest()
	tc := sreq.GetTraceContext()
	sparts := strings.Split(tc["traceparent"], "-")
	if len(sparts) != 4 || sparts[1] != traceID {
		t.Fatalf("ServerRequest.trace_context = %v, want trace %s", tc, traceID)
	}
	if tc["baggage"] != "tenant=e2e" {
		t.Errorf("ServerRequest.trace_context baggage = %q", tc["baggage"])
	}
	samplingSpan := sparts[2]
	if ack := h.Reply(sreq.GetRequestId(), &pb.HostAnswer{Answer: &pb.HostAnswer_Sampling{Sampling: &pb.CreateMessageResult{
		Role: pb.Role_ROLE_ASSISTANT, Model: "m", Content: []*pb.ContentBlock{{Content: &pb.ContentBlock_Text{Text: &pb.TextContent{Text: "Paris"}}}}}}}); !ack.GetAccepted() {
		t.Fatalf("ack = %v", ack)
	}
	if r := <-done; r.Err != nil {
		t.Fatal(r.Err)
	}

	// A failed call's log line names its trace, span and session.
	if _, err := b.client.CallTool(hostCtx, &pb.CallToolRequest{SessionId: probeID, Name: "no-such-tool"}); err == nil {
		t.Fatal("calling an unknown tool succeeded")
	}
	rec := b.logs.waitFor(t, func(rec map[string]any) bool { return rec["msg"] == "rpc refused" && rec["session"] == probeID })
	if rec["trace_id"] != traceID || rec["span_id"] == nil || rec["span_id"] == hostSpan {
		t.Errorf("log of the failed call = %v, want trace_id %s and the bridge's span_id", rec, traceID)
	}

	b.stop() // flushes the spans
	spans := map[string]*tracepb.Span{}
	for _, s := range rcv.all() {
		spans[hex.EncodeToString(s.GetSpanId())] = s
	}
	parent := func(s *tracepb.Span) *tracepb.Span { return spans[hex.EncodeToString(s.GetParentSpanId())] }

	// host → bridge RPC → upstream request, and the server saw the upstream request's span.
	up, ok := spans[upstreamParent]
	if !ok {
		t.Fatalf("no exported span %s (the one the server received); spans: %v", upstreamParent, names(spans))
	}
	if up.GetName() != "tools/call trace_meta" || up.GetKind() != tracepb.Span_SPAN_KIND_CLIENT || hex.EncodeToString(up.GetTraceId()) != traceID {
		t.Errorf("upstream span = %q kind %v trace %x", up.GetName(), up.GetKind(), up.GetTraceId())
	}
	if !hasAttr(up, "mcp.method.name", "tools/call") || !hasAttr(up, "gen_ai.tool.name", "trace_meta") || !hasAttr(up, "mcp.protocol.version", "2026-07-28") {
		t.Errorf("upstream span attributes = %v", up.GetAttributes())
	}
	rpc := parent(up)
	if rpc == nil || rpc.GetName() != "mcpbridge.v1.BridgeService/CallTool" || rpc.GetKind() != tracepb.Span_SPAN_KIND_SERVER {
		t.Fatalf("parent of the upstream span = %v, want the CallTool server span", rpc)
	}
	if p := hex.EncodeToString(rpc.GetParentSpanId()); p != hostSpan {
		t.Errorf("parent of the RPC span = %s, want the host's %s", p, hostSpan)
	}

	// The sampling request's span: child of the call's upstream request, linked to the RPC.
	ss, ok := spans[samplingSpan]
	if !ok {
		t.Fatalf("no exported span %s (the host's sampling parent); spans: %v", samplingSpan, names(spans))
	}
	if ss.GetName() != "sampling/createMessage" || !hasAttr(ss, "mcpbridge.outcome", "answered") {
		t.Errorf("sampling span = %q %v", ss.GetName(), ss.GetAttributes())
	}
	sp := parent(ss)
	if sp == nil || sp.GetName() != "tools/call sample" {
		t.Fatalf("parent of the sampling span = %v, want the tools/call sample span", sp)
	}
	if rp := parent(sp); rp == nil || rp.GetName() != "mcpbridge.v1.BridgeService/CallTool" || hex.EncodeToString(rp.GetParentSpanId()) != hostSpan {
		t.Errorf("parent of tools/call sample = %v, want the CallTool span under the host's", rp)
	}
	if len(ss.GetLinks()) == 0 {
		t.Error("the sampling span has no link to the call")
	}
}

func names(spans map[string]*tracepb.Span) []string {
	var out []string
	for id, s := range spans {
		out = append(out, s.GetName()+"#"+id+"<"+hex.EncodeToString(s.GetParentSpanId()))
	}
	return out
}

func hasAttr(s *tracepb.Span, key, value string) bool {
	for _, a := range s.GetAttributes() {
		if a.GetKey() == key && a.GetValue().GetStringValue() == value {
			return true
		}
	}
	return false
}
