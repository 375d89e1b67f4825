// Package healthz is the bridge's health: the upstream servers' health published in the gRPC health service
// (Watch), and the HTTP views of that service, /healthz (Handler) and /readyz (Ready).
package healthz

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// ServerPrefix prefixes a configured server's name to make its service name in grpc.health.v1:
// "servers/demo" is the health of the upstream server "demo" (the resource name of GET /v1/servers).
const ServerPrefix = "servers/"

// interval is how often the upstream servers' health is copied from the core into the health service.
const interval = time.Second

// checkTimeout bounds an HTTP health answer's own Check.
const checkTimeout = 5 * time.Second

// Watch publishes the health of every configured server of core in hs, under "servers/<name>", and keeps it
// current until stop is closed: the core owns the sessions and their state (mcpcore.Core.ServerHealth); this
// only copies its verdict. The goroutine it starts ends when stop is closed, and done is closed then. A nil
// core (a service without one) publishes nothing.
// hide, when set, names the servers whose health is not published (the gRPC health service needs no token).
func Watch(core *mcpcore.Core, hs *health.Server, hide func(server string) bool, stop <-chan struct{}) (done <-chan struct{}) {
	d := make(chan struct{})
	if core == nil {
		close(d)
		return d
	}
	publish := func() {
		for _, h := range core.ServerHealth() {
			if hide != nil && hide(h.Name) {
				continue
			}
			hs.SetServingStatus(ServerPrefix+h.Name, Status(h.Status()))
		}
	}
	publish() // before the first Check can come in
	go func() {
		defer close(d)
		t := time.NewTicker(interval)
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

// Status is the grpc.health.v1 status of the core's verdict on a server.
func Status(s mcpcore.HealthStatus) healthpb.HealthCheckResponse_ServingStatus {
	switch s {
	case mcpcore.HealthServing:
		return healthpb.HealthCheckResponse_SERVING
	case mcpcore.HealthNotServing:
		return healthpb.HealthCheckResponse_NOT_SERVING
	default:
		return healthpb.HealthCheckResponse_UNKNOWN
	}
}

// Handler answers /healthz with the status hc reports for the whole bridge, or for the service named in
// ?service=: 200 {"status":"SERVING"} or 503 with another status.
func Handler(hc healthpb.HealthClient) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), checkTimeout)
		defer cancel()
		resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{Service: r.URL.Query().Get("service")})
		if err != nil {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "UNKNOWN", "error": err.Error()})
			return
		}
		code := http.StatusOK
		if resp.Status != healthpb.HealthCheckResponse_SERVING {
			code = http.StatusServiceUnavailable
		}
		writeJSON(w, code, map[string]string{"status": resp.Status.String()})
	}
}

// Ready answers /readyz: whether this bridge can take new work. 200 {"status":"READY", ...} while hc reports
// service SERVING and core opens sessions, 503 {"status":"NOT_READY", "reason": ...} once it is shutting
// down (its health is NOT_SERVING, its core refuses new sessions). The upstream servers' health is listed
// ("servers") but does not decide readiness: every replica reaches the same upstreams, so taking a replica
// out of its load balancer because an upstream is down would only move the failure, and would cut the
// sessions it owns off from their hosts. Nor does the state store's health: a bridge whose store fails keeps
// serving and says so ("state"), so that an operator sees it and a load balancer does not cut the sessions it
// holds off from their hosts. A server whose command the bridge could not find ("serverReasons") is listed
// not_serving with that reason until a session to it opens.
func Ready(hc healthpb.HealthClient, o ReadyOptions) http.HandlerFunc {
	service, core, replica := o.Service, o.Core, o.Replica
	return func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), checkTimeout)
		defer cancel()
		body := map[string]any{}
		if replica != "" {
			body["replica"] = replica
		}
		if o.Config != nil {
			body["config"] = o.Config()
		}
		resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{Service: service})
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
		if core != nil && !core.Accepting() {
			notReady("the bridge is shutting down")
			return
		}
		if core != nil {
			servers, reasons := map[string]string{}, map[string]string{}
			for _, h := range core.ServerHealth() {
				if o.Hide != nil && o.Hide(h.Name) {
					continue
				}
				servers[h.Name] = Status(h.Status()).String()
				if h.Ready == 0 && errors.Is(h.LastOpenErr, mcpcore.ErrCommandNotFound) {
					reasons[h.Name] = h.LastOpenErr.Error()
				}
			}
			body["servers"] = servers
			if len(reasons) > 0 {
				body["serverReasons"] = reasons // what the bridge found wrong on its own (a command not found)
			}
		}
		if o.Store != nil {
			st := map[string]any{"healthy": true}
			if err := o.Store(); err != nil {
				st["healthy"], st["error"] = false, err.Error()
			}
			body["state"] = st
		}
		body["status"] = "READY"
		writeJSON(w, http.StatusOK, body)
	}
}

// ReadyOptions configure Ready.
type ReadyOptions struct {
	// Service is the gRPC health service name of the bridge's API.
	Service string
	// Core is the MCP client core; nil for a service without one.
	Core *mcpcore.Core
	// Replica, when set, is named in the answer.
	Replica string
	// Hide, when set, names the servers whose health this view leaves out (a listener that asks no token).
	Hide func(server string) bool
	// Store, when set, reports the state store's health: nil while it writes, the last failure otherwise.
	Store func() error
	// Config, when set, says which generation of the configuration is in force and how the last reload went
	// (docs/adr/0095-live-configuration.md); it is shown as it is.
	Config func() any
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
