package e2e

// Approvals (docs/adr/0080-approvals.md) through the real binary, over gRPC and REST: a call of a tool the
// server's policy marks waits for an approver — another principal than the caller — and reaches the server
// only once approved, with exactly the approved arguments. Approve, deny, expire, the caller giving up, an
// approver not allowed, a decision on other arguments, and the audit records.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// approvalBridge runs a bridge whose "gated" probe server needs bob's (or the group ops') approval for block,
// and whose "gated-fast" server lets approvals expire at once.
func approvalBridge(t *testing.T, flags ...string) *bridge {
	gated := "    tools: {approve: [\"bl*\"]}\n    approvers: {principals: [bob]}\n"
	return start(t, bridgeConfig{
		extraServers: probeServer("gated", gated+"    approvalExpiry: 1h\n") + probeServer("gated-fast", gated+"    approvalExpiry: 200ms\n"),
		extra:        "auth:\n  tokensFile: tokens.txt\naudit:\n  output: stderr\n",
		files:        map[string]string{"tokens.txt": "tok-alice alice\ntok-bob bob\ntok-eve eve\n"},
		flags:        flags,
	})
}

func approveAnswer(digest string) *pb.HostAnswer {
	return &pb.HostAnswer{Answer: &pb.HostAnswer_Approval{Approval: &pb.ApprovalDecision{Approve: true, ArgumentsSha256: digest, Reason: "looks fine"}}}
}

// approvalOf waits on an approver's Connect stream for the approval request of call callID.
func approvalOf(h *hostConn, callID string) *pb.ServerRequest {
	return h.Next(func(m *pb.ConnectResponse) bool {
		r := m.GetEvent().GetServerRequest()
		return r.GetApproval() != nil && r.GetOriginCallId() == callID
	}).GetEvent().GetServerRequest()
}

