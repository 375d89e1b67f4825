package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	goruntime "runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	mcpbridgev1 "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/gen/openapiv2"
	"github.com/mcp-bridge/mcp-bridge/internal/config"
	"github.com/mcp-bridge/mcp-bridge/internal/console"
	"github.com/mcp-bridge/mcp-bridge/internal/door"
	"github.com/mcp-bridge/mcp-bridge/internal/state"
	"github.com/mcp-bridge/mcp-bridge/server/gateway"
	"github.com/mcp-bridge/mcp-bridge/server/healthz"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/reflection"
)

// listening holds the addresses the bridge actually listens on (a port 0 resolved); an empty
// field is a listener that is off.
type listening struct {
	GRPC       string
	HTTP       string
	GRPCSocket string
	Admin      string
}

// shutdownTimeouts bound the graceful shutdown. Zero fields take the defaults.
type shutdownTimeouts struct {
	// http bounds the HTTP server's Shutdown (in-flight REST calls, open event streams).
	http time.Duration
	// grpc bounds GracefulStop before the gRPC server is stopped hard.
	grpc time.Duration
	// total bounds everything, closing the service's sessions included.
	total time.Duration
}

func (t shutdownTimeouts) withDefaults() shutdownTimeouts {
	if t.http == 0 {
		t.http = 5 * time.Second
	}
	if t.grpc == 0 {
		t.grpc = 10 * time.Second
	}
	if t.total == 0 {
		t.total = 25 * time.Second
	}
	return t
}

// bridgeServiceName is the name grpc.health.v1 reports the BridgeService's status under.
var bridgeServiceName = mcpbridgev1.BridgeService_ServiceDesc.ServiceName

// bridge is one running bridge: listeners, servers and the service.
type bridge struct {
	cfg *config.Config
	// store is the state store, whose keys a reload rotates (reload.go).
	store *state.TrackedStore
	// hosts is the Host check of the HTTP and admin listeners in force (door); gate the HTTP listener's
	// connection cap (nil without it). A reload changes both.
	hosts atomic.Pointer[hostNames]
	// console is the console's handler in force (httpHandler); a reload replaces it.
	console atomic.Pointer[consoleHandler]
	gate    *connGate
	logger  *slog.Logger
	tls     *tlsFiles // nil without TLS
	// reload reads the configuration file again and applies it (reload.go); set once serving.
	reload *reloader

	grpcLn, httpLn, socketLn net.Listener // nil when off
	inprocLn                 *gateway.Listener

	svc        bridgeService
	obs        *observability
	adminLn    net.Listener // the admin listener (/metrics, /healthz); nil when off
	admin      *http.Server
	grpcServer *grpc.Server
	health     *health.Server
	gwConn     *grpc.ClientConn // the gateway's connection to grpcServer, over inprocLn
	httpServer *http.Server     // nil when the HTTP listener is off

	// restCut ends, with gateway.ErrDrainBound as its cause, the REST calls still in flight when the HTTP
	// drain bound passes: each then answers 503 (the gateway's error handler) instead of losing its connection.
	restCut context.Context
	cutREST context.CancelCauseFunc

	// serving counts the Serve goroutines; each ends when its server stops (shutdown).
	serving sync.WaitGroup
	// serveErr receives the first error of a Serve that failed on its own.
	serveErr chan error
}

// startBenchDebug starts the benchmark harness's debug listener; nil except in a -tags benchdebug build
// (benchdebug.go).
var startBenchDebug func() (stop func(), err error)

