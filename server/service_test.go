package server

import (
	"context"
	"errors"
	"math"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/internal/state"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

var versions = []struct {
	server, protocol string
}{
	{serverModern, "2026-07-28"},
	{serverLegacy, "2025-11-25"},
}

func mustStruct(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestListServers(t *testing.T) {
	b := newBridge(t, bridgeConfig{opts: Options{Servers: []ServerDescription{{Name: serverLegacy}, {Name: serverModern, Description: "the demo"}, {Name: "not configured"}}}})
	r, err := b.client.ListServers(testCtx(t, ""), &pb.ListServersRequest{})
	if err != nil {
		t.Fatal(err)
	}
	want := []*pb.UpstreamServer{ // in the order of Options.Servers
		{Name: serverLegacy, Transport: pb.Transport_TRANSPORT_STDIO, ProtocolVersion: "2025-11-25"},
		{Name: serverModern, Transport: pb.Transport_TRANSPORT_STDIO, Description: "the demo"},
	}
	var got []string
	for _, s := range r.GetServers() {
		got = append(got, s.String())
	}
	var wantS []string
	for _, s := range want {
		wantS = append(wantS, s.String())
	}
	if diff := cmp.Diff(wantS, got); diff != "" {
		t.Errorf("ListServers (-want +got):\n%s", diff)
	}
}

func TestSessionLifecycle(t *testing.T) {
	b := newBridge(t, bridgeConfig{})
	ctx := testCtx(t, "")
	for _, v := range versions {
		t.Run(v.protocol, func(t *testing.T) {
			s := b.create(ctx, v.server)
			if s.GetState() != pb.SessionState_SESSION_STATE_READY || s.GetProtocolVersion() != v.protocol || s.GetServerInfo().GetName() != "mcp-bridge-demo" {
				t.Fatalf("session = %v", s)
			}
			if s.GetServerCapabilities().GetTools() == nil || s.GetHostCapabilities().GetSampling() == nil {
				t.Errorf("capabilities: %v / %v", s.GetServerCapabilities(), s.GetHostCapabilities())
			}
			g, err := b.client.GetSession(ctx, &pb.GetSessionRequest{SessionId: s.GetSessionId()})
			if err != nil || g.GetSession().GetSessionId() != s.GetSessionId() {
				t.Fatalf("GetSession = %v, %v", g, err)
			}
			// DeleteSession closes the upstream: the stdio server process is gone when it returns.
			r, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: s.GetSessionId(), Name: "pid"})
			if err != nil {
				t.Fatal(err)
			}
			pid, err := strconv.Atoi(textOf(r.GetResult()))
			if err != nil {
				t.Fatalf("pid: %v", err)
			}
			if _, err := b.client.DeleteSession(ctx, &pb.DeleteSessionRequest{SessionId: s.GetSessionId()}); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
				t.Errorf("server process %d after DeleteSession: kill(0) = %v, want ESRCH", pid, err)
			}
			_, err = b.client.GetSession(ctx, &pb.GetSessionRequest{SessionId: s.GetSessionId()})
			wantCode(t, err, codes.NotFound)
		})
	}
}

func TestListSessionsPages(t *testing.T) {
	b := newBridge(t, bridgeConfig{})
	ctx := testCtx(t, "")
	var ids []string
	for range 3 {
		ids = append(ids, b.create(ctx, serverLegacy).GetSessionId())
	}
	var got []string
	tok := ""
	for pages := 0; ; pages++ {
		r, err := b.client.ListSessions(ctx, &pb.ListSessionsRequest{PageSize: 2, PageToken: tok})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range r.GetSessions() {
			got = append(got, s.GetSessionId())
		}
		if tok = r.GetNextPageToken(); tok == "" {
			if pages != 1 {
				t.Errorf("%d pages, want 2", pages+1)
			}
			break
		}
	}
	want := []string{ids[2], ids[1], ids[0]} // newest first
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ListSessions (-want +got):\n%s", diff)
	}
	_, err := b.client.ListSessions(ctx, &pb.ListSessionsRequest{PageToken: "garbage"})
	wantCode(t, err, codes.InvalidArgument)
}

