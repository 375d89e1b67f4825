package server

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"google.golang.org/protobuf/types/known/timestamppb"
)

func TestMergeSessionPages(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	sess := func(replica string, minute int) *pb.Session {
		return &pb.Session{SessionId: fmt.Sprintf("s-%s.%02d", replica, minute), CreateTime: timestamppb.New(base.Add(time.Duration(minute) * time.Minute))}
	}
	page := func(next string, ss ...*pb.Session) *pb.ListSessionsResponse {
		return &pb.ListSessionsResponse{Sessions: ss, NextPageToken: next}
	}
	ids := func(r *pb.ListSessionsResponse) []string {
		var out []string
		for _, s := range r.GetSessions() {
			out = append(out, s.GetSessionId())
		}
		return out
	}
	for _, tt := range []struct {
		name     string
		local    *pb.ListSessionsResponse
		peers    []*pb.ListSessionsResponse
		size     int
		want     []string
		wantMore bool
	}{
		{"newest first across replicas", page("", sess("r1", 1), sess("r1", 4)), []*pb.ListSessionsResponse{page("", sess("r2", 3)), page("", sess("r3", 2))}, 10,
			[]string{"s-r1.04", "s-r2.03", "s-r3.02", "s-r1.01"}, false},
		{"cut at the page size", page("", sess("r1", 1), sess("r1", 4)), []*pb.ListSessionsResponse{page("", sess("r2", 3), sess("r2", 2))}, 2,
			[]string{"s-r1.04", "s-r2.03"}, true},
		{"a peer has more", page("", sess("r1", 4)), []*pb.ListSessionsResponse{page("tok", sess("r2", 3))}, 5,
			[]string{"s-r1.04", "s-r2.03"}, true},
		{"duplicates dropped", page("", sess("r1", 1)), []*pb.ListSessionsResponse{page("", sess("r1", 1))}, 5,
			[]string{"s-r1.01"}, false},
		{"nothing anywhere", page(""), nil, 5, nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := mergeSessionPages(tt.local, tt.peers, tt.size)
			if diff := cmp.Diff(tt.want, ids(got)); diff != "" {
				t.Errorf("sessions (-want +got):\n%s", diff)
			}
			if more := got.GetNextPageToken() != ""; more != tt.wantMore {
				t.Errorf("next page token %q, want one: %v", got.GetNextPageToken(), tt.wantMore)
			}
			if tt.wantMore {
				last := got.GetSessions()[len(got.GetSessions())-1]
				k, ok := decodePageToken(got.GetNextPageToken())
				if !ok || k.id != last.GetSessionId() {
					t.Errorf("the next page token does not point after the last session: %+v", k)
				}
			}
		})
	}
}
