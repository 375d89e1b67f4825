package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

const allCapsJSON = `"hostCapabilities": {"sampling": {}, "elicitation": {"form": true, "url": true}, "roots": {}}`

var allCaps = &pb.HostCapabilities{
	Sampling:    &pb.SamplingCapability{},
	Elicitation: &pb.ElicitationCapability{Form: true, Url: true},
	Roots:       &pb.RootsCapability{},
}

func args(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func textOf(r *pb.CallToolResult) string {
	var sb strings.Builder
	for _, c := range r.GetContent() {
		sb.WriteString(c.GetText().GetText())
	}
	return sb.String()
}

// Tools, resources and prompts over gRPC and over REST, against both protocol eras.
func TestOperations(t *testing.T) {
	b := start(t, bridgeConfig{})
	r := b.rest("")
	ctx := testCtx(t)
	servers, err := b.client.ListServers(ctx, &pb.ListServersRequest{})
	if err != nil || len(servers.GetServers()) != 2 {
		t.Fatalf("ListServers = %v, %v", servers, err)
	}
	if got := jsonPath(r.must("GET", "/v1/servers", ""), "servers", 1, "protocolVersion"); got != "2025-11-25" {
		t.Errorf("GET /v1/servers: second server's protocolVersion = %v", got)
	}
	for _, v := range versions {
		t.Run(v.protocol, func(t *testing.T) {
			// REST
			s := r.must("POST", "/v1/sessions", `{"server": "`+v.server+`"}`)
			sid, _ := s["sessionId"].(string)
			if s["protocolVersion"] != v.protocol || s["state"] != "SESSION_STATE_READY" {
				t.Fatalf("POST /v1/sessions = %v", s)
			}
			tools := r.must("GET", "/v1/sessions/"+sid+"/tools", "")
			if !strings.Contains(compact(tools), `"name":"echo"`) || jsonPath(tools, "tools", 0, "inputSchema", "type") != "object" {
				t.Errorf("tools = %s", compact(tools))
			}
			res := r.must("POST", "/v1/sessions/"+sid+"/tools/echo:call", `{"arguments": {"text": "hello"}}`)
			if got := compact(jsonPath(res, "result", "content")); got != `[{"text":{"text":"hello"}}]` {
				t.Errorf("echo content = %s", got)
			}
			res = r.must("POST", "/v1/sessions/"+sid+"/tools/fail:call", `{"arguments": {"message": "boom"}}`)
			if jsonPath(res, "result", "isError") != true {
				t.Errorf("fail = %s", compact(res))
			}
			res = r.must("POST", "/v1/sessions/"+sid+"/tools/structured:call", `{"arguments": {"city": "Paris"}}`)
			if jsonPath(res, "result", "structuredContent", "city") != "Paris" {
				t.Errorf("structured = %s", compact(res))
			}
			read := r.must("POST", "/v1/sessions/"+sid+"/resources:read", `{"uri": "demo://items/alpha"}`)
			if got, _ := jsonPath(read, "contents", 0, "text").(string); !strings.Contains(got, `"id":"alpha"`) {
				t.Errorf("read = %s", compact(read))
			}
			code, body := r.do("POST", "/v1/sessions/"+sid+"/resources:read", `{"uri": "demo://items/nope"}`)
			if code != http.StatusNotFound {
				t.Errorf("reading a missing resource = %d %v, want 404", code, body)
			}
			prompt := r.must("POST", "/v1/sessions/"+sid+"/prompts/greet:get", `{"arguments": {"name": "Ada", "style": "pirate"}}`)
			if got := compact(jsonPath(prompt, "messages", 0, "content")); !strings.Contains(got, "Ada") {
				t.Errorf("prompt = %s", compact(prompt))
			}
			if len(jsonPath(r.must("GET", "/v1/sessions/"+sid+"/resourceTemplates", ""), "resourceTemplates").([]any)) == 0 {
				t.Error("no resource templates")
			}
			r.must("DELETE", "/v1/sessions/"+sid, "")
			if code, _ := r.do("GET", "/v1/sessions/"+sid, ""); code != http.StatusNotFound {
				t.Errorf("GET a deleted session = %d", code)
			}

			// gRPC
			cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: v.server})
			if err != nil {
				t.Fatal(err)
			}
			id := cs.GetSession().GetSessionId()
			call, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: id, Name: "add", Arguments: args(t, map[string]any{"a": 2, "b": 3})})
			if err != nil || call.GetResult().GetStructuredContent().GetStructValue().GetFields()["sum"].GetNumberValue() != 5 {
				t.Errorf("add = %v, %v", call, err)
			}
			rr, err := b.client.ReadResource(ctx, &pb.ReadResourceRequest{SessionId: id, Uri: "demo://readme"})
			if err != nil || len(rr.GetContents()) != 1 {
				t.Errorf("ReadResource = %v, %v", rr, err)
			}
			gp, err := b.client.GetPrompt(ctx, &pb.GetPromptRequest{SessionId: id, Name: "greet", Arguments: map[string]string{"name": "Grace"}})
			if err != nil || !strings.Contains(gp.GetMessages()[0].GetContent().GetText().GetText(), "Grace") {
				t.Errorf("GetPrompt = %v, %v", gp, err)
			}
			st, err := b.client.StreamCallTool(ctx, &pb.StreamCallToolRequest{SessionId: id, Name: "long_operation", Arguments: args(t, map[string]any{"durationSeconds": 0.3, "steps": 3})})
			if err != nil {
				t.Fatal(err)
			}
			progress := 0
			for {
				m, err := st.Recv()
				if err != nil {
					t.Fatal(err)
				}
				if m.GetProgress() != nil {
					progress++
				}
				if m.GetResult() != nil {
					break
				}
			}
			// The last notification may lose the race with the result inside the SDK; the others arrive.
			if progress < 2 {
				t.Errorf("%d progress events, want 2 or 3", progress)
			}
		})
	}
}

