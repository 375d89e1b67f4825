// Package peers is the fan-out of a replica to the other replicas of a shared service (sessions.peers,
// docs/adr/0013-scaling-out.md): it implements server.PeerSessions over gRPC connections it owns.
package peers

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"time"

	mcpbridgev1 "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/server"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

var _ server.PeerSessions = (*Set)(nil)

// peerTimeout bounds one peer's answer to a fan-out ListSessions.
const peerTimeout = 5 * time.Second

// Set reaches the other replicas of a shared service (sessions.peers) for ListSessions: it implements
// server.PeerSessions by asking every peer, in parallel, for the caller's sessions there. It is safe for
// concurrent use; Close closes its connections.
type Set struct {
	addrs   []string // host:port; a host resolves to every address of the replicas (a headless Service)
	replica string   // this replica: its own answers are skipped (it lists its sessions itself)
	logger  *slog.Logger
	maxMsg  int

	mu     sync.Mutex // guards conns and closed
	conns  map[string]*grpc.ClientConn
	closed bool
}

// New returns the set of the peers at addrs (host:port; a host may resolve to several replicas); replica is
// this replica's name (its own answers are skipped), maxMsg the message size limit, logger told of peers
// left out. No connection is made before the first ListSessions.
func New(addrs []string, replica string, maxMsg int, logger *slog.Logger) *Set {
	return &Set{addrs: addrs, replica: replica, maxMsg: maxMsg, logger: logger, conns: map[string]*grpc.ClientConn{}}
}

// targets resolves the peers' addresses now: a replica set changes as pods come and go.
func (p *Set) targets(ctx context.Context) []string {
	var out []string
	seen := map[string]bool{}
	for _, a := range p.addrs {
		host, port, err := net.SplitHostPort(a)
		if err != nil {
			continue // validated at load
		}
		ips, err := net.DefaultResolver.LookupHost(ctx, host)
		if err != nil {
			p.logger.Warn("resolving a peer", "peer", a, "error", err)
			continue
		}
		for _, ip := range ips {
			if t := net.JoinHostPort(ip, port); !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	return out
}

func (p *Set) conn(target string) (*grpc.ClientConn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, net.ErrClosed
	}
	if c, ok := p.conns[target]; ok {
		return c, nil
	}
	c, err := grpc.NewClient("passthrough:///"+target, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(p.maxMsg)))
	if err != nil {
		return nil, err
	}
	p.conns[target] = c
	return c, nil
}

// ListSessions asks every peer for one page of the caller's sessions there, with the caller's bearer token;
// a peer that fails (gone, unreachable, slow) is logged and left out. It returns when every peer answered or
// failed.
func (p *Set) ListSessions(ctx context.Context, req *mcpbridgev1.ListSessionsRequest) ([]*mcpbridgev1.ListSessionsResponse, error) {
	md := metadata.Pairs(server.LocalOnlyKey, "1")
	if in, ok := metadata.FromIncomingContext(ctx); ok {
		for _, v := range in.Get("authorization") {
			md.Append("authorization", v)
		}
	}
	ctx = metadata.NewOutgoingContext(ctx, md)
	targets := p.targets(ctx)
	p.prune(targets)
	pages := make([]*mcpbridgev1.ListSessionsResponse, len(targets))
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Go(func() {
			c, err := p.conn(t)
			if err != nil {
				return
			}
			cctx, cancel := context.WithTimeout(ctx, peerTimeout)
			defer cancel()
			var hdr metadata.MD
			resp, err := mcpbridgev1.NewBridgeServiceClient(c).ListSessions(cctx, req, grpc.Header(&hdr))
			if err != nil {
				p.logger.Warn("a peer did not list its sessions; leaving it out", "peer", t, "error", err)
				return
			}
			if r := hdr.Get(server.ReplicaHeader); len(r) > 0 && r[0] == p.replica {
				return // this replica, listed by the caller
			}
			pages[i] = resp
		})
	}
	wg.Wait()
	out := pages[:0]
	for _, pg := range pages {
		if pg != nil {
			out = append(out, pg)
		}
	}
	return out, nil
}

// prune closes the connections to addresses the peers no longer resolve to (pods that went away), so that
// replica churn does not pile up connections.
func (p *Set) prune(targets []string) {
	keep := make(map[string]bool, len(targets))
	for _, t := range targets {
		keep[t] = true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for t, c := range p.conns {
		if !keep[t] {
			_ = c.Close()
			delete(p.conns, t)
		}
	}
}

// Close closes the connections to the peers; later ListSessions calls reach none.
func (p *Set) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, c := range p.conns {
		_ = c.Close()
	}
	clear(p.conns)
}