func TestToolsResourcesPrompts(t *testing.T) {
	b := newBridge(t, bridgeConfig{})
	ctx := testCtx(t, "")
	for _, v := range versions {
		t.Run(v.protocol, func(t *testing.T) {
			id := b.create(ctx, v.server).GetSessionId()
			tools, err := b.client.ListTools(ctx, &pb.ListToolsRequest{SessionId: id})
			if err != nil {
				t.Fatal(err)
			}
			var echo *pb.Tool
			for _, tl := range tools.GetTools() {
				if tl.GetName() == "echo" {
					echo = tl
				}
			}
			if echo == nil || echo.GetInputSchema().GetFields()["type"].GetStringValue() != "object" {
				t.Fatalf("echo tool = %v", echo)
			}
			r, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: id, Name: "echo", Arguments: mustStruct(t, map[string]any{"text": "hello"}), CallId: "my-call"})
			if err != nil {
				t.Fatal(err)
			}
			if textOf(r.GetResult()) != "hello" || r.GetCallId() != "my-call" {
				t.Errorf("echo = %v", r)
			}
			r, err = b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: id, Name: "add", Arguments: mustStruct(t, map[string]any{"a": 2, "b": 3})})
			if err != nil {
				t.Fatal(err)
			}
			if got := r.GetResult().GetStructuredContent().GetStructValue().GetFields()["sum"].GetNumberValue(); got != 5 {
				t.Errorf("add structured = %v", r.GetResult().GetStructuredContent())
			}
			if !strings.HasPrefix(r.GetCallId(), "call-") {
				t.Errorf("bridge-chosen call id %q", r.GetCallId())
			}
			// A tool's failure is a result, not an error.
			r, err = b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: id, Name: "fail", Arguments: mustStruct(t, map[string]any{"message": "boom"})})
			if err != nil || !r.GetResult().GetIsError() {
				t.Errorf("fail = %v, %v; want an isError result", r, err)
			}
			res, err := b.client.ListResources(ctx, &pb.ListResourcesRequest{SessionId: id})
			if err != nil || len(res.GetResources()) == 0 {
				t.Fatalf("ListResources = %v, %v", res, err)
			}
			tpl, err := b.client.ListResourceTemplates(ctx, &pb.ListResourceTemplatesRequest{SessionId: id})
			if err != nil || len(tpl.GetResourceTemplates()) == 0 {
				t.Fatalf("ListResourceTemplates = %v, %v", tpl, err)
			}
			rr, err := b.client.ReadResource(ctx, &pb.ReadResourceRequest{SessionId: id, Uri: "demo://readme"})
			if err != nil || !strings.Contains(rr.GetContents()[0].GetText(), "demo server") {
				t.Fatalf("ReadResource = %v, %v", rr, err)
			}
			_, err = b.client.ReadResource(ctx, &pb.ReadResourceRequest{SessionId: id, Uri: "demo://nope"})
			st := wantCode(t, err, codes.NotFound)
			if info := errorInfo(st.Details()); info.GetMetadata()[MetaJSONRPCCode] == "" {
				t.Errorf("ErrorInfo of a missing resource = %v", info)
			}
			ps, err := b.client.ListPrompts(ctx, &pb.ListPromptsRequest{SessionId: id})
			if err != nil || len(ps.GetPrompts()) == 0 {
				t.Fatalf("ListPrompts = %v, %v", ps, err)
			}
			gp, err := b.client.GetPrompt(ctx, &pb.GetPromptRequest{SessionId: id, Name: "greet", Arguments: map[string]string{"name": "Ada"}})
			if err != nil || len(gp.GetMessages()) == 0 || !strings.Contains(gp.GetMessages()[0].GetContent().GetText().GetText(), "Ada") {
				t.Fatalf("GetPrompt = %v, %v", gp, err)
			}
			_, err = b.client.GetPrompt(ctx, &pb.GetPromptRequest{SessionId: id, Name: "greet"})
			wantCode(t, err, codes.InvalidArgument) // required argument missing: -32602 upstream
			c, err := b.client.Complete(ctx, &pb.CompleteRequest{SessionId: id, Ref: &pb.CompleteRequest_PromptName{PromptName: "greet"}, ArgumentName: "style", ArgumentValue: "f"})
			if err != nil || len(c.GetValues()) == 0 {
				t.Fatalf("Complete = %v, %v", c, err)
			}
			if _, err := b.client.SetLogLevel(ctx, &pb.SetLogLevelRequest{SessionId: id, Level: pb.LoggingLevel_LOGGING_LEVEL_INFO}); err != nil {
				t.Errorf("SetLogLevel: %v", err)
			}
			// On 2026-07-28 Ping is a server/discover round trip.
			if _, err := b.client.Ping(ctx, &pb.PingRequest{SessionId: id}); err != nil {
				t.Errorf("Ping on %s: %v", v.protocol, err)
			}
			if _, err := b.client.SubscribeResource(ctx, &pb.SubscribeResourceRequest{SessionId: id, Uri: "demo://counter"}); err != nil {
				t.Errorf("SubscribeResource: %v", err)
			}
		})
	}
}

func errorInfo(details []any) *errdetails.ErrorInfo {
	for _, d := range details {
		if i, ok := d.(*errdetails.ErrorInfo); ok {
			return i
		}
	}
	return nil
}

func badRequest(details []any) *errdetails.BadRequest {
	for _, d := range details {
		if b, ok := d.(*errdetails.BadRequest); ok {
			return b
		}
	}
	return nil
}

func violationFields(details []any) []string {
	var out []string
	for _, v := range badRequest(details).GetFieldViolations() {
		out = append(out, v.GetField())
	}
	return out
}

func TestSamplingOverConnect(t *testing.T) {
	b := newBridge(t, bridgeConfig{})
	ctx := testCtx(t, "")
	for _, v := range versions {
		t.Run(v.protocol, func(t *testing.T) {
			id := b.create(ctx, v.server).GetSessionId()
			h := b.connect(ctx)
			if got := h.Attach(id); !cmp.Equal(got.GetSessionIds(), []string{id}) {
				t.Fatalf("attached = %v", got)
			}
			call := b.callAsync(ctx, &pb.CallToolRequest{SessionId: id, Name: "sample", Arguments: mustStruct(t, map[string]any{"prompt": "say hi"}), CallId: "c1"})
			req := h.NextRequest()
			wantDelivery, wantOrigin, wantName := pb.Delivery_DELIVERY_MULTI_ROUND_TRIP, "c1", "sample"
			if v.protocol == "2025-11-25" {
				// A push over stdio names no call: it is the session's.
				wantDelivery, wantOrigin, wantName = pb.Delivery_DELIVERY_LEGACY_PUSH, "", ""
			}
			if req.GetSampling() == nil || req.GetOriginCallId() != wantOrigin || req.GetOriginName() != wantName {
				t.Fatalf("server request = %v", req)
			}
			if req.GetDelivery() != wantDelivery {
				t.Errorf("delivery = %v, want %v", req.GetDelivery(), wantDelivery)
			}
			if got := req.GetSampling().GetMessages()[0].GetContent()[0].GetText().GetText(); got != "say hi" {
				t.Errorf("sampling prompt = %q", got)
			}
			ack := h.Reply(req.GetRequestId(), &pb.HostAnswer{Answer: &pb.HostAnswer_Sampling{Sampling: &pb.CreateMessageResult{
				Role: pb.Role_ROLE_ASSISTANT, Model: "test-model", Content: []*pb.ContentBlock{{Content: &pb.ContentBlock_Text{Text: &pb.TextContent{Text: "hi there"}}}},
			}}})
			if !ack.GetAccepted() {
				t.Fatalf("ack = %v", ack)
			}
			if e := h.NextEnded(req.GetRequestId()); e.GetOutcome() != pb.RequestOutcome_REQUEST_OUTCOME_ANSWERED {
				t.Errorf("ended = %v", e)
			}
			res := await(t, call)
			if res.Err != nil || textOf(res.Resp.GetResult()) != "hi there" {
				t.Fatalf("sample = %v, %v", res.Resp, res.Err)
			}
		})
	}
}