func TestApprovals(t *testing.T) {
	b := approvalBridge(t)
	ctx := testCtx(t)
	alice, bob, eve := withToken(ctx, "tok-alice"), withToken(ctx, "tok-bob"), withToken(ctx, "tok-eve")
	rAlice, rBob, rEve := b.rest("tok-alice"), b.rest("tok-bob"), b.rest("tok-eve")
	cs, err := b.client.CreateSession(alice, &pb.CreateSessionRequest{Server: "gated", HostCapabilities: allCaps})
	if err != nil {
		t.Fatal(err)
	}
	sid := cs.GetSession().GetSessionId()
	// The caller's own stream, attached to the session: it must never be shown the approval request.
	own := b.connect(alice)
	own.Attach(sid)
	approver := b.connect(bob) // attached to nothing: approval requests reach an approver's every stream

	t.Run("approve over gRPC", func(t *testing.T) {
		done := b.callAsync(alice, &pb.CallToolRequest{SessionId: sid, CallId: "call-approve", Name: "block", Arguments: args(t, map[string]any{"tag": "approved", "durationSeconds": 0.01})})
		req := approvalOf(approver, "call-approve")
		a := req.GetApproval()
		canonical := `{"durationSeconds":0.01,"tag":"approved"}`
		sum := sha256.Sum256([]byte(canonical))
		if a.GetCaller() != "alice" || a.GetServerName() != "gated" || a.GetTool() != "block" || a.GetRule() != "bl*" ||
			a.GetCanonicalArguments() != canonical || a.GetArgumentsSha256() != hex.EncodeToString(sum[:]) ||
			a.GetArguments().GetFields()["tag"].GetStringValue() != "approved" || req.GetSessionId() != sid || req.GetDeadline() == nil {
			t.Fatalf("approval request = %v", req)
		}
		// Listed for bob on "approvals", over gRPC and REST; invisible to alice and eve.
		if l, err := b.client.ListPendingRequests(bob, &pb.ListPendingRequestsRequest{SessionId: "approvals"}); err != nil || len(l.GetRequests()) != 1 {
			t.Errorf("bob's approvals = %v, %v", l, err)
		}
		if got := compact(rBob.must("GET", "/v1/sessions/approvals/requests", "")); !strings.Contains(got, req.GetRequestId()) {
			t.Errorf("bob's approvals over REST = %s", got)
		}
		for who, c := range map[string]context.Context{"alice": alice, "eve": eve} {
			if l, err := b.client.ListPendingRequests(c, &pb.ListPendingRequestsRequest{SessionId: "approvals"}); err != nil || len(l.GetRequests()) != 0 {
				t.Errorf("%s's approvals = %v, %v", who, l, err)
			}
		}
		if l, err := b.client.ListPendingRequests(alice, &pb.ListPendingRequestsRequest{SessionId: sid}); err != nil || len(l.GetRequests()) != 0 {
			t.Errorf("alice's session requests = %v, %v", l, err)
		}
		if ack := approver.Reply(req.GetRequestId(), approveAnswer(a.GetArgumentsSha256())); !ack.GetAccepted() {
			t.Fatalf("approval refused: %v", ack.GetError())
		}
		res := await(t, done)
		if res.Err != nil || textOf(res.Resp.GetResult()) != "not cancelled" {
			t.Fatalf("approved call = %v, %v", res.Resp, res.Err)
		}
		if line := await(t, b.reports.Lines); line != "started approved" {
			t.Errorf("the server saw %q", line)
		}
		ended := approver.Next(func(m *pb.ConnectResponse) bool {
			return m.GetEvent().GetRequestEnded().GetRequestId() == req.GetRequestId()
		})
		if o := ended.GetEvent().GetRequestEnded().GetOutcome(); o != pb.RequestOutcome_REQUEST_OUTCOME_ANSWERED {
			t.Errorf("bob's stream: outcome %v", o)
		}
		rec := b.auditRecord(t, func(rec map[string]any) bool {
			return rec["event"] == "approval.decided" && rec["request_id"] == req.GetRequestId()
		})
		if rec["caller"] != "alice" || rec["decided_by"] != "bob" || rec["principal"] != "bob" || rec["decision"] != "approve" || rec["arguments_sha256"] != a.GetArgumentsSha256() ||
			rec["call_id"] != "call-approve" || rec["tool"] != "block" || rec["outcome"] != "OK" || rec["requested_at"] == nil || rec["time"] == nil {
			t.Errorf("approval.decided = %v", rec)
		}
	})

	t.Run("deny over REST", func(t *testing.T) {
		ev := rBob.events("approvals")
		done := rAlice.async("POST", "/v1/sessions/"+sid+"/tools/block:call", `{"callId": "call-deny-rest", "arguments": {"tag": "denied-rest"}}`)
		req := ev.next(func(e *pb.Event) bool { return e.GetServerRequest().GetOriginCallId() == "call-deny-rest" }).GetServerRequest()
		rBob.must("POST", "/v1/sessions/approvals/requests/"+req.GetRequestId()+":respond", `{"approval": {"approve": false, "reason": "not on a Friday"}}`)
		out := await(t, done)
		if !strings.Contains(compact(out), `"httpStatus":403`) || !strings.Contains(compact(out), `"reason":"APPROVAL_DENIED"`) || !strings.Contains(compact(out), "not on a Friday") {
			t.Errorf("denied REST call = %s, want 403 APPROVAL_DENIED with the reason", compact(out))
		}
		ended := ev.next(func(e *pb.Event) bool { return e.GetRequestEnded().GetRequestId() == req.GetRequestId() })
		if ended.GetRequestEnded().GetOutcome() != pb.RequestOutcome_REQUEST_OUTCOME_ANSWERED {
			t.Errorf("REST watcher: %v", ended)
		}
	})

	t.Run("deny over gRPC, by cancelling", func(t *testing.T) {
		done := b.callAsync(alice, &pb.CallToolRequest{SessionId: sid, CallId: "call-deny-grpc", Name: "block", Arguments: args(t, map[string]any{"tag": "denied-grpc"})})
		req := approvalOf(approver, "call-deny-grpc")
		approver.Send(&pb.ConnectRequest{Action: &pb.ConnectRequest_Cancel{Cancel: &pb.CancelServerRequest{RequestId: req.GetRequestId(), Reason: "nope"}}})
		res := await(t, done)
		if status.Code(res.Err) != codes.PermissionDenied || reasonOf(res.Err) != "APPROVAL_DENIED" {
			t.Errorf("denied gRPC call = %v, want PERMISSION_DENIED APPROVAL_DENIED", res.Err)
		}
	})

	t.Run("approver not allowed", func(t *testing.T) {
		ctx, cancel := context.WithCancel(alice)
		defer cancel()
		done := b.callAsync(ctx, &pb.CallToolRequest{SessionId: sid, CallId: "call-not-allowed", Name: "block", Arguments: args(t, map[string]any{"tag": "not-allowed"})})
		req := approvalOf(approver, "call-not-allowed")
		digest := req.GetApproval().GetArgumentsSha256()
		for who, c := range map[string]context.Context{"eve": eve, "alice (the caller)": alice} {
			_, err := b.client.RespondToRequest(c, &pb.RespondToRequestRequest{SessionId: "approvals", RequestId: req.GetRequestId(), Answer: approveAnswer(digest)})
			if status.Code(err) != codes.NotFound || reasonOf(err) != "REQUEST_NOT_FOUND" {
				t.Errorf("%s approving over gRPC = %v, want NOT_FOUND", who, err)
			}
		}
		for who, r := range map[string]*rest{"eve": rEve, "alice (the caller)": rAlice} {
			code, body := r.do("POST", "/v1/sessions/approvals/requests/"+req.GetRequestId()+":respond", `{"approval": {"approve": true, "argumentsSha256": "`+digest+`"}}`)
			if code != http.StatusNotFound || !strings.Contains(compact(body), "REQUEST_NOT_FOUND") {
				t.Errorf("%s approving over REST = %d %s, want 404", who, code, compact(body))
			}
		}
		// Nor through the caller's session path.
		code, _ := rAlice.do("POST", "/v1/sessions/"+sid+"/requests/"+req.GetRequestId()+":respond", `{"approval": {"approve": true, "argumentsSha256": "`+digest+`"}}`)
		if code != http.StatusNotFound {
			t.Errorf("alice approving through her session = %d, want 404", code)
		}

		// The caller gives up: the request ends CALL_ENDED, and a late approval is refused.
		cancel()
		if res := await(t, done); status.Code(res.Err) != codes.Canceled {
			t.Errorf("cancelled call = %v", res.Err)
		}
		ended := approver.Next(func(m *pb.ConnectResponse) bool {
			return m.GetEvent().GetRequestEnded().GetRequestId() == req.GetRequestId()
		})
		if o := ended.GetEvent().GetRequestEnded().GetOutcome(); o != pb.RequestOutcome_REQUEST_OUTCOME_CALL_ENDED {
			t.Errorf("outcome %v, want CALL_ENDED", o)
		}
		if ack := approver.Reply(req.GetRequestId(), approveAnswer(digest)); ack.GetAccepted() || codes.Code(ack.GetError().GetCode()) != codes.FailedPrecondition {
			t.Errorf("late approval = %v, want FAILED_PRECONDITION", ack)
		}
	})

	t.Run("a decision on other arguments is refused", func(t *testing.T) {
		done := b.callAsync(alice, &pb.CallToolRequest{SessionId: sid, CallId: "call-digest", Name: "block", Arguments: args(t, map[string]any{"tag": "digest", "durationSeconds": 0.01})})
		req := approvalOf(approver, "call-digest")
		other := sha256.Sum256([]byte(`{"durationSeconds":0.01,"tag":"other"}`))
		_, gerr := b.client.RespondToRequest(bob, &pb.RespondToRequestRequest{SessionId: "approvals", RequestId: req.GetRequestId(), Answer: approveAnswer(hex.EncodeToString(other[:]))})
		code, body := rBob.do("POST", "/v1/sessions/approvals/requests/"+req.GetRequestId()+":respond", `{"approval": {"approve": true}}`)
		if status.Code(gerr) != codes.InvalidArgument || !strings.Contains(status.Convert(gerr).Message(), "arguments_sha256") {
			t.Errorf("approval of other arguments over gRPC = %v, want INVALID_ARGUMENT", gerr)
		}
		if code != http.StatusBadRequest || !strings.Contains(compact(body), `"field":"answer.approval.arguments_sha256"`) {
			t.Errorf("approval without a digest over REST = %d %s, want 400 naming answer.approval.arguments_sha256", code, compact(body))
		}
		// Still pending: the right decision goes through.
		if ack := approver.Reply(req.GetRequestId(), approveAnswer(req.GetApproval().GetArgumentsSha256())); !ack.GetAccepted() {
			t.Fatalf("approval refused: %v", ack.GetError())
		}
		if res := await(t, done); res.Err != nil {
			t.Fatal(res.Err)
		}
		if line := await(t, b.reports.Lines); line != "started digest" {
			t.Errorf("the server saw %q", line)
		}
	})

	t.Run("expire", func(t *testing.T) {
		fast, err := b.client.CreateSession(alice, &pb.CreateSessionRequest{Server: "gated-fast"})
		if err != nil {
			t.Fatal(err)
		}
		fsid := fast.GetSession().GetSessionId()
		_, gerr := b.client.CallTool(alice, &pb.CallToolRequest{SessionId: fsid, Name: "block", Arguments: args(t, map[string]any{"tag": "expired-grpc"})})
		if status.Code(gerr) != codes.DeadlineExceeded || reasonOf(gerr) != "APPROVAL_EXPIRED" {
			t.Errorf("expired gRPC call = %v, want DEADLINE_EXCEEDED APPROVAL_EXPIRED", gerr)
		}
		code, body := rAlice.do("POST", "/v1/sessions/"+fsid+"/tools/block:call", `{"arguments": {"tag": "expired-rest"}}`)
		if code != http.StatusGatewayTimeout || !strings.Contains(compact(body), `"reason":"APPROVAL_EXPIRED"`) {
			t.Errorf("expired REST call = %d %s, want 504 APPROVAL_EXPIRED", code, compact(body))
		}
	})

	t.Run("tools that need no approval", func(t *testing.T) {
		if _, err := b.client.CallTool(alice, &pb.CallToolRequest{SessionId: sid, Name: "pid"}); err != nil {
			t.Fatal(err)
		}
	})

	// Nothing denied, expired or abandoned reached the server: the approved sentinel is the next it sees.
	done := b.callAsync(alice, &pb.CallToolRequest{SessionId: sid, CallId: "call-sentinel", Name: "block", Arguments: args(t, map[string]any{"tag": "sentinel", "durationSeconds": 0.01})})
	req := approvalOf(approver, "call-sentinel")
	if ack := approver.Reply(req.GetRequestId(), approveAnswer(req.GetApproval().GetArgumentsSha256())); !ack.GetAccepted() {
		t.Fatalf("approval refused: %v", ack.GetError())
	}
	if res := await(t, done); res.Err != nil {
		t.Fatal(res.Err)
	}
	if line := await(t, b.reports.Lines); line != "started sentinel" {
		t.Errorf("a call that was not approved reached the server: %q", line)
	}
	// The caller's own stream was never shown an approval request (everything it received before this
	// attach's acknowledgement is in its backlog).
	own.Attach(sid)
	for _, m := range own.Pending() {
		if m.GetEvent().GetServerRequest().GetApproval() != nil {
			t.Errorf("the caller's stream was shown its approval request: %v", m)
		}
	}
}

