// Package scenario is what the conformance clients share: the per-scenario actions the official MCP
// conformance suite expects of a client, and the canned answers of the host that plays along (sampling,
// elicitation, roots, and the browser step of OAuth authorization).
//
// conformance/client performs the actions through mcpcore; conformance/bridgeclient performs the same ones
// through a running mcp-bridge binary and its gRPC host API. Each adapts its session to Session, so both
// paths are judged on the same actions and the same answers.
package scenario

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
)

// ErrNotOffered is what a Session's list call returns (wrapped) when the server declared no capability for
// it and the client therefore refused to ask.
var ErrNotOffered = errors.New("the server does not offer this")

// Session is one open MCP session as a scenario drives it. Implementations are used from one goroutine.
// Only the fields a scenario reads need to be filled in the results (tool names and input schemas,
// isError and text content, resource URIs, prompt names and arguments).
type Session interface {
	// ListTools returns one page of tools; cursor is "" for the first.
	ListTools(ctx context.Context, cursor string) (*mcp.ListToolsResult, error)
	// CallTool calls a tool; a tool error is a result with IsError, not an error.
	CallTool(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, error)
	ListResources(ctx context.Context) (*mcp.ListResourcesResult, error)
	ReadResource(ctx context.Context, uri string) error
	ListPrompts(ctx context.Context) (*mcp.ListPromptsResult, error)
	GetPrompt(ctx context.Context, name string, args map[string]string) error
}

// Env is what the suite tells a client about the scenario it runs.
type Env struct {
	Name    string         // MCP_CONFORMANCE_SCENARIO
	Version string         // MCP_CONFORMANCE_PROTOCOL_VERSION: the revision the scenario runs at
	Data    map[string]any // MCP_CONFORMANCE_CONTEXT, decoded
	URL     string         // the mock server's URL: the client's last argument
}

// ReadEnv reads the scenario from the environment and the server URL from the last of args.
func ReadEnv(args []string) (Env, error) {
	if len(args) < 2 {
		return Env{}, errors.New("usage: <client> [flags] <server-url> (with MCP_CONFORMANCE_SCENARIO set)")
	}
	e := Env{
		Name:    os.Getenv("MCP_CONFORMANCE_SCENARIO"),
		Version: os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION"),
		URL:     args[len(args)-1],
	}
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &e.Data); err != nil {
			return Env{}, fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	return e, nil
}

// RunTimeout bounds a scenario's run: the suite kills the client after 30s, and what is left after it is
// for the client to end cleanly.
const RunTimeout = 25 * time.Second

// Start reads the scenario (ReadEnv), finds its actions (Lookup), and returns a context that ends on
// SIGINT or SIGTERM or after RunTimeout; the caller calls stop when the run is over.
func Start(args []string) (env Env, action Action, ctx context.Context, stop func(), err error) {
	if env, err = ReadEnv(args); err != nil {
		return env, nil, nil, nil, err
	}
	if action, err = Lookup(env.Name); err != nil {
		return env, nil, nil, nil, err
	}
	ctx, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithTimeout(ctx, RunTimeout)
	return env, action, ctx, func() { cancel(); stopSignals() }, nil
}

// Auth reports whether the scenario is an authorization scenario: its server requires OAuth.
func (e Env) Auth() bool { return strings.HasPrefix(e.Name, "auth/") }

// PreRegistered returns the client credentials auth/pre-registration hands over in MCP_CONFORMANCE_CONTEXT.
func (e Env) PreRegistered() (clientID, clientSecret string, ok bool) {
	id, ok := e.Data["client_id"].(string)
	if !ok {
		return "", "", false
	}
	secret, _ := e.Data["client_secret"].(string)
	return id, secret, true
}

// Grants of AuthSetup, named as mcp-bridge's configuration names them (auth.grant).
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
	GrantJWTBearer         = "jwt_bearer"
	GrantEnterpriseManaged = "enterprise_managed"
)

// AuthSetup is the upstream authorization an auth/* scenario's server needs, from the scenario's name and
// MCP_CONFORMANCE_CONTEXT; both clients configure their path with it. The secrets in it (client secret,
// private key, assertions) are the suite's throwaway test credentials.
type AuthSetup struct {
	Grant string
	// The client registered with the MCP server's authorization server.
	ClientID, ClientSecret string
	// ClientKeyPEM signs private_key_jwt client assertions (PKCS #8), with ClientKeyAlg.
	ClientKeyPEM, ClientKeyAlg string
	// Assertion is the workload's JWT (jwt_bearer).
	Assertion string
	// The enterprise IdP (enterprise_managed): issuer, token endpoint, the bridge's client there, and the
	// user's ID token to exchange.
	IdPIssuer, IdPTokenEndpoint, IdPClientID, IdPIDToken string
	// DPoP sender-constrains the tokens (auth/dpop, auth/dpop-nonce).
	DPoP bool
}

