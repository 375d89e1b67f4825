package healthz

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// inProcess is a HealthClient that calls a health server directly.
type inProcess struct {
	healthpb.HealthClient // nil: only Check is used
	srv                   *health.Server
}

func (c inProcess) Check(ctx context.Context, in *healthpb.HealthCheckRequest, _ ...grpc.CallOption) (*healthpb.HealthCheckResponse, error) {
	return c.srv.Check(ctx, in)
}

func get(t *testing.T, h http.Handler, target string) (int, map[string]any) {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
	var body map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatalf("%s: %v in %q", target, err, w.Body)
	}
	return w.Code, body
}

func TestHandlerAndReady(t *testing.T) {
	hs := health.NewServer()
	hs.SetServingStatus("svc", healthpb.HealthCheckResponse_SERVING)
	hc := inProcess{srv: hs}

	for _, tc := range []struct {
		name   string
		h      http.Handler
		target string
		code   int
		body   map[string]any
	}{
		{"healthz", Handler(hc), "/healthz", http.StatusOK, map[string]any{"status": "SERVING"}},
		{"healthz of a service", Handler(hc), "/healthz?service=svc", http.StatusOK, map[string]any{"status": "SERVING"}},
		{"ready", Ready(hc, ReadyOptions{Service: "svc", Replica: "r1"}), "/readyz", http.StatusOK, map[string]any{"status": "READY", "replica": "r1"}},
		{"ready without a replica name", Ready(hc, ReadyOptions{Service: "svc"}), "/readyz", http.StatusOK, map[string]any{"status": "READY"}},
		{"ready with a failing state store", Ready(hc, ReadyOptions{Service: "svc", Store: func() error { return errors.New("state file /x: no space left on device") }}), "/readyz", http.StatusOK,
			map[string]any{"status": "READY", "state": map[string]any{"healthy": false, "error": "state file /x: no space left on device"}}},
		{"ready with a healthy state store", Ready(hc, ReadyOptions{Service: "svc", Store: func() error { return nil }}), "/readyz", http.StatusOK,
			map[string]any{"status": "READY", "state": map[string]any{"healthy": true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := get(t, tc.h, tc.target)
			if diff := cmp.Diff(tc.body, body); code != tc.code || diff != "" {
				t.Errorf("%d (-want +got):\n%s", code, diff)
			}
		})
	}

	if code, body := get(t, Handler(hc), "/healthz?service=nope"); code != http.StatusServiceUnavailable || body["status"] != "UNKNOWN" {
		t.Errorf("an unknown service: %d %v, want 503 UNKNOWN", code, body)
	}
	hs.Shutdown() // what the bridge does first when it shuts down
	if code, body := get(t, Ready(hc, ReadyOptions{Service: "svc", Replica: "r1"}), "/readyz"); code != http.StatusServiceUnavailable ||
		body["status"] != "NOT_READY" || body["reason"] != "the bridge is shutting down" {
		t.Errorf("shutting down: %d %v, want 503 NOT_READY", code, body)
	}
	if code, body := get(t, Handler(hc), "/healthz"); code != http.StatusServiceUnavailable || body["status"] != "NOT_SERVING" {
		t.Errorf("healthz shutting down: %d %v, want 503 NOT_SERVING", code, body)
	}
}

func TestWatchWithoutACore(t *testing.T) {
	stop := make(chan struct{})
	select {
	case <-Watch(nil, health.NewServer(), nil, stop):
	default:
		t.Error("Watch without a core started something")
	}
	close(stop)
}