func serve(ctx context.Context, fl *flags, o runOptions) int {
	logger := fl.newLogger(o.stderr)
	cfg, err := fl.loadConfig()
	if err != nil {
		return badInput(o.stderr, err)
	}
	tlsConf, err := newTLSFiles(cfg.TLS)
	if err != nil {
		return badInput(o.stderr, err)
	}
	obs, err := newObservability(ctx, cfg, envOr, logger)
	if err != nil {
		return badInput(o.stderr, err)
	}
	b := &bridge{cfg: cfg, logger: logger, tls: tlsConf, obs: obs, serveErr: make(chan error, 4)}
	b.restCut, b.cutREST = context.WithCancelCause(context.Background())
	defer b.cutREST(nil)
	if err := b.listen(); err != nil {
		b.closeListeners()
		return badInput(o.stderr, err)
	}
	store, err := openState(ctx, cfg, obs, logger)
	if err != nil {
		b.closeListeners()
		return badInput(o.stderr, err)
	}
	defer func() { _ = store.Close() }() // after the service, which closes the core, has closed
	b.store = store
	newService := o.newService
	if newService == nil {
		newService = func(cfg *config.Config, logger *slog.Logger) (bridgeService, []grpc.ServerOption, error) {
			return newObservedService(cfg, logger, obs, store)
		}
	}
	svc, svcOpts, err := newService(cfg, logger)
	if err != nil {
		b.closeListeners()
		fmt.Fprintf(o.stderr, "mcp-bridge: starting the service: %s\n", oneLine(err.Error()))
		return exitFailure
	}
	b.svc = svc
	b.reload = newReloader(fl, b, cfg, obs)
	if startBenchDebug != nil {
		stop, err := startBenchDebug()
		if err != nil {
			b.closeListeners()
			_ = svc.Close(context.Background())
			fmt.Fprintf(o.stderr, "mcp-bridge: bench debug listener: %s\n", oneLine(err.Error()))
			return exitFailure
		}
		defer stop()
	}
	if err := b.start(svcOpts); err != nil {
		b.closeListeners()
		_ = svc.Close(context.Background())
		fmt.Fprintf(o.stderr, "mcp-bridge: %s\n", oneLine(err.Error()))
		return exitFailure
	}
	reportWalls(logger, cfg) // walls.go: once serving can start, so bad input stays one line
	stopHealth := make(chan struct{})
	healthDone := healthz.Watch(b.svc.Core(), b.health, b.hidesHealth, stopHealth)
	reloadDone := make(chan struct{})
	go func() { // ends when stopHealth closes
		defer close(reloadDone)
		b.reload.run(o.hangup, stopHealth)
	}()
	addrs := b.addrs()
	logger.Info("mcp-bridge serving", "version", buildVersion(), "replica", cfg.Sessions.Replica, "grpc", addrs.GRPC, "http", addrs.HTTP,
		"grpc_socket", addrs.GRPCSocket, "admin", addrs.Admin, "traces", obs.tracing.Exporter, "tls", cfg.TLS.Enabled(), "mtls", cfg.TLS.MutualTLS(),
		"config", cfg.File, "servers", strings.Join(cfg.ServerNames(), ","))
	if o.ready != nil {
		o.ready(addrs)
	}

	status := exitOK
	select {
	case <-ctx.Done():
		logger.Info("shutting down; a second signal ends the process at once", "reason", context.Cause(ctx))
	case err := <-b.serveErr:
		logger.Error("server failed, shutting down", "error", err)
		status = exitFailure
	}
	close(stopHealth)
	<-healthDone
	<-reloadDone
	b.shutdown(o.shutdownTimeout.withDefaults())
	return status
}

// listen opens every configured listener; an error names the listener and the address.
func (b *bridge) listen() error {
	l := b.cfg.Listen
	var err error
	if l.GRPC != "" {
		if b.grpcLn, err = net.Listen("tcp", l.GRPC); err != nil {
			return listenError("gRPC", "--grpc-addr", "listen.grpc", l.GRPC, err)
		}
	}
	if l.HTTP != "" {
		if b.httpLn, err = net.Listen("tcp", l.HTTP); err != nil {
			return listenError("HTTP", "--http-addr", "listen.http", l.HTTP, err)
		}
	}
	if l.GRPCSocket != "" {
		if b.socketLn, err = listenUnix(l.GRPCSocket); err != nil {
			return listenError("gRPC socket", "--grpc-socket", "listen.grpcSocket", l.GRPCSocket, err)
		}
	}
	if l.Admin != "" {
		if b.adminLn, err = net.Listen("tcp", l.Admin); err != nil {
			return listenError("admin", "--admin-addr", "listen.admin", l.Admin, err)
		}
	}
	b.inprocLn = gateway.NewListener()
	return nil
}

// listenError is the one line for a listener that cannot open, naming the flag and the key that move it,
// e.g. "cannot listen on 127.0.0.1:8080 (HTTP): address already in use; another process holds it (another
// mcp-bridge? `make run` uses it): choose another address with --http-addr or listen.http".
func listenError(what, flag, key, addr string, err error) error {
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Err != nil {
		err = opErr.Err
		var sysErr *os.SyscallError
		if errors.As(err, &sysErr) {
			err = sysErr.Err
		}
	}
	hint := fmt.Sprintf("choose another address with %s or %s", flag, key)
	if errors.Is(err, syscall.EADDRINUSE) {
		hint = "another process holds it (another mcp-bridge, e.g. `make run`?): stop it, or " + hint
	}
	return fmt.Errorf("cannot listen on %s (%s): %v; %s", addr, what, err, hint)
}

