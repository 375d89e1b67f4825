// Command mcp-bridge puts an MCP client behind a gRPC and REST API.
//
//	mcp-bridge [flags]         serve gRPC (127.0.0.1:50051) and REST (127.0.0.1:8080)
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
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal, restore the default handling: a second one ends the process at
		// once instead of waiting for the graceful shutdown.
		<-ctx.Done()
		stop()
	}()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}
