// Package demoserver is the built-in demo MCP server that `mcp-bridge demo-server` runs over stdio.
//
// It is built with the official MCP Go SDK's server side and exercises every feature a client
// meets, so that a bridge started without a configuration file has something real to talk to:
//
//   - tools: echo, add (structured output), long_operation (progress, cancellation), sample
//     (sampling), elicit (form elicitation), elicit_url (URL elicitation), list_roots (roots),
//     structured (structured output with an output schema), fail (isError), log (log messages at
//     every level) and increment (updates a subscribable resource);
//   - resources demo://readme and demo://counter (subscribable), the template demo://items/{id};
//   - the prompt greet (name required, style optional);
//   - completion for the prompt's arguments and the template variable;
//   - log messages (notifications/message), filtered by the level the client set.
//
// The tools that need something from the client (sample, elicit, elicit_url, list_roots) are
// written in the multi round-trip style of the 2026-07-28 protocol (SEP-2322): the first call
// returns InputRequests, the retry carries InputResponses. The SDK's server middleware turns that
// into server→client requests (sampling/createMessage, elicitation/create, roots/list) for clients
// of the handshake era, so the same handler serves both protocol eras.
package demoserver

import (
	"context"
	"github.com/mcp-bridge/mcp-bridge/internal/stdiotransport"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Name is the implementation name the demo server reports in serverInfo.
const Name = "mcp-bridge-demo"

// Options configure the demo server. A nil *Options is valid and means all defaults.
type Options struct {
	// Version is reported in serverInfo; empty means "dev".
	Version string
	// Logger receives the server's own diagnostics (not MCP log notifications). With stdio
	// transport it must not write to stdout. Nil discards.
	Logger *slog.Logger
}

// demo holds the state shared by the handlers of one server.
type demo struct {
	logger *slog.Logger
	srv    *mcp.Server // set once by newServer, before any session exists

	mu      sync.Mutex // guards counter
	counter int

	// onCancel, if set (tests only), is called when long_operation observes cancellation.
	onCancel func(step int)
}

// New returns the demo server. Every call returns an independent server with its own state;
// a server may serve any number of sessions.
func New(opts *Options) *mcp.Server {
	s, _ := newServer(opts)
	return s
}

func newServer(opts *Options) (*mcp.Server, *demo) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	d := &demo{logger: o.Logger}
	s := mcp.NewServer(&mcp.Implementation{
		Name:    Name,
		Title:   "mcp-bridge demo server",
		Version: o.Version,
	}, &mcp.ServerOptions{
		Instructions: "Demo server of mcp-bridge. Every tool exercises one MCP feature: " +
			"echo, add, long_operation (progress), sample (sampling), elicit and elicit_url " +
			"(elicitation), list_roots (roots), structured (structured output), fail (isError), " +
			"log (log messages) and increment (resource updates for demo://counter).",
		Logger:             slog.New(minLevel{Handler: o.Logger.Handler(), min: slog.LevelWarn}),
		CompletionHandler:  d.complete,
		SubscribeHandler:   d.subscribe,
		UnsubscribeHandler: d.unsubscribe,
	})
	d.srv = s
	d.addTools(s)
	d.addResources(s)
	d.addPrompts(s)
	return s, d
}

// Run serves the demo server over stdin/stdout until ctx is cancelled or the client closes
// stdin (the stdio transport's end of session, MCP spec "Transports: stdio").
func Run(ctx context.Context, opts *Options) error {
	return New(opts).Run(ctx, stdiotransport.New())
}

// minLevel drops records below min. The SDK logs every connect and disconnect at Info; for a
// server whose stderr ends up in the bridge's log that is noise, so only its warnings pass.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{Handler: h.Handler.WithAttrs(as), min: h.min}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{Handler: h.Handler.WithGroup(name), min: h.min}
}
