// Command client is the MCP client that mcp-bridge puts in front of the official MCP conformance suite
// (npm @modelcontextprotocol/conformance; scripts/conformance.sh runs it). It drives mcpcore — the bridge's
// client core — and never the SDK directly, so the suite judges what the bridge does on the wire.
// conformance/bridgeclient performs the same actions through the whole bridge binary and its host API.
//
// The suite starts a mock MCP server for one scenario and runs this program with the server's URL as the
// last argument and the scenario in the environment:
//
//	MCP_CONFORMANCE_SCENARIO          the scenario name (always set)
//	MCP_CONFORMANCE_PROTOCOL_VERSION  the revision the scenario runs at (2025-11-25 or 2026-07-28)
//	MCP_CONFORMANCE_CONTEXT           JSON with scenario data, for the few scenarios that have any
//
// The program opens one mcpcore session to the URL (Streamable HTTP, version negotiated by the core as it
// would be for an unpinned server), performs the scenario's actions (package conformance/internal/scenario),
// and plays the host: every request the server makes of the client reaches it as an mcpcore pending
// request, and it answers through the Dispatcher with the scenario package's canned answers — sampling with
// a canned assistant message, elicitation by accepting the form filled with the schema's defaults, roots
// with one fixed root — and, for the authorization scenarios, the browser step of the OAuth flow: it fetches
// the authorization URL without following the redirect and answers with the redirect URL. It exits 0 when
// the scenario's actions succeeded, 1 if not. The suite's checks, not the exit status, decide whether a
// scenario passes.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-bridge/mcp-bridge/conformance/internal/scenario"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
	"github.com/mcp-bridge/mcp-bridge/mcpcore/upstreamauth"
)

// owner is the principal the program's one session belongs to.
const owner = "conformance"

func main() {
	if err := mainErr(); err != nil {
		fmt.Fprintln(os.Stderr, "conformance client:", err)
		os.Exit(1)
	}
}

func mainErr() error {
	env, action, ctx, stop, err := scenario.Start(os.Args)
	if err != nil {
		return err
	}
	defer stop()

	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := &host{logger: logger}
	core := mcpcore.New(mcpcore.Options{
		Logger:            logger,
		AllowUnconfigured: true,
		ClientInfo:        &mcp.Implementation{Name: scenario.ClientName, Version: scenario.ClientVersion},
	})
	h.dispatcher = core.Dispatcher()
	// Authorization is asked for while the session is still opening, before the host has it: the host
	// answers it from the dispatcher's feed of requests. The goroutine ends when the watch is closed.
	auth := core.Dispatcher().Watch(func(p *mcpcore.PendingRequest) bool { return p.Kind == mcpcore.KindAuthorization }, 8)
	authDone := make(chan struct{})
	go func() {
		defer close(authDone)
		for ev := range auth.C() {
			if ev.Kind == mcpcore.EventRequestCreated {
				go h.answer(ctx, ev.Request)
			}
		}
	}()
	defer func() { auth.Close(); <-authDone }()
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := core.Close(closeCtx); err != nil {
			logger.Warn("closing the core", "err", err)
		}
	}()

	sess, err := open(ctx, core, h, env)
	if err != nil {
		return err
	}
	info := sess.Info()
	logger.Info("session open", "scenario", env.Name, "protocolVersion", info.ProtocolVersion, "requested", env.Version)
	if env.Version != "" && info.ProtocolVersion != env.Version {
		return fmt.Errorf("negotiated protocol version %s, the scenario runs at %s", info.ProtocolVersion, env.Version)
	}
	if err := action(ctx, &scenario.Run{Session: coreSession{sess}, Env: env, Logger: logger}); err != nil {
		return fmt.Errorf("scenario %s: %w", env.Name, err)
	}
	return nil
}

// oauthConfig is the authorizer of the scenario's server, with an OAuth client of its own; nil unless it
// is an authorization scenario.
func oauthConfig(env scenario.Env) mcpcore.Authorizer {
	a, ok := env.AuthSetup()
	if !ok {
		return nil
	}
	cfg := &upstreamauth.Config{
		Grant:             upstreamauth.Grant(a.Grant),
		ClientMetadataURL: scenario.ClientMetadataURL,
		RedirectURL:       scenario.RedirectURL,
		ClientID:          a.ClientID,
		ClientSecret:      a.ClientSecret,
		ClientKeyAlg:      a.ClientKeyAlg,
		DPoP:              a.DPoP,
	}
	if a.ClientKeyPEM != "" {
		cfg.ClientKey = &upstreamauth.SecretSource{Value: a.ClientKeyPEM}
	}
	if a.Assertion != "" {
		cfg.Assertion = &upstreamauth.SecretSource{Value: a.Assertion}
	}
	if a.Grant == scenario.GrantEnterpriseManaged {
		cfg.IdP = &upstreamauth.IdPConfig{
			TokenEndpoint: a.IdPTokenEndpoint,
			ClientID:      a.IdPClientID,
			SubjectToken:  &upstreamauth.SecretSource{Value: a.IdPIDToken},
		}
	}
	return upstreamauth.NewClient(upstreamauth.Options{}).Server(cfg)
}

