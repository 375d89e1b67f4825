package e2e

import (
	"fmt"
	"strings"
	"testing"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/internal/testpeers"
)

// The bridge in front of @modelcontextprotocol/server-everything (node, over stdio): tools over REST, and
// its roots, sampling and elicitation requests answered by the test as a host — roots and sampling over
// Connect, elicitation over WatchEvents and RespondToRequest. Skipped with a reason when node or the
// package is missing, unless MCPBRIDGE_REQUIRE_PEERS=1.
func TestServerEverything(t *testing.T) {
	cmd := testpeers.EverythingStdio(t)
	var sb strings.Builder
	fmt.Fprintf(&sb, "  everything:\n    command: %q\n    args:\n", cmd.Path)
	for _, a := range cmd.Args {
		fmt.Fprintf(&sb, "      - %q\n", a)
	}
	b := start(t, bridgeConfig{extraServers: sb.String()})
	ctx := testCtx(t)
	r := b.rest("")

	cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "everything", HostCapabilities: allCaps})
	if err != nil {
		t.Fatal(err)
	}
	s := cs.GetSession()
	id := s.GetSessionId()
	t.Logf("server-everything %s, protocol %s", s.GetServerInfo().GetVersion(), s.GetProtocolVersion())
	// server-everything declares tasks (list, cancel, requests.tools.call); the SDK's capabilities type drops
	// them, the bridge reads them from the raw capabilities.
	if tc := s.GetServerCapabilities().GetTasks(); !tc.GetToolCall() || !tc.GetCancel() || !tc.GetList() {
		t.Errorf("server_capabilities.tasks = %v, want list, cancel and tool_call", tc)
	}
	// Roots requests may come at any time (server-everything asks after initialization and when it
	// likes): a second host answers them all, in the background.
	roots := b.connect(ctx)
	roots.Attach(id)
	go func() { // ends when the stream does (test cleanup)
		for m := range roots.Messages() {
			if req := m.GetEvent().GetServerRequest(); req.GetRoots() != nil {
				_ = roots.Deliver(&pb.ConnectRequest{Action: &pb.ConnectRequest_Reply{Reply: &pb.HostReply{RequestId: req.GetRequestId(),
					Answer: &pb.HostAnswer{Answer: &pb.HostAnswer_Roots{Roots: &pb.ListRootsResult{Roots: []*pb.Root{{Uri: "file:///tmp/e2e-everything", Name: "e2e"}}}}}}}})
			}
		}
	}()
	h := b.connect(ctx)
	h.Attach(id)

	tools := r.must("GET", "/v1/sessions/"+id+"/tools", "")
	for _, want := range []string{`"name":"echo"`, `"name":"trigger-sampling-request"`, `"name":"trigger-elicitation-request"`} {
		if !strings.Contains(compact(tools), want) {
			t.Errorf("tools lack %s", want)
		}
	}
	echo := r.must("POST", "/v1/sessions/"+id+"/tools/echo:call", `{"arguments": {"message": "hi everything"}}`)
	if !strings.Contains(compact(echo), "hi everything") {
		t.Errorf("echo = %s", compact(echo))
	}

	// Sampling over Connect.
	done := r.async("POST", "/v1/sessions/"+id+"/tools/trigger-sampling-request:call", `{"arguments": {"prompt": "say hello", "maxTokens": 20}}`)
	req := h.Next(func(m *pb.ConnectResponse) bool { return m.GetEvent().GetServerRequest().GetSampling() != nil }).GetEvent().GetServerRequest()
	if req.GetSampling() == nil {
		t.Fatalf("request = %v, want sampling", req)
	}
	ack := h.Reply(req.GetRequestId(), &pb.HostAnswer{Answer: &pb.HostAnswer_Sampling{Sampling: &pb.CreateMessageResult{
		Role: pb.Role_ROLE_ASSISTANT, Model: "e2e-model", Content: []*pb.ContentBlock{{Content: &pb.ContentBlock_Text{Text: &pb.TextContent{Text: "hello from e2e"}}}}}}})
	if !ack.GetAccepted() {
		t.Fatalf("ack = %v", ack)
	}
	if got := compact(await(t, done)); !strings.Contains(got, "hello from e2e") {
		t.Errorf("sampling result = %s", got)
	}

	// Elicitation over REST: decline.
	ev := r.events(id)
	done = r.async("POST", "/v1/sessions/"+id+"/tools/trigger-elicitation-request:call", `{}`)
	el := ev.next(func(e *pb.Event) bool { return e.GetServerRequest().GetElicitation() != nil }).GetServerRequest()
	r.must("POST", "/v1/sessions/"+id+"/requests/"+el.GetRequestId()+":respond", `{"elicitation": {"action": "ELICIT_ACTION_DECLINE"}}`)
	if got := await(t, done); got["result"] == nil {
		t.Errorf("elicitation result = %s", compact(got))
	}

	list := r.must("POST", "/v1/sessions/"+id+"/tools/get-roots-list:call", `{}`)
	if !strings.Contains(compact(list), "file:///tmp/e2e-everything") {
		t.Errorf("get-roots-list = %s", compact(list))
	}
}
