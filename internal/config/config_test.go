package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var ignoreUnexported = cmpopts.IgnoreUnexported(Config{}, Server{})

// writeFile writes content to name in a fresh directory and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func defaultRestart() Restart {
	return Restart{MaxRestarts: DefaultMaxRestarts, InitialBackoff: DefaultInitialBackoff, MaxBackoff: DefaultMaxBackoff}
}

func TestDefault(t *testing.T) {
	c := Default()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	want := &Server{
		Name:        "demo",
		Command:     exe,
		Args:        []string{"demo-server"},
		Transport:   TransportStdio,
		Description: "built-in demo MCP server (mcp-bridge demo-server)",
		Restart:     defaultRestart(),
	}
	if diff := cmp.Diff(map[string]*Server{"demo": want}, c.MCPServers, ignoreUnexported); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	if !cmp.Equal(c.Listen, Listen{GRPC: "127.0.0.1:50051", HTTP: "127.0.0.1:8080"}) {
		t.Errorf("listen = %+v", c.Listen)
	}
	if c.AllowUnconfiguredServers {
		t.Error("unconfigured servers allowed by default")
	}
	if err := c.Validate(); err != nil {
		t.Errorf("default config does not validate: %v", err)
	}
	got, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c, got, ignoreUnexported); diff != "" {
		t.Errorf("Load(\"\") differs from Default() (-want +got):\n%s", diff)
	}
}

// A Claude Desktop claude_desktop_config.json loads as it is.
func TestClaudeDesktopConfig(t *testing.T) {
	path := writeFile(t, "claude_desktop_config.json", `{
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"]
    },
    "github": {
      "command": "docker",
      "args": ["run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"],
      "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_example"}
    },
    "remote": {
      "url": "https://mcp.example.com/mcp",
      "headers": {"Authorization": "Bearer abc"}
    }
  }
}`)
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]*Server{
		"filesystem": {
			Name: "filesystem", Command: "npx", Transport: TransportStdio, Restart: defaultRestart(),
			Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"},
		},
		"github": {
			Name: "github", Command: "docker", Transport: TransportStdio, Restart: defaultRestart(),
			Args: []string{"run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", "ghcr.io/github/github-mcp-server"},
			Env:  map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_example"},
		},
		"remote": {
			Name: "remote", URL: "https://mcp.example.com/mcp", Transport: TransportStreamableHTTP, Restart: defaultRestart(),
			Headers: map[string]string{"Authorization": "Bearer abc"},
		},
	}
	if diff := cmp.Diff(want, c.MCPServers, ignoreUnexported); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"filesystem", "github", "remote"}, c.ServerNames()); diff != "" {
		t.Errorf("ServerNames (-want +got):\n%s", diff)
	}
	if c.File != path {
		t.Errorf("File = %q, want %q", c.File, path)
	}
}

