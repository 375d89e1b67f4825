package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcp-bridge/mcp-bridge/internal/config"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// TestDeployQueriesNameRealMetrics checks that every metric the Grafana dashboard and the Prometheus alerts in
// deploy/ query is one the bridge exports, once each of the core's facts has happened.
func TestDeployQueriesNameRealMetrics(t *testing.T) {
	cfg := &config.Config{MCPServers: map[string]*config.Server{"demo": {Name: "demo"}}}
	obs, err := newObservability(context.Background(), cfg, func(string) string { return "" }, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if obs.tracing.Provider != nil {
		t.Fatal("tracing is on without OTEL_* variables")
	}
	srv := grpc.NewServer(obs.serverOptions()...)
	healthpb.RegisterHealthServer(srv, health.NewServer())
	obs.registerService(fakeService{}, srv)
	var o mcpcore.Observer = obs.core
	o.SessionStateChanged("demo", 0, mcpcore.StateConnecting)
	o.SessionStateChanged("demo", mcpcore.StateConnecting, mcpcore.StateClosed)
	o.SessionEnded("demo", mcpcore.TransportStdio, "2026-07-28", "", time.Second)
	o.OperationDone(mcpcore.Operation{Server: "demo", Method: "tools/call", Target: "echo", Duration: time.Millisecond})
	o.ServerRequestStarted(mcpcore.KindSampling)
	o.ServerRequestEnded(mcpcore.KindSampling, mcpcore.OutcomeAnswered, time.Second)
	o.Reconnected("demo", mcpcore.TransportStdio, false)
	o.EventDropped()
	o.MessageTransferred(mcpcore.TransportStdio, true, 10)

	fams, err := obs.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	metrics, labels := map[string]bool{}, map[string]bool{}
	for _, f := range fams {
		metrics[f.GetName()] = true
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = true
			}
		}
	}
	labels["le"] = true
	name := regexp.MustCompile(`\b(?:mcp|grpc_server|process|go)_[a-z_]+\b`)
	for _, file := range []string{"../../deploy/grafana/mcp-bridge.json", "../../deploy/prometheus/mcp-bridge-alerts.yml"} {
		body, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, m := range name.FindAllString(string(body), -1) {
			if labels[m] {
				continue
			}
			base := m
			for _, suf := range []string{"_bucket", "_count", "_sum"} {
				if !metrics[base] {
					base = strings.TrimSuffix(base, suf)
				}
			}
			if !metrics[base] {
				t.Errorf("%s queries %s, which the bridge does not export", file, m)
			}
			n++
		}
		if n < 5 {
			t.Errorf("%s: only %d metric names found", file, n)
		}
	}
}

// fakeService has what registerService looks for in the service.
type fakeService struct{}

func (fakeService) CoreStats() mcpcore.Stats { return mcpcore.Stats{} }
func (fakeService) HostStreams() int64       { return 0 }

// TestMetricsOnTheAPIListener: /metrics on the API's HTTP listener is open while every caller is "local",
// and a 404 that names no server once any source of principals is configured (docs/adr/0030).
func TestMetricsOnTheAPIListener(t *testing.T) {
	for _, tc := range []struct {
		name string
		auth config.Auth
		open bool
	}{
		{"no authentication", config.Auth{}, true},
		{"tokens", config.Auth{TokensFile: "tokens.txt"}, false},
		{"oidc", config.Auth{OIDC: &config.OIDC{Issuer: "https://idp.example"}}, false},
		{"certificate principals", config.Auth{MTLS: config.MTLS{PrincipalFrom: "commonName"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &config.Config{Auth: tc.auth, MCPServers: map[string]*config.Server{"hidden-server": {Name: "hidden-server"}}}
			obs, err := newObservability(context.Background(), cfg, func(string) string { return "" }, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			b := &bridge{cfg: cfg, obs: obs, logger: slog.New(slog.DiscardHandler)}
			rec := httptest.NewRecorder()
			b.apiMetrics().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
			body, _ := io.ReadAll(rec.Body)
			if got := rec.Code == http.StatusOK; got != tc.open {
				t.Errorf("GET /metrics = %d, want open %v", rec.Code, tc.open)
			}
			if got := strings.Contains(string(body), "hidden-server"); got != tc.open {
				t.Errorf("the body names the configured server: %v, want %v", got, tc.open)
			}
			if !tc.open && rec.Code != http.StatusNotFound {
				t.Errorf("GET /metrics = %d %s, want 404", rec.Code, body)
			}
		})
	}
}