// TestApprovalSurvivesRestart: an approval pending when the bridge is killed (or stopped) is raised again under
// its id by the next process on the same state file; the caller's retry with the same call id and other
// arguments is refused, and with the same arguments it waits for the decision and sends exactly them.
func TestApprovalSurvivesRestart(t *testing.T) {
	for _, how := range []string{"kill -9", "SIGTERM"} {
		t.Run(how, func(t *testing.T) {
			stateFile := filepath.Join(t.TempDir(), "state.db")
			b := approvalBridge(t, "--state-file", stateFile)
			ctx := testCtx(t)
			alice, bob := withToken(ctx, "tok-alice"), withToken(ctx, "tok-bob")
			cs, err := b.client.CreateSession(alice, &pb.CreateSessionRequest{Server: "gated"})
			if err != nil {
				t.Fatal(err)
			}
			sid := cs.GetSession().GetSessionId()
			call := &pb.CallToolRequest{SessionId: sid, CallId: "call-restart", Name: "block", Arguments: args(t, map[string]any{"tag": "after-restart", "durationSeconds": 0.01})}
			first := b.callAsync(alice, call)
			before := approvalOf(b.connect(bob), "call-restart")
			if how == "kill -9" {
				b.kill()
			} else {
				b.stop()
			}
			// A client retries UNAVAILABLE with the same call id (RetryPolicy): the caller is told to.
			if res := await(t, first); status.Code(res.Err) != codes.Unavailable {
				t.Errorf("the call cut off by the restart = %v, want UNAVAILABLE", res.Err)
			}

			b2 := approvalBridge(t, "--state-file", stateFile)
			approver := b2.connect(bob)
			after := approvalOf(approver, "call-restart")
			if after.GetRequestId() != before.GetRequestId() || after.GetApproval().GetArgumentsSha256() != before.GetApproval().GetArgumentsSha256() || after.GetSessionId() != sid {
				t.Fatalf("after the restart: %v, want %v again", after, before)
			}
			// A retry of the call with other arguments is not the call submitted for approval.
			changed := &pb.CallToolRequest{SessionId: sid, CallId: "call-restart", Name: "block", Resume: true, Arguments: args(t, map[string]any{"tag": "changed", "durationSeconds": 0.01})}
			_, err = b2.client.CallTool(alice, changed)
			if status.Code(err) != codes.FailedPrecondition || reasonOf(err) != "APPROVAL_ARGUMENTS_CHANGED" {
				t.Fatalf("retry with other arguments = %v, want FAILED_PRECONDITION APPROVAL_ARGUMENTS_CHANGED", err)
			}
			code, body := b2.rest("tok-alice").do("POST", "/v1/sessions/"+sid+"/tools/block:call", `{"callId": "call-restart", "resume": true, "arguments": {"tag": "changed"}}`)
			if code != http.StatusBadRequest || !strings.Contains(compact(body), `"reason":"APPROVAL_ARGUMENTS_CHANGED"`) {
				t.Fatalf("REST retry with other arguments = %d %s, want 400 APPROVAL_ARGUMENTS_CHANGED", code, compact(body))
			}
			// The same call resumes: it waits for the decision, then sends the approved arguments.
			call.Resume = true
			done := b2.callAsync(alice, call)
			if ack := approver.Reply(after.GetRequestId(), approveAnswer(after.GetApproval().GetArgumentsSha256())); !ack.GetAccepted() {
				t.Fatalf("approval after the restart refused: %v", ack.GetError())
			}
			res := await(t, done)
			if res.Err != nil || textOf(res.Resp.GetResult()) != "not cancelled" {
				t.Fatalf("resumed call = %v, %v", res.Resp, res.Err)
			}
			if line := await(t, b2.reports.Lines); line != "started after-restart" {
				t.Errorf("the server saw %q", line)
			}
		})
	}
}