// Sampling, elicitation and roots, each answered by the test acting as a host over Connect.
func TestHostOverConnect(t *testing.T) {
	b := start(t, bridgeConfig{})
	ctx := testCtx(t)
	for _, v := range versions {
		t.Run(v.protocol, func(t *testing.T) {
			cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: v.server, HostCapabilities: allCaps})
			if err != nil {
				t.Fatal(err)
			}
			id := cs.GetSession().GetSessionId()
			h := b.connect(ctx)
			h.Attach(id)
			flows := []struct {
				tool   string
				args   map[string]any
				answer *pb.HostAnswer
				want   string
			}{
				{"sample", map[string]any{"prompt": "Capital of France?"}, &pb.HostAnswer{Answer: &pb.HostAnswer_Sampling{Sampling: &pb.CreateMessageResult{
					Role: pb.Role_ROLE_ASSISTANT, Model: "m", Content: []*pb.ContentBlock{{Content: &pb.ContentBlock_Text{Text: &pb.TextContent{Text: "Paris"}}}}}}}, "Paris"},
				{"elicit", nil, &pb.HostAnswer{Answer: &pb.HostAnswer_Elicitation{Elicitation: &pb.ElicitResult{
					Action: pb.ElicitAction_ELICIT_ACTION_ACCEPT, Content: args(t, map[string]any{"name": "Ada", "age": 36})}}}, "accepted: name=Ada age=36"},
				{"list_roots", nil, &pb.HostAnswer{Answer: &pb.HostAnswer_Roots{Roots: &pb.ListRootsResult{Roots: []*pb.Root{{Uri: "file:///srv", Name: "srv"}}}}}, "srv: file:///srv"},
			}
			for _, f := range flows {
				t.Run(f.tool, func(t *testing.T) {
					var a *structpb.Struct
					if f.args != nil {
						a = args(t, f.args)
					}
					done := b.callAsync(ctx, &pb.CallToolRequest{SessionId: id, Name: f.tool, Arguments: a})
					req := h.NextRequest()
					if ack := h.Reply(req.GetRequestId(), f.answer); !ack.GetAccepted() {
						t.Fatalf("ack = %v", ack)
					}
					res := await(t, done)
					if res.Err != nil || !strings.Contains(textOf(res.Resp.GetResult()), f.want) {
						t.Fatalf("%s = %v, %v; want %q", f.tool, res.Resp, res.Err, f.want)
					}
				})
			}
		})
	}
}

