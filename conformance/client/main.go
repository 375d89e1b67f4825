// Command client is the MCP client that mcp-bridge puts in front of the official MCP conformance suite
// (npm @modelcontextprotocol/conformance; scripts/conformance.sh runs it). It drives mcpcore — the bridge's
// client core — and never the SDK directly, so the suite judges what the bridge does on the wire.
//
// The suite starts a mock MCP server for one scenario and runs this program with the server's URL as the
// last argument and the scenario in the environment:
//
//	MCP_CONFORMANCE_SCENARIO          the scenario name (always set)
//	MCP_CONFORMANCE_PROTOCOL_VERSION  the revision the scenario runs at (2025-11-25 or 2026-07-28)
//	MCP_CONFORMANCE_CONTEXT           JSON with scenario data, for the few scenarios that have any
//
// The program opens one mcpcore session to the URL (Streamable HTTP, version negotiated by the core as it
// would be for an unpinned server), performs the scenario's actions, and plays the host: every request the
// server makes of the client reaches it as an mcpcore pending request, and it answers through the
// Dispatcher — sampling with a canned assistant message, elicitation by accepting the form filled with the
// schema's defaults, roots with one fixed root — and, for the authorization scenarios, the browser step of
// the OAuth flow: it fetches the authorization URL without following the redirect and answers with the
// redirect URL. It exits 0 when the scenario's actions succeeded, 1 if not.
// The suite's checks, not the exit status, decide whether a scenario passes.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// owner is the principal the program's one session belongs to.
const owner = "conformance"

// clientVersion is reported as clientInfo.version.
const clientVersion = "0.1.0"

// scenario is what the program does for one conformance scenario.
type scenario struct {
	// run performs the scenario's actions on the open session.
	run func(ctx context.Context, r *run) error
}

var scenarios = map[string]scenario{
	"initialize":                          {run: listTools},
	"tools_call":                          {run: toolsCall},
	"elicitation-sep1034-client-defaults": {run: callTool("test_client_elicitation_defaults", nil)},
	"sse-retry":                           {run: callTool("test_reconnection", nil)},
	"request-metadata":                    {run: listTools},
	"sep-2322-client-request-state":       {run: requestState},
	"http-standard-headers":               {run: exerciseEverything},
	"http-custom-headers":                 {run: customHeaders},
	"http-invalid-tool-headers":           {run: callSurvivors},
	"json-schema-ref-no-deref":            {run: listTools},
	"json-schema-2020-12-preservation":    {run: echoSchema},
}

func main() {
	if err := mainErr(); err != nil {
		fmt.Fprintln(os.Stderr, "conformance client:", err)
		os.Exit(1)
	}
}

func mainErr() error {
	if len(os.Args) < 2 {
		return errors.New("usage: client <server-url> (with MCP_CONFORMANCE_SCENARIO set)")
	}
	url := os.Args[len(os.Args)-1]
	name := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	wantVersion := os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION")
	var data map[string]any
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &data); err != nil {
			return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}

	sc, ok := scenarios[name]
	switch {
	case ok:
	case strings.HasPrefix(name, "auth/"):
		// Every authorization scenario: connect through the core's OAuth client, list tools, call test-tool.
		sc = scenario{run: authScenario}
	default:
		names := make([]string, 0, len(scenarios))
		for n := range scenarios {
			names = append(names, n)
		}
		sort.Strings(names)
		return fmt.Errorf("unknown scenario %q (known: %s, auth/*)", name, strings.Join(names, ", "))
	}

	// The suite kills the client after 30s; end cleanly before that.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 25*time.Second)
	defer cancel()

	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	h := &host{logger: logger}
	core := mcpcore.New(mcpcore.Options{
		Logger:            logger,
		AllowUnconfigured: true,
		ClientInfo:        &mcp.Implementation{Name: "mcp-bridge-conformance", Version: clientVersion},
		OAuth: mcpcore.OAuthOptions{
			// Authorization is asked for while the session is still opening, before the host has it.
			OnAuthorization: func(p *mcpcore.PendingRequest) { go h.answer(ctx, p) },
		},
	})
	h.dispatcher = core.Dispatcher()
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := core.Close(closeCtx); err != nil {
			logger.Warn("closing the core", "err", err)
		}
	}()

	r := &run{core: core, host: h, url: url, data: data, logger: logger, auth: strings.HasPrefix(name, "auth/")}
	if err := r.open(ctx); err != nil {
		return err
	}
	info := r.sess.Info()
	logger.Info("session open", "scenario", name, "protocolVersion", info.ProtocolVersion, "requested", wantVersion)
	if wantVersion != "" && info.ProtocolVersion != wantVersion {
		return fmt.Errorf("negotiated protocol version %s, the scenario runs at %s", info.ProtocolVersion, wantVersion)
	}
	if err := sc.run(ctx, r); err != nil {
		return fmt.Errorf("scenario %s: %w", name, err)
	}
	return nil
}