// TestApprovalByGroup: approvers named by group are those whose identity-provider token puts them in it
// (auth.oidc.groupsClaim), over gRPC and REST; a member deciding its own call is still refused.
func TestApprovalByGroup(t *testing.T) {
	p := newIDP(t)
	k := rsaKey(t, "k1")
	p.publish(t, k)
	b := start(t, bridgeConfig{
		extraServers: probeServer("gated", "    tools: {approve: [block]}\n    approvers: {groups: [\"ops-*\"]}\n"),
		extra: "auth:\n  oidc:\n    issuer: " + p.srv.URL + "\n    audience: mcp-bridge\n    groupsClaim: roles\n" +
			"    caFile: idp.pem\n",
		files: map[string]string{"idp.pem": p.caPEM()},
	})
	ctx := testCtx(t)
	now := time.Now()
	token := func(sub string, roles any) string {
		c := map[string]any{"iss": p.srv.URL, "aud": "mcp-bridge", "sub": sub, "iat": now.Unix(), "exp": now.Add(time.Hour).Unix()}
		if roles != nil {
			c["roles"] = roles
		}
		return sign(t, k, c)
	}
	alice := withToken(ctx, token("alice", []string{"ops-oncall"})) // in the group, but the caller
	dave := token("dave", []string{"staff", "ops-oncall"})
	erin := withToken(ctx, token("erin", "staff"))
	cs, err := b.client.CreateSession(alice, &pb.CreateSessionRequest{Server: "gated"})
	if err != nil {
		t.Fatal(err)
	}
	done := b.callAsync(alice, &pb.CallToolRequest{SessionId: cs.GetSession().GetSessionId(), CallId: "call-group", Name: "block", Arguments: args(t, map[string]any{"tag": "group", "durationSeconds": 0.01})})
	ev := b.rest(dave).events("approvals")
	req := ev.next(func(e *pb.Event) bool { return e.GetServerRequest().GetOriginCallId() == "call-group" }).GetServerRequest()
	for who, c := range map[string]context.Context{"erin (not in the group)": erin, "alice (the caller)": alice} {
		_, err := b.client.RespondToRequest(c, &pb.RespondToRequestRequest{SessionId: "approvals", RequestId: req.GetRequestId(), Answer: approveAnswer(req.GetApproval().GetArgumentsSha256())})
		if status.Code(err) != codes.NotFound {
			t.Errorf("%s approving = %v, want NOT_FOUND", who, err)
		}
	}
	b.rest(dave).must("POST", "/v1/sessions/approvals/requests/"+req.GetRequestId()+":respond", `{"approval": {"approve": true, "argumentsSha256": "`+req.GetApproval().GetArgumentsSha256()+`"}}`)
	if res := await(t, done); res.Err != nil {
		t.Fatal(res.Err)
	}
	if line := await(t, b.reports.Lines); line != "started group" {
		t.Errorf("the server saw %q", line)
	}
}

