package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/mcp-bridge/mcp-bridge/internal/config"
	"github.com/mcp-bridge/mcp-bridge/internal/demoserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
)

// Exit statuses.
const (
	exitOK       = 0
	exitFailure  = 1 // the bridge failed while running
	exitBadInput = 2 // bad flags or configuration, or a listener that cannot be opened
)

// version is set at build time with -ldflags "-X main.version=v1.2.3"; otherwise it comes from the
// module's build information.
var version string

// runOptions are the parts of run that tests replace.
type runOptions struct {
	stdout, stderr io.Writer
	// ready, if set, is called once every listener is open, with their bound addresses.
	ready func(listening)
	// shutdownTimeout bounds the steps of the graceful shutdown; zero fields take the defaults.
	shutdownTimeout shutdownTimeouts
	// hangup delivers SIGHUP: each one reloads the configuration (reload.go). Nil: no signal reloads.
	hangup <-chan os.Signal
	// newService, if set, replaces newObservedService.
	newService func(*config.Config, *slog.Logger) (bridgeService, []grpc.ServerOption, error)
}

// run is the whole program: it returns the exit status. ctx ends the bridge (SIGINT and SIGTERM
// cancel it in main).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return runWith(ctx, args, runOptions{stdout: stdout, stderr: stderr})
}

func runWith(ctx context.Context, args []string, o runOptions) int {
	if len(args) > 0 {
		switch args[0] {
		case "demo-server":
			return runDemoServer(ctx, args[1:], o)
		case "check":
			return runCheck(ctx, args[1:], o)
		case "version", "--version", "-version":
			fmt.Fprintln(o.stdout, versionLine())
			return exitOK
		case "help":
			args = []string{"-help"}
		}
	}
	fl, err := parseFlags(args, o.stdout)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		return badInput(o.stderr, err)
	}
	return serve(ctx, fl, o)
}

// runDemoServer serves the demo MCP server over stdin/stdout until the client closes stdin or
// ctx ends. Its own diagnostics go to stderr, which the bridge captures into its log.
func runDemoServer(ctx context.Context, args []string, o runOptions) int {
	fs := flag.NewFlagSet("mcp-bridge demo-server", flag.ContinueOnError)
	fs.SetOutput(o.stdout)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: mcp-bridge demo-server [-log-level LEVEL]\n\nRuns the demo MCP server over stdin/stdout.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	level := fs.String("log-level", "info", "log `level` of the demo server's own diagnostics on stderr")
	if err := parseQuietly(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintf(o.stderr, "mcp-bridge demo-server: %v (see mcp-bridge demo-server -help)\n", err)
		return exitBadInput
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(o.stderr, "mcp-bridge demo-server: unexpected argument %q\n", fs.Arg(0))
		return exitBadInput
	}
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(*level)); err != nil {
		fmt.Fprintf(o.stderr, "mcp-bridge demo-server: --log-level: unknown level %q (use debug, info, warn or error)\n", *level)
		return exitBadInput
	}
	logger := slog.New(slog.NewTextHandler(o.stderr, &slog.HandlerOptions{Level: lv}))
	err := demoserver.Run(ctx, &demoserver.Options{Version: buildVersion(), Logger: logger})
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(o.stderr, "mcp-bridge demo-server: %v\n", err)
		return exitFailure
	}
	return exitOK
}

// buildVersion returns the version: the -X value, the module version, or the VCS revision.
func buildVersion() string {
	if version != "" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "-dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev == "" {
		return "dev"
	}
	return "dev-" + rev + modified
}

func versionLine() string {
	return fmt.Sprintf("mcp-bridge %s (%s, %s/%s; MCP %s)", buildVersion(), runtime.Version(), runtime.GOOS, runtime.GOARCH,
		strings.Join(mcp.SupportedProtocolVersions(), ", "))
}

// badInput reports a problem with the input (flags, configuration, listeners) as the one line the
// user needs, and returns exitBadInput.
func badInput(w io.Writer, err error) int {
	fmt.Fprintf(w, "mcp-bridge: %s\n", oneLine(err.Error()))
	return exitBadInput
}

func oneLine(s string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}
