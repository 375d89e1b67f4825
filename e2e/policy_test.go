package e2e

// Policy (docs/adr/0012-policy.md) through the real binary, over gRPC and REST: per-server access,
// tool/prompt/resource filters (including the bypass of calling a hidden item by name, through every path
// that reaches tools/call, prompts/get, resources/read and resources/subscribe), rate limits, the audit
// log, and principals from an OIDC identity provider and from client certificates.

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

func toolNames(tools []*pb.Tool) []string {
	var names []string
	for _, t := range tools {
		names = append(names, t.GetName())
	}
	return names
}

// guardedPolicy is the policy of the "guarded" probe servers: block (which reports "started <tag>" to
// the test) and the elicitation tools are denied, so are the greet prompt and the counter resource.
const guardedPolicy = "    tools: {deny: [block, \"elicit*\"]}\n    prompts: {deny: [greet]}\n    resources: {deny: [\"demo://counter\"]}\n"

func TestPolicyHidesAndRefusesItems(t *testing.T) {
	b := start(t, bridgeConfig{extraServers: probeServer("guarded", guardedPolicy) +
		probeServer("guarded-2025", guardedPolicy+"    protocolVersion: \"2025-11-25\"\n") + probeServer("open", "")})
	ctx := testCtx(t)
	r := b.rest("")
	blockArgs := func(tag string) string { return `{"arguments": {"tag": "` + tag + `", "durationSeconds": 0.01}}` }
	for _, server := range []string{"guarded", "guarded-2025"} {
		t.Run(server, func(t *testing.T) {
			cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: server, HostCapabilities: allCaps})
			if err != nil {
				t.Fatal(err)
			}
			sid := cs.GetSession().GetSessionId()

			// Hidden from the lists, over gRPC and REST.
			lt, err := b.client.ListTools(ctx, &pb.ListToolsRequest{SessionId: sid})
			if err != nil {
				t.Fatal(err)
			}
			if names := toolNames(lt.GetTools()); slices.Contains(names, "block") || slices.Contains(names, "elicit") || !slices.Contains(names, "echo") {
				t.Errorf("gRPC tools = %v: want echo, neither block nor elicit", names)
			}
			if got := compact(r.must("GET", "/v1/sessions/"+sid+"/tools", "")); strings.Contains(got, `"block"`) || !strings.Contains(got, `"echo"`) {
				t.Errorf("REST tools = %s", got)
			}
			if got := compact(r.must("GET", "/v1/sessions/"+sid+"/prompts", "")); strings.Contains(got, `"greet"`) {
				t.Errorf("REST prompts = %s: greet is denied", got)
			}
			lr, err := b.client.ListResources(ctx, &pb.ListResourcesRequest{SessionId: sid})
			if err != nil || len(lr.GetResources()) != 1 || lr.GetResources()[0].GetUri() != "demo://readme" {
				t.Errorf("gRPC resources = %v, %v: want demo://readme alone", lr, err)
			}

			// Refused by name, over every path, with PERMISSION_DENIED — never forwarded upstream.
			denied := func(what string, err error) {
				t.Helper()
				if status.Code(err) != codes.PermissionDenied || reasonOf(err) != "PERMISSION_DENIED" {
					t.Errorf("%s = %v, want PERMISSION_DENIED", what, err)
				}
			}
			_, err = b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: sid, Name: "block", Arguments: args(t, map[string]any{"tag": "bypass-call", "durationSeconds": 0.01})})
			denied("CallTool(block)", err)
			_, err = b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: sid, Name: "block", Arguments: args(t, map[string]any{"tag": "bypass-task", "durationSeconds": 0.01}),
				Task: &pb.TaskOptions{Ttl: durationpb.New(time.Minute)}})
			denied("CallTool(block, task)", err)
			st, err := b.client.StreamCallTool(ctx, &pb.StreamCallToolRequest{SessionId: sid, Name: "block", Arguments: args(t, map[string]any{"tag": "bypass-stream", "durationSeconds": 0.01})})
			if err == nil {
				_, err = st.Recv()
			}
			denied("StreamCallTool(block)", err)
			_, err = b.client.GetPrompt(ctx, &pb.GetPromptRequest{SessionId: sid, Name: "greet", Arguments: map[string]string{"name": "x"}})
			denied("GetPrompt(greet)", err)
			_, err = b.client.Complete(ctx, &pb.CompleteRequest{SessionId: sid, Ref: &pb.CompleteRequest_PromptName{PromptName: "greet"}, ArgumentName: "style", ArgumentValue: "f"})
			denied("Complete(greet)", err)
			_, err = b.client.ReadResource(ctx, &pb.ReadResourceRequest{SessionId: sid, Uri: "demo://counter"})
			denied("ReadResource(counter)", err)
			_, err = b.client.SubscribeResource(ctx, &pb.SubscribeResourceRequest{SessionId: sid, Uri: "demo://counter"})
			denied("SubscribeResource(counter)", err)

			for _, c := range []struct{ path, body string }{
				{"/tools/block:call", blockArgs("bypass-rest")},
				{"/tools/block:stream", blockArgs("bypass-rest-stream")},
				{"/tools/elicit:call", `{}`},
				{"/prompts/greet:get", `{"arguments": {"name": "x"}}`},
				{"/resources:read", `{"uri": "demo://counter"}`},
				{"/resources:subscribe", `{"uri": "demo://counter"}`},
			} {
				code, body := restDo(t, r, "POST", "/v1/sessions/"+sid+c.path, c.body)
				if code != http.StatusForbidden || !strings.Contains(body, "PERMISSION_DENIED") {
					t.Errorf("REST POST %s = %d %s, want 403 PERMISSION_DENIED", c.path, code, body)
				}
			}
			// What is allowed still works.
			if got := r.must("POST", "/v1/sessions/"+sid+"/resources:read", `{"uri": "demo://readme"}`); !strings.Contains(compact(got), "demo://readme") {
				t.Errorf("read readme = %s", compact(got))
			}
			res, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: sid, Name: "echo", Arguments: args(t, map[string]any{"text": "hi"})})
			if err != nil || !strings.Contains(textOf(res.GetResult()), "hi") {
				t.Errorf("echo = %v, %v", res, err)
			}
		})
	}

	// None of the refused calls reached a server: block on the open server reports first.
	cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "open"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: cs.GetSession().GetSessionId(), Name: "block", Arguments: args(t, map[string]any{"tag": "sentinel", "durationSeconds": 0.01})}); err != nil {
		t.Fatal(err)
	}
	for {
		line := await(t, b.reports.Lines)
		if strings.Contains(line, "bypass") {
			t.Fatalf("a refused call reached the server: %q", line)
		}
		if line == "started sentinel" {
			break
		}
	}
}

