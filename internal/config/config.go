// Package config loads the mcp-bridge configuration file.
//
// One file, YAML or JSON, holds the upstream MCP servers and the bridge's own settings. Its
// mcpServers block is the format desktop MCP hosts use (command/args/env for stdio servers,
// url/headers for HTTP servers), so an existing Claude Desktop or VS Code style file loads as it
// is. Decoding is strict: an unknown key, a value of the wrong type, a duplicate key or an invalid
// setting is an *Error naming the file, the line and the key path. docs/configuration.md is the
// reference for every key.
//
// A *Config is immutable after Load returns and safe for concurrent reads.
package config

import (
	"cmp"
	"crypto/subtle"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// Transport is how the bridge reaches an upstream MCP server.
type Transport string

// The transports an upstream server can use (MCP spec "Transports").
const (
	// TransportStdio runs Command as a subprocess and speaks over its stdin/stdout.
	TransportStdio Transport = "stdio"
	// TransportStreamableHTTP posts to URL (Streamable HTTP).
	TransportStreamableHTTP Transport = "streamable-http"
	// TransportSSE uses the deprecated HTTP+SSE transport at URL.
	TransportSSE Transport = "sse"
)

// DemoServerName is the name of the built-in demo server in the default configuration.
const DemoServerName = "demo"

// Config is the whole configuration. Durations are time.Duration values; in the file they are
// strings such as "30s" or "5m".
type Config struct {
	// File is the path the configuration was loaded from; empty for the defaults.
	File string `yaml:"-"`

	// MCPServers are the upstream servers hosts may open sessions to, by name. When the file has
	// no mcpServers key the map holds the demo server alone (see Default). VS Code's name for the
	// block, "servers", is accepted too.
	MCPServers map[string]*Server `yaml:"mcpServers"`

	Listen   Listen   `yaml:"listen"`
	TLS      TLS      `yaml:"tls"`
	Auth     Auth     `yaml:"auth"`
	Limits   Limits   `yaml:"limits"`
	Sessions Sessions `yaml:"sessions"`
	Pending  Pending  `yaml:"pending"`
	// OAuth configures upstream OAuth: the token store and the OAuth client's safety settings.
	OAuth OAuth `yaml:"oauth"`
	// Audit configures the audit log (policy.go); RateLimits bound each principal's calls.
	Audit      Audit      `yaml:"audit"`
	RateLimits RateLimits `yaml:"rateLimits"`
	// State says where the bridge keeps what must outlive its process (state.go).
	State State `yaml:"state"`
	// Console configures the operator console served under /console/ on the HTTP listener.
	Console Console `yaml:"console"`

	// AllowUnconfiguredServers lets the core open sessions to servers described by the caller (a
	// command to run or a URL) instead of named in the file. Off by default: with it on, anyone
	// who can reach the API could make the bridge run programs.
	AllowUnconfiguredServers bool `yaml:"allowUnconfiguredServers"`

	// positions maps key paths (e.g. "mcpServers.foo.url") to where they were in the file.
	positions map[string]position
	// serversKey is the key the servers block had in the file: "mcpServers", or VS Code's "servers".
	serversKey string
}

// serverPath is the key path of the named server, as the file wrote it.
func (c *Config) serverPath(name string) string {
	key := c.serversKey
	if key == "" {
		key = "mcpServers"
	}
	return joinPath(key, name)
}

// Server is one upstream MCP server.
type Server struct {
	// Name is the server's key under mcpServers.
	Name string `yaml:"-"`

	// Command, Args, Env and Cwd describe a stdio server: the program to run, its arguments,
	// its environment variables (added to a minimal inherited environment: PATH, HOME, LANG,
	// TMPDIR; the bridge's other variables are not passed down) and its working directory
	// (relative paths are relative to the config file's directory).
	Command string            `yaml:"command"`
	Args    []string          `yaml:"args"`
	Env     map[string]string `yaml:"env"`
	Cwd     string            `yaml:"cwd"`

	// URL and Headers describe an HTTP server: its endpoint (http or https) and headers sent
	// with every request, such as Authorization.
	URL     string            `yaml:"url"`
	Headers map[string]string `yaml:"headers"`

	// H2C speaks HTTP/2 without TLS to an http:// URL (prior knowledge), so that every session to the
	// server shares one connection instead of holding its own. Only for servers that accept it; an
	// https:// URL negotiates HTTP/2 by itself.
	H2C bool `yaml:"h2c"`

	// Transport is stdio, streamable-http or sse. When the file does not say, it is stdio for a
	// command and streamable-http for a url. The key "type" is accepted as a synonym (with
	// "http" meaning streamable-http), as desktop hosts write it.
	Transport Transport `yaml:"transport"`

	// ProtocolVersion, if set, pins the MCP protocol version the bridge offers this server
	// (one the SDK supports, e.g. "2025-11-25" or "2026-07-28"); empty negotiates the newest.
	ProtocolVersion string `yaml:"protocolVersion"`

	// Roots are the roots sessions to this server expose unless the host supplies its own.
	Roots []Root `yaml:"roots"`

	// Description is free text shown by ListServers.
	Description string `yaml:"description"`

	// Restart is the supervision policy for a stdio server that crashes.
	Restart Restart `yaml:"restart"`

	// RequestTimeout bounds the wait for the server's answer to each request (0: the core's
	// default, 30s); progress notifications restart it, and it does not run while the server
	// waits for a host's answer. MaxRequestTimeout bounds one call's total however often progress
	// restarts it (0: the core's default, 30m). A host's shorter deadline wins.
	RequestTimeout    time.Duration `yaml:"requestTimeout"`
	MaxRequestTimeout time.Duration `yaml:"maxRequestTimeout"`

	// Auth gives an HTTP server credentials: OAuth, a bearer token or headers from files or the
	// environment (see upstream_auth.go).
	Auth *ServerAuth `yaml:"auth"`

	// AllowedPrincipals are the principals (names or globs) who may see and use the server; empty
	// allows everyone. Tools, Prompts and Resources filter what sessions may list and use (policy.go).
	AllowedPrincipals []string    `yaml:"allowedPrincipals"`
	Tools             *ItemFilter `yaml:"tools"`
	Prompts           *ItemFilter `yaml:"prompts"`
	Resources         *ItemFilter `yaml:"resources"`

	// Approvers may approve the calls of tools that match Tools.Approve, and ApprovalExpiry is how long
	// such a call waits for a decision (0: 10m). See docs/adr/0080-approvals.md.
	Approvers      *Approvers    `yaml:"approvers"`
	ApprovalExpiry time.Duration `yaml:"approvalExpiry"`

	// typeAlias holds the desktop-host "type" key until validation folds it into Transport.
	typeAlias string
}

// Root is a root (MCP spec "Client features: Roots"): a file:// URI and an optional name.
type Root struct {
	URI  string `yaml:"uri"`
	Name string `yaml:"name"`
}

// Restart is the backoff policy for restarting a crashed stdio server: after a crash wait
// InitialBackoff, doubling up to MaxBackoff, at most MaxRestarts times in a row without a
// successful handshake (0 means never restart).
type Restart struct {
	MaxRestarts    int           `yaml:"maxRestarts"`
	InitialBackoff time.Duration `yaml:"initialBackoff"`
	MaxBackoff     time.Duration `yaml:"maxBackoff"`
}

// Listen says where the bridge serves. An empty address turns that listener off.
type Listen struct {
	// GRPC is the TCP address of the gRPC server (host:port).
	GRPC string `yaml:"grpc"`
	// HTTP is the TCP address of the REST gateway, /healthz and /openapi.json (host:port).
	HTTP string `yaml:"http"`
	// GRPCSocket, if set, is a Unix socket path where the gRPC server also listens.
	GRPCSocket string `yaml:"grpcSocket"`
	// Admin, if set, is the TCP address of the admin HTTP server: /metrics and /healthz, plain HTTP,
	// no authentication.
	Admin string `yaml:"admin"`
	// AllowedHosts are the names, besides loopback names and IP literals, that the HTTP and admin listeners
	// answer: a request whose Host is another name is refused (421), against DNS rebinding. An entry is a
	// name ("bridge.example.com"), a wildcard ("*.example.com") or "*" (any name; only with authentication
	// configured). Without authentication the check is always on; with it, only when this is set
	// (HostCheck, docs/adr/0090-the-door.md).
	AllowedHosts []string `yaml:"allowedHosts"`
}

// HostCheck reports whether the HTTP and admin listeners refuse a Host that is not theirs: always without
// authentication (the principal is then ambient, like a cookie, and a rebound page would act as it), and with
// authentication when listen.allowedHosts is set.
func (c *Config) HostCheck() bool {
	return !c.Auth.Configured() || len(c.Listen.AllowedHosts) > 0
}

// Configured reports whether any source of principals is configured (tokensFile, oidc, mtls.principalFrom);
// without one every caller is the principal "local".
func (a Auth) Configured() bool {
	return a.TokensFile != "" || a.OIDC != nil || a.MTLS.PrincipalFrom != ""
}

// TLS turns on TLS for both TCP listeners when CertFile and KeyFile are set, and mutual TLS
// (clients must present a certificate signed by a CA in ClientCAFile) when ClientCAFile is set
// too. Relative paths are relative to the config file's directory.
type TLS struct {
	CertFile     string `yaml:"certFile"`
	KeyFile      string `yaml:"keyFile"`
	ClientCAFile string `yaml:"clientCAFile"`
}

// Enabled reports whether the listeners serve TLS.
func (t TLS) Enabled() bool { return t.CertFile != "" }

// MutualTLS reports whether clients must present a certificate.
func (t TLS) MutualTLS() bool { return t.ClientCAFile != "" }

// Auth configures where principals come from: bearer tokens, an OIDC identity provider, client
// certificates.
type Auth struct {
	// TokensFile, if set, names the file of accepted bearer tokens and the principal each one
	// authenticates (see LoadTokens for the format). Relative to the config file's directory.
	TokensFile string `yaml:"tokensFile"`

	// Tokens holds the tokens read from TokensFile by Load; nil when TokensFile is empty.
	Tokens Tokens `yaml:"-"`

	// OIDC, if set, also accepts JWT bearer tokens of an OpenID Connect identity provider; MTLS maps
	// client certificates to principals (policy.go).
	OIDC *OIDC `yaml:"oidc"`
	MTLS MTLS  `yaml:"mtls"`
}

// Limits bound what hosts and servers can make the bridge hold. Zero means the default; see
// docs/configuration.md for the defaults.
type Limits struct {
	// MaxMessageBytes caps one gRPC message, one REST body and one MCP frame from a server.
	MaxMessageBytes int `yaml:"maxMessageBytes"`
	// MaxSessions caps the open sessions of the whole bridge.
	MaxSessions int `yaml:"maxSessions"`
	// MaxSessionsPerPrincipal caps the open sessions one principal may own.
	MaxSessionsPerPrincipal int `yaml:"maxSessionsPerPrincipal"`
	// MaxPendingPerSession caps the server-initiated requests waiting for a host answer in one session.
	MaxPendingPerSession int `yaml:"maxPendingPerSession"`
	// MaxStdioProcesses caps the stdio server processes running at once.
	MaxStdioProcesses int `yaml:"maxStdioProcesses"`
	// MaxHTTPConnections caps the connections the HTTP listener holds; over it, the connection quiet longest
	// (no request in flight) is closed to make room. 0: half the process's descriptor limit, at least 64.
	MaxHTTPConnections int `yaml:"maxHTTPConnections"`
	// ApprovalHistory bounds the approval requests that ended kept for ListApprovalHistory (0: 1000), and
	// ApprovalHistoryAge how long each is kept (0: 24h) — docs/adr/0091.
	ApprovalHistory    int           `yaml:"approvalHistory"`
	ApprovalHistoryAge time.Duration `yaml:"approvalHistoryAge"`
	// KeptResultsBytes caps the outcomes of completed tool calls the whole bridge keeps for resumed calls
	// (docs/adr/0093); the oldest are evicted first. 0 means the default, 64 MiB.
	KeptResultsBytes int `yaml:"keptResultsBytes"`
	// KeptResultsTTL is how long a completed tool call's outcome is kept for a resumed call. 0 means the
	// default, 5m.
	KeptResultsTTL time.Duration `yaml:"keptResultsTTL"`
	// DescriptorReserve is how many of the process's descriptors are kept for live sessions, health
	// checks and new clients: new sessions are refused (DESCRIPTOR_LIMIT) while fewer are left. 0: a tenth
	// of the descriptor limit, at least 64.
	DescriptorReserve int `yaml:"descriptorReserve"`
	// OpenTimeout bounds opening a session (connect and handshake), whatever the host's deadline.
	OpenTimeout time.Duration `yaml:"openTimeout"`
	// MaxEventStreamsPerPrincipal caps the WatchEvents streams one principal may hold open at once.
	MaxEventStreamsPerPrincipal int `yaml:"maxEventStreamsPerPrincipal"`
}

// Sessions configures session lifetime.
type Sessions struct {
	// IdleTimeout closes a session no host has used (no call, no attached stream) for this long.
	// "0s" keeps idle sessions forever.
	IdleTimeout time.Duration `yaml:"idleTimeout"`
	// ClosedRetention keeps a closed session visible (GetSession: CLOSED and why) this long before
	// it is 404 ("0s": the core's default, 5m).
	ClosedRetention time.Duration `yaml:"closedRetention"`
	// Replica names this bridge among the replicas of a shared service behind a proxy; it is embedded
	// in every session id ("s-<replica>.<random>") so that the proxy can send a session's calls to the
	// replica that owns it (docs/scaling.md). A DNS label: lower-case letters, digits and '-', at most
	// 63. Empty (the default) for a single bridge.
	Replica string `yaml:"replica"`
	// Peers are the gRPC addresses (host:port) of the replicas of a shared service, this one included or
	// not; a host name stands for every address it resolves to (a headless Service's name). ListSessions
	// asks each for the caller's sessions there, forwarding the caller's bearer token (docs/scaling.md).
	// Plaintext gRPC only: with tls set, peers are refused.
	Peers []string `yaml:"peers"`
}

// Pending configures how long a server-initiated request waits for a host's answer before the
// bridge answers it by policy (sampling: error, elicitation: cancel, roots: the configured roots).
type Pending struct {
	SamplingTimeout    time.Duration `yaml:"samplingTimeout"`
	ElicitationTimeout time.Duration `yaml:"elicitationTimeout"`
	RootsTimeout       time.Duration `yaml:"rootsTimeout"`
}

// Defaults of the bridge settings. docs/configuration.md lists them too; keep both in step.
const (
	DefaultGRPCAddr = "127.0.0.1:50051"
	DefaultHTTPAddr = "127.0.0.1:8080"
	// The limits, deadlines and restart policy are the MCP client core's: it owns those defaults.
	DefaultMaxMessageBytes         = mcpcore.DefaultMaxMessageBytes
	DefaultMaxSessions             = mcpcore.DefaultMaxSessions
	DefaultMaxSessionsPerPrincipal = mcpcore.DefaultMaxSessionsPerOwner
	DefaultMaxPendingPerSession    = mcpcore.DefaultMaxPendingPerSession
	DefaultMaxStdioProcesses       = mcpcore.DefaultMaxStdioProcesses
	DefaultOpenTimeout             = mcpcore.DefaultOpenTimeout
	// DefaultMaxEventStreamsPerPrincipal is the default of limits.maxEventStreamsPerPrincipal.
	DefaultMaxEventStreamsPerPrincipal = 64
	DefaultIdleTimeout                 = 30 * time.Minute
	DefaultSamplingTimeout             = mcpcore.DefaultSamplingTimeout
	DefaultElicitationTimeout          = mcpcore.DefaultElicitationTimeout
	DefaultRootsTimeout                = mcpcore.DefaultRootsTimeout
	DefaultMaxRestarts                 = mcpcore.DefaultMaxRestarts
	DefaultInitialBackoff              = mcpcore.DefaultInitialBackoff
	DefaultMaxBackoff                  = mcpcore.DefaultMaxBackoff
	// DefaultAuthorizationTimeout is the default of oauth.authorizationTimeout.
	DefaultAuthorizationTimeout = mcpcore.DefaultAuthorizationTimeout
)

// newConfig returns a Config holding every default except the servers.
func newConfig() *Config {
	return &Config{
		Listen: Listen{GRPC: DefaultGRPCAddr, HTTP: DefaultHTTPAddr},
		Limits: Limits{
			MaxMessageBytes:             DefaultMaxMessageBytes,
			MaxSessions:                 DefaultMaxSessions,
			MaxSessionsPerPrincipal:     DefaultMaxSessionsPerPrincipal,
			MaxPendingPerSession:        DefaultMaxPendingPerSession,
			MaxStdioProcesses:           DefaultMaxStdioProcesses,
			OpenTimeout:                 DefaultOpenTimeout,
			MaxEventStreamsPerPrincipal: DefaultMaxEventStreamsPerPrincipal,
		},
		Sessions: Sessions{IdleTimeout: DefaultIdleTimeout},
		Pending: Pending{
			SamplingTimeout:    DefaultSamplingTimeout,
			ElicitationTimeout: DefaultElicitationTimeout,
			RootsTimeout:       DefaultRootsTimeout,
		},
		positions: map[string]position{},
	}
}

// newServer returns a Server holding the per-server defaults; the decoder calls it for every
// entry of mcpServers before filling in the keys the file sets.
func newServer() *Server {
	return &Server{Restart: Restart{
		MaxRestarts:    DefaultMaxRestarts,
		InitialBackoff: DefaultInitialBackoff,
		MaxBackoff:     DefaultMaxBackoff,
	}}
}

// Default returns the configuration used when no file is given: the bridge defaults and one
// server, "demo", which runs this program's own demo-server subcommand over stdio.
func Default() *Config {
	c := newConfig()
	c.MCPServers = map[string]*Server{DemoServerName: DemoServer()}
	return c
}

// DemoServer returns the built-in demo server entry: the running executable with the argument
// demo-server. If the executable's path cannot be found it falls back to "mcp-bridge" on PATH.
func DemoServer() *Server {
	exe, err := os.Executable()
	if err != nil {
		exe = "mcp-bridge"
	}
	s := newServer()
	s.Name = DemoServerName
	s.Command = exe
	s.Args = []string{"demo-server"}
	s.Transport = TransportStdio
	s.Description = "built-in demo MCP server (mcp-bridge demo-server)"
	return s
}

// ServerNames returns the configured server names in the order of the file (sorted by name
// for servers that did not come from a file).
func (c *Config) ServerNames() []string {
	names := make([]string, 0, len(c.MCPServers))
	for name := range c.MCPServers {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		pa, pb := c.positions[c.serverPath(a)], c.positions[c.serverPath(b)]
		if d := cmp.Or(cmp.Compare(pa.line, pb.line), cmp.Compare(pa.column, pb.column)); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	return names
}

// Server returns the configured server with the given name.
func (c *Config) Server(name string) (*Server, bool) {
	s, ok := c.MCPServers[name]
	return s, ok
}

// Tokens maps bearer tokens to the principal each authenticates.
type Tokens map[string]string

// Lookup returns the principal of token. It compares against every token in constant time per
// token, so that the time taken does not reveal how much of a guess was right.
func (t Tokens) Lookup(token string) (principal string, ok bool) {
	for tok, p := range t {
		if subtle.ConstantTimeCompare([]byte(tok), []byte(token)) == 1 {
			principal, ok = p, true
		}
	}
	return principal, ok
}