// listenUnix listens on a Unix socket at path, replacing a stale socket file that nothing
// listens on any more (left by a bridge that was killed), and makes it accessible to the owner
// and group only.
func listenUnix(path string) (net.Listener, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&fs.ModeSocket == 0 {
			return nil, fmt.Errorf("%s exists and is not a socket", path)
		}
		conn, err := net.DialTimeout("unix", path, time.Second)
		if err == nil {
			conn.Close()
			return nil, syscall.EADDRINUSE
		}
		if err := os.Remove(path); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(path, 0o660); err != nil {
		ln.Close()
		return nil, err
	}
	return ln, nil
}

func (b *bridge) closeListeners() {
	for _, ln := range []net.Listener{b.grpcLn, b.httpLn, b.socketLn, b.adminLn} {
		if ln != nil {
			ln.Close()
		}
	}
	if b.inprocLn != nil {
		_ = b.inprocLn.Close() // never fails
	}
}

func (b *bridge) addrs() listening {
	var a listening
	if b.grpcLn != nil {
		a.GRPC = b.grpcLn.Addr().String()
	}
	if b.httpLn != nil {
		a.HTTP = b.httpLn.Addr().String()
	}
	if b.socketLn != nil {
		a.GRPCSocket = b.socketLn.Addr().String()
	}
	if b.adminLn != nil {
		a.Admin = b.adminLn.Addr().String()
	}
	return a
}

// streamWorkers is the size of the gRPC server's pool of handler goroutines. A unary call holds its worker
// for the whole upstream round trip, waiting rather than computing, so the pool is sized for the calls in
// flight, not for the cores: with 2×GOMAXPROCS workers, 28 of 32 concurrent calls went to a fresh goroutine
// each, and growing those goroutines' stacks was 8% of the bridge's CPU at c=32 (docs/perf-unary-findings.md).
// A pool much larger than that costs the other way (ADR 0119): grpc-go hands a stream to the worker parked
// longest, so one caller's calls go round every worker in turn, and each garbage collection halves the stack
// of every parked worker; a worker's next call grows it back. At 64 workers most calls paid that regrowth.
func streamWorkers() uint32 {
	return uint32(max(minStreamWorkers, 2*goruntime.GOMAXPROCS(0)))
}

// minStreamWorkers is the pool's size on a small machine: the concurrency the benchmark's throughput runs use
// (c=32). Host streams, which hold a worker for their lifetime when they find one free, and calls beyond it
// start goroutines of their own, as grpc-go does without a pool.
const minStreamWorkers = 32

// grpcWindow is the gRPC server's flow-control window per stream and per connection: fixed, so grpc-go does not
// estimate the bandwidth-delay product with a ping per call, and large enough for a 1 MiB result to go out
// without waiting for a window update on loopback or a LAN.
const grpcWindow = 4 << 20