func TestFirstAnswerWins(t *testing.T) {
	b := newBridge(t, bridgeConfig{})
	ctx := testCtx(t, "")
	id := b.create(ctx, serverModern).GetSessionId()
	h1, h2 := b.connect(ctx), b.connect(ctx)
	h1.Attach(id)
	h2.Attach(id)
	call := b.callAsync(ctx, &pb.CallToolRequest{SessionId: id, Name: "elicit"})
	r1, r2 := h1.NextRequest(), h2.NextRequest()
	if r1.GetRequestId() != r2.GetRequestId() || r1.GetElicitation() == nil {
		t.Fatalf("requests %v / %v", r1, r2)
	}
	accept := &pb.HostAnswer{Answer: &pb.HostAnswer_Elicitation{Elicitation: &pb.ElicitResult{Action: pb.ElicitAction_ELICIT_ACTION_ACCEPT, Content: mustStruct(t, map[string]any{"name": "Ada", "age": 36})}}}
	if ack := h1.Reply(r1.GetRequestId(), accept); !ack.GetAccepted() {
		t.Fatalf("first answer refused: %v", ack)
	}
	ack := h2.Reply(r2.GetRequestId(), accept)
	if ack.GetAccepted() || codes.Code(ack.GetError().GetCode()) != codes.FailedPrecondition {
		t.Errorf("second answer ack = %v, want FAILED_PRECONDITION", ack)
	}
	if e := h1.NextEnded(r1.GetRequestId()); e.GetOutcome() != pb.RequestOutcome_REQUEST_OUTCOME_ANSWERED {
		t.Errorf("winner sees %v", e.GetOutcome())
	}
	if e := h2.NextEnded(r2.GetRequestId()); e.GetOutcome() != pb.RequestOutcome_REQUEST_OUTCOME_ANSWERED_ELSEWHERE {
		t.Errorf("other host sees %v", e.GetOutcome())
	}
	res := await(t, call)
	if res.Err != nil || !strings.Contains(textOf(res.Resp.GetResult()), "name=Ada") {
		t.Fatalf("elicit = %v, %v", res.Resp, res.Err)
	}
}

