package server

import (
	"cmp"
	"context"
	"slices"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"google.golang.org/grpc/metadata"
)

// PeerSessions lists a principal's sessions on the other replicas of a shared service, for ListSessions to
// show every session of the caller whichever replica it reached (docs/adr/0013-scaling-out.md: fan-out, not a
// shared store). Each peer answers one page of its own sessions for req (the page token is a position in
// the order of all sessions, so the same token means the same on every replica). A peer that cannot be
// reached is left out: its sessions ended with it.
type PeerSessions interface {
	ListSessions(ctx context.Context, req *pb.ListSessionsRequest) ([]*pb.ListSessionsResponse, error)
}

// LocalOnlyKey is the metadata key with which a replica asks a peer for its own sessions only (a fan-out
// call). The bridge's metadata namespace: REST clients cannot set it (the gateway drops it), and a gRPC
// client that sets it only narrows its own listing.
const LocalOnlyKey = "x-mcpbridge-local-only"

func localOnly(ctx context.Context) bool {
	md, _ := metadata.FromIncomingContext(ctx)
	return len(md.Get(LocalOnlyKey)) > 0
}

// listSessionsEverywhere merges this replica's page of the caller's sessions with its peers' pages: the
// newest size sessions of all, and a next page token if any replica has more.
func (a *sessionsAPI) listSessionsEverywhere(ctx context.Context, req *pb.ListSessionsRequest) (*pb.ListSessionsResponse, error) {
	s := a.s
	local, err := s.listSessionsLocal(ctx, req)
	if err != nil {
		return nil, err
	}
	pages, err := s.opts.Peers.ListSessions(ctx, req)
	if err != nil {
		return nil, toStatus(err)
	}
	return mergeSessionPages(local, pages, pageSize(req)), nil
}

// mergeSessionPages merges pages of sessions from several replicas, each the newest sessions after the same
// page token: the newest size of them all, without duplicates, and a next page token if there are more.
func mergeSessionPages(local *pb.ListSessionsResponse, pages []*pb.ListSessionsResponse, size int) *pb.ListSessionsResponse {
	seen := map[string]bool{}
	more := local.GetNextPageToken() != ""
	all := slices.Clone(local.GetSessions())
	for _, id := range all {
		seen[id.GetSessionId()] = true
	}
	for _, p := range pages {
		more = more || p.GetNextPageToken() != ""
		for _, sess := range p.GetSessions() {
			if !seen[sess.GetSessionId()] {
				seen[sess.GetSessionId()] = true
				all = append(all, sess)
			}
		}
	}
	slices.SortFunc(all, func(a, b *pb.Session) int { // newest first, as each replica pages
		if c := cmp.Compare(b.GetCreateTime().AsTime().UnixNano(), a.GetCreateTime().AsTime().UnixNano()); c != 0 {
			return c
		}
		return cmp.Compare(b.GetSessionId(), a.GetSessionId())
	})
	out := &pb.ListSessionsResponse{Sessions: all}
	if len(all) > size {
		out.Sessions, more = all[:size], true
	}
	if more && len(out.Sessions) > 0 {
		last := out.Sessions[len(out.Sessions)-1]
		out.NextPageToken = encodePageToken(pageKey{created: last.GetCreateTime().AsTime().UnixNano(), id: last.GetSessionId()})
	}
	return out
}
