package server

import (
	"context"
	"log/slog"
	"testing"

	"github.com/google/go-cmp/cmp"
	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
	"github.com/mcp-bridge/mcp-bridge/mcpcore/ownership"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// A call naming a session of another replica is refused with one wording, whichever way the replica
// learns it (the id names another replica here; a live lease of another replica with shared state):
// both come from mcpcore/ownership, and the status keeps the refusal's replicas in its metadata.
func TestWrongReplicaOneWording(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	core := mcpcore.New(mcpcore.Options{Logger: logger, Replica: "r1"})
	svc := New(core, Options{Logger: logger})
	t.Cleanup(func() { _ = svc.Close(context.Background()) })

	const id = "s-r2.ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	_, err := svc.GetSession(t.Context(), &pb.GetSessionRequest{SessionId: id})
	st := status.Convert(err)
	want := `session "s-r2.ABCDEFGHIJKLMNOPQRSTUVWXYZ" is served by replica "r2", not "r1": the proxy must route on the mcpbridge-session header`
	if st.Code() != codes.Unavailable || st.Message() != want {
		t.Errorf("GetSession = %v %q, want UNAVAILABLE %q", st.Code(), st.Message(), want)
	}
	info := errorInfo(st.Details())
	if info.GetReason() != ReasonWrongReplica {
		t.Errorf("reason = %q, want %s", info.GetReason(), ReasonWrongReplica)
	}
	if diff := cmp.Diff(map[string]string{"owner": "r2", "replica": "r1"}, info.GetMetadata()); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
	if n := svc.Owner().Misrouted(); n != 1 {
		t.Errorf("misrouted = %d, want 1", n)
	}
}

// Each of the owner's sentinels is UNAVAILABLE with its reason; message and metadata are the refusal's.
func TestOwnershipStatuses(t *testing.T) {
	md := map[string]string{"owner": "r2", "replica": "r1"}
	for _, c := range []struct {
		err    error
		reason string
	}{
		{ownership.ErrWrongReplica, ReasonWrongReplica},
		{ownership.ErrMoved, ReasonSessionMoved},
		{ownership.ErrStoreUnavailable, ReasonStateStoreUnavailable},
	} {
		st := status.Convert(toStatus(&ownership.Error{Err: c.err, Message: "what happened", Metadata: md}))
		info := errorInfo(st.Details())
		if st.Code() != codes.Unavailable || st.Message() != "what happened" || info.GetReason() != c.reason || !cmp.Equal(md, info.GetMetadata()) {
			t.Errorf("%v: %v %q %v, want UNAVAILABLE %s with the refusal's message and metadata", c.err, st.Code(), st.Message(), info, c.reason)
		}
	}
	// A call cut short by a move (the core's error, no refusal around it) keeps its reason too.
	if info := errorInfo(status.Convert(toStatus(mcpcore.ErrSessionMoved)).Details()); info.GetReason() != ReasonSessionMoved {
		t.Errorf("ErrSessionMoved: reason %q", info.GetReason())
	}
}