func TestBadAnswers(t *testing.T) {
	b := newBridge(t, bridgeConfig{})
	ctx := testCtx(t, "")
	id := b.create(ctx, serverLegacy).GetSessionId()
	h := b.connect(ctx)
	h.Attach(id)
	call := b.callAsync(ctx, &pb.CallToolRequest{SessionId: id, Name: "elicit"})
	req := h.NextRequest()
	rid := req.GetRequestId()
	tests := []struct {
		name       string
		answer     *pb.HostAnswer
		code       codes.Code
		violations []string
	}{
		{"wrong kind", &pb.HostAnswer{Answer: &pb.HostAnswer_Roots{Roots: &pb.ListRootsResult{}}}, codes.InvalidArgument, []string{"reply.answer.roots"}},
		{"no answer set", &pb.HostAnswer{}, codes.InvalidArgument, []string{"reply.answer"}},
		{"schema mismatch", &pb.HostAnswer{Answer: &pb.HostAnswer_Elicitation{Elicitation: &pb.ElicitResult{Action: pb.ElicitAction_ELICIT_ACTION_ACCEPT, Content: mustStruct(t, map[string]any{"name": "Ada", "age": "old"})}}}, codes.InvalidArgument, []string{"reply.answer.elicitation.content.age"}},
		{"missing required", &pb.HostAnswer{Answer: &pb.HostAnswer_Elicitation{Elicitation: &pb.ElicitResult{Action: pb.ElicitAction_ELICIT_ACTION_ACCEPT, Content: mustStruct(t, map[string]any{"age": 3})}}}, codes.InvalidArgument, []string{"reply.answer.elicitation.content.name"}},
		{"no action", &pb.HostAnswer{Answer: &pb.HostAnswer_Elicitation{Elicitation: &pb.ElicitResult{}}}, codes.InvalidArgument, []string{"reply.answer.elicitation.action"}},
		{"NaN content", &pb.HostAnswer{Answer: &pb.HostAnswer_Elicitation{Elicitation: &pb.ElicitResult{Action: pb.ElicitAction_ELICIT_ACTION_ACCEPT, Content: &structpb.Struct{Fields: map[string]*structpb.Value{"name": structpb.NewNumberValue(math.NaN())}}}}}, codes.InvalidArgument, []string{"reply.answer.elicitation.content.name"}},
		{"empty value", &pb.HostAnswer{Answer: &pb.HostAnswer_Elicitation{Elicitation: &pb.ElicitResult{Action: pb.ElicitAction_ELICIT_ACTION_ACCEPT, Content: &structpb.Struct{Fields: map[string]*structpb.Value{"name": {}}}}}}, codes.InvalidArgument, []string{"reply.answer.elicitation.content.name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ack := h.Reply(rid, tt.answer)
			if ack.GetAccepted() || codes.Code(ack.GetError().GetCode()) != tt.code {
				t.Fatalf("ack = %v, want %v", ack, tt.code)
			}
			var details []any
			for _, d := range ack.GetError().GetDetails() {
				m, err := d.UnmarshalNew()
				if err == nil {
					details = append(details, m)
				}
			}
			if diff := cmp.Diff(tt.violations, violationFields(details)); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
	// The request is still pending after every refusal, and unknown requests are NOT_FOUND.
	if ack := h.Reply("req-nope", &pb.HostAnswer{Answer: &pb.HostAnswer_Elicitation{Elicitation: &pb.ElicitResult{Action: pb.ElicitAction_ELICIT_ACTION_DECLINE}}}); codes.Code(ack.GetError().GetCode()) != codes.NotFound {
		t.Errorf("unknown request ack = %v", ack)
	}
	if ack := h.Reply(rid, &pb.HostAnswer{Answer: &pb.HostAnswer_Elicitation{Elicitation: &pb.ElicitResult{Action: pb.ElicitAction_ELICIT_ACTION_DECLINE}}}); !ack.GetAccepted() {
		t.Fatalf("decline ack = %v", ack)
	}
	res := await(t, call)
	if res.Err != nil || textOf(res.Resp.GetResult()) != "declined" {
		t.Fatalf("elicit = %v, %v", res.Resp, res.Err)
	}
}

// A host that drops its stream during a pending elicitation and attaches again gets the request first and
// can still answer it.
func TestReattachDuringPendingElicitation(t *testing.T) {
	b := newBridge(t, bridgeConfig{})
	ctx := testCtx(t, "")
	for _, v := range versions {
		t.Run(v.protocol, func(t *testing.T) {
			id := b.create(ctx, v.server).GetSessionId()
			h1 := b.connect(ctx)
			h1.Attach(id)
			call := b.callAsync(ctx, &pb.CallToolRequest{SessionId: id, Name: "elicit"})
			first := h1.NextRequest()
			h1.Close() // the host drops

			h2 := b.connect(ctx)
			h2.Attach(id)
			again := h2.NextRequest()
			if again.GetRequestId() != first.GetRequestId() {
				t.Fatalf("re-attached host got %v, want the pending %s", again, first.GetRequestId())
			}
			ack := h2.Reply(again.GetRequestId(), &pb.HostAnswer{Answer: &pb.HostAnswer_Elicitation{Elicitation: &pb.ElicitResult{Action: pb.ElicitAction_ELICIT_ACTION_ACCEPT, Content: mustStruct(t, map[string]any{"name": "Grace"})}}})
			if !ack.GetAccepted() {
				t.Fatalf("ack = %v", ack)
			}
			res := await(t, call)
			if res.Err != nil || !strings.Contains(textOf(res.Resp.GetResult()), "name=Grace") {
				t.Fatalf("elicit = %v, %v", res.Resp, res.Err)
			}
		})
	}
}

// REST hosts answer through WatchEvents and RespondToRequest; here over gRPC, the REST path is in e2e.
func TestRootsOverWatchAndRespond(t *testing.T) {
	b := newBridge(t, bridgeConfig{})
	ctx := testCtx(t, "")
	for _, v := range versions {
		t.Run(v.protocol, func(t *testing.T) {
			id := b.create(ctx, v.server).GetSessionId()
			wctx, stop := context.WithCancel(ctx)
			defer stop()
			w, err := b.client.WatchEvents(wctx, &pb.WatchEventsRequest{SessionId: id})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.Header(); err != nil { // the watch is registered once headers arrive
				t.Fatal(err)
			}
			call := b.callAsync(ctx, &pb.CallToolRequest{SessionId: id, Name: "list_roots"})
			var req *pb.ServerRequest
			for req == nil {
				m, err := w.Recv()
				if err != nil {
					t.Fatal(err)
				}
				req = m.GetEvent().GetServerRequest()
			}
			if req.GetRoots() == nil {
				t.Fatalf("request = %v", req)
			}
			pending, err := b.client.ListPendingRequests(ctx, &pb.ListPendingRequestsRequest{SessionId: id})
			if err != nil || len(pending.GetRequests()) != 1 || pending.GetRequests()[0].GetRequestId() != req.GetRequestId() {
				t.Fatalf("ListPendingRequests = %v, %v", pending, err)
			}
			_, err = b.client.RespondToRequest(ctx, &pb.RespondToRequestRequest{SessionId: id, RequestId: req.GetRequestId(), Answer: &pb.HostAnswer{Answer: &pb.HostAnswer_Roots{Roots: &pb.ListRootsResult{Roots: []*pb.Root{{Uri: "http://not-a-file"}}}}}})
			st := wantCode(t, err, codes.InvalidArgument)
			if diff := cmp.Diff([]string{"answer.roots.roots[0].uri"}, violationFields(st.Details())); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
			_, err = b.client.RespondToRequest(ctx, &pb.RespondToRequestRequest{SessionId: id, RequestId: req.GetRequestId(), Answer: &pb.HostAnswer{Answer: &pb.HostAnswer_Roots{Roots: &pb.ListRootsResult{Roots: []*pb.Root{{Uri: "file:///work", Name: "work"}}}}}})
			if err != nil {
				t.Fatal(err)
			}
			for {
				m, err := w.Recv()
				if err != nil {
					t.Fatal(err)
				}
				if e := m.GetEvent().GetRequestEnded(); e != nil {
					if e.GetOutcome() != pb.RequestOutcome_REQUEST_OUTCOME_ANSWERED {
						t.Errorf("ended = %v", e)
					}
					break
				}
			}
			res := await(t, call)
			if res.Err != nil || !strings.Contains(textOf(res.Resp.GetResult()), "work: file:///work") {
				t.Fatalf("list_roots = %v, %v", res.Resp, res.Err)
			}
			_, err = b.client.RespondToRequest(ctx, &pb.RespondToRequestRequest{SessionId: id, RequestId: req.GetRequestId(), Answer: &pb.HostAnswer{Answer: &pb.HostAnswer_Roots{Roots: &pb.ListRootsResult{}}}})
			wantCode(t, err, codes.FailedPrecondition) // already ended
		})
	}
}

func TestStreamCallTool(t *testing.T) {
	b := newBridge(t, bridgeConfig{})
	ctx := testCtx(t, "")
	for _, v := range versions {
		t.Run(v.protocol, func(t *testing.T) {
			id := b.create(ctx, v.server).GetSessionId()
			st, err := b.client.StreamCallTool(ctx, &pb.StreamCallToolRequest{SessionId: id, Name: "long_operation", Arguments: mustStruct(t, map[string]any{"durationSeconds": 0.2, "steps": 3})})
			if err != nil {
				t.Fatal(err)
			}
			var progress []float64
			var result *pb.CallToolResult
			for result == nil {
				m, err := st.Recv()
				if err != nil {
					t.Fatal(err)
				}
				if p := m.GetProgress(); p != nil {
					progress = append(progress, p.GetProgress())
				}
				result = m.GetResult()
			}
			// The last notification may lose the race with the result inside the SDK (it is dispatched
			// concurrently with the response); the others arrive, in order.
			if len(progress) < 2 || !slices.IsSorted(progress) || progress[0] != 1 || progress[len(progress)-1] > 3 {
				t.Errorf("progress = %v, want 1, 2[, 3]", progress)
			}
			if !strings.Contains(textOf(result), "finished") {
				t.Errorf("result = %v", result)
			}

			// A server request of the call shows on its stream; answer it with RespondToRequest.
			st, err = b.client.StreamCallTool(ctx, &pb.StreamCallToolRequest{SessionId: id, Name: "sample", Arguments: mustStruct(t, map[string]any{"prompt": "p"}), CallId: "sc"})
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for {
				m, err := st.Recv()
				if err != nil {
					t.Fatal(err)
				}
				if m.GetCallId() != "sc" {
					t.Errorf("call id %q", m.GetCallId())
				}
				if r := m.GetServerRequest(); r != nil {
					kinds = append(kinds, "request")
					_, err := b.client.RespondToRequest(ctx, &pb.RespondToRequestRequest{SessionId: id, RequestId: r.GetRequestId(), Answer: &pb.HostAnswer{Answer: &pb.HostAnswer_Sampling{Sampling: &pb.CreateMessageResult{
						Model: "m", Content: []*pb.ContentBlock{{Content: &pb.ContentBlock_Text{Text: &pb.TextContent{Text: "sampled"}}}},
					}}}})
					if err != nil {
						t.Fatal(err)
					}
				}
				if m.GetRequestEnded() != nil {
					kinds = append(kinds, "ended")
				}
				if r := m.GetResult(); r != nil {
					kinds = append(kinds, "result")
					if textOf(r) != "sampled" {
						t.Errorf("result = %v", r)
					}
					break
				}
			}
			if diff := cmp.Diff([]string{"request", "ended", "result"}, kinds); diff != "" {
				t.Errorf("stream (-want +got):\n%s", diff)
			}
		})
	}
}

// A gRPC deadline on a call cancels the MCP call upstream: the server's tool sees its context cancelled.
func TestDeadlineCancelsUpstream(t *testing.T) {
	b := newBridge(t, bridgeConfig{})
	for _, v := range versions {
		t.Run(v.protocol, func(t *testing.T) {
			id := b.create(testCtx(t, ""), v.server).GetSessionId()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			done := b.callAsync(ctx, &pb.CallToolRequest{SessionId: id, Name: "block", Arguments: mustStruct(t, map[string]any{"tag": v.protocol})})
			if got := await(t, b.reports.Lines); got != "started "+v.protocol {
				t.Fatalf("report %q", got)
			}
			res := await(t, done)
			wantCode(t, res.Err, codes.DeadlineExceeded)
			if got := await(t, b.reports.Lines); got != "cancelled "+v.protocol {
				t.Fatalf("report %q, want the tool to see the cancellation", got)
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	b := newBridge(t, bridgeConfig{})
	ctx := testCtx(t, "")
	id := b.create(ctx, serverModern).GetSessionId()
	nan := &structpb.Struct{Fields: map[string]*structpb.Value{"text": structpb.NewNumberValue(math.Inf(1))}}
	tests := []struct {
		name       string
		call       func() error
		code       codes.Code
		violations []string
	}{
		{"empty session id", func() error {
			_, err := b.client.ListTools(ctx, &pb.ListToolsRequest{})
			return err
		}, codes.InvalidArgument, []string{"session_id"}},
		{"unknown session", func() error {
			_, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: "s-nope", Name: "echo"})
			return err
		}, codes.NotFound, nil},
		{"empty tool name", func() error {
			_, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: id})
			return err
		}, codes.InvalidArgument, []string{"name"}},
		{"infinite argument", func() error {
			_, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: id, Name: "echo", Arguments: nan})
			return err
		}, codes.InvalidArgument, []string{"arguments.text"}},
		{"reserved meta", func() error {
			_, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: id, Name: "echo", Meta: mustStruct(t, map[string]any{"io.modelcontextprotocol/x": 1})})
			return err
		}, codes.InvalidArgument, []string{"_meta.io.modelcontextprotocol/x"}},
		{"unknown tool", func() error {
			_, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: id, Name: "nope"})
			return err
		}, codes.InvalidArgument, nil},
		{"unknown server", func() error {
			_, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "nope"})
			return err
		}, codes.NotFound, nil},
		{"bad protocol version", func() error {
			_, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: serverModern, ProtocolVersion: "1999-01-01"})
			return err
		}, codes.InvalidArgument, []string{"protocolVersion"}},
		{"respond without ids", func() error {
			_, err := b.client.RespondToRequest(ctx, &pb.RespondToRequestRequest{})
			return err
		}, codes.InvalidArgument, []string{"session_id", "request_id", "answer"}},
		{"no log level", func() error {
			_, err := b.client.SetLogLevel(ctx, &pb.SetLogLevelRequest{SessionId: id})
			return err
		}, codes.InvalidArgument, []string{"level"}},
		{"complete without ref", func() error {
			_, err := b.client.Complete(ctx, &pb.CompleteRequest{SessionId: id})
			return err
		}, codes.InvalidArgument, []string{"ref", "argument_name"}},
		{"bad task ttl", func() error {
			_, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: id, Name: "echo", Task: &pb.TaskOptions{Ttl: durationpb.New(-time.Second)}})
			return err
		}, codes.InvalidArgument, []string{"task.ttl"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := wantCode(t, tt.call(), tt.code)
			if tt.violations != nil {
				if diff := cmp.Diff(tt.violations, violationFields(st.Details())); diff != "" {
					t.Errorf("violations (-want +got):\n%s", diff)
				}
			}
			if errorInfo(st.Details()).GetDomain() != ErrorDomain {
				t.Errorf("no ErrorInfo in %v", st.Details())
			}
		})
	}
}

