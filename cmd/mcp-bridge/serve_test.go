package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	mcpbridgev1 "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/gen/openapiv2"
	"github.com/mcp-bridge/mcp-bridge/internal/config"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
	"github.com/mcp-bridge/mcp-bridge/mcpcore/upstreamauth"
	"github.com/mcp-bridge/mcp-bridge/server/gateway"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"
)

const twoServers = `mcpServers:
  zeta:
    command: zeta-server
    description: the last letter
  alpha:
    url: https://mcp.example.com/mcp
    headers:
      Authorization: Bearer secret
    protocolVersion: "2025-11-25"
`

// wantTwoServers is in the configuration file's order (server.Options.Servers carries it).
var wantTwoServers = []*mcpbridgev1.UpstreamServer{
	{Name: "zeta", Transport: mcpbridgev1.Transport_TRANSPORT_STDIO, Description: "the last letter"},
	{Name: "alpha", Transport: mcpbridgev1.Transport_TRANSPORT_STREAMABLE_HTTP, ProtocolVersion: "2025-11-25"},
}

func TestListServersGRPC(t *testing.T) {
	t.Run("default demo", func(t *testing.T) {
		tb := startBridge(t, runOptions{})
		resp, err := bridgeClient(t, tb.addrs.GRPC).ListServers(testContext(t), &mcpbridgev1.ListServersRequest{})
		if err != nil {
			t.Fatal(err)
		}
		want := []*mcpbridgev1.UpstreamServer{{
			Name:        "demo",
			Transport:   mcpbridgev1.Transport_TRANSPORT_STDIO,
			Description: "built-in demo MCP server (mcp-bridge demo-server)",
		}}
		if diff := cmp.Diff(want, resp.Servers, protocmp.Transform()); diff != "" {
			t.Errorf("servers (-want +got):\n%s", diff)
		}
	})
	t.Run("config file", func(t *testing.T) {
		tb := startBridge(t, runOptions{}, "--config", writeConfig(t, "bridge.yaml", twoServers))
		resp, err := bridgeClient(t, tb.addrs.GRPC).ListServers(testContext(t), &mcpbridgev1.ListServersRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wantTwoServers, resp.Servers, protocmp.Transform()); diff != "" {
			t.Errorf("servers (-want +got):\n%s", diff)
		}
	})
}

