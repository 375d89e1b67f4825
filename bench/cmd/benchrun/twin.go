package main

// The instrumented twin: `benchrun twin` serves the same BridgeService (package server on mcpcore, the
// same gRPC server options, REST through grpc-gateway over an in-process gRPC connection) as
// cmd/mcp-bridge, plus a loopback debug listener with net/http/pprof and /debug/stats (goroutines and the
// runtime's cumulative allocation counters). The real binary has no debug endpoint, so allocation per
// call, CPU and allocation profiles and goroutine counts come from this process; its latency is checked
// against the real binary's in the same run.

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"runtime"
	"runtime/metrics"
	"syscall"
	"time"

	gwruntime "github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/encoding/protojson"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/internal/config"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
	"github.com/mcp-bridge/mcp-bridge/server"
)

func runTwin(args []string) error {
	fs := flag.NewFlagSet("twin", flag.ExitOnError)
	cfgPath := fs.String("config", "", "bridge configuration file")
	grpcAddr := fs.String("grpc-addr", "127.0.0.1:0", "gRPC address")
	httpAddr := fs.String("http-addr", "127.0.0.1:0", "REST address")
	debugAddr := fs.String("debug-addr", "127.0.0.1:0", "pprof and /debug/stats address")
	_ = fs.Parse(args)

	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	core := mcpcore.New(twinCoreOptions(cfg, logger))
	var servers []server.ServerDescription
	for _, name := range cfg.ServerNames() {
		servers = append(servers, server.ServerDescription{Name: name, Description: cfg.MCPServers[name].Description})
	}
	svc := server.New(core, server.Options{Logger: logger, Tokens: cfg.Auth.Tokens, IdleTimeout: cfg.Sessions.IdleTimeout, Servers: servers})

	maxBytes := cfg.Limits.MaxMessageBytes
	gs := grpc.NewServer(append([]grpc.ServerOption{grpc.MaxRecvMsgSize(maxBytes), grpc.MaxSendMsgSize(maxBytes)}, svc.ServerOptions()...)...)
	pb.RegisterBridgeServiceServer(gs, svc)

	inproc := bufconn.Listen(1 << 20)
	gwConn, err := grpc.NewClient("passthrough:///inproc",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return inproc.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxBytes), grpc.MaxCallSendMsgSize(maxBytes)))
	if err != nil {
		return err
	}
	gw := gwruntime.NewServeMux(gwruntime.WithMarshalerOption(gwruntime.MIMEWildcard, &gwruntime.HTTPBodyMarshaler{Marshaler: &gwruntime.JSONPb{
		MarshalOptions: protojson.MarshalOptions{}, UnmarshalOptions: protojson.UnmarshalOptions{},
	}}))
	if err := pb.RegisterBridgeServiceHandler(context.Background(), gw, gwConn); err != nil {
		return err
	}
	gl, err := net.Listen("tcp", *grpcAddr)
	if err != nil {
		return err
	}
	hl, err := net.Listen("tcp", *httpAddr)
	if err != nil {
		return err
	}
	dl, err := net.Listen("tcp", *debugAddr)
	if err != nil {
		return err
	}
	go func() { _ = gs.Serve(inproc) }()
	go func() { _ = gs.Serve(gl) }()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"status":"SERVING"}`)) })
	mux.Handle("/v1/", gw)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(hl) }()
	dm := http.NewServeMux()
	dm.HandleFunc("/debug/pprof/", pprof.Index)
	dm.HandleFunc("/debug/pprof/profile", pprof.Profile)
	dm.HandleFunc("/debug/stats", twinStats)
	ds := &http.Server{Handler: dm, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = ds.Serve(dl) }()
	fmt.Printf("ready grpc=%s http=%s debug=%s\n", gl.Addr(), hl.Addr(), dl.Addr())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	svc.EndStreams()
	_ = hs.Close()
	_ = gwConn.Close()
	gs.Stop()
	cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = svc.Close(cctx)
	_ = ds.Close()
	return nil
}

// twinStats reports the runtime's counters: goroutines, cumulative heap allocation (bytes, objects),
// live heap. ?gc=1 collects garbage first (for live-heap figures).
func twinStats(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("gc") == "1" {
		runtime.GC()
		runtime.GC()
	}
	s := []metrics.Sample{
		{Name: "/gc/heap/allocs:bytes"}, {Name: "/gc/heap/allocs:objects"},
		{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/sched/goroutines:goroutines"},
		{Name: "/memory/classes/total:bytes"},
	}
	metrics.Read(s)
	out := map[string]uint64{}
	for _, m := range s {
		if m.Value.Kind() == metrics.KindUint64 {
			out[m.Name] = m.Value.Uint64()
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// twinCoreOptions mirrors cmd/mcp-bridge's coreOptions (package main there, so it cannot be imported).
func twinCoreOptions(cfg *config.Config, logger *slog.Logger) mcpcore.Options {
	servers := make(map[string]mcpcore.ServerConfig, len(cfg.MCPServers))
	for name, s := range cfg.MCPServers {
		restarts := s.Restart.MaxRestarts
		if restarts == 0 {
			restarts = -1
		}
		servers[name] = mcpcore.ServerConfig{
			Name: s.Name, Transport: mcpcore.TransportKind(s.Transport), Command: s.Command, Args: s.Args,
			Env: s.Env, Dir: s.Cwd, URL: s.URL, Headers: s.Headers, ProtocolVersion: s.ProtocolVersion,
			Restart: mcpcore.RestartPolicy{MaxRestarts: restarts, InitialBackoff: s.Restart.InitialBackoff, MaxBackoff: s.Restart.MaxBackoff},
		}
	}
	return mcpcore.Options{
		Logger: logger, Servers: servers, AllowUnconfigured: cfg.AllowUnconfiguredServers,
		Limits: mcpcore.Limits{
			MaxMessageBytes: cfg.Limits.MaxMessageBytes, MaxSessions: cfg.Limits.MaxSessions,
			MaxSessionsPerOwner: cfg.Limits.MaxSessionsPerPrincipal, MaxPendingPerSession: cfg.Limits.MaxPendingPerSession,
			MaxStdioProcesses: cfg.Limits.MaxStdioProcesses,
		},
		Pending: mcpcore.PendingPolicy{
			SamplingTimeout: cfg.Pending.SamplingTimeout, ElicitationTimeout: cfg.Pending.ElicitationTimeout,
			RootsTimeout: cfg.Pending.RootsTimeout,
		},
		ClientInfo: &mcp.Implementation{Name: "mcp-bridge", Version: "bench-twin"},
	}
}
