package mcpcore

import (
	"testing"
	"time"
)

// TestApprovalHistoryBounds: the history keeps at most Max records, none older than MaxAge, and shows a record
// to its caller and its approvers only.
func TestApprovalHistoryBounds(t *testing.T) {
	c := &Core{}
	c.tuning.Store(&tunables{approvalHistory: ApprovalHistoryLimits{Max: 3, MaxAge: time.Hour}})
	req := func(id string) *PendingRequest {
		return &PendingRequest{ID: id, Kind: KindApproval, Created: time.Now(), Deadline: time.Now().Add(time.Minute),
			Approval: &ApprovalRequest{Caller: "alice", Tool: "send", Arguments: []byte(`{"a":1}`), Approvers: Approvers{Principals: []string{"bob"}}}}
	}
	for _, id := range []string{"r1", "r2", "r3", "r4"} {
		c.history.add(c.tuned().approvalHistory, req(id), Answer{Approval: &ApprovalAnswer{Reason: "no", DecidedBy: "bob"}}, OutcomeAnswered, false)
	}
	if n := c.ApprovalHistoryLen(); n != 3 {
		t.Fatalf("%d records, want 3", n)
	}
	got := c.ApprovalHistory(Identity{Principal: "bob"})
	if len(got) != 3 || got[0].RequestID != "r4" || got[2].RequestID != "r2" {
		t.Fatalf("bob's history = %+v, want r4, r3, r2", got)
	}
	if r := got[0]; r.Outcome != ApprovalDenied || r.DecidedBy != "bob" || r.Reason != "no" || r.Request.Arguments != nil {
		t.Errorf("record = %+v", r)
	}
	if n := len(c.ApprovalHistory(Identity{Principal: "alice"})); n != 3 {
		t.Errorf("the caller sees %d records", n)
	}
	if n := len(c.ApprovalHistory(Identity{Principal: "eve"})); n != 0 {
		t.Errorf("eve sees %d records", n)
	}
	// A record older than MaxAge is dropped at the next add, and not shown meanwhile.
	c.history.mu.Lock()
	c.history.records[0].Ended = time.Now().Add(-2 * time.Hour)
	c.history.mu.Unlock()
	if n := len(c.ApprovalHistory(Identity{Principal: "bob"})); n != 2 {
		t.Errorf("%d records shown, want 2 (one too old)", n)
	}
	c.history.add(c.tuned().approvalHistory, req("r5"), Answer{Approval: &ApprovalAnswer{Approve: true, DecidedBy: "bob"}}, OutcomeAnswered, false)
	if got := c.ApprovalHistory(Identity{Principal: "bob"}); len(got) != 3 || got[0].Outcome != ApprovalApproved {
		t.Errorf("after r5: %+v", got)
	}
	// A drain keeps the request for the next process: not a history record.
	c.history.add(c.tuned().approvalHistory, req("r6"), Answer{}, OutcomeSessionClosed, true)
	if got := c.ApprovalHistory(Identity{Principal: "bob"}); got[0].RequestID != "r5" {
		t.Errorf("a drained request was recorded: %+v", got[0])
	}
}