// hostCapabilities are what this host can answer: all of it.
var hostCapabilities = mcpcore.HostCapabilities{
	Sampling:         true,
	ElicitationForm:  true,
	ElicitationURL:   true,
	Roots:            true,
	RootsListChanged: true,
}

// open opens the session and starts the host that answers the server's requests.
func open(ctx context.Context, core *mcpcore.Core, h *host, env scenario.Env) (*mcpcore.Session, error) {
	sess, err := core.Open(ctx, mcpcore.OpenParams{
		Owner: owner,
		AdHoc: &mcpcore.ServerConfig{
			Name:      "conformance",
			Transport: mcpcore.TransportStreamableHTTP,
			URL:       env.URL,
			Restart:   mcpcore.RestartPolicy{MaxRestarts: mcpcore.DefaultMaxRestarts},
			OAuth:     oauthConfig(env),
		},
		Capabilities: hostCapabilities,
		Roots:        scenario.Roots,
	})
	if err != nil {
		return nil, fmt.Errorf("open session: %w", err)
	}
	sub := sess.Subscribe(0)
	// The host goroutine ends when the session closes (its subscription's channel closes) — at core.Close.
	go h.serve(ctx, sub)
	// Requests raised before the subscription existed are still pending: answer them too.
	for _, p := range h.dispatcher.List(owner, sess.ID()) {
		h.answer(ctx, p)
	}
	return sess, nil
}

// host answers pending requests the way a simple, always-agreeing host would.
type host struct {
	dispatcher *mcpcore.Dispatcher
	logger     *slog.Logger
}

func (h *host) serve(ctx context.Context, sub *mcpcore.Subscription) {
	defer sub.Close()
	for ev := range sub.C() {
		switch ev.Kind {
		case mcpcore.EventRequestCreated:
			h.answer(ctx, ev.Request)
		case mcpcore.EventDropped:
			// Requests whose events were lost are still listed as pending.
			h.logger.Warn("host fell behind", "dropped", ev.Dropped)
		}
	}
}

func (h *host) answer(ctx context.Context, p *mcpcore.PendingRequest) {
	var a mcpcore.Answer
	switch p.Kind {
	case mcpcore.KindSampling:
		a.Sampling = scenario.SamplingAnswer()
	case mcpcore.KindElicitation:
		if p.Elicitation == nil {
			a.Elicitation = scenario.ElicitAnswer("url", nil)
		} else {
			a.Elicitation = scenario.ElicitAnswer(p.Elicitation.Mode, p.Elicitation.RequestedSchema)
		}
	case mcpcore.KindRoots:
		a.Roots = &mcp.ListRootsResult{Roots: scenario.Roots}
	case mcpcore.KindAuthorization:
		redirect, err := scenario.Authorize(ctx, p.Authorization.AuthorizationURL)
		if err != nil {
			h.logger.Error("authorization", "err", err)
			a.Error = &mcpcore.RPCError{Code: -1, Message: err.Error()}
		} else {
			a.Authorization = &mcpcore.AuthorizationAnswer{RedirectURL: redirect}
		}
	default:
		a.Error = &mcpcore.RPCError{Code: -32601, Message: "the conformance host does not handle " + p.Kind.String()}
	}
	err := h.dispatcher.Respond(ctx, owner, p.ID, a)
	switch {
	case err == nil:
		h.logger.Info("answered", "request", p.ID, "kind", p.Kind, "delivery", p.Delivery)
	case errors.Is(err, mcpcore.ErrRequestEnded):
		// Already answered (seen both in List and as an event) or ended by the server.
	default:
		h.logger.Error("answer refused", "request", p.ID, "kind", p.Kind, "err", err)
	}
}

// coreSession adapts an mcpcore session to what the scenarios drive.
type coreSession struct{ s *mcpcore.Session }

func (c coreSession) ListTools(ctx context.Context, cursor string) (*mcp.ListToolsResult, error) {
	res, err := c.s.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor}, mcpcore.CallOptions{})
	return res, notOffered(err)
}

func (c coreSession) CallTool(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, error) {
	return c.s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args}, mcpcore.CallOptions{})
}

func (c coreSession) ListResources(ctx context.Context) (*mcp.ListResourcesResult, error) {
	res, err := c.s.ListResources(ctx, &mcp.ListResourcesParams{}, mcpcore.CallOptions{})
	return res, notOffered(err)
}

func (c coreSession) ReadResource(ctx context.Context, uri string) error {
	_, err := c.s.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}, mcpcore.CallOptions{})
	return err
}

func (c coreSession) ListPrompts(ctx context.Context) (*mcp.ListPromptsResult, error) {
	res, err := c.s.ListPrompts(ctx, &mcp.ListPromptsParams{}, mcpcore.CallOptions{})
	return res, notOffered(err)
}

func (c coreSession) GetPrompt(ctx context.Context, name string, args map[string]string) error {
	_, err := c.s.GetPrompt(ctx, &mcp.GetPromptParams{Name: name, Arguments: args}, mcpcore.CallOptions{})
	return err
}

// notOffered marks the core's refusal to ask for what the server did not declare as scenario.ErrNotOffered.
func notOffered(err error) error {
	if errors.Is(err, mcpcore.ErrCapabilityMissing) {
		return fmt.Errorf("%w: %w", scenario.ErrNotOffered, err)
	}
	return err
}