// restDo is rest.do for bodies that may not be JSON objects; it returns the raw body.
func restDo(t *testing.T, r *rest, method, path, body string) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(r.request(testCtx(t), method, path, body))
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

func serverNames(servers []*pb.UpstreamServer) []string {
	var names []string
	for _, s := range servers {
		names = append(names, s.GetName())
	}
	return names
}

func TestPolicyServerAccess(t *testing.T) {
	b := start(t, bridgeConfig{
		extraServers: probeServer("private", "    allowedPrincipals: [alice, \"team-*\"]\n"),
		extra:        "auth:\n  tokensFile: tokens.txt\n",
		files:        map[string]string{"tokens.txt": "tok-alice alice\ntok-bob bob\ntok-team team-x\n"},
	})
	ctx := testCtx(t)
	for _, who := range []struct {
		token string
		sees  bool
	}{{"tok-alice", true}, {"tok-team", true}, {"tok-bob", false}} {
		t.Run(who.token, func(t *testing.T) {
			ls, err := b.client.ListServers(withToken(ctx, who.token), &pb.ListServersRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Contains(serverNames(ls.GetServers()), "private"); got != who.sees || !slices.Contains(serverNames(ls.GetServers()), "demo") {
				t.Errorf("gRPC servers = %v", serverNames(ls.GetServers()))
			}
			if got := strings.Contains(compact(b.rest(who.token).must("GET", "/v1/servers", "")), `"private"`); got != who.sees {
				t.Errorf("REST servers list private: %v, want %v", got, who.sees)
			}
			_, err = b.client.CreateSession(withToken(ctx, who.token), &pb.CreateSessionRequest{Server: "private"})
			code, body := restDo(t, b.rest(who.token), "POST", "/v1/sessions", `{"server": "private"}`)
			if who.sees {
				if err != nil || code != http.StatusOK {
					t.Errorf("CreateSession(private) = %v; REST %d %s", err, code, body)
				}
				return
			}
			// No oracle: exactly what a server that does not exist gets.
			_, errNone := b.client.CreateSession(withToken(ctx, who.token), &pb.CreateSessionRequest{Server: "nonesuch"})
			if status.Code(err) != codes.NotFound || reasonOf(err) != reasonOf(errNone) ||
				strings.ReplaceAll(status.Convert(err).Message(), "private", "X") != strings.ReplaceAll(status.Convert(errNone).Message(), "nonesuch", "X") {
				t.Errorf("CreateSession(private) = %v; of a missing server %v", err, errNone)
			}
			if code != http.StatusNotFound || !strings.Contains(body, "SERVER_NOT_FOUND") {
				t.Errorf("REST CreateSession(private) = %d %s, want 404", code, body)
			}
		})
	}
}

func TestRateLimits(t *testing.T) {
	b := start(t, bridgeConfig{
		extraServers: probeServer("probe", ""),
		extra: "auth:\n  tokensFile: tokens.txt\n" +
			"rateLimits:\n  callsPerSecond: 0.01\n  burst: 2\n  principals:\n    bob: {concurrentCalls: 2}\n",
		files: map[string]string{"tokens.txt": "tok-alice alice\ntok-bob bob\n"},
	})
	ctx := testCtx(t)
	alice := withToken(ctx, "tok-alice")
	for i := range 2 {
		if _, err := b.client.ListServers(alice, &pb.ListServersRequest{}); err != nil {
			t.Fatalf("call %d within the burst: %v", i, err)
		}
	}
	_, err := b.client.ListServers(alice, &pb.ListServersRequest{})
	if status.Code(err) != codes.ResourceExhausted || reasonOf(err) != "RATE_LIMITED" {
		t.Fatalf("third call = %v, want RESOURCE_EXHAUSTED RATE_LIMITED", err)
	}
	var retry *errdetails.RetryInfo
	for _, d := range status.Convert(err).Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			retry = ri
		}
	}
	if retry == nil || retry.GetRetryDelay().AsDuration() <= 0 {
		t.Errorf("RetryInfo = %v, want a positive delay", retry)
	}
	// REST: 429 with Retry-After, from the same bucket (the principal's, whatever the transport).
	resp, err := http.DefaultClient.Do(b.rest("tok-alice").request(ctx, "GET", "/v1/servers", ""))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); resp.StatusCode != http.StatusTooManyRequests || err != nil || secs < 1 {
		t.Errorf("REST = %d Retry-After %q %s, want 429 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}

	// bob has no rate limit but two calls in flight at most; alice's bucket is not his.
	bob := withToken(ctx, "tok-bob")
	cs, err := b.client.CreateSession(bob, &pb.CreateSessionRequest{Server: "probe"})
	if err != nil {
		t.Fatal(err)
	}
	sid := cs.GetSession().GetSessionId()
	calls, cancel := context.WithCancel(bob)
	defer cancel()
	done := b.callAsync(calls, &pb.CallToolRequest{SessionId: sid, Name: "block", Arguments: args(t, map[string]any{"tag": "one"})})
	if line := await(t, b.reports.Lines); line != "started one" {
		t.Fatalf("report %q", line)
	}
	done2 := b.callAsync(calls, &pb.CallToolRequest{SessionId: sid, Name: "block", Arguments: args(t, map[string]any{"tag": "two"})})
	if line := await(t, b.reports.Lines); line != "started two" {
		t.Fatalf("report %q", line)
	}
	_, err = b.client.ListTools(bob, &pb.ListToolsRequest{SessionId: sid})
	if status.Code(err) != codes.ResourceExhausted || reasonOf(err) != "TOO_MANY_CONCURRENT_CALLS" {
		t.Errorf("third call in flight = %v, want RESOURCE_EXHAUSTED TOO_MANY_CONCURRENT_CALLS", err)
	}
	code, rbody := restDo(t, b.rest("tok-bob"), "GET", "/v1/sessions/"+sid+"/tools", "")
	if code != http.StatusTooManyRequests {
		t.Errorf("REST third call in flight = %d %s, want 429", code, rbody)
	}
	cancel()
	await(t, done)
	await(t, done2)
}

// auditRecord waits for the audit record for which match is true.
func (b *bridge) auditRecord(t *testing.T, match func(rec map[string]any) bool) map[string]any {
	t.Helper()
	return b.logs.waitFor(t, func(rec map[string]any) bool { return rec["log"] == "audit" && match(rec) })
}

func TestAuditLog(t *testing.T) {
	b := start(t, bridgeConfig{
		extraServers: probeServer("guarded", guardedPolicy),
		extra:        "auth:\n  tokensFile: tokens.txt\naudit:\n  output: stderr\n",
		files:        map[string]string{"tokens.txt": "tok-alice alice\n"},
	})
	ctx := withToken(testCtx(t), "tok-alice")
	r := b.rest("tok-alice")
	sid, _ := r.must("POST", "/v1/sessions", `{"server": "guarded", `+allCapsJSON+`}`)["sessionId"].(string)
	rec := b.auditRecord(t, func(rec map[string]any) bool { return rec["event"] == "session.created" && rec["session"] == sid })
	if rec["principal"] != "alice" || rec["rpc"] != "CreateSession" || rec["transport"] != "rest" || rec["outcome"] != "OK" || rec["server"] != "guarded" {
		t.Errorf("session.created = %v", rec)
	}
	if _, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: sid, Name: "echo", Arguments: args(t, map[string]any{"text": "secret-argument"})}); err != nil {
		t.Fatal(err)
	}
	rec = b.auditRecord(t, func(rec map[string]any) bool { return rec["event"] == "tool.called" && rec["tool"] == "echo" })
	if rec["principal"] != "alice" || rec["rpc"] != "CallTool" || rec["transport"] != "grpc" || rec["outcome"] != "OK" || rec["session"] != sid {
		t.Errorf("tool.called = %v", rec)
	}
	_, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: sid, Name: "block"})
	if status.Code(err) != codes.PermissionDenied {
		t.Fatalf("block = %v", err)
	}
	rec = b.auditRecord(t, func(rec map[string]any) bool { return rec["event"] == "tool.called" && rec["tool"] == "block" })
	if rec["outcome"] != "PERMISSION_DENIED" || rec["reason"] != "PERMISSION_DENIED" {
		t.Errorf("refused tool.called = %v", rec)
	}

	// A server request answered over REST.
	ev := r.events(sid)
	done := b.callAsync(ctx, &pb.CallToolRequest{SessionId: sid, Name: "sample", Arguments: args(t, map[string]any{"prompt": "secret-prompt"})})
	req := ev.next(func(e *pb.Event) bool { return e.GetServerRequest() != nil }).GetServerRequest()
	r.must("POST", "/v1/sessions/"+sid+"/requests/"+req.GetRequestId()+":respond", `{"sampling": {"role": "ROLE_ASSISTANT", "model": "m", "content": [{"text": {"text": "secret-answer"}}]}}`)
	if res := await(t, done); res.Err != nil {
		t.Fatal(res.Err)
	}
	rec = b.auditRecord(t, func(rec map[string]any) bool { return rec["event"] == "server_request.answered" })
	if rec["principal"] != "alice" || rec["rpc"] != "RespondToRequest" || rec["transport"] != "rest" || rec["outcome"] != "OK" ||
		rec["request_id"] != req.GetRequestId() || rec["kind"] != "sampling" || rec["session"] != sid {
		t.Errorf("server_request.answered = %v", rec)
	}

	if _, err := b.client.DeleteSession(ctx, &pb.DeleteSessionRequest{SessionId: sid}); err != nil {
		t.Fatal(err)
	}
	rec = b.auditRecord(t, func(rec map[string]any) bool { return rec["event"] == "session.deleted" })
	if rec["principal"] != "alice" || rec["rpc"] != "DeleteSession" || rec["session"] != sid {
		t.Errorf("session.deleted = %v", rec)
	}
	// A refused CreateSession is audited too.
	if _, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "nonesuch"}); status.Code(err) != codes.NotFound {
		t.Fatal(err)
	}
	rec = b.auditRecord(t, func(rec map[string]any) bool { return rec["event"] == "session.created" && rec["server"] == "nonesuch" })
	if rec["outcome"] != "NOT_FOUND" {
		t.Errorf("refused session.created = %v", rec)
	}
	// No payloads unless configured.
	for _, line := range b.logs.all() {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["log"] == "audit" && strings.Contains(line, "secret-") {
			t.Errorf("audit record with a payload: %s", line)
		}
	}
}