// start builds the gRPC server, the gateway and the HTTP server and starts serving on every
// listener.
func (b *bridge) start(svcOpts []grpc.ServerOption) error {
	maxBytes := b.cfg.Limits.MaxMessageBytes
	opts := []grpc.ServerOption{grpc.MaxRecvMsgSize(maxBytes), grpc.MaxSendMsgSize(maxBytes),
		// Reuse handler goroutines instead of starting one per RPC, whose stack then grows (and is copied)
		// through the interceptors and the SDK on every call. A stream that finds every worker busy gets a
		// goroutine of its own, as without the option, so long streams (Connect) cannot starve calls.
		grpc.NumStreamWorkers(streamWorkers()),
		// Fixed flow-control windows turn grpc-go's BDP estimation off: it pinged the client on every request
		// that carried data, one more write and read per call (docs/adr/0052).
		grpc.InitialWindowSize(grpcWindow), grpc.InitialConnWindowSize(grpcWindow),
		// A connection without an RPC for this long is closed (GOAWAY): idle clients do not hold descriptors
		// for ever. Host streams (Connect, WatchEvents) keep their connection busy.
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: grpcMaxConnectionIdle})}
	if b.tls != nil {
		opts = append(opts, grpc.Creds(gateway.ListenerCredentials(credentials.NewTLS(b.tls.config(nil)))))
	}
	opts = append(opts, b.obs.serverOptions()...) // outermost: sees every RPC
	opts = append(opts, refusalLogging(b.logger)) // what grpc-go refuses before any interceptor
	opts = append(opts, svcOpts...)
	b.grpcServer = grpc.NewServer(opts...)
	// The service registers itself where it can: a request that does not decode is then the host's error
	// (server/decode.go). A test's service without it is registered as generated.
	if r, ok := b.svc.(interface{ Register(grpc.ServiceRegistrar) }); ok {
		r.Register(b.grpcServer)
	} else {
		mcpbridgev1.RegisterBridgeServiceServer(b.grpcServer, b.svc)
	}
	b.health = health.NewServer()
	healthpb.RegisterHealthServer(b.grpcServer, b.health)
	reflection.Register(b.grpcServer)
	b.obs.registerService(b.svc, b.grpcServer)

	// The gateway is a gRPC client of this server over an in-process connection, so REST calls
	// pass through the same interceptors as gRPC calls (docs/adr/0003). Unary calls skip the connection:
	// they run in this process through the same interceptor chain (server/gateway); streams use it.
	conn, err := gateway.Dial(b.inprocLn, maxBytes)
	if err != nil {
		return err
	}
	b.gwConn = conn
	gw, err := gateway.New(conn, b.svc, append(b.obs.inprocInterceptors(), b.svc.UnaryInterceptors()...), maxBytes)
	if err != nil {
		return err
	}

	b.serveGRPC(b.inprocLn)
	if b.grpcLn != nil {
		b.serveGRPC(b.grpcLn)
	}
	if b.socketLn != nil {
		b.serveGRPC(b.socketLn)
	}
	if b.httpLn != nil {
		gate := newConnGate(cmp.Or(b.cfg.Limits.MaxHTTPConnections, defaultHTTPConnections()))
		b.gate = gate
		b.obs.registerConnGate(gate)
		b.httpServer = &http.Server{
			Handler: b.httpHandler(gw),
			// Idle keep-alive connections close, and past the cap the quietest makes room (conns.go), so
			// that idle clients cannot fill the descriptor table and lock new clients out.
			IdleTimeout: httpIdleTimeout,
			ConnState:   gate.connState,
			// Every request's context derives from restCut, so cutting it at the drain bound ends the
			// calls still in flight with gateway.ErrDrainBound as their cause (see shutdown).
			BaseContext:       func(net.Listener) context.Context { return b.restCut },
			ReadHeaderTimeout: httpReadHeaderTimeout,
			ErrorLog:          slog.NewLogLogger(b.logger.Handler(), slog.LevelWarn),
		}
		b.serving.Go(func() {
			var err error
			if b.tls != nil {
				b.httpServer.TLSConfig = b.tls.config([]string{"h2", "http/1.1"})
				err = b.httpServer.ServeTLS(b.httpLn, "", "")
			} else {
				err = b.httpServer.Serve(b.httpLn)
			}
			if !errors.Is(err, http.ErrServerClosed) {
				b.reportServeErr(fmt.Errorf("HTTP server: %w", err))
			}
		})
	}
	if b.adminLn != nil {
		b.serveAdmin()
	}
	b.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	b.health.SetServingStatus(bridgeServiceName, healthpb.HealthCheckResponse_SERVING)
	return nil
}

// serveGRPC serves the gRPC server on ln until the server stops.
func (b *bridge) serveGRPC(ln net.Listener) {
	b.serving.Go(func() {
		// Serve returns nil once Stop or GracefulStop was called.
		if err := b.grpcServer.Serve(ln); err != nil {
			b.reportServeErr(fmt.Errorf("gRPC server on %s: %w", ln.Addr(), err))
		}
	})
}

func (b *bridge) reportServeErr(err error) {
	select {
	case b.serveErr <- err:
	default: // one is enough to shut down
	}
}

