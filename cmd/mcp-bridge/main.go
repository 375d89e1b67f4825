// Command mcp-bridge puts an MCP client behind a gRPC and REST API.
//
//	mcp-bridge [flags]         serve gRPC (127.0.0.1:50051) and REST (127.0.0.1:8080)
//	mcp-bridge check --config FILE   validate a configuration file and exit
//	mcp-bridge demo-server     run the built-in demo MCP server over stdio
//	mcp-bridge version         print the version
//
// See README.md and docs/configuration.md. This package only wires: the configuration comes from
// internal/config, the service from package server, the MCP client core from mcpcore.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// SIGHUP reloads the configuration (docs/adr/0095-live-configuration.md); registered first, so that it
	// never ends the process, whatever the subcommand.
	hangup := make(chan os.Signal, 1)
	signal.Notify(hangup, syscall.SIGHUP)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal, restore the default handling: a second one ends the process at
		// once instead of waiting for the graceful shutdown.
		<-ctx.Done()
		stop()
	}()
	os.Exit(runWith(ctx, os.Args[1:], runOptions{stdout: os.Stdout, stderr: os.Stderr, hangup: hangup}))
}