// The same three flows over REST: WatchEvents (newline-delimited JSON) and RespondToRequest.
func TestHostOverREST(t *testing.T) {
	b := start(t, bridgeConfig{})
	r := b.rest("")
	for _, v := range versions {
		t.Run(v.protocol, func(t *testing.T) {
			sid, _ := r.must("POST", "/v1/sessions", `{"server": "`+v.server+`", `+allCapsJSON+`}`)["sessionId"].(string)
			ev := r.events(sid)
			flows := []struct {
				tool, args, answer, want string
			}{
				{"sample", `{"arguments": {"prompt": "Capital of France?"}}`, `{"sampling": {"role": "ROLE_ASSISTANT", "model": "m", "content": [{"text": {"text": "Paris"}}]}}`, "Paris"},
				{"elicit", `{}`, `{"elicitation": {"action": "ELICIT_ACTION_ACCEPT", "content": {"name": "Ada", "age": 36}}}`, "accepted: name=Ada age=36"},
				{"list_roots", `{}`, `{"roots": {"roots": [{"uri": "file:///srv", "name": "srv"}]}}`, "srv: file:///srv"},
			}
			for _, f := range flows {
				t.Run(f.tool, func(t *testing.T) {
					done := r.async("POST", "/v1/sessions/"+sid+"/tools/"+f.tool+":call", f.args)
					req := ev.next(func(e *pb.Event) bool { return e.GetServerRequest() != nil }).GetServerRequest()
					// MRTR ties a request to its call for certain; a push over stdio names no call.
					wantOrigin := f.tool
					if req.GetDelivery() == pb.Delivery_DELIVERY_LEGACY_PUSH {
						wantOrigin = ""
					}
					if req.GetOriginName() != wantOrigin {
						t.Errorf("request from %q, want %q", req.GetOriginName(), wantOrigin)
					}
					rid := req.GetRequestId()
					// A bad answer first: INVALID_ARGUMENT with the field, as 400.
					if f.tool == "elicit" {
						code, body := r.do("POST", "/v1/sessions/"+sid+"/requests/"+rid+":respond", `{"elicitation": {"action": "ELICIT_ACTION_ACCEPT", "content": {"name": "Ada", "age": "old"}}}`)
						if code != http.StatusBadRequest || !strings.Contains(compact(body), "answer.elicitation.content.age") {
							t.Errorf("bad elicitation answer = %d %s", code, compact(body))
						}
					}
					if got := r.must("POST", "/v1/sessions/"+sid+"/requests/"+rid+":respond", f.answer); len(got) != 0 {
						t.Errorf("respond = %v, want {}", got)
					}
					ended := ev.next(func(e *pb.Event) bool { return e.GetRequestEnded().GetRequestId() == rid }).GetRequestEnded()
					if ended.GetOutcome() != pb.RequestOutcome_REQUEST_OUTCOME_ANSWERED {
						t.Errorf("ended = %v", ended)
					}
					res := await(t, done)
					if got := compact(jsonPath(res, "result", "content")); !strings.Contains(got, f.want) {
						t.Fatalf("%s = %s, want %q", f.tool, compact(res), f.want)
					}
				})
			}
		})
	}
}

// A host that drops its stream during a pending elicitation and attaches again still answers it.
func TestReattachDuringElicitation(t *testing.T) {
	b := start(t, bridgeConfig{})
	ctx := testCtx(t)
	for _, v := range versions {
		t.Run(v.protocol, func(t *testing.T) {
			cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: v.server, HostCapabilities: allCaps})
			if err != nil {
				t.Fatal(err)
			}
			id := cs.GetSession().GetSessionId()
			h1 := b.connect(ctx)
			h1.Attach(id)
			done := b.callAsync(ctx, &pb.CallToolRequest{SessionId: id, Name: "elicit"})
			first := h1.NextRequest()
			h1.Close()

			h2 := b.connect(ctx)
			h2.Attach(id)
			again := h2.NextRequest()
			if again.GetRequestId() != first.GetRequestId() {
				t.Fatalf("after re-attaching: %v, want request %s", again, first.GetRequestId())
			}
			ack := h2.Reply(again.GetRequestId(), &pb.HostAnswer{Answer: &pb.HostAnswer_Elicitation{Elicitation: &pb.ElicitResult{Action: pb.ElicitAction_ELICIT_ACTION_DECLINE}}})
			if !ack.GetAccepted() {
				t.Fatalf("ack = %v", ack)
			}
			if res := await(t, done); res.Err != nil || textOf(res.Resp.GetResult()) != "declined" {
				t.Fatalf("elicit = %v, %v", res.Resp, res.Err)
			}
		})
	}
}

// A gRPC deadline cancels the tool call upstream: the server's tool sees the cancellation.
func TestDeadlineCancelsUpstream(t *testing.T) {
	b := start(t, bridgeConfig{})
	for _, v := range versions {
		t.Run(v.protocol, func(t *testing.T) {
			cs, err := b.client.CreateSession(testCtx(t), &pb.CreateSessionRequest{Server: v.server})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			done := b.callAsync(ctx, &pb.CallToolRequest{SessionId: cs.GetSession().GetSessionId(), Name: "block", Arguments: args(t, map[string]any{"tag": v.protocol})})
			if got := await(t, b.reports.Lines); got != "started "+v.protocol {
				t.Fatalf("report %q", got)
			}
			res := await(t, done)
			if status.Code(res.Err) != codes.DeadlineExceeded {
				t.Fatalf("call = %v, want DEADLINE_EXCEEDED", res.Err)
			}
			if got := await(t, b.reports.Lines); got != "cancelled "+v.protocol {
				t.Fatalf("report %q, want the cancellation to reach the tool", got)
			}
		})
	}
}