func TestAuthAndOwnership(t *testing.T) {
	b := newBridge(t, bridgeConfig{opts: Options{Tokens: map[string]string{"tok-alice": "alice", "tok-bob": "bob"}}})
	_, err := b.client.ListSessions(testCtx(t, ""), &pb.ListSessionsRequest{})
	wantCode(t, err, codes.Unauthenticated)
	_, err = b.client.ListSessions(testCtx(t, "tok-mallory"), &pb.ListSessionsRequest{})
	wantCode(t, err, codes.Unauthenticated)

	alice, bob := testCtx(t, "tok-alice"), testCtx(t, "tok-bob")
	id := b.create(alice, serverModern).GetSessionId()
	for name, call := range map[string]func() error{
		"GetSession": func() error {
			_, err := b.client.GetSession(bob, &pb.GetSessionRequest{SessionId: id})
			return err
		},
		"CallTool": func() error {
			_, err := b.client.CallTool(bob, &pb.CallToolRequest{SessionId: id, Name: "echo"})
			return err
		},
		"DeleteSession": func() error {
			_, err := b.client.DeleteSession(bob, &pb.DeleteSessionRequest{SessionId: id})
			return err
		},
		"ListPendingRequests": func() error {
			_, err := b.client.ListPendingRequests(bob, &pb.ListPendingRequestsRequest{SessionId: id})
			return err
		},
	} {
		wantCode(t, call(), codes.NotFound)
		_ = name
	}
	ls, err := b.client.ListSessions(bob, &pb.ListSessionsRequest{})
	if err != nil || len(ls.GetSessions()) != 0 {
		t.Errorf("bob's ListSessions = %v, %v", ls, err)
	}
	h := b.connect(bob)
	att := h.Attach(id)
	if len(att.GetSessionIds()) != 0 || len(att.GetFailures()) != 1 || codes.Code(att.GetFailures()[0].GetStatus().GetCode()) != codes.NotFound {
		t.Errorf("bob attaching alice's session = %v", att)
	}
	if _, err := b.client.GetSession(alice, &pb.GetSessionRequest{SessionId: id}); err != nil {
		t.Errorf("alice's GetSession: %v", err)
	}
}