// run is one scenario's state: the core, its one session and the host answering for it.
type run struct {
	core   *mcpcore.Core
	host   *host
	url    string
	data   map[string]any
	logger *slog.Logger
	auth   bool // an authorization scenario: the server is configured for OAuth
	sess   *mcpcore.Session
}

// Client registration for the authorization scenarios, as the suite expects of every client: the client
// ID metadata document URL the mock authorization servers know, the redirect URL nobody listens on (the
// host reads the redirect without following it), and the pre-registered credentials of
// auth/pre-registration from MCP_CONFORMANCE_CONTEXT.
const (
	clientMetadataURL = "https://conformance-test.local/client-metadata.json"
	redirectURL       = "http://localhost:3000/callback"
)

// oauthConfig is the OAuth client configuration of the scenario's server.
func (r *run) oauthConfig() *mcpcore.OAuthConfig {
	if !r.auth {
		return nil
	}
	cfg := &mcpcore.OAuthConfig{ClientMetadataURL: clientMetadataURL, RedirectURL: redirectURL}
	if id, ok := r.data["client_id"].(string); ok {
		cfg.ClientID = id
		cfg.ClientSecret, _ = r.data["client_secret"].(string)
	}
	return cfg
}

// hostCapabilities are what this host can answer: all of it.
var hostCapabilities = mcpcore.HostCapabilities{
	Sampling:         true,
	ElicitationForm:  true,
	ElicitationURL:   true,
	Roots:            true,
	RootsListChanged: true,
}

// hostRoots are the roots the host exposes.
var hostRoots = []*mcp.Root{{URI: "file:///conformance/workspace", Name: "workspace"}}