// With a tokens file, a request without a token is refused, and one principal cannot see another's
// session — over gRPC and over REST.
func TestAuthAndOwnership(t *testing.T) {
	b := start(t, bridgeConfig{
		extra: "auth:\n  tokensFile: tokens.txt\n",
		files: map[string]string{"tokens.txt": "tok-alice alice\ntok-bob bob\n"},
	})
	ctx := testCtx(t)
	if _, err := b.client.ListSessions(ctx, &pb.ListSessionsRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Errorf("gRPC without a token = %v, want UNAUTHENTICATED", err)
	}
	if code, body := b.rest("").do("GET", "/v1/sessions", ""); code != http.StatusUnauthorized {
		t.Errorf("REST without a token = %d %v, want 401", code, body)
	}
	if code, _ := b.rest("wrong").do("GET", "/v1/servers", ""); code != http.StatusUnauthorized {
		t.Errorf("REST with a wrong token = %d, want 401", code)
	}
	alice, bob := b.rest("tok-alice"), b.rest("tok-bob")
	sid, _ := alice.must("POST", "/v1/sessions", `{"server": "demo-2025"}`)["sessionId"].(string)
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/v1/sessions/" + sid, ""},
		{"GET", "/v1/sessions/" + sid + "/tools", ""},
		{"POST", "/v1/sessions/" + sid + "/tools/echo:call", `{"arguments": {"text": "x"}}`},
		{"GET", "/v1/sessions/" + sid + "/requests", ""},
		{"DELETE", "/v1/sessions/" + sid, ""},
	} {
		if code, body := bob.do(c.method, c.path, c.body); code != http.StatusNotFound {
			t.Errorf("bob: %s %s = %d %v, want 404", c.method, c.path, code, body)
		}
	}
	if got := bob.must("GET", "/v1/sessions", ""); len(got) != 0 {
		t.Errorf("bob's sessions = %v, want none", got)
	}
	if _, err := b.client.GetSession(withToken(ctx, "tok-bob"), &pb.GetSessionRequest{SessionId: sid}); status.Code(err) != codes.NotFound {
		t.Errorf("bob over gRPC = %v, want NOT_FOUND", err)
	}
	if _, err := b.client.GetSession(withToken(ctx, "tok-alice"), &pb.GetSessionRequest{SessionId: sid}); err != nil {
		t.Errorf("alice over gRPC: %v", err)
	}
}

// A REST body that is not JSON is a 400 with a JSON error body; so are bad ids and unknown servers (404).
func TestRESTBadInput(t *testing.T) {
	b := start(t, bridgeConfig{})
	r := b.rest("")
	code, body := r.do("POST", "/v1/sessions", `this is not json`)
	if code != http.StatusBadRequest || body["code"] != float64(codes.InvalidArgument) || body["message"] == "" {
		t.Errorf("non-JSON body = %d %v, want 400 with a JSON status", code, body)
	}
	code, body = r.do("POST", "/v1/sessions", `{"server": "nope"}`)
	if code != http.StatusNotFound || !strings.Contains(compact(body), "SERVER_NOT_FOUND") {
		t.Errorf("unknown server = %d %v", code, body)
	}
	code, body = r.do("POST", "/v1/sessions", `{}`)
	if code != http.StatusBadRequest || !strings.Contains(compact(body), `"field":"server"`) {
		t.Errorf("no server = %d %v", code, body)
	}
	sid, _ := r.must("POST", "/v1/sessions", `{"server": "demo"}`)["sessionId"].(string)
	code, body = r.do("POST", "/v1/sessions/"+sid+"/tools/echo:call", `{"arguments": [1, 2]}`)
	if code != http.StatusBadRequest {
		t.Errorf("arguments not an object = %d %v", code, body)
	}
	code, body = r.do("POST", "/v1/sessions/"+sid+"/requests/req-nope:respond", `{"roots": {}}`)
	if code != http.StatusNotFound {
		t.Errorf("unknown request = %d %v", code, body)
	}
	code, body = r.do("GET", "/v1/sessions/s-nope/tools", "")
	if code != http.StatusNotFound {
		t.Errorf("unknown session = %d %v", code, body)
	}
}