func TestAuditLogFileWithPayloads(t *testing.T) {
	path := t.TempDir() + "/audit.log"
	b := start(t, bridgeConfig{extra: "audit:\n  output: " + strconv.Quote(path) + "\n  includePayloads: true\n"})
	ctx := testCtx(t)
	cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: serverLegacy})
	if err != nil {
		t.Fatal(err)
	}
	sid := cs.GetSession().GetSessionId()
	st, err := b.client.StreamCallTool(ctx, &pb.StreamCallToolRequest{SessionId: sid, Name: "echo", Arguments: args(t, map[string]any{"text": "payload-text"})})
	if err != nil {
		t.Fatal(err)
	}
	for {
		m, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if m.GetResult() != nil {
			break
		}
	}
	b.stop() // the file is complete once the bridge has exited
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("audit file mode = %v, %v; want 0600", fi.Mode(), err)
	}
	var events []string
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		events = append(events, rec["event"].(string))
		if rec["event"] == "tool.called" {
			if rec["rpc"] != "StreamCallTool" || rec["principal"] != "local" || compact(rec["arguments"]) != `{"text":"payload-text"}` {
				t.Errorf("tool.called = %v", rec)
			}
		}
	}
	if want := []string{"session.created", "tool.called"}; !slices.Equal(events, want) {
		t.Errorf("audit events = %v, want %v", events, want)
	}
}