// open opens the session and starts the host that answers the server's requests.
func (r *run) open(ctx context.Context) error {
	sess, err := r.core.Open(ctx, mcpcore.OpenParams{
		Owner: owner,
		AdHoc: &mcpcore.ServerConfig{
			Name:      "conformance",
			Transport: mcpcore.TransportStreamableHTTP,
			URL:       r.url,
			OAuth:     r.oauthConfig(),
		},
		Capabilities: hostCapabilities,
		Roots:        hostRoots,
	})
	if err != nil {
		return fmt.Errorf("open session: %w", err)
	}
	r.sess = sess
	h := r.host
	sub := sess.Subscribe(0)
	// The host goroutine ends when the session closes (its subscription's channel closes) — at core.Close.
	go h.serve(ctx, sub)
	// Requests raised before the subscription existed are still pending: answer them too.
	for _, p := range h.dispatcher.List(owner, sess.ID()) {
		h.answer(ctx, p)
	}
	return nil
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
		a.Sampling = &mcp.CreateMessageWithToolsResult{
			Model:      "mcp-bridge-conformance-model",
			Role:       "assistant",
			Content:    []mcp.Content{&mcp.TextContent{Text: "This is a canned answer from the conformance host."}},
			StopReason: "endTurn",
		}
	case mcpcore.KindElicitation:
		a.Elicitation = elicitAnswer(p.Elicitation)
	case mcpcore.KindRoots:
		a.Roots = &mcp.ListRootsResult{Roots: hostRoots}
	case mcpcore.KindAuthorization:
		ans, err := authorize(ctx, p.Authorization)
		if err != nil {
			h.logger.Error("authorization", "err", err)
			a.Error = &mcpcore.RPCError{Code: -1, Message: err.Error()}
		} else {
			a.Authorization = ans
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

// authorize plays the user in the browser: the suite's mock authorization servers approve at once and
// redirect to the redirect URL with code, state and (per scenario) iss, so the host fetches the
// authorization URL without following the redirect and answers with where it points.
func authorize(ctx context.Context, p *mcpcore.AuthorizationRequest) (*mcpcore.AuthorizationAnswer, error) {
	hc := &http.Client{
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.AuthorizationURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode/100 != 3 || loc == "" {
		return nil, fmt.Errorf("the authorization server answered %s without a redirect", resp.Status)
	}
	return &mcpcore.AuthorizationAnswer{RedirectURL: loc}, nil
}

// elicitAnswer accepts a form with every field that has a default set to it (SEP-1034: a client applies
// the schema's defaults to fields the user left alone), booleans without one checked, and required fields
// without one given a plain value of their type. URL mode is accepted (the user agreed to open the URL).
func elicitAnswer(p *mcp.ElicitParams) *mcp.ElicitResult {
	if p == nil || p.Mode == "url" {
		return &mcp.ElicitResult{Action: "accept"}
	}
	var schema struct {
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	if b, err := json.Marshal(p.RequestedSchema); err == nil {
		_ = json.Unmarshal(b, &schema)
	}
	content := map[string]any{}
	for name, prop := range schema.Properties {
		if def, ok := prop["default"]; ok {
			content[name] = def
			continue
		}
		typ, _ := prop["type"].(string)
		if typ == "boolean" {
			content[name] = true
			continue
		}
		if !slices.Contains(schema.Required, name) {
			continue
		}
		if v, ok := plainValue(prop); ok {
			content[name] = v
		}
	}
	return &mcp.ElicitResult{Action: "accept", Content: content}
}

// plainValue is a valid value for a required elicitation field without a default.
func plainValue(prop map[string]any) (any, bool) {
	if enum, ok := prop["enum"].([]any); ok && len(enum) > 0 {
		return enum[0], true
	}
	if one, ok := prop["oneOf"].([]any); ok && len(one) > 0 {
		if m, ok := one[0].(map[string]any); ok {
			return m["const"], true
		}
	}
	switch prop["type"] {
	case "string":
		switch prop["format"] {
		case "email":
			return "host@example.com", true
		case "uri":
			return "https://example.com/", true
		case "date":
			return "2026-01-01", true
		case "date-time":
			return "2026-01-01T00:00:00Z", true
		}
		return "conformance", true
	case "integer", "number":
		if min, ok := prop["minimum"].(float64); ok {
			return min, true
		}
		return 0, true
	}
	return nil, false
}

// allTools lists every tool, following cursors.
func (r *run) allTools(ctx context.Context) ([]*mcp.Tool, error) {
	var tools []*mcp.Tool
	params := &mcp.ListToolsParams{}
	for {
		res, err := r.sess.ListTools(ctx, params, mcpcore.CallOptions{})
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		tools = append(tools, res.Tools...)
		if res.NextCursor == "" {
			return tools, nil
		}
		params = &mcp.ListToolsParams{Cursor: res.NextCursor}
	}
}

func (r *run) call(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, error) {
	if args == nil {
		args = map[string]any{}
	}
	res, err := r.sess.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args}, mcpcore.CallOptions{})
	if err != nil {
		return nil, fmt.Errorf("tools/call %s: %w", name, err)
	}
	if res.IsError {
		r.logger.Warn("tool returned an error result", "tool", name, "content", contentText(res.Content))
	}
	return res, nil
}

func contentText(cs []mcp.Content) string {
	var parts []string
	for _, c := range cs {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, " ")
}

// listTools: connect and list tools (initialize, request-metadata, json-schema-ref-no-deref). Some of these
// mock servers declare no tools capability; the core then refuses tools/list without asking the server
// (mcpcore.ErrCapabilityMissing), which is what it should do, so that is not a failure here.
func listTools(ctx context.Context, r *run) error {
	_, err := r.allTools(ctx)
	if errors.Is(err, mcpcore.ErrCapabilityMissing) {
		r.logger.Info("the server offers no tools; not listing them", "err", err)
		return nil
	}
	return err
}

// toolsCall: list tools and call add_numbers.
func toolsCall(ctx context.Context, r *run) error {
	tools, err := r.allTools(ctx)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(tools, func(t *mcp.Tool) bool { return t.Name == "add_numbers" }) {
		return errors.New("the server has no add_numbers tool")
	}
	_, err = r.call(ctx, "add_numbers", map[string]any{"a": 5, "b": 3})
	return err
}

// callTool lists tools and calls one; the host answers whatever the server asks on the way.
func callTool(name string, args map[string]any) func(context.Context, *run) error {
	return func(ctx context.Context, r *run) error {
		if _, err := r.allTools(ctx); err != nil {
			return err
		}
		_, err := r.call(ctx, name, args)
		return err
	}
}

// requestState drives the multi-round-trip tools of sep-2322-client-request-state. Each is called; a tool
// the core rejects is logged, not fatal: the suite's checks judge what reached the server.
func requestState(ctx context.Context, r *run) error {
	for _, name := range []string{"test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated", "test_mrtr_no_result_type"} {
		if _, err := r.call(ctx, name, nil); err != nil {
			r.logger.Warn("call failed", "tool", name, "err", err)
		}
	}
	return nil
}

// exerciseEverything calls every tool, reads every resource and gets every prompt once
// (http-standard-headers checks the standard headers on each method).
func exerciseEverything(ctx context.Context, r *run) error {
	tools, err := r.allTools(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, t := range tools {
		if _, err := r.call(ctx, t.Name, nil); err != nil {
			errs = append(errs, err)
		}
	}
	resources, err := r.sess.ListResources(ctx, &mcp.ListResourcesParams{}, mcpcore.CallOptions{})
	if err != nil {
		errs = append(errs, fmt.Errorf("resources/list: %w", err))
	} else {
		for _, res := range resources.Resources {
			if _, err := r.sess.ReadResource(ctx, &mcp.ReadResourceParams{URI: res.URI}, mcpcore.CallOptions{}); err != nil {
				errs = append(errs, fmt.Errorf("resources/read %s: %w", res.URI, err))
			}
		}
	}
	prompts, err := r.sess.ListPrompts(ctx, &mcp.ListPromptsParams{}, mcpcore.CallOptions{})
	if err != nil {
		errs = append(errs, fmt.Errorf("prompts/list: %w", err))
	} else {
		for _, p := range prompts.Prompts {
			args := map[string]string{}
			for _, a := range p.Arguments {
				if a.Required {
					args[a.Name] = "conformance"
				}
			}
			if _, err := r.sess.GetPrompt(ctx, &mcp.GetPromptParams{Name: p.Name, Arguments: args}, mcpcore.CallOptions{}); err != nil {
				errs = append(errs, fmt.Errorf("prompts/get %s: %w", p.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// customHeaders lists tools (so the core knows which arguments the tools mirror into headers), then makes
// the calls the scenario's context names.
func customHeaders(ctx context.Context, r *run) error {
	if _, err := r.allTools(ctx); err != nil {
		return err
	}
	calls, _ := r.data["toolCalls"].([]any)
	if len(calls) == 0 {
		return errors.New("MCP_CONFORMANCE_CONTEXT has no toolCalls")
	}
	var errs []error
	for _, c := range calls {
		call, _ := c.(map[string]any)
		name, _ := call["name"].(string)
		args, _ := call["arguments"].(map[string]any)
		if _, err := r.call(ctx, name, args); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// callSurvivors lists tools and calls each one the core kept: tools whose header annotations are invalid
// must not be offered (http-invalid-tool-headers).
func callSurvivors(ctx context.Context, r *run) error {
	tools, err := r.allTools(ctx)
	if err != nil {
		return err
	}
	for _, t := range tools {
		if _, err := r.call(ctx, t.Name, map[string]any{"region": "us-west1"}); err != nil {
			r.logger.Warn("call failed", "tool", t.Name, "err", err)
		}
	}
	return nil
}

// echoSchema sends the input schema of json_schema_2020_12_tool, as the core surfaced it, back through
// json_schema_echo, so the suite sees which JSON Schema 2020-12 keywords survived.
func echoSchema(ctx context.Context, r *run) error {
	tools, err := r.allTools(ctx)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(tools, func(t *mcp.Tool) bool { return t.Name == "json_schema_2020_12_tool" })
	if i < 0 {
		return errors.New("the server has no json_schema_2020_12_tool")
	}
	_, err = r.call(ctx, "json_schema_echo", map[string]any{"schema": tools[i].InputSchema})
	return err
}

// authScenario lists tools and calls test-tool, as the suite's auth scenarios expect of a client that
// completed authorization (the core authorized while opening the session, the host answering the browser
// step; step-up scenarios authorize again on the way).
func authScenario(ctx context.Context, r *run) error {
	if _, err := r.allTools(ctx); err != nil {
		return err
	}
	_, err := r.call(ctx, "test-tool", nil)
	return err
}