// VS Code and Claude Code write the transport as "type".
func TestTypeSynonym(t *testing.T) {
	c, err := Parse("mcp.json", []byte("{\n\t\"mcpServers\": {\n\t\t\"a\": {\"type\": \"http\", \"url\": \"http://localhost:3000/mcp\"},\n\t\t\"b\": {\"type\": \"sse\", \"url\": \"https://x.example/sse\"},\n\t\t\"c\": {\"type\": \"stdio\", \"command\": \"server\"}\n\t}\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Transport{}
	for name, s := range c.MCPServers {
		got[name] = s.Transport
	}
	want := map[string]Transport{"a": TransportStreamableHTTP, "b": TransportSSE, "c": TransportStdio}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("transports (-want +got):\n%s", diff)
	}
}

func TestFullYAML(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"cert.pem", "key.pem", "ca.pem"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "tokens.txt"), []byte("# comment\ntok-alice alice\n\ntok-bob  bob\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "work"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MCPB_TEST_KEY", "s3cret")
	path := filepath.Join(dir, "bridge.yaml")
	err := os.WriteFile(path, []byte(`# mcp-bridge config
mcpServers:
  local:
    command: ./bin/server
    args: [--verbose]
    env:
      PORT: 8080
      API_KEY: ${MCPB_TEST_KEY}
      MODE: ${MCPB_TEST_UNSET:-dev}
    cwd: work
    protocolVersion: "2025-11-25"
    roots:
      - uri: file:///srv/data
        name: data
    description: a local server
    restart:
      maxRestarts: 0
      initialBackoff: 1s
      maxBackoff: 1m
  remote:
    url: https://mcp.example.com/sse
    transport: sse
    headers:
      Authorization: Bearer ${MCPB_TEST_KEY}
listen:
  grpc: 0.0.0.0:9000
  http: ""
  grpcSocket: run/bridge.sock
tls:
  certFile: cert.pem
  keyFile: key.pem
  clientCAFile: ca.pem
auth:
  tokensFile: tokens.txt
limits:
  maxMessageBytes: 1_048_576
  maxSessions: 10
  maxSessionsPerPrincipal: 0
  maxPendingPerSession: 7
  maxStdioProcesses: 3
sessions:
  idleTimeout: 0s
pending:
  samplingTimeout: 2m
  elicitationTimeout: 90s
  rootsTimeout: 5s
allowUnconfiguredServers: true
`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		File: path,
		MCPServers: map[string]*Server{
			"local": {
				Name:            "local",
				Command:         filepath.Join(dir, "work", "bin", "server"),
				Args:            []string{"--verbose"},
				Env:             map[string]string{"PORT": "8080", "API_KEY": "s3cret", "MODE": "dev"},
				Cwd:             filepath.Join(dir, "work"),
				Transport:       TransportStdio,
				ProtocolVersion: "2025-11-25",
				Roots:           []Root{{URI: "file:///srv/data", Name: "data"}},
				Description:     "a local server",
				Restart:         Restart{MaxRestarts: 0, InitialBackoff: time.Second, MaxBackoff: time.Minute},
			},
			"remote": {
				Name:      "remote",
				URL:       "https://mcp.example.com/sse",
				Transport: TransportSSE,
				Headers:   map[string]string{"Authorization": "Bearer s3cret"},
				Restart:   defaultRestart(),
			},
		},
		Listen: Listen{GRPC: "0.0.0.0:9000", HTTP: "", GRPCSocket: filepath.Join(dir, "run", "bridge.sock")},
		TLS: TLS{
			CertFile:     filepath.Join(dir, "cert.pem"),
			KeyFile:      filepath.Join(dir, "key.pem"),
			ClientCAFile: filepath.Join(dir, "ca.pem"),
		},
		Auth: Auth{TokensFile: filepath.Join(dir, "tokens.txt"), Tokens: Tokens{"tok-alice": "alice", "tok-bob": "bob"}},
		Limits: Limits{
			MaxMessageBytes:             1 << 20,
			MaxSessions:                 10,
			MaxSessionsPerPrincipal:     DefaultMaxSessionsPerPrincipal,
			MaxPendingPerSession:        7,
			MaxStdioProcesses:           3,
			OpenTimeout:                 DefaultOpenTimeout,
			MaxEventStreamsPerPrincipal: DefaultMaxEventStreamsPerPrincipal,
		},
		Sessions:                 Sessions{IdleTimeout: 0},
		Pending:                  Pending{SamplingTimeout: 2 * time.Minute, ElicitationTimeout: 90 * time.Second, RootsTimeout: 5 * time.Second},
		AllowUnconfiguredServers: true,
	}
	if diff := cmp.Diff(want, c, ignoreUnexported); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	if !c.TLS.Enabled() || !c.TLS.MutualTLS() {
		t.Errorf("TLS enabled %v, mutual %v", c.TLS.Enabled(), c.TLS.MutualTLS())
	}
}

// A file without mcpServers gets the demo server; an explicit empty block means no servers.
func TestServersBlock(t *testing.T) {
	c, err := Parse("bridge.yaml", []byte("listen:\n  http: 127.0.0.1:0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"demo"}, c.ServerNames()); diff != "" {
		t.Errorf("servers without a block (-want +got):\n%s", diff)
	}
	c, err = Parse("bridge.yaml", []byte("mcpServers: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.MCPServers) != 0 {
		t.Errorf("servers with an empty block: %v", c.ServerNames())
	}
	for _, empty := range []string{"", "# nothing here\n", "---\n"} {
		c, err := Parse("bridge.yaml", []byte(empty))
		if err != nil {
			t.Fatalf("Parse(%q): %v", empty, err)
		}
		if diff := cmp.Diff(Default(), c, ignoreUnexported, cmpopts.IgnoreFields(Config{}, "File")); diff != "" {
			t.Errorf("Parse(%q) is not the default (-want +got):\n%s", empty, diff)
		}
	}
}

func TestFormatSniffing(t *testing.T) {
	for _, tt := range []struct{ name, content string }{
		{"config", `{"mcpServers": {"a": {"command": "x"}}}`},
		{"config.conf", "mcpServers:\n  a:\n    command: x\n"},
		{"config.yml", `{"mcpServers": {"a": {"command": "x"}}}`}, // JSON is YAML too
		{"config", "{mcpServers: {a: {command: x}}}"},             // a YAML flow mapping
		{"config.JSON", "\xef\xbb\xbf{\"mcpServers\": {\"a\": {\"command\": \"x\"}}}"},
	} {
		c, err := Parse(tt.name, []byte(tt.content))
		if err != nil {
			t.Errorf("Parse(%s, %q): %v", tt.name, tt.content, err)
			continue
		}
		if s, ok := c.Server("a"); !ok || s.Command != "x" {
			t.Errorf("Parse(%s, %q): servers %v", tt.name, tt.content, c.ServerNames())
		}
	}
}

func TestLoadMissingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nope.yaml")
	_, err := Load(path)
	var cerr *Error
	if !errors.As(err, &cerr) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Load(missing) = %v, want *Error wrapping fs.ErrNotExist", err)
	}
	if want := path + ": cannot read config file: no such file"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
}

// Every kind of bad input, with the exact one-line message it produces.
func TestParseErrors(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "exists.pem")
	if err := os.WriteFile(existing, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MCPB_TEST_EMPTY", "")
	tests := []struct {
		name    string
		file    string // default c.yaml
		content string
		want    string
	}{
		{
			name:    "bad yaml",
			content: "mcpServers:\n  a:\n    command: x\n   args: [\n",
			want:    "c.yaml:4: invalid YAML: did not find expected key",
		},
		{
			name:    "bad yaml indentation",
			content: "mcpServers:\n  a: {command: x}\n b: 1\n",
			want:    "c.yaml:3: invalid YAML: did not find expected key",
		},
		{
			name:    "bad json",
			file:    "c.json",
			content: "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}\n  }\n}\n",
			want:    `c.json:3:26: invalid JSON: invalid character '}' looking for beginning of object key string`,
		},
		{
			name:    "truncated json",
			file:    "c.json",
			content: "{\"mcpServers\": {\"a\": {\"command\": \"x\"}",
			want:    "c.json:1:38: invalid JSON: unexpected end of input",
		},
		{
			name:    "json trailing data",
			file:    "c.json",
			content: "{\"mcpServers\": {}}\n{}",
			want:    "c.json:2:1: invalid JSON: unexpected data after the top-level value",
		},
		{
			name:    "yaml comments in a json file",
			file:    "c.json",
			content: "# comment\n{}",
			want:    "c.json:1:1: invalid JSON: invalid character '#' looking for beginning of value",
		},
		{
			name:    "unknown top-level key",
			content: "mcpServer:\n  a: {command: x}\n",
			want:    `c.yaml:1:1: mcpServer: unknown key (did you mean "mcpServers"?); the top-level keys are mcpServers, listen, tls, auth, limits, sessions, pending, oauth, audit, rateLimits, state, console, allowUnconfiguredServers`,
		},
		{
			name:    "unknown server key",
			content: "mcpServers:\n  foo:\n    comand: x\n",
			want:    `c.yaml:3:5: mcpServers.foo.comand: unknown key (did you mean "command"?)`,
		},
		{
			name:    "unknown server key in json",
			file:    "c.json",
			content: "{\n  \"mcpServers\": {\n    \"foo\": {\n      \"command\": \"x\",\n      \"autoApprove\": []\n    }\n  }\n}\n",
			want:    `c.json:5:7: mcpServers.foo.autoApprove: unknown key`,
		},
		{
			name:    "unknown nested key",
			content: "limits:\n  maxsessions: 3\n",
			want:    `c.yaml:2:3: limits.maxsessions: unknown key (did you mean "maxSessions"?)`,
		},
		{
			name:    "neither command nor url",
			content: "mcpServers:\n  foo:\n    args: [x]\n",
			want:    `c.yaml:2:3: mcpServers.foo: neither "command" nor "url" is set: a stdio server needs a command, an HTTP server a url`,
		},
		{
			name:    "neither command nor url in json",
			file:    "c.json",
			content: "{\"mcpServers\": {\"foo\": {\"description\": \"x\"}}}",
			want:    `c.json:1:17: mcpServers.foo: neither "command" nor "url" is set: a stdio server needs a command, an HTTP server a url`,
		},
		{
			name:    "empty server",
			content: "mcpServers:\n  foo:\n",
			want:    `c.yaml:2:3: mcpServers.foo: is empty; a server needs a command or a url`,
		},
		{
			name:    "both command and url",
			content: "mcpServers:\n  foo:\n    command: x\n    url: http://h/mcp\n",
			want:    `c.yaml:2:3: mcpServers.foo: both "command" and "url" are set: a server is either a command (stdio) or a url (HTTP)`,
		},
		{
			name:    "bad url scheme",
			content: "mcpServers:\n  foo:\n    url: ftp://h/mcp\n",
			want:    `c.yaml:3:5: mcpServers.foo.url: url "ftp://h/mcp" must start with http:// or https://`,
		},
		{
			name:    "url without host",
			content: "mcpServers:\n  foo:\n    url: http:///mcp\n",
			want:    `c.yaml:3:5: mcpServers.foo.url: url "http:///mcp" has no host`,
		},
		{
			name:    "unparsable url",
			content: "mcpServers:\n  foo:\n    url: \"http://h:port/\"\n",
			want:    `c.yaml:3:5: mcpServers.foo.url: bad url "http://h:port/": parse "http://h:port/": invalid port ":port" after host`,
		},
		{
			name:    "server name with a dot",
			content: "mcpServers:\n  a.b:\n    url: mailto:x\n",
			want:    `c.yaml:3:5: mcpServers["a.b"].url: url "mailto:x" must start with http:// or https://`,
		},
		{
			name:    "bad duration",
			content: "sessions:\n  idleTimeout: 10 minutes\n",
			want:    `c.yaml:2:16: sessions.idleTimeout: bad duration "10 minutes": use a number with a unit, such as "30s", "1m30s" or "500ms"`,
		},
		{
			name:    "duration without unit",
			content: "pending:\n  rootsTimeout: 30\n",
			want:    `c.yaml:2:17: pending.rootsTimeout: must be a duration such as "30s" or "5m", not 30`,
		},
		{
			name:    "negative duration",
			content: "pending:\n  rootsTimeout: -5s\n",
			want:    `c.yaml:2:17: pending.rootsTimeout: duration "-5s" is negative`,
		},
		{
			name:    "zero pending timeout",
			content: "pending:\n  samplingTimeout: 0s\n",
			want:    `c.yaml:2:3: pending.samplingTimeout: must be positive`,
		},
		{
			name:    "unknown transport",
			content: "mcpServers:\n  foo:\n    command: x\n    transport: websocket\n",
			want:    `c.yaml:4:5: mcpServers.foo.transport: unknown transport "websocket": use stdio, streamable-http or sse`,
		},
		{
			name:    "unknown type",
			content: "mcpServers:\n  foo:\n    command: x\n    type: pipe\n",
			want:    `c.yaml:4:5: mcpServers.foo.type: unknown type "pipe": use stdio, http (streamable HTTP) or sse`,
		},
		{
			name:    "type contradicts transport",
			content: "mcpServers:\n  foo:\n    url: http://h/\n    type: sse\n    transport: streamable-http\n",
			want:    `c.yaml:4:5: mcpServers.foo.type: type "sse" contradicts transport "streamable-http"`,
		},
		{
			name:    "stdio transport with a url",
			content: "mcpServers:\n  foo:\n    url: http://h/\n    transport: stdio\n",
			want:    `c.yaml:3:5: mcpServers.foo.url: transport stdio needs a "command", not a url`,
		},
		{
			name:    "http transport with a command",
			content: "mcpServers:\n  foo:\n    command: x\n    transport: sse\n",
			want:    `c.yaml:3:5: mcpServers.foo.command: transport sse needs a "url", not a command`,
		},
		{
			name:    "headers on a command",
			content: "mcpServers:\n  foo:\n    command: x\n    headers: {A: b}\n",
			want:    `c.yaml:4:5: mcpServers.foo.headers: headers apply only to HTTP servers (url), not to a command`,
		},
		{
			name:    "h2c on a command",
			content: "mcpServers:\n  foo:\n    command: x\n    h2c: true\n",
			want:    `c.yaml:4:5: mcpServers.foo.h2c: h2c applies only to HTTP servers (url), not to a command`,
		},
		{
			name:    "h2c on https",
			content: "mcpServers:\n  foo:\n    url: https://h/\n    h2c: true\n",
			want:    `c.yaml:4:5: mcpServers.foo.h2c: h2c applies only to a streamable-http server with an http:// url (https negotiates HTTP/2 by itself)`,
		},
		{
			name:    "h2c on sse",
			content: "mcpServers:\n  foo:\n    url: http://h/\n    transport: sse\n    h2c: true\n",
			want:    `c.yaml:5:5: mcpServers.foo.h2c: h2c applies only to a streamable-http server with an http:// url (https negotiates HTTP/2 by itself)`,
		},
		{
			name:    "env on a url",
			content: "mcpServers:\n  foo:\n    url: http://h/\n    env: {A: b}\n",
			want:    `c.yaml:4:5: mcpServers.foo.env: env applies only to stdio servers (command), not to a url`,
		},
		{
			name:    "bad header name",
			content: "mcpServers:\n  foo:\n    url: http://h/\n    headers: {\"X Bad\": b}\n",
			want:    `c.yaml:4:15: mcpServers.foo.headers["X Bad"]: "X Bad" is not a valid HTTP header name`,
		},
		{
			name:    "duplicate key",
			content: "mcpServers:\n  foo: {command: x}\n  foo: {command: y}\n",
			want:    `c.yaml:3:3: mcpServers.foo: duplicate key`,
		},
		{
			name:    "duplicate key in json",
			file:    "c.json",
			content: "{\"listen\": {\"grpc\": \":1\", \"grpc\": \":2\"}}",
			want:    `c.json:1:27: listen.grpc: duplicate key`,
		},
		{
			name:    "args not a list",
			content: "mcpServers:\n  foo:\n    command: x\n    args: --verbose\n",
			want:    `c.yaml:4:11: mcpServers.foo.args: must be a list, not "--verbose"`,
		},
		{
			name:    "env value a mapping",
			content: "mcpServers:\n  foo:\n    command: x\n    env:\n      A: {b: c}\n",
			want:    `c.yaml:5:10: mcpServers.foo.env.A: must be a string, not a mapping`,
		},
		{
			name:    "mcpServers a list",
			content: "mcpServers:\n  - command: x\n",
			want:    `c.yaml:2:3: mcpServers: must be a mapping, not a list`,
		},
		{
			name:    "top level a list",
			content: "- a\n- b\n",
			want:    `c.yaml:1:1: must be a mapping of keys to values, not a list`,
		},
		{
			name:    "integer expected",
			content: "limits:\n  maxSessions: ten\n",
			want:    `c.yaml:2:16: limits.maxSessions: must be an integer, not "ten"`,
		},
		{
			name:    "float for integer",
			content: "limits:\n  maxSessions: 2.5\n",
			want:    `c.yaml:2:16: limits.maxSessions: must be an integer, not 2.5`,
		},
		{
			name:    "bool expected",
			content: "allowUnconfiguredServers: \"yes\"\n",
			want:    `c.yaml:1:27: allowUnconfiguredServers: must be true or false, not "yes"`,
		},
		{
			name:    "negative limit",
			content: "limits:\n  maxStdioProcesses: -1\n",
			want:    `c.yaml:2:3: limits.maxStdioProcesses: must not be negative (0 means the default)`,
		},
		{
			name:    "tiny message limit",
			content: "limits:\n  maxMessageBytes: 10\n",
			want:    `c.yaml:2:3: limits.maxMessageBytes: must be between 1024 and 1073741824`,
		},
		{
			name:    "unsupported protocol version",
			content: "mcpServers:\n  foo:\n    command: x\n    protocolVersion: 2023-01-01\n",
			want:    `c.yaml:4:5: mcpServers.foo.protocolVersion: unsupported protocol version "2023-01-01": use one of ` + supportedVersions(),
		},
		{
			name:    "root not a file uri",
			content: "mcpServers:\n  foo:\n    command: x\n    roots:\n      - uri: /srv\n",
			want:    `c.yaml:5:9: mcpServers.foo.roots[0]: root uri "/srv" must be a file:// URI`,
		},
		{
			name:    "root unknown key",
			content: "mcpServers:\n  foo:\n    command: x\n    roots:\n      - path: /srv\n",
			want:    `c.yaml:5:9: mcpServers.foo.roots[0].path: unknown key`,
		},
		{
			name:    "max backoff below initial",
			content: "mcpServers:\n  foo:\n    command: x\n    restart: {initialBackoff: 2s, maxBackoff: 1s}\n",
			want:    `c.yaml:4:35: mcpServers.foo.restart.maxBackoff: must be at least initialBackoff (2s)`,
		},
		{
			name:    "negative restarts",
			content: "mcpServers:\n  foo:\n    command: x\n    restart:\n      maxRestarts: -1\n",
			want:    `c.yaml:5:7: mcpServers.foo.restart.maxRestarts: must not be negative (0 means never restart)`,
		},
		{
			name:    "bad listen address",
			content: "listen:\n  grpc: localhost\n",
			want:    `c.yaml:2:3: listen.grpc: bad address "localhost": want host:port, such as 127.0.0.1:8080`,
		},
		{
			name:    "bad admin address",
			content: "listen:\n  admin: 9090\n",
			want:    `c.yaml:2:3: listen.admin: bad address "9090": want host:port, such as 127.0.0.1:8080`,
		},
		{
			name:    "bad listen port",
			content: "listen:\n  http: \"localhost:http8080\"\n",
			want:    `c.yaml:2:3: listen.http: bad port in "localhost:http8080": want a number from 0 to 65535`,
		},
		{
			name:    "same address twice",
			content: "listen:\n  grpc: 127.0.0.1:9000\n  http: 127.0.0.1:9000\n",
			want:    `c.yaml:3:3: listen.http: same address as listen.grpc (127.0.0.1:9000)`,
		},
		{
			name:    "allowed host with a port",
			content: "listen:\n  allowedHosts: [bridge.example.com:8080]\n",
			want:    `c.yaml:2:18: listen.allowedHosts[0]: "bridge.example.com:8080": want a host name without scheme, port or path, such as bridge.example.com or *.example.com`,
		},
		{
			name:    "any host without auth",
			content: "listen:\n  allowedHosts: [a.example, \"*\"]\n",
			want:    `c.yaml:2:29: listen.allowedHosts[1]: "*" admits every name, which without authentication lets any web page act through DNS rebinding: list the bridge's names, or configure auth (tokensFile, oidc or mtls.principalFrom)`,
		},
		{
			name:    "every listener off",
			content: "listen:\n  grpc: \"\"\n  http: \"\"\n",
			want:    `c.yaml:1:1: listen: every listener is off: set listen.grpc, listen.http or listen.grpcSocket`,
		},
		{
			name:    "key without cert",
			content: "tls:\n  keyFile: " + existing + "\n",
			want:    `c.yaml:2:3: tls.keyFile: set certFile too: TLS needs both a certificate and its key`,
		},
		{
			name:    "client CA without cert",
			content: "tls:\n  clientCAFile: " + existing + "\n",
			want:    `c.yaml:2:3: tls.clientCAFile: mutual TLS needs certFile and keyFile for the server's own certificate`,
		},
		{
			name:    "missing cert file",
			content: "tls:\n  certFile: missing.pem\n  keyFile: " + existing + "\n",
			want:    `c.yaml:2:3: tls.certFile: ` + filepath.Join(dir, "missing.pem") + `: cannot read: no such file`,
		},
		{
			name:    "missing tokens file",
			content: "auth:\n  tokensFile: tokens.txt\n",
			want:    `c.yaml:2:3: auth.tokensFile: ` + filepath.Join(dir, "tokens.txt") + `: cannot read: no such file`,
		},
		{
			name:    "unset environment variable",
			content: "mcpServers:\n  foo:\n    command: x\n    env:\n      KEY: ${MCPB_TEST_NEVER_SET}\n",
			want:    `c.yaml:5:7: mcpServers.foo.env.KEY: environment variable MCPB_TEST_NEVER_SET is not set (write ${MCPB_TEST_NEVER_SET:-default} to allow that)`,
		},
		{
			name:    "bad variable reference",
			content: "mcpServers:\n  foo:\n    url: http://h/\n    headers:\n      A: ${1X}\n",
			want:    `c.yaml:5:7: mcpServers.foo.headers.A: bad variable reference ${1X}: names are letters, digits and '_', not starting with a digit`,
		},
		{
			name:    "unterminated variable reference",
			content: "mcpServers:\n  foo:\n    url: http://h/${HOST\n",
			want:    `c.yaml:3:5: mcpServers.foo.url: unterminated "${" in "${HOST"`,
		},
		{
			name:    "cwd not a directory",
			content: "mcpServers:\n  foo:\n    command: x\n    cwd: exists.pem\n",
			want:    `c.yaml:4:5: mcpServers.foo.cwd: ` + existing + ` is not a directory`,
		},
		{
			name:    "two yaml documents",
			content: "mcpServers: {}\n---\nlisten: {}\n",
			want:    `c.yaml:2: more than one YAML document; a config file holds exactly one`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := tt.file
			if file == "" {
				file = "c.yaml"
			}
			_, err := Parse(filepath.Join(dir, file), []byte(tt.content))
			if err == nil {
				t.Fatal("Parse succeeded, want an error")
			}
			var cerr *Error
			if !errors.As(err, &cerr) {
				t.Fatalf("error %v is %T, not *Error", err, err)
			}
			got := strings.TrimPrefix(err.Error(), dir+string(filepath.Separator))
			if got != tt.want {
				t.Errorf("error\n got: %s\nwant: %s", got, tt.want)
			}
			if strings.Contains(got, "\n") {
				t.Errorf("error spans lines: %q", got)
			}
		})
	}
}

