package main

import (
	"context"
	"net/http"
	"time"

	"github.com/mcp-bridge/mcp-bridge/mcpcore"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// serverHealthPrefix prefixes a configured server's name to make its service name in grpc.health.v1:
// "servers/demo" is the health of the upstream server "demo" (the resource name of GET /v1/servers).
const serverHealthPrefix = "servers/"

// healthInterval is how often the upstream servers' health is copied from the core into the health
// service.
const healthInterval = time.Second

// coreOf returns the MCP client core the service runs on, or nil for a service without one (tests).
func coreOf(svc bridgeService) *mcpcore.Core {
	if c, ok := svc.(interface{ Core() *mcpcore.Core }); ok {
		return c.Core()
	}
	return nil
}

// watchServerHealth publishes the health of every configured server in the gRPC health service, under
// "servers/<name>", and keeps it current until stop is closed: the core owns the sessions and their state
// (mcpcore.Core.ServerHealth); this only copies its verdict. The goroutine it starts is b's; it ends when
// stop is closed, and done is closed then.
func (b *bridge) watchServerHealth(stop <-chan struct{}) (done <-chan struct{}) {
	d := make(chan struct{})
	core := coreOf(b.svc)
	if core == nil {
		close(d)
		return d
	}
	publish := func() {
		for _, h := range core.ServerHealth() {
			b.health.SetServingStatus(serverHealthPrefix+h.Name, grpcHealth(h.Status()))
		}
	}
	publish() // before the first Check can come in
	go func() {
		defer close(d)
		t := time.NewTicker(healthInterval)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				publish()
			}
		}
	}()
	return d
}

func grpcHealth(s mcpcore.HealthStatus) healthpb.HealthCheckResponse_ServingStatus {
	switch s {
	case mcpcore.HealthServing:
		return healthpb.HealthCheckResponse_SERVING
	case mcpcore.HealthNotServing:
		return healthpb.HealthCheckResponse_NOT_SERVING
	default:
		return healthpb.HealthCheckResponse_UNKNOWN
	}
}

// readyz answers whether this bridge can take new work: 200 {"status":"READY", ...} while it serves and
// opens sessions, 503 {"status":"NOT_READY", "reason": ...} once it is shutting down (its health is
// NOT_SERVING, its core refuses new sessions). The upstream servers' health is listed ("servers") but does
// not decide readiness: every replica reaches the same upstreams, so taking a replica out of its load
// balancer because an upstream is down would only move the failure, and would cut the sessions it owns off
// from their hosts.
func (b *bridge) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	body := map[string]any{}
	if replica := b.cfg.Sessions.Replica; replica != "" {
		body["replica"] = replica
	}
	resp, err := healthpb.NewHealthClient(b.gwConn).Check(ctx, &healthpb.HealthCheckRequest{Service: bridgeServiceName})
	notReady := func(reason string) {
		body["status"], body["reason"] = "NOT_READY", reason
		writeJSON(w, http.StatusServiceUnavailable, body)
	}
	switch {
	case err != nil:
		notReady("the gRPC service does not answer: " + err.Error())
		return
	case resp.Status != healthpb.HealthCheckResponse_SERVING:
		notReady("the bridge is shutting down")
		return
	}
	core := coreOf(b.svc)
	if core != nil && !core.Accepting() {
		notReady("the bridge is shutting down")
		return
	}
	if core != nil {
		servers := map[string]string{}
		for _, h := range core.ServerHealth() {
			servers[h.Name] = grpcHealth(h.Status()).String()
		}
		body["servers"] = servers
	}
	// A shared state store that does not answer is said here but does not take the replica out of its load
	// balancer: the sessions it holds keep working, and every replica reaches the same Redis.
	if l := leasesOf(b.svc); l != nil {
		if l.Down() {
			body["stateStore"] = map[string]string{"status": "UNREACHABLE", "reason": "the shared state store (redis) does not answer: held sessions keep working; takeovers and new sessions are refused until it does"}
		} else {
			body["stateStore"] = map[string]string{"status": "REACHABLE"}
		}
	}
	body["status"] = "READY"
	writeJSON(w, http.StatusOK, body)
}