// shutdown stops the bridge in a fixed order, each step bounded: health reports NOT_SERVING (so
// that load balancers stop sending), the HTTP server finishes in-flight requests, the gRPC server
// finishes in-flight calls (then is stopped hard), and last the service closes its sessions.
func (b *bridge) shutdown(t shutdownTimeouts) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), t.total)
	defer cancel()

	b.health.Shutdown()
	// Host streams (Connect, WatchEvents, StreamCallTool) never end on their own: end them now, or they
	// hold up the HTTP Shutdown and GracefulStop for their full bounds.
	b.svc.EndStreams()

	if b.httpServer != nil {
		hctx, hcancel := context.WithTimeout(ctx, t.http)
		err := b.httpServer.Shutdown(hctx)
		hcancel()
		if err != nil {
			// Cut the calls still in flight: each answers 503 UNAVAILABLE, then the connections close.
			b.logger.Warn("HTTP shutdown timed out; ending the REST calls in flight with 503", "after", t.http)
			b.cutREST(gateway.ErrDrainBound)
			gctx, gcancel := context.WithTimeout(ctx, restCutGrace)
			if err := b.httpServer.Shutdown(gctx); err != nil {
				b.httpServer.Close()
			}
			gcancel()
		}
	}
	if err := b.gwConn.Close(); err != nil {
		b.logger.Debug("closing the gateway connection", "error", err)
	}

	stopped := make(chan struct{})
	go func() { // ends when GracefulStop returns, at the latest after Stop below
		b.grpcServer.GracefulStop()
		close(stopped)
	}()
	timer := time.NewTimer(min(t.grpc, time.Until(deadline(ctx))))
	select {
	case <-stopped:
	case <-timer.C:
		b.logger.Warn("gRPC graceful stop timed out; stopping", "after", t.grpc)
		b.grpcServer.Stop()
		<-stopped
	}
	timer.Stop()

	if err := b.svc.Close(ctx); err != nil {
		b.logger.Warn("closing the service", "error", err)
	}
	b.obs.shutdown(ctx, b.logger)
	if b.admin != nil {
		_ = b.admin.Close() // last: /metrics stays up while the bridge drains
	}
	b.serving.Wait()
	b.logger.Info("shut down", "took", time.Since(start).Round(time.Millisecond))
}

// restCutGrace bounds how long the REST calls cut at the drain bound get to write their 503.
const restCutGrace = 2 * time.Second

func deadline(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}

// httpHandler routes /healthz, /readyz, /metrics, /openapi.json, the REST API under /v1/ and the console
// under /console/, every route behind the door (b.door).
func (b *bridge) httpHandler(gw http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", b.healthz)
	mux.Handle("GET /readyz", b.readyz(false))
	mux.Handle("GET /metrics", b.apiMetrics())
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(openapiv2.SwaggerJSON)
	})
	mux.Handle("/v1/", console.ProtectAPI(b.apiDoor(gw)))
	if b.console.Load() == nil {
		b.setConsole(b.cfg)
	}
	mux.Handle(console.Prefix, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.console.Load().h.ServeHTTP(w, r) // the console in force: a reload turns it on or off, or changes its settings
	}))
	mux.Handle("/", gateway.NotFound)
	return b.door(mux)
}

// door wraps a listener's handler (HTTP and admin): the Host check against DNS rebinding when the
// configuration asks for it (config.HostCheck), and the safe headers on every answer
// (docs/adr/0090-the-door.md).
func (b *bridge) door(h http.Handler) http.Handler {
	if b.hosts.Load() == nil {
		b.setHosts(b.cfg)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		door.Guard(b.hosts.Load().hosts, h).ServeHTTP(w, r) // the names in force (a reload changes them)
	})
}

// consoleHandler is the console in force: gateway.NotFound when it is off.
type consoleHandler struct{ h http.Handler }

// setConsole makes cfg's console (console.enabled, its sign-in settings and the principals it shows) the
// one in force.
func (b *bridge) setConsole(cfg *config.Config) {
	h := consoleHandler{h: gateway.NotFound}
	if cfg.Console.On() {
		h.h = console.Handler(console.OptionsFrom(cfg))
	}
	b.console.Store(&h)
}

// hostNames is the Host check in force: hosts nil admits every name.
type hostNames struct{ hosts *door.Hosts }

// setHosts makes cfg's Host check (listen.allowedHosts, and whether the check applies) the one in force.
func (b *bridge) setHosts(cfg *config.Config) {
	var h hostNames
	if cfg.HostCheck() {
		h.hosts = door.NewHosts(cfg.Listen.AllowedHosts)
	}
	b.hosts.Store(&h)
}

// healthz answers /healthz (healthz.Handler) from the gRPC health service, on the HTTP and admin listeners.
func (b *bridge) healthz(w http.ResponseWriter, r *http.Request) {
	healthz.Handler(healthpb.NewHealthClient(b.gwConn))(w, r)
}