func supportedVersions() string {
	return strings.Join(mcp.SupportedProtocolVersions(), ", ")
}

// ListServers lists servers in configuration order, so ServerNames keeps the file's order.
func TestServerNamesInFileOrder(t *testing.T) {
	for _, tt := range []struct{ file, content string }{
		{"c.yaml", "mcpServers:\n  zeta: {command: z}\n  alpha: {command: a}\n  mid: {url: 'http://m/'}\n"},
		{"c.json", `{"mcpServers": {"zeta": {"command": "z"}, "alpha": {"command": "a"}, "mid": {"url": "http://m/"}}}`},
	} {
		c, err := Parse(tt.file, []byte(tt.content))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"zeta", "alpha", "mid"}, c.ServerNames()); diff != "" {
			t.Errorf("%s: ServerNames (-want +got):\n%s", tt.file, diff)
		}
	}
}

// A VS Code .vscode/mcp.json names the block "servers".
func TestVSCodeConfig(t *testing.T) {
	c, err := Parse("mcp.json", []byte(`{
  "servers": {
    "memory": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
    "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/"}
  }
}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"memory", "github"}, c.ServerNames()); diff != "" {
		t.Errorf("servers (-want +got):\n%s", diff)
	}
	if c.MCPServers["github"].Transport != TransportStreamableHTTP {
		t.Errorf("github transport = %q", c.MCPServers["github"].Transport)
	}
	for _, tt := range []struct{ content, want string }{
		{
			content: `{"servers": {"a": {"type": "stdio"}}}`,
			want:    `mcp.json:1:14: servers.a: neither "command" nor "url" is set: a stdio server needs a command, an HTTP server a url`,
		},
		{
			content: `{"inputs": [{"id": "key", "type": "promptString"}], "servers": {}}`,
			want:    `mcp.json:1:12: inputs: VS Code input variables are not supported: remove inputs and write ${VAR} to take a value from the environment`,
		},
		{
			content: `{"servers": {}, "mcpServers": {}}`,
			want:    `mcp.json:1:17: mcpServers: both servers and mcpServers are set; keep one`,
		},
		{
			content: `{"mcpServers": {}, "servers": {}}`,
			want:    `mcp.json:1:31: servers: both servers and mcpServers are set; keep one`,
		},
	} {
		_, err := Parse("mcp.json", []byte(tt.content))
		if err == nil || err.Error() != tt.want {
			t.Errorf("Parse(%s)\n got: %v\nwant: %s", tt.content, err, tt.want)
		}
	}
}

// Issue 31, item 4: limits.maxStdioProcesses has a ceiling below the Go runtime's thread limit, checked
// at load, naming the key.
func TestMaxStdioProcessesCeiling(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bridge.yaml")
	if err := os.WriteFile(path, []byte("limits:\n  maxStdioProcesses: 10000\nmcpServers:\n  a:\n    command: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if err == nil || !strings.Contains(err.Error(), "limits.maxStdioProcesses") || !strings.Contains(err.Error(), "thread") {
		t.Fatalf("maxStdioProcesses 10000: %v, want an error naming the key and the thread limit", err)
	}
}