func TestSessionCapPerPrincipal(t *testing.T) {
	b := newBridge(t, bridgeConfig{limits: mcpcore.Limits{MaxSessionsPerOwner: 1}})
	ctx := testCtx(t, "")
	b.create(ctx, serverLegacy)
	_, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: serverLegacy})
	wantCode(t, err, codes.ResourceExhausted)
}

func TestIdleTimeout(t *testing.T) {
	b := newBridge(t, bridgeConfig{opts: Options{IdleTimeout: 200 * time.Millisecond}})
	ctx := testCtx(t, "")
	id := b.create(ctx, serverLegacy).GetSessionId()
	sess, err := b.core.Session(id)
	if err != nil {
		t.Fatal(err)
	}
	sub := sess.Subscribe(0) // a core subscription does not count as use
	defer sub.Close()
	var last mcpcore.Event
	for ev := range sub.C() {
		last = *ev
	}
	if last.Kind != mcpcore.EventStateChanged || last.State != mcpcore.StateClosed {
		t.Errorf("last event %+v, want the closed state", last)
	}
	// Closed sessions stay visible for a while, CLOSED with their reason; deleting one succeeds and
	// forgets it.
	got, err := b.client.GetSession(ctx, &pb.GetSessionRequest{SessionId: id})
	if err != nil || got.GetSession().GetState() != pb.SessionState_SESSION_STATE_CLOSED || got.GetSession().GetStateReason() != "idle timeout" {
		t.Fatalf("GetSession of an idle-closed session = %v, %v; want CLOSED \"idle timeout\"", got, err)
	}
	if _, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: id, Name: "echo"}); err == nil {
		t.Error("a call on a closed session succeeded")
	}
	if _, err := b.client.DeleteSession(ctx, &pb.DeleteSessionRequest{SessionId: id}); err != nil {
		t.Fatalf("DeleteSession of a closed session: %v", err)
	}
	_, err = b.client.GetSession(ctx, &pb.GetSessionRequest{SessionId: id})
	wantCode(t, err, codes.NotFound)
}

// TestAttachedSessionIsNotIdle: a session a host is attached to is not idle, however long since its last
// call. A session opened after it and never used closes as idle; the attached one, unused for longer, stays.
func TestAttachedSessionIsNotIdle(t *testing.T) {
	b := newBridge(t, bridgeConfig{opts: Options{IdleTimeout: 50 * time.Millisecond}})
	ctx := testCtx(t, "")
	id := b.create(ctx, serverLegacy).GetSessionId()
	h := b.connect(ctx)
	h.Attach(id)
	control := b.create(ctx, serverLegacy).GetSessionId()
	sess, err := b.core.Session(control)
	if err != nil {
		t.Fatal(err)
	}
	sub := sess.Subscribe(0) // a core subscription does not count as use
	defer sub.Close()
	for range sub.C() { // ends when the control session closes: the reaper found it idle
	}
	if st, why := sess.State(); st != mcpcore.StateClosed || why != idleReason {
		t.Fatalf("the unused session is %s (%s), want closed as idle", st, why)
	}
	got, err := b.client.GetSession(ctx, &pb.GetSessionRequest{SessionId: id})
	if err != nil || got.GetSession().GetState() == pb.SessionState_SESSION_STATE_CLOSED {
		t.Fatalf("the attached session = %v, %v; want it open (a host is attached)", got, err)
	}
}

// Shutdown drains: host streams end, a pending elicitation gets its policy default (cancel), sessions
// close.
func TestCloseDrains(t *testing.T) {
	b := newBridge(t, bridgeConfig{})
	ctx := testCtx(t, "")
	id := b.create(ctx, serverLegacy).GetSessionId()
	h := b.connect(ctx)
	h.Attach(id)
	call := b.callAsync(ctx, &pb.CallToolRequest{SessionId: id, Name: "elicit"})
	req := h.NextRequest()
	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.svc.Close(cctx); err != nil {
		t.Fatal(err)
	}
	<-h.Ended()
	wantCode(t, h.Err(), codes.Unavailable)
	ended, err := b.core.Dispatcher().Wait(ctx, req.GetRequestId())
	if err != nil || ended.Outcome != mcpcore.OutcomeSessionClosed {
		t.Errorf("request ended %+v, %v; want session closed", ended, err)
	}
	res := await(t, call)
	if res.Err == nil && textOf(res.Resp.GetResult()) != "cancelled" {
		t.Errorf("call after drain = %v", res.Resp)
	}
	_, err = b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: serverLegacy})
	wantCode(t, err, codes.Unavailable)
	if len(b.core.Sessions("")) != 0 {
		t.Error("sessions left after Close")
	}
}

