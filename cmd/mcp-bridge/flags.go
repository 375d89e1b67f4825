package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/mcp-bridge/mcp-bridge/internal/config"
	"github.com/mcp-bridge/mcp-bridge/internal/telemetry"
)

// flags are the serve command's command-line settings. Those given explicitly override the
// configuration file.
type flags struct {
	configFile string
	grpcAddr   string
	httpAddr   string
	grpcSocket string
	replica    string
	adminAddr  string
	logLevel   slog.Level
	logFormat  string
	stateFile  string
	stateReset bool
	set        map[string]bool // names of the flags given on the command line
}

const usageHeader = `Usage:
  mcp-bridge [flags]          serve the bridge (gRPC and REST) in front of the configured MCP servers
  mcp-bridge demo-server      run the built-in demo MCP server over stdio
  mcp-bridge version          print the version (also --version)

Without --config the bridge serves one server, "demo", which runs this binary's demo-server.
Flags override the configuration file. See docs/configuration.md.

Flags:
`

// parseFlags parses the serve command's flags. Help goes to stdout and returns flag.ErrHelp;
// any other problem is returned as one line for the caller to print.
func parseFlags(args []string, stdout io.Writer) (*flags, error) {
	f := &flags{set: map[string]bool{}}
	fs := flag.NewFlagSet("mcp-bridge", flag.ContinueOnError)
	fs.SetOutput(stdout)
	fs.StringVar(&f.configFile, "config", "", "configuration `file` (YAML or JSON)")
	fs.StringVar(&f.grpcAddr, "grpc-addr", config.DefaultGRPCAddr, "gRPC listen `address`; empty turns the TCP gRPC listener off")
	fs.StringVar(&f.httpAddr, "http-addr", config.DefaultHTTPAddr, "REST, /healthz and /openapi.json listen `address`; empty turns it off")
	fs.StringVar(&f.grpcSocket, "grpc-socket", "", "also serve gRPC on this Unix socket `path`")
	fs.StringVar(&f.replica, "replica", "", "this replica's `name` behind a proxy (sessions.replica; a DNS label such as the pod's name)")
	fs.StringVar(&f.adminAddr, "admin-addr", "", "serve /metrics and /healthz also on this `address` (plain HTTP, no auth)")
	fs.StringVar(&f.stateFile, "state-file", "", "keep sessions, pending requests and answers in this `file` so that they survive a restart (state.file)")
	fs.BoolVar(&f.stateReset, "state-reset", false, "start over: move the state file aside (<file>.bad-<time>) and start empty")
	level := fs.String("log-level", "info", "log `level`: debug, info, warn or error")
	fs.StringVar(&f.logFormat, "log-format", "text", "log `format`: text or json")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usageHeader)
		fs.PrintDefaults()
	}
	if err := parseQuietly(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, err
		}
		return nil, fmt.Errorf("%v (see mcp-bridge -help)", err)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (the subcommands are demo-server and version; see mcp-bridge -help)", fs.Arg(0))
	}
	fs.Visit(func(fl *flag.Flag) { f.set[fl.Name] = true })

	if err := f.logLevel.UnmarshalText([]byte(*level)); err != nil {
		return nil, fmt.Errorf("--log-level: unknown level %q (use debug, info, warn or error)", *level)
	}
	if f.logFormat != "text" && f.logFormat != "json" {
		return nil, fmt.Errorf("--log-format: unknown format %q (use text or json)", f.logFormat)
	}
	for _, a := range []struct{ name, addr string }{{"grpc-addr", f.grpcAddr}, {"http-addr", f.httpAddr}} {
		if f.set[a.name] && a.addr != "" {
			if err := config.CheckAddr(a.addr); err != nil {
				return nil, fmt.Errorf("--%s: %v", a.name, err)
			}
		}
	}
	return f, nil
}

// parseQuietly parses args with fs, printing only the usage asked for with -help: a parse error
// is returned for the caller to report in one line, instead of the flag package's error and
// usage text.
func parseQuietly(fs *flag.FlagSet, args []string) error {
	out, usage := fs.Output(), fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.SetOutput(out)
	fs.Usage = usage
	if errors.Is(err, flag.ErrHelp) {
		fs.Usage()
	}
	return err
}

// loadConfig loads the configuration file (or the defaults) and applies the flags given
// explicitly on top of it.
func (f *flags) loadConfig() (*config.Config, error) {
	cfg, err := config.Load(f.configFile)
	if err != nil {
		return nil, err
	}
	if f.set["grpc-addr"] {
		cfg.Listen.GRPC = f.grpcAddr
	}
	if f.set["http-addr"] {
		cfg.Listen.HTTP = f.httpAddr
	}
	if f.set["grpc-socket"] {
		cfg.Listen.GRPCSocket = f.grpcSocket
	}
	if f.set["replica"] {
		if err := config.CheckReplica(f.replica); err != nil {
			return nil, fmt.Errorf("--replica: %v", err)
		}
		cfg.Sessions.Replica = f.replica
	}
	if len(cfg.Sessions.Peers) > 0 && cfg.Sessions.Replica == "" {
		return nil, fmt.Errorf("sessions.peers needs a replica name: set sessions.replica or --replica")
	}
	if cfg.State.Redis != nil && cfg.Sessions.Replica == "" {
		return nil, fmt.Errorf("state.redis needs a replica name (replicas own sessions by name): set sessions.replica or --replica")
	}
	if f.set["admin-addr"] {
		cfg.Listen.Admin = f.adminAddr
	}
	if f.set["state-file"] {
		if f.stateFile == "" {
			return nil, fmt.Errorf("--state-file: empty path (leave the flag out to keep state in memory)")
		}
		abs, err := filepath.Abs(f.stateFile)
		if err != nil {
			return nil, fmt.Errorf("--state-file: %v", err)
		}
		if cfg.State.Redis != nil {
			return nil, fmt.Errorf("--state-file: the configuration keeps the state in redis (state.redis); keep one")
		}
		cfg.State.File, cfg.State.Memory = abs, false
	}
	if f.stateReset {
		if cfg.State.File == "" {
			return nil, fmt.Errorf("--state-reset: there is no state file to start over (set state.file or --state-file)")
		}
		cfg.State.Reset = true
	}
	l := cfg.Listen
	if l.GRPC == "" && l.HTTP == "" && l.GRPCSocket == "" {
		return nil, fmt.Errorf("every listener is off: give --grpc-addr, --http-addr or --grpc-socket an address")
	}
	if l.GRPC != "" && l.GRPC == l.HTTP && !strings.HasSuffix(l.GRPC, ":0") {
		return nil, fmt.Errorf("gRPC and HTTP cannot both listen on %s", l.GRPC)
	}
	return cfg, nil
}

// newLogger returns the bridge's logger, writing to w.
func (f *flags) newLogger(w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: f.logLevel}
	if f.logFormat == "json" {
		return slog.New(telemetry.NewLogHandler(slog.NewJSONHandler(w, opts)))
	}
	return slog.New(telemetry.NewLogHandler(slog.NewTextHandler(w, opts)))
}