func TestListServersREST(t *testing.T) {
	tb := startBridge(t, runOptions{}, "--config", writeConfig(t, "bridge.yaml", twoServers))
	code, body := httpGet(t, nil, "http://"+tb.addrs.HTTP+"/v1/servers")
	if code != http.StatusOK {
		t.Fatalf("GET /v1/servers = %d: %s", code, body)
	}
	var got struct {
		Servers []map[string]any `json:"servers"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"name": "zeta", "transport": "TRANSPORT_STDIO", "description": "the last letter"},
		{"name": "alpha", "transport": "TRANSPORT_STREAMABLE_HTTP", "protocolVersion": "2025-11-25"},
	}
	if diff := cmp.Diff(want, got.Servers); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	if strings.Contains(string(body), "secret") || strings.Contains(string(body), "zeta-server") {
		t.Errorf("ListServers leaks configuration details: %s", body)
	}
}

func TestRESTErrors(t *testing.T) {
	tb := startBridge(t, runOptions{})
	base := "http://" + tb.addrs.HTTP
	for _, tt := range []struct {
		method, path, body string
		wantCode           int
	}{
		{"GET", "/v1/sessions/s-unknown", "", http.StatusNotFound},
		{"POST", "/v1/sessions", "not json", http.StatusBadRequest},
		{"POST", "/v1/sessions", `{"server": "demo", "nosuchfield": 1}`, http.StatusBadRequest},
		{"GET", "/v1/nothing-here", "", http.StatusNotFound},
		{"GET", "/elsewhere", "", http.StatusNotFound},
	} {
		req, err := http.NewRequestWithContext(testContext(t), tt.method, base+tt.path, strings.NewReader(tt.body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.wantCode {
			t.Errorf("%s %s = %d, want %d: %s", tt.method, tt.path, resp.StatusCode, tt.wantCode, body)
		}
		if m := decodeJSON(t, body); m["message"] == nil {
			t.Errorf("%s %s: error body without a message: %s", tt.method, tt.path, body)
		}
	}
}

// A REST body larger than limits.maxMessageBytes is refused before it reaches the service.
func TestRESTBodyLimit(t *testing.T) {
	tb := startBridge(t, runOptions{}, "--config", writeConfig(t, "bridge.yaml", "limits:\n  maxMessageBytes: 2048\n"))
	big := `{"server": "` + strings.Repeat("x", 4096) + `"}`
	resp, err := http.Post("http://"+tb.addrs.HTTP+"/v1/sessions", "application/json", strings.NewReader(big))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode < 400 || resp.StatusCode >= 500 {
		t.Errorf("oversized body = %d %s, want a 4xx", resp.StatusCode, body)
	}
}

func TestHealth(t *testing.T) {
	tb := startBridge(t, runOptions{})
	hc := healthpb.NewHealthClient(dial(t, tb.addrs.GRPC))
	for _, service := range []string{"", "mcpbridge.v1.BridgeService"} {
		resp, err := hc.Check(testContext(t), &healthpb.HealthCheckRequest{Service: service})
		if err != nil {
			t.Fatalf("Check(%q): %v", service, err)
		}
		if resp.Status != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("Check(%q) = %v", service, resp.Status)
		}
	}
	code, body := httpGet(t, nil, "http://"+tb.addrs.HTTP+"/healthz")
	if code != http.StatusOK || decodeJSON(t, body)["status"] != "SERVING" {
		t.Errorf("/healthz = %d %s", code, body)
	}
	code, body = httpGet(t, nil, "http://"+tb.addrs.HTTP+"/healthz?service=nope")
	if code != http.StatusServiceUnavailable {
		t.Errorf("/healthz?service=nope = %d %s, want 503", code, body)
	}
}

func TestReflection(t *testing.T) {
	tb := startBridge(t, runOptions{})
	stream, err := reflectionpb.NewServerReflectionClient(dial(t, tb.addrs.GRPC)).ServerReflectionInfo(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	err = stream.Send(&reflectionpb.ServerReflectionRequest{
		MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{ListServices: "*"},
	})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		names = append(names, s.Name)
	}
	for _, want := range []string{"mcpbridge.v1.BridgeService", "grpc.health.v1.Health"} {
		if !slices.Contains(names, want) {
			t.Errorf("reflection lists %v, missing %s", names, want)
		}
	}
}

func TestOpenAPI(t *testing.T) {
	tb := startBridge(t, runOptions{})
	code, body := httpGet(t, nil, "http://"+tb.addrs.HTTP+"/openapi.json")
	if code != http.StatusOK {
		t.Fatalf("/openapi.json = %d", code)
	}
	if string(body) != string(openapiv2.SwaggerJSON) {
		t.Error("/openapi.json is not the embedded document")
	}
	doc := decodeJSON(t, body)
	paths, _ := doc["paths"].(map[string]any)
	if doc["swagger"] != "2.0" || paths["/v1/servers"] == nil {
		t.Errorf("unexpected document: swagger=%v, /v1/servers present=%v", doc["swagger"], paths["/v1/servers"] != nil)
	}
}

func TestUnixSocket(t *testing.T) {
	dir := t.TempDir()
	socket := filepath.Join(dir, "bridge.sock")

	// A socket file left behind by a bridge that was killed is replaced.
	stale, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	stale.Close()

	tb := startBridge(t, runOptions{}, "--grpc-addr", "", "--http-addr", "", "--grpc-socket", socket)
	if tb.addrs.GRPC != "" || tb.addrs.HTTP != "" || tb.addrs.GRPCSocket != socket {
		t.Fatalf("listening on %+v", tb.addrs)
	}
	fi, err := os.Stat(socket)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o660 {
		t.Errorf("socket permissions %v, want 0660", perm)
	}
	resp, err := bridgeClient(t, "unix://"+socket).ListServers(testContext(t), &mcpbridgev1.ListServersRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Servers) != 1 || resp.Servers[0].Name != "demo" {
		t.Errorf("servers = %v", resp.Servers)
	}
	if code := tb.stop(t); code != exitOK {
		t.Errorf("exit status %d", code)
	}
	if _, err := os.Stat(socket); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("socket file left after shutdown: %v", err)
	}
}

func TestJSONLogs(t *testing.T) {
	tb := startBridge(t, runOptions{}, "--log-format", "json", "--log-level", "debug")
	tb.stop(t)
	ls := lines(tb.stderr.String())
	if len(ls) == 0 {
		t.Fatal("no log output")
	}
	var serving map[string]any
	for _, l := range ls {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("log line is not JSON: %v\n%s", err, l)
		}
		if rec["msg"] == "mcp-bridge serving" && serving == nil {
			serving = rec
		}
	}
	if serving == nil || serving["grpc"] != tb.addrs.GRPC {
		t.Errorf("serving line = %v", serving)
	}
}

// recordingService stands in for the BridgeService: ListServers records what reached it and
// blocks until released (or its context ends); Close records that it was called.
type recordingService struct {
	mcpbridgev1.UnimplementedBridgeServiceServer
	entered chan callInfo
	release chan struct{}
	closed  chan struct{}
}

type callInfo struct {
	network string
	md      metadata.MD
}

func newRecordingService() *recordingService {
	return &recordingService{entered: make(chan callInfo, 10), release: make(chan struct{}), closed: make(chan struct{})}
}

func (s *recordingService) ListServers(ctx context.Context, _ *mcpbridgev1.ListServersRequest) (*mcpbridgev1.ListServersResponse, error) {
	var info callInfo
	if p, ok := peer.FromContext(ctx); ok {
		info.network = p.Addr.Network()
	}
	info.md, _ = metadata.FromIncomingContext(ctx)
	s.entered <- info
	select {
	case <-s.release:
		return &mcpbridgev1.ListServersResponse{}, nil
	case <-ctx.Done():
		return nil, status.FromContextError(ctx.Err()).Err()
	}
}

func (s *recordingService) UnaryInterceptors() []grpc.UnaryServerInterceptor { return nil }

func (s *recordingService) Core() *mcpcore.Core { return nil }

func (s *recordingService) EndStreams() {}

func (s *recordingService) Close(context.Context) error {
	close(s.closed)
	return nil
}

func (s *recordingService) options() runOptions {
	return runOptions{newService: func(*config.Config, *slog.Logger) (bridgeService, []grpc.ServerOption, error) {
		return s, nil, nil
	}}
}

// A graceful shutdown lets an in-flight call finish, refuses new work meanwhile, and closes the
// service only after the gRPC server has stopped.
func TestGracefulShutdown(t *testing.T) {
	svc := newRecordingService()
	tb := startBridge(t, svc.options())
	client := bridgeClient(t, tb.addrs.GRPC)
	health := healthpb.NewHealthClient(dial(t, tb.addrs.GRPC))
	if _, err := health.Check(testContext(t), &healthpb.HealthCheckRequest{}); err != nil {
		t.Fatal(err) // connect before the shutdown starts
	}

	callErr := make(chan error, 1)
	go func() {
		_, err := client.ListServers(testContext(t), &mcpbridgev1.ListServersRequest{})
		callErr <- err
	}()
	<-svc.entered

	// The health service's Watch stream says each change: the test waits on it, not on a clock.
	watch, err := health.Watch(testContext(t), &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := watch.Recv(); err != nil || resp.Status != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health before the shutdown = %v, %v; want SERVING", resp, err)
	}

	stopped := make(chan int, 1)
	go func() { stopped <- tb.stop(t) }()

	// The health server turns NOT_SERVING first, while the call is still running (or the stream ends with
	// the server, which is as good: it left SERVING). Recv fails at testContext's deadline otherwise.
	for {
		resp, err := watch.Recv()
		if err != nil || resp.Status == healthpb.HealthCheckResponse_NOT_SERVING {
			break
		}
	}
	// New connections are refused once the gRPC server stops accepting: a real listener, polled (nothing
	// signals the moment it closes).
	deadline := time.Now().Add(testTimeout)
	for {
		conn, err := net.DialTimeout("tcp", tb.addrs.GRPC, time.Second)
		if err != nil {
			break
		}
		conn.Close()
		if time.Now().After(deadline) {
			t.Fatal("gRPC listener still accepting during shutdown")
		}
		time.Sleep(10 * time.Millisecond)
	}
	select {
	case <-svc.closed:
		t.Fatal("service closed while a call was in flight")
	default:
	}

	close(svc.release)
	if err := <-callErr; err != nil {
		t.Errorf("in-flight call failed: %v", err)
	}
	if code := <-stopped; code != exitOK {
		t.Errorf("exit status %d, want 0", code)
	}
	select {
	case <-svc.closed:
	default:
		t.Error("service not closed")
	}
}

// A call that does not finish is cut off when the graceful stop's time is up.
func TestShutdownTimeout(t *testing.T) {
	svc := newRecordingService()
	o := svc.options()
	o.shutdownTimeout = shutdownTimeouts{http: 100 * time.Millisecond, grpc: 200 * time.Millisecond}
	tb := startBridge(t, o)
	client := bridgeClient(t, tb.addrs.GRPC)
	callErr := make(chan error, 1)
	go func() {
		_, err := client.ListServers(testContext(t), &mcpbridgev1.ListServersRequest{})
		callErr <- err
	}()
	<-svc.entered
	start := time.Now()
	if code := tb.stop(t); code != exitOK {
		t.Errorf("exit status %d, want 0", code)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("shutdown took %s with a 200ms gRPC bound", took)
	}
	err := <-callErr
	if c := status.Code(err); c != codes.Unavailable && c != codes.Canceled {
		t.Errorf("cut-off call: %v, want UNAVAILABLE or CANCELLED", err)
	}
	<-svc.closed
}

// REST calls reach the service through the in-process connection, with the client's headers
// but never with the bridge's own metadata forged by the client.
func TestGatewayMetadata(t *testing.T) {
	svc := newRecordingService()
	close(svc.release)
	tb := startBridge(t, svc.options())

	code, body := httpGet(t, nil, "http://"+tb.addrs.HTTP+"/v1/servers",
		"Authorization", "Bearer tok-1",
		"Grpc-Metadata-X-Mcpbridge-Client-Cert-Bin", "forged",
		"Grpc-Metadata-Trace", "t-1")
	if code != http.StatusOK {
		t.Fatalf("GET /v1/servers = %d %s", code, body)
	}
	info := <-svc.entered
	if info.network != gateway.Network {
		t.Errorf("REST call arrived over %q, want %q", info.network, gateway.Network)
	}
	if got := info.md.Get("authorization"); len(got) != 1 || got[0] != "Bearer tok-1" {
		t.Errorf("authorization metadata = %v", got)
	}
	if got := info.md.Get("trace"); len(got) != 1 || got[0] != "t-1" {
		t.Errorf("trace metadata = %v", got)
	}
	if got := info.md.Get(gateway.ClientCertMetadataKey); len(got) != 0 {
		t.Errorf("client-forged %s reached the service: %q", gateway.ClientCertMetadataKey, got)
	}

	if _, err := bridgeClient(t, tb.addrs.GRPC).ListServers(testContext(t), &mcpbridgev1.ListServersRequest{}); err != nil {
		t.Fatal(err)
	}
	if info := <-svc.entered; info.network != "tcp" {
		t.Errorf("gRPC call arrived over %q, want tcp", info.network)
	}
}

// The demo-server subcommand is a working MCP server over stdio, for clients of either era.
func TestDemoServerSubcommand(t *testing.T) {
	for _, version := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(version, func(t *testing.T) {
			ctx := testContext(t)
			cmd := exec.Command(os.Args[0], "demo-server")
			// The race detector's runtime sleeps a second at exit unless told not to.
			cmd.Env = append(os.Environ(), mainEnv+"=1", "GORACE=atexit_sleep_ms=0")
			client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
			cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: version})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if got := cs.InitializeResult().ServerInfo.Name; got != "mcp-bridge-demo" {
				t.Errorf("server name %q", got)
			}
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "over stdio"}})
			if err != nil {
				t.Fatal(err)
			}
			if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "over stdio" {
				t.Errorf("echo = %+v", res.Content)
			}
			if err := cs.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
			if !cmd.ProcessState.Exited() || cmd.ProcessState.ExitCode() != 0 {
				t.Errorf("demo server ended with %v", cmd.ProcessState)
			}
		})
	}
}

func TestVersionAndHelp(t *testing.T) {
	for _, arg := range []string{"version", "--version", "-version"} { // --version: issue 32, refused before
		var out, errOut lockedBuffer
		if code := run(t.Context(), []string{arg}, &out, &errOut); code != exitOK {
			t.Fatalf("%s: exit %d (%s)", arg, code, errOut.String())
		}
		if !strings.HasPrefix(out.String(), "mcp-bridge ") || !strings.Contains(out.String(), "2026-07-28") {
			t.Errorf("%s output %q", arg, out.String())
		}
	}
	var out, errOut lockedBuffer
	for _, args := range [][]string{{"-help"}, {"--help"}, {"help"}, {"-h"}} {
		var out, errOut lockedBuffer
		if code := run(t.Context(), args, &out, &errOut); code != exitOK {
			t.Errorf("%v: exit %d", args, code)
		}
		if !strings.Contains(out.String(), "demo-server") || !strings.Contains(out.String(), "-grpc-addr") || errOut.String() != "" {
			t.Errorf("%v: stdout %q, stderr %q", args, out.String(), errOut.String())
		}
	}
	out = lockedBuffer{}
	if code := run(t.Context(), []string{"demo-server", "-help"}, &out, &errOut); code != exitOK || !strings.Contains(out.String(), "stdin") {
		t.Errorf("demo-server -help: exit %d, %q", code, out.String())
	}
}

func TestCoreOptions(t *testing.T) {
	cfg, err := config.Parse("bridge.yaml", []byte(`mcpServers:
  local:
    command: srv
    args: [a]
    env: {K: v}
    roots: [{uri: "file:///data", name: data}]
    restart: {maxRestarts: 0}
  remote:
    url: http://h/mcp
    transport: sse
    restart: {maxRestarts: 3, initialBackoff: 1s, maxBackoff: 4s}
limits: {maxSessionsPerPrincipal: 7}
pending: {rootsTimeout: 3s}
allowUnconfiguredServers: true
`))
	if err != nil {
		t.Fatal(err)
	}
	o := coreOptions(cfg, slog.New(slog.DiscardHandler), upstreamauth.NewClient(upstreamauth.Options{}))
	if !o.AllowUnconfigured || o.Limits.MaxSessionsPerOwner != 7 || o.Pending.RootsTimeout != 3*time.Second ||
		o.Limits.MaxMessageBytes != config.DefaultMaxMessageBytes || o.ClientInfo.Name != "mcp-bridge" {
		t.Errorf("options = %+v", o)
	}
	local := o.Servers["local"]
	if local.Transport != "stdio" || local.Command != "srv" || local.Env["K"] != "v" || local.Restart.MaxRestarts != 0 ||
		len(local.Roots) != 1 || local.Roots[0].URI != "file:///data" {
		t.Errorf("local = %+v", local)
	}
	remote := o.Servers["remote"]
	if remote.Transport != "sse" || remote.URL != "http://h/mcp" || remote.Restart.MaxRestarts != 3 || remote.Restart.MaxBackoff != 4*time.Second {
		t.Errorf("remote = %+v", remote)
	}
}

// demoConfig configures the demo server as this test binary's demo-server subcommand (the
// default, os.Executable, would run the tests instead).
func demoConfig(t *testing.T) string {
	t.Helper()
	cfg := map[string]any{"mcpServers": map[string]any{"demo": map[string]any{
		"command": os.Args[0],
		"args":    []string{"demo-server"},
		"env":     map[string]string{mainEnv: "1", "GORACE": "atexit_sleep_ms=0"},
	}}}
	data, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return writeConfig(t, "bridge.json", string(data))
}

// The wiring end to end: a session to the demo server over REST, a tool call, and its deletion.
func TestSessionThroughREST(t *testing.T) {
	tb := startBridge(t, runOptions{}, "--config", demoConfig(t))
	base := "http://" + tb.addrs.HTTP
	post := func(path, body string) map[string]any {
		t.Helper()
		req, err := http.NewRequestWithContext(testContext(t), http.MethodPost, base+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST %s = %d %s", path, resp.StatusCode, data)
		}
		return decodeJSON(t, data)
	}
	sess := post("/v1/sessions", `{"server": "demo"}`)
	id, _ := sess["sessionId"].(string)
	if id == "" || sess["state"] != "SESSION_STATE_READY" {
		t.Fatalf("session = %v", sess)
	}
	res := post("/v1/sessions/"+id+"/tools/add:call", `{"arguments": {"a": 2, "b": 3}}`)
	result, _ := res["result"].(map[string]any)
	if diff := cmp.Diff(map[string]any{"sum": 5.0}, result["structuredContent"]); diff != "" {
		t.Errorf("add structured content (-want +got):\n%s", diff)
	}
	req, _ := http.NewRequestWithContext(testContext(t), http.MethodDelete, base+"/v1/sessions/"+id, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("DELETE = %d", resp.StatusCode)
	}
	if code, body := httpGet(t, nil, base+"/v1/sessions/"+id); code != http.StatusNotFound {
		t.Errorf("GET after DELETE = %d %s", code, body)
	}
}