// TestApprovalVisibility (issue 30): what an approver is warned of and what a caller is told, through the real
// binary. The call — a bidi override in the amount, a zero-width space making a second "to" key — is
// flagged on the approval request an approver's host receives and in the audit record of its decision; the
// caller's stream says the call waits (rule, approvers, expiry) and its denial carries the approver's reason
// in the status; ListTools marks the tool; the decision is in the approval history of the approver and the
// caller, and of nobody else.
func TestApprovalVisibility(t *testing.T) {
	b := approvalBridge(t)
	ctx := testCtx(t)
	alice, bob, eve := withToken(ctx, "tok-alice"), withToken(ctx, "tok-bob"), withToken(ctx, "tok-eve")
	rAlice, rBob, rEve := b.rest("tok-alice"), b.rest("tok-bob"), b.rest("tok-eve")
	cs, err := b.client.CreateSession(alice, &pb.CreateSessionRequest{Server: "gated"})
	if err != nil {
		t.Fatal(err)
	}
	sid := cs.GetSession().GetSessionId()
	approver := b.connect(bob)

	t.Run("ListTools marks the tools that need approval", func(t *testing.T) {
		l, err := b.client.ListTools(alice, &pb.ListToolsRequest{SessionId: sid})
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range l.GetTools() {
			a := tool.GetApproval()
			switch tool.GetName() {
			case "block":
				if a.GetRule() != "bl*" || strings.Join(a.GetPrincipals(), ",") != "bob" || a.GetExpiry().AsDuration() != time.Hour {
					t.Errorf("block's approval = %v", a)
				}
			default:
				if a != nil {
					t.Errorf("%s marked as needing approval: %v", tool.GetName(), a)
				}
			}
		}
	})

	var deniedID string
	t.Run("warned, told, denied with the reason", func(t *testing.T) {
		st, err := b.client.StreamCallTool(alice, &pb.StreamCallToolRequest{SessionId: sid, CallId: "call-hostile", Name: "block",
			Arguments: args(t, map[string]any{"amount": "\u202e1000000", "note": "ok \u202eyenom lla refsnart", "to": "bob", "to\u200b": "mallory"})})
		if err != nil {
			t.Fatal(err)
		}
		first, err := st.Recv()
		if err != nil {
			t.Fatal(err)
		}
		p := first.GetApprovalPending()
		if p == nil || p.GetRule() != "bl*" || strings.Join(p.GetApprovers().GetPrincipals(), ",") != "bob" || p.GetExpireTime() == nil ||
			p.GetTool() != "block" || p.GetServerName() != "gated" || len(p.GetWarnings()) == 0 {
			t.Fatalf("the caller's first event = %v, want approval_pending", first)
		}
		req := approvalOf(approver, "call-hostile")
		deniedID = req.GetRequestId()
		if p.GetRequestId() != req.GetRequestId() || p.GetArgumentsSha256() != req.GetApproval().GetArgumentsSha256() ||
			!p.GetExpireTime().AsTime().Equal(req.GetDeadline().AsTime()) {
			t.Errorf("approval_pending %v does not name the request %v", p, req)
		}
		got := map[string]bool{}
		for _, w := range req.GetWarnings() {
			got[w.GetPath()+" "+w.GetKind().String()+" "+strings.Join(w.GetCodePoints(), ",")] = true
		}
		for _, want := range []string{
			"approval.arguments.amount TEXT_WARNING_KIND_BIDI_CONTROL U+202E",
			"approval.arguments.note TEXT_WARNING_KIND_BIDI_CONTROL U+202E",
			`approval.arguments["to\u200b"] TEXT_WARNING_KIND_INVISIBLE U+200B`,
			`approval.arguments["to\u200b"] TEXT_WARNING_KIND_KEY_COLLISION U+200B`,
		} {
			if !got[want] {
				t.Errorf("the approver was not warned of %s; warnings: %v", want, req.GetWarnings())
			}
		}
		approver.Send(&pb.ConnectRequest{Action: &pb.ConnectRequest_Reply{Reply: &pb.HostReply{RequestId: req.GetRequestId(),
			Answer: &pb.HostAnswer{Answer: &pb.HostAnswer_Approval{Approval: &pb.ApprovalDecision{Reason: "not this month"}}}}}})
		var end error
		for end == nil {
			var m *pb.StreamCallToolResponse
			m, end = st.Recv()
			if m.GetResult() != nil {
				t.Fatalf("a denied call has a result: %v", m)
			}
		}
		info := errorInfoOf(end)
		if status.Code(end) != codes.PermissionDenied || info.GetReason() != "APPROVAL_DENIED" || !strings.Contains(status.Convert(end).Message(), "not this month") ||
			info.GetMetadata()["approverReason"] != "not this month" || info.GetMetadata()["decidedBy"] != "bob" || info.GetMetadata()["approvalRequestId"] != req.GetRequestId() {
			t.Errorf("denied stream = %v (%v), want PERMISSION_DENIED APPROVAL_DENIED with bob's reason in the message and metadata", end, info)
		}
		rec := b.auditRecord(t, func(rec map[string]any) bool {
			return rec["event"] == "approval.decided" && rec["request_id"] == req.GetRequestId()
		})
		if ws, _ := rec["warnings"].([]any); len(ws) != len(req.GetWarnings()) || rec["decision"] != "deny" || rec["reason"] != "not this month" {
			t.Errorf("approval.decided = %v, want the %d warnings the approver saw", rec, len(req.GetWarnings()))
		}
	})

	t.Run("REST stream: approval_pending, then the result", func(t *testing.T) {
		lines := make(chan map[string]any, 16)
		go func() { // ends when the response does
			defer close(lines)
			resp, err := http.DefaultClient.Do(rAlice.request(ctx, "POST", "/v1/sessions/"+sid+"/tools/block:stream", `{"callId": "call-rest-stream", "arguments": {"tag": "pаypal", "durationSeconds": 0.01}}`))
			if err != nil {
				return
			}
			defer resp.Body.Close()
			dec := json.NewDecoder(resp.Body)
			for {
				var m map[string]any
				if dec.Decode(&m) != nil {
					return
				}
				lines <- m
			}
		}()
		first := await(t, lines)
		pending, _ := first["result"].(map[string]any)["approvalPending"].(map[string]any)
		if pending["rule"] != "bl*" || pending["expireTime"] == nil || pending["requestId"] == nil {
			t.Fatalf("first line = %v, want approvalPending", first)
		}
		req := approvalOf(approver, "call-rest-stream")
		if len(req.GetWarnings()) != 1 || req.GetWarnings()[0].GetKind() != pb.TextWarningKind_TEXT_WARNING_KIND_MIXED_SCRIPT || req.GetWarnings()[0].GetPath() != "approval.arguments.tag" {
			t.Errorf("warnings = %v, want mixed script in approval.arguments.tag", req.GetWarnings())
		}
		if ack := approver.Reply(req.GetRequestId(), approveAnswer(req.GetApproval().GetArgumentsSha256())); !ack.GetAccepted() {
			t.Fatalf("approval refused: %v", ack.GetError())
		}
		var last map[string]any
		for m := range lines {
			last = m
		}
		if r, _ := last["result"].(map[string]any); r["result"] == nil {
			t.Errorf("last line = %v, want the result", last)
		}
		if line := await(t, b.reports.Lines); line != "started pаypal" {
			t.Errorf("the server saw %q", line)
		}
	})

	t.Run("an expiry says when", func(t *testing.T) {
		fast, err := b.client.CreateSession(alice, &pb.CreateSessionRequest{Server: "gated-fast"})
		if err != nil {
			t.Fatal(err)
		}
		_, gerr := b.client.CallTool(alice, &pb.CallToolRequest{SessionId: fast.GetSession().GetSessionId(), Name: "block", Arguments: args(t, map[string]any{"tag": "x"})})
		info := errorInfoOf(gerr)
		if status.Code(gerr) != codes.DeadlineExceeded || info.GetReason() != "APPROVAL_EXPIRED" || info.GetMetadata()["expireTime"] == "" ||
			!strings.Contains(status.Convert(gerr).Message(), "expired at") {
			t.Errorf("expired call = %v (%v)", gerr, info)
		}
	})

	t.Run("history", func(t *testing.T) {
		h, err := b.client.ListApprovalHistory(bob, &pb.ListApprovalHistoryRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var denied *pb.ApprovalRecord
		for _, r := range h.GetRecords() {
			if r.GetRequestId() == deniedID {
				denied = r
			}
		}
		if denied == nil || denied.GetOutcome() != pb.ApprovalOutcome_APPROVAL_OUTCOME_DENIED || denied.GetDecidedBy() != "bob" || denied.GetReason() != "not this month" ||
			denied.GetCaller() != "alice" || denied.GetTool() != "block" || denied.GetArgumentsSha256() == "" || len(denied.GetWarnings()) == 0 || denied.GetEndTime() == nil {
			t.Fatalf("bob's history = %v, want the denial", h)
		}
		if len(h.GetRecords()) != 3 || h.GetRecords()[0].GetOutcome() != pb.ApprovalOutcome_APPROVAL_OUTCOME_EXPIRED {
			t.Errorf("bob's history = %v, want 3 records, newest (the expiry) first", h.GetRecords())
		}
		if got := compact(rAlice.must("GET", "/v1/approvals/history", "")); !strings.Contains(got, deniedID) || !strings.Contains(got, `"decidedBy":"bob"`) {
			t.Errorf("alice's history over REST = %s", got)
		}
		if got := compact(rBob.must("GET", "/v1/approvals/history?pageSize=1", "")); !strings.Contains(got, `"nextPageToken":"1"`) {
			t.Errorf("bob's first page = %s", got)
		}
		if got := compact(rEve.must("GET", "/v1/approvals/history", "")); strings.Contains(got, "requestId") {
			t.Errorf("eve's history = %s, want none", got)
		}
		if _, err := b.client.ListApprovalHistory(eve, &pb.ListApprovalHistoryRequest{PageToken: "x"}); status.Code(err) != codes.InvalidArgument {
			t.Errorf("a bad page token = %v", err)
		}
	})
}

// errorInfoOf is the ErrorInfo detail of a status error.
func errorInfoOf(err error) *errdetails.ErrorInfo {
	for _, d := range status.Convert(err).Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info
		}
	}
	return nil
}