// Tools a server adds later obey the policy: list_changed still reaches the host, the new tool is listed
// or hidden by the same rules, and a hidden one is refused.
func TestPolicyToolsAddedLater(t *testing.T) {
	b := start(t, bridgeConfig{extraServers: probeServer("guarded", "    tools: {deny: [\"secret-*\"]}\n")})
	r := b.rest("")
	ctx := testCtx(t)
	sid, _ := r.must("POST", "/v1/sessions", `{"server": "guarded"}`)["sessionId"].(string)
	ev := r.events(sid)
	for _, name := range []string{"secret-tool", "open-tool"} {
		r.must("POST", "/v1/sessions/"+sid+"/tools/add_tool:call", `{"arguments": {"name": "`+name+`"}}`)
		ev.next(func(e *pb.Event) bool { return e.GetToolsListChanged() != nil })
	}
	lt, err := b.client.ListTools(ctx, &pb.ListToolsRequest{SessionId: sid})
	if err != nil {
		t.Fatal(err)
	}
	if names := toolNames(lt.GetTools()); slices.Contains(names, "secret-tool") || !slices.Contains(names, "open-tool") {
		t.Errorf("tools after list_changed = %v: want open-tool, not secret-tool", names)
	}
	if _, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: sid, Name: "secret-tool"}); status.Code(err) != codes.PermissionDenied {
		t.Errorf("CallTool(secret-tool) = %v, want PERMISSION_DENIED", err)
	}
	if res, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: sid, Name: "open-tool"}); err != nil || textOf(res.GetResult()) != "added" {
		t.Errorf("CallTool(open-tool) = %v, %v", res, err)
	}
	if line := await(t, b.reports.Lines); line != "called open-tool" {
		t.Errorf("first report = %q: the refused call reached the server", line)
	}
}