// AuthSetup returns the scenario's upstream authorization; ok is false for scenarios without one.
func (e Env) AuthSetup() (a AuthSetup, ok bool) {
	if !e.Auth() {
		return a, false
	}
	str := func(k string) string { v, _ := e.Data[k].(string); return v }
	a.Grant = GrantAuthorizationCode
	switch e.Name {
	case "auth/client-credentials-jwt":
		a.Grant, a.ClientID, a.ClientKeyPEM, a.ClientKeyAlg = GrantClientCredentials, str("client_id"), str("private_key_pem"), str("signing_algorithm")
	case "auth/client-credentials-basic":
		a.Grant, a.ClientID, a.ClientSecret = GrantClientCredentials, str("client_id"), str("client_secret")
	case "auth/wif-jwt-bearer":
		a.Grant, a.ClientID, a.Assertion = GrantJWTBearer, str("client_id"), str("valid_jwt")
	case "auth/enterprise-managed-authorization":
		a.Grant, a.ClientID, a.ClientSecret = GrantEnterpriseManaged, str("client_id"), str("client_secret")
		a.IdPIssuer, a.IdPTokenEndpoint = str("idp_issuer"), str("idp_token_endpoint")
		a.IdPClientID, a.IdPIDToken = str("idp_client_id"), str("idp_id_token")
	case "auth/dpop", "auth/dpop-nonce":
		a.DPoP = true
	default:
		a.ClientID, a.ClientSecret, _ = e.PreRegistered()
	}
	return a, true
}

// Client registration for the authorization scenarios, as the suite expects of every client: the client
// ID metadata document URL the mock authorization servers know, and the redirect URL nobody listens on (the
// host reads the redirect without following it).
const (
	ClientMetadataURL = "https://conformance-test.local/client-metadata.json"
	RedirectURL       = "http://localhost:3000/callback"
)

// ClientName and ClientVersion are the clientInfo the conformance clients announce.
const (
	ClientName    = "mcp-bridge-conformance"
	ClientVersion = "0.1.0"
)

// Run is one scenario being run: the session and what the suite said.
type Run struct {
	Session Session
	Env     Env
	Logger  *slog.Logger
}

// Action performs a scenario's actions on the open session. Its error means the client could not do what
// the scenario asks; the suite's checks, not this error, decide whether the scenario passes.
type Action func(ctx context.Context, r *Run) error

var actions = map[string]Action{
	"initialize":                          listTools,
	"tools_call":                          toolsCall,
	"elicitation-sep1034-client-defaults": callTool("test_client_elicitation_defaults", nil),
	"sse-retry":                           callTool("test_reconnection", nil),
	"request-metadata":                    listTools,
	"sep-2322-client-request-state":       requestState,
	"http-standard-headers":               exerciseEverything,
	"http-custom-headers":                 customHeaders,
	"http-invalid-tool-headers":           callSurvivors,
	"json-schema-ref-no-deref":            listTools,
	"json-schema-2020-12-preservation":    echoSchema,
}

// Lookup returns the actions of a scenario; every auth/* scenario has the same ones.
func Lookup(name string) (Action, error) {
	if a, ok := actions[name]; ok {
		return a, nil
	}
	if strings.HasPrefix(name, "auth/") {
		return authScenario, nil
	}
	names := make([]string, 0, len(actions))
	for n := range actions {
		names = append(names, n)
	}
	sort.Strings(names)
	return nil, fmt.Errorf("unknown scenario %q (known: %s, auth/*)", name, strings.Join(names, ", "))
}

// The host's canned answers.

// Roots are the roots the host exposes.
var Roots = []*mcp.Root{{URI: "file:///conformance/workspace", Name: "workspace"}}

// Sampling model, text and stop reason of the canned assistant message.
const (
	SamplingModel      = "mcp-bridge-conformance-model"
	SamplingText       = "This is a canned answer from the conformance host."
	SamplingStopReason = "endTurn"
)

// SamplingAnswer is the host's answer to every sampling request.
func SamplingAnswer() *mcp.CreateMessageWithToolsResult {
	return &mcp.CreateMessageWithToolsResult{
		Model:      SamplingModel,
		Role:       "assistant",
		Content:    []mcp.Content{&mcp.TextContent{Text: SamplingText}},
		StopReason: SamplingStopReason,
	}
}

// ElicitAnswer accepts a form with every field that has a default set to it (SEP-1034: a client applies
// the schema's defaults to fields the user left alone), booleans without one checked, and required fields
// without one given a plain value of their type. URL mode is accepted (the user agreed to open the URL).
// schema is the requested schema decoded as JSON (nil in URL mode).
func ElicitAnswer(mode string, schema any) *mcp.ElicitResult {
	if mode == "url" {
		return &mcp.ElicitResult{Action: "accept"}
	}
	var s struct {
		Properties map[string]map[string]any `json:"properties"`
		Required   []string                  `json:"required"`
	}
	if b, err := json.Marshal(schema); err == nil {
		_ = json.Unmarshal(b, &s)
	}
	content := map[string]any{}
	for name, prop := range s.Properties {
		if def, ok := prop["default"]; ok {
			content[name] = def
			continue
		}
		typ, _ := prop["type"].(string)
		if typ == "boolean" {
			content[name] = true
			continue
		}
		if !slices.Contains(s.Required, name) {
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

// Authorize plays the user in the browser: the suite's mock authorization servers approve at once and
// redirect to the redirect URL with code, state and (per scenario) iss, so the host fetches the
// authorization URL without following the redirect and answers with where it points.
func Authorize(ctx context.Context, authorizationURL string) (redirect string, err error) {
	hc := &http.Client{
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authorizationURL, nil)
	if err != nil {
		return "", err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode/100 != 3 || loc == "" {
		return "", fmt.Errorf("the authorization server answered %s without a redirect", resp.Status)
	}
	return loc, nil
}