// EndStreams ends host streams with UNAVAILABLE and refuses new sessions; sessions stay until Close.
func TestEndStreams(t *testing.T) {
	b := newBridge(t, bridgeConfig{})
	ctx := testCtx(t, "")
	id := b.create(ctx, serverLegacy).GetSessionId()
	h := b.connect(ctx)
	h.Attach(id)
	w, err := b.client.WatchEvents(ctx, &pb.WatchEventsRequest{SessionId: id})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Header(); err != nil {
		t.Fatal(err)
	}
	b.svc.EndStreams()
	for {
		if _, err := w.Recv(); err != nil {
			wantCode(t, err, codes.Unavailable)
			break
		}
	}
	<-h.Ended()
	wantCode(t, h.Err(), codes.Unavailable)
	_, err = b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: serverLegacy})
	wantCode(t, err, codes.Unavailable)
	if _, err := b.client.GetSession(ctx, &pb.GetSessionRequest{SessionId: id}); err != nil {
		t.Errorf("session after EndStreams: %v", err)
	}
}

// A host that cancels a server request: the server gets the user's "cancel" (elicitation), the hosts see
// CANCELLED_BY_HOST, and an answer afterwards is refused.
func TestHostCancels(t *testing.T) {
	b := newBridge(t, bridgeConfig{})
	ctx := testCtx(t, "")
	id := b.create(ctx, serverModern).GetSessionId()
	h := b.connect(ctx)
	h.Attach(id)
	call := b.callAsync(ctx, &pb.CallToolRequest{SessionId: id, Name: "elicit"})
	req := h.NextRequest()
	h.Send(&pb.ConnectRequest{Action: &pb.ConnectRequest_Cancel{Cancel: &pb.CancelServerRequest{RequestId: req.GetRequestId(), Reason: "user closed the dialog"}}})
	if ack := h.Next(func(m *pb.ConnectResponse) bool { return m.GetReplyAck() != nil }).GetReplyAck(); !ack.GetAccepted() {
		t.Fatalf("cancel ack = %v", ack)
	}
	if e := h.NextEnded(req.GetRequestId()); e.GetOutcome() != pb.RequestOutcome_REQUEST_OUTCOME_CANCELLED_BY_HOST {
		t.Errorf("ended = %v", e)
	}
	res := await(t, call)
	if res.Err != nil || textOf(res.Resp.GetResult()) != "cancelled" {
		t.Fatalf("elicit = %v, %v", res.Resp, res.Err)
	}
	ack := h.Reply(req.GetRequestId(), &pb.HostAnswer{Answer: &pb.HostAnswer_Elicitation{Elicitation: &pb.ElicitResult{Action: pb.ElicitAction_ELICIT_ACTION_DECLINE}}})
	if codes.Code(ack.GetError().GetCode()) != codes.FailedPrecondition {
		t.Errorf("late answer ack = %v", ack)
	}
	// Detaching keeps the stream; messages without an action are refused, not fatal.
	h.Send(&pb.ConnectRequest{Action: &pb.ConnectRequest_Detach{Detach: &pb.DetachSessions{SessionIds: []string{id}}}})
	if att := h.Next(func(m *pb.ConnectResponse) bool { return m.GetAttached() != nil }).GetAttached(); len(att.GetSessionIds()) != 0 {
		t.Errorf("after detach: %v", att)
	}
	h.Send(&pb.ConnectRequest{})
	if ack := h.Next(func(m *pb.ConnectResponse) bool { return m.GetReplyAck() != nil }).GetReplyAck(); codes.Code(ack.GetError().GetCode()) != codes.InvalidArgument {
		t.Errorf("empty message ack = %v", ack)
	}
}

// A receiver whose subscription dropped the request's creation event still gets the request: resync,
// run when the core signals a gap, lists what is pending and was not delivered, once.
func TestFeedResyncDeliversLostRequests(t *testing.T) {
	b := newBridge(t, bridgeConfig{})
	ctx := testCtx(t, "")
	v := versions[0]
	id := b.create(ctx, v.server).GetSessionId()
	sess, err := b.core.Session(id)
	if err != nil {
		t.Fatal(err)
	}
	feed := b.svc.newEventFeed(LocalPrincipal, id, sess, "", nil)
	defer feed.sub.Close()
	h := b.connect(ctx)
	h.Attach(id)
	call := b.callAsync(ctx, &pb.CallToolRequest{SessionId: id, Name: "sample", Arguments: mustStruct(t, map[string]any{"prompt": "hi"})})
	req := h.NextRequest() // the request is pending now; the feed above never read its creation event
	got := feed.resync()
	if len(got) != 1 || got[0].GetServerRequest().GetRequestId() != req.GetRequestId() {
		t.Fatalf("resync = %v, want the pending request %s", got, req.GetRequestId())
	}
	if again := feed.resync(); len(again) != 0 {
		t.Fatalf("second resync = %v, want nothing (already delivered)", again)
	}
	h.Reply(req.GetRequestId(), &pb.HostAnswer{Answer: &pb.HostAnswer_Sampling{Sampling: &pb.CreateMessageResult{
		Role: pb.Role_ROLE_ASSISTANT, Model: "m", Content: []*pb.ContentBlock{{Content: &pb.ContentBlock_Text{Text: &pb.TextContent{Text: "ok"}}}},
	}}})
	if res := await(t, call); res.Err != nil {
		t.Fatal(res.Err)
	}
	feed.resync() // the request ended: forgotten
	if len(feed.seen) != 0 {
		t.Errorf("seen after the request ended = %v", feed.seen)
	}
}

// bridgeGoroutines counts the goroutines whose stack passes through this module's code.
func bridgeGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		if n := runtime.Stack(buf, true); n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	n := 0
	for g := range strings.SplitSeq(string(buf), "\n\n") {
		if strings.Contains(g, "github.com/mcp-bridge/mcp-bridge/") {
			n++
		}
	}
	return n
}