// TestURLElicitationDestination (issue 30): a URL elicitation whose URL a person cannot check — relative,
// javascript:, data:, http to another host — is refused back to the server and never reaches the host, on
// both protocol eras; an https one reaches the host with its host and registrable domain.
func TestURLElicitationDestination(t *testing.T) {
	b := start(t, bridgeConfig{})
	ctx := testCtx(t)
	for _, server := range []string{"demo", "demo-2025"} {
		t.Run(server, func(t *testing.T) {
			cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: server, HostCapabilities: allCaps})
			if err != nil {
				t.Fatal(err)
			}
			sid := cs.GetSession().GetSessionId()
			h := b.connect(ctx)
			h.Attach(sid)
			for _, u := range []string{"/v1/sessions", "javascript:alert(1)", "data:text/html,<b>x</b>", "http://evil.example/x", "https://bank.example@evil.example/"} {
				res, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: sid, Name: "elicit_url", Arguments: args(t, map[string]any{"url": u})})
				if err == nil && !res.GetResult().GetIsError() {
					t.Errorf("%s: call = %v, want the refusal", u, res)
				}
				t.Logf("%s: %v %v", u, textOf(res.GetResult()), err)
			}
			for _, m := range h.Pending() {
				if m.GetEvent().GetServerRequest() != nil {
					t.Errorf("the host was shown a refused URL elicitation: %v", m)
				}
			}
			done := b.callAsync(ctx, &pb.CallToolRequest{SessionId: sid, Name: "elicit_url", Arguments: args(t, map[string]any{"url": "https://login.example.co.uk/consent"})})
			req := h.NextRequest()
			if d := req.GetUrlDestination(); d.GetHost() != "login.example.co.uk" || d.GetRegistrableDomain() != "example.co.uk" || d.GetScheme() != "https" {
				t.Errorf("url_destination = %v", d)
			}
			h.Reply(req.GetRequestId(), &pb.HostAnswer{Answer: &pb.HostAnswer_Elicitation{Elicitation: &pb.ElicitResult{Action: pb.ElicitAction_ELICIT_ACTION_ACCEPT}}})
			if res := await(t, done); res.Err != nil || !strings.Contains(textOf(res.Resp.GetResult()), "accept") {
				t.Errorf("https elicitation = %v, %v", res.Resp, res.Err)
			}
		})
	}
}