// A Connect stream serves its attached sessions from its own goroutine: attaching many sessions adds no
// goroutine per session (it added a forwarder each), and a session that closes leaves the stream's list.
func TestConnectAttachmentsShareTheSender(t *testing.T) {
	b := newBridge(t, bridgeConfig{})
	ctx := testCtx(t, "")
	const n = 12
	var ids []string
	for range n {
		ids = append(ids, b.create(ctx, serverModern).GetSessionId())
	}
	h := b.connect(ctx)
	h.Attach(ids[0]) // the stream's own goroutines are running now: the ack came through them
	// Counted: the goroutines running the bridge's own code, which an attachment's would. gRPC's and the
	// runtime's come and go on their own (a unary call's handler goroutine ends after its answer is sent), so
	// counting every goroutine needed a settling pause; the bridge's own are there once the ack is.
	before := bridgeGoroutines()
	if got := h.Attach(ids[1:]...); len(got.GetSessionIds()) != n {
		t.Fatalf("attached %v, want %d sessions", got.GetSessionIds(), n)
	}
	if added := bridgeGoroutines() - before; added >= n-1 {
		t.Errorf("attaching %d sessions added %d goroutines, want fewer than one each", n-1, added)
	}
	// Every attached session's requests still reach the host.
	call := b.callAsync(ctx, &pb.CallToolRequest{SessionId: ids[n-1], Name: "elicit"})
	req := h.NextRequest()
	if req.GetSessionId() != ids[n-1] {
		t.Fatalf("request of session %s, want %s", req.GetSessionId(), ids[n-1])
	}
	h.Reply(req.GetRequestId(), &pb.HostAnswer{Answer: &pb.HostAnswer_Elicitation{Elicitation: &pb.ElicitResult{Action: pb.ElicitAction_ELICIT_ACTION_DECLINE}}})
	if res := await(t, call); res.Err != nil {
		t.Fatalf("elicit: %v", res.Err)
	}
	// A session deleted while attached: its final state reaches the host, and the stream lets it go.
	if _, err := b.client.DeleteSession(ctx, &pb.DeleteSessionRequest{SessionId: ids[0]}); err != nil {
		t.Fatal(err)
	}
	h.Next(func(m *pb.ConnectResponse) bool {
		sc := m.GetEvent().GetSessionState()
		return m.GetEvent().GetSessionId() == ids[0] && sc != nil && sc.GetState() == pb.SessionState_SESSION_STATE_CLOSED
	})
	got := h.Attach(ids[1])
	if slices.Contains(got.GetSessionIds(), ids[0]) || len(got.GetSessionIds()) != n-1 {
		t.Errorf("after deleting %s the stream has %v", ids[0], got.GetSessionIds())
	}
}

// A request kept for the next process — the bridge stops with a state store — has not ended for the hosts:
// no event says it ended (a host told SESSION_CLOSED forgets it, and drops the answer its person gives after
// the restart, when the request is raised again under its id). The call that waited on it still fails at
// once with UNAVAILABLE, so that its client resumes it on the next process.
func TestDrainKeepsRequestsFromHosts(t *testing.T) {
	b := newBridge(t, bridgeConfig{store: state.NewMemory()})
	ctx := testCtx(t, "")
	id := b.create(ctx, serverModern).GetSessionId()
	sess, err := b.core.Session(id)
	if err != nil {
		t.Fatal(err)
	}
	sub := sess.Subscribe(64) // what every host's feed of the session reads
	defer sub.Close()
	h := b.connect(ctx)
	h.Attach(id)
	call := b.callAsync(ctx, &pb.CallToolRequest{SessionId: id, Name: "elicit"})
	req := h.NextRequest()
	b.svc.EndStreams()
	<-h.Ended()
	wantCode(t, h.Err(), codes.Unavailable)
	wantCode(t, await(t, call).Err, codes.Unavailable)
	for {
		select {
		case ev := <-sub.C():
			if ev.Kind == mcpcore.EventRequestEnded && ev.Ended.RequestID == req.GetRequestId() {
				t.Fatalf("the session's events say the kept request ended: %+v", *ev.Ended)
			}
			continue
		default:
		}
		break
	}
	for _, m := range h.Received() {
		if e := m.GetEvent().GetRequestEnded(); e.GetRequestId() == req.GetRequestId() {
			t.Errorf("the host was told the kept request ended: %v", e)
		}
	}
}

// "A host is attached" has one owner, the session (mcpcore.Session.HostsAttached): the host-streams gauge
// is the sum of the sessions' counts, and follows attach and detach on Connect (issue 34).
func TestHostsAttachedOneCount(t *testing.T) {
	b := newBridge(t, bridgeConfig{})
	ctx := testCtx(t, "")
	id1, id2 := b.create(ctx, serverLegacy).GetSessionId(), b.create(ctx, serverLegacy).GetSessionId()
	s1, err := b.core.Session(id1)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := b.core.Session(id2)
	if err != nil {
		t.Fatal(err)
	}
	want := func(gauge int64, n1, n2 int) {
		t.Helper()
		if got := b.svc.HostStreams(); got != gauge {
			t.Errorf("HostStreams = %d, want %d", got, gauge)
		}
		if s1.HostsAttached() != n1 || s2.HostsAttached() != n2 {
			t.Errorf("hosts attached = %d, %d; want %d, %d", s1.HostsAttached(), s2.HostsAttached(), n1, n2)
		}
	}
	want(0, 0, 0)
	h1 := b.connect(ctx)
	h1.Attach(id1, id2)
	want(2, 1, 1)
	h2 := b.connect(ctx)
	h2.Attach(id1)
	want(3, 2, 1)
	h1.Send(&pb.ConnectRequest{Action: &pb.ConnectRequest_Detach{Detach: &pb.DetachSessions{SessionIds: []string{id1}}}})
	h1.Next(func(m *pb.ConnectResponse) bool { return m.GetAttached() != nil })
	want(2, 1, 1)
}
