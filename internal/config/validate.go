package config

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-bridge/mcp-bridge/internal/door"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// Bounds on settings that would make the bridge useless if set too small or too large.
const (
	minMessageBytes = 1 << 10
	maxMessageBytes = 1 << 30
	maxNameLength   = 128
)

// Validate checks the whole configuration and returns the first problem as an *Error. It also
// settles each server's transport: the explicit one, the "type" synonym, or the one its command
// or url implies. Load calls it; callers that change a Config afterwards (flags) may call it again.
func (c *Config) Validate() error {
	for _, name := range c.ServerNames() {
		if err := c.validateServer(name, c.MCPServers[name]); err != nil {
			return err
		}
		if err := c.validateServerAuth(c.serverPath(name), c.MCPServers[name]); err != nil {
			return err
		}
	}
	if err := c.validateListen(); err != nil {
		return err
	}
	if err := c.validateTLS(); err != nil {
		return err
	}
	if c.Auth.TokensFile != "" {
		if err := checkFile(c.Auth.TokensFile); err != nil {
			return c.errorAt("auth.tokensFile", err.Error())
		}
	}
	if err := c.validateOAuth(); err != nil {
		return err
	}
	if err := c.validateReplica(); err != nil {
		return err
	}
	if err := c.validatePolicy(); err != nil {
		return err
	}
	if err := c.validateState(); err != nil {
		return err
	}
	if err := c.validateConsole(); err != nil {
		return err
	}
	return c.validateLimits()
}

// transportSynonyms maps the values desktop hosts write in "type" (and "transport") to ours.
var transportSynonyms = map[string]Transport{
	"stdio":           TransportStdio,
	"streamable-http": TransportStreamableHTTP,
	"streamableHttp":  TransportStreamableHTTP,
	"http":            TransportStreamableHTTP,
	"sse":             TransportSSE,
}

func (c *Config) validateServer(name string, s *Server) error {
	path := c.serverPath(name)
	if name == "" || len(name) > maxNameLength || strings.ContainsFunc(name, unicode.IsControl) {
		return c.errorAt(path, fmt.Sprintf("server names must be 1 to %d printable characters", maxNameLength))
	}

	// The transport: "transport", or the desktop hosts' "type", or inferred.
	if s.typeAlias != "" {
		t, ok := transportSynonyms[s.typeAlias]
		if !ok {
			return c.errorAt(joinPath(path, "type"), fmt.Sprintf("unknown type %q: use stdio, http (streamable HTTP) or sse", s.typeAlias))
		}
		if s.Transport != "" && transportSynonyms[string(s.Transport)] != t {
			return c.errorAt(joinPath(path, "type"), fmt.Sprintf("type %q contradicts transport %q", s.typeAlias, s.Transport))
		}
		s.Transport, s.typeAlias = t, ""
	}
	if s.Transport != "" {
		t, ok := transportSynonyms[string(s.Transport)]
		if !ok {
			return c.errorAt(joinPath(path, "transport"), fmt.Sprintf("unknown transport %q: use stdio, streamable-http or sse", s.Transport))
		}
		s.Transport = t
	}
	switch {
	case s.Command == "" && s.URL == "":
		return c.errorAt(path, `neither "command" nor "url" is set: a stdio server needs a command, an HTTP server a url`)
	case s.Command != "" && s.URL != "":
		return c.errorAt(path, `both "command" and "url" are set: a server is either a command (stdio) or a url (HTTP)`)
	case s.Transport == "" && s.Command != "":
		s.Transport = TransportStdio
	case s.Transport == "":
		s.Transport = TransportStreamableHTTP
	}

	if s.Transport == TransportStdio {
		if s.Command == "" {
			return c.errorAt(joinPath(path, "url"), `transport stdio needs a "command", not a url`)
		}
		if len(s.Headers) > 0 {
			return c.errorAt(joinPath(path, "headers"), "headers apply only to HTTP servers (url), not to a command")
		}
		if s.H2C {
			return c.errorAt(joinPath(path, "h2c"), "h2c applies only to HTTP servers (url), not to a command")
		}
		for k, v := range s.Env {
			if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0) {
				return c.errorAt(joinPath(joinPath(path, "env"), k), "environment variable names must be non-empty without '=' or NUL, values without NUL")
			}
		}
		if s.Cwd != "" {
			if fi, err := os.Stat(s.Cwd); err != nil || !fi.IsDir() {
				return c.errorAt(joinPath(path, "cwd"), fmt.Sprintf("%s is not a directory", s.Cwd))
			}
		}
	} else {
		if s.URL == "" {
			return c.errorAt(joinPath(path, "command"), fmt.Sprintf("transport %s needs a \"url\", not a command", s.Transport))
		}
		switch {
		case len(s.Args) > 0:
			return c.errorAt(joinPath(path, "args"), "args apply only to stdio servers (command), not to a url")
		case len(s.Env) > 0:
			return c.errorAt(joinPath(path, "env"), "env applies only to stdio servers (command), not to a url")
		case s.Cwd != "":
			return c.errorAt(joinPath(path, "cwd"), "cwd applies only to stdio servers (command), not to a url")
		}
		if err := checkURL(s.URL); err != nil {
			return c.errorAt(joinPath(path, "url"), err.Error())
		}
		if s.H2C && (s.Transport != TransportStreamableHTTP || !strings.HasPrefix(strings.ToLower(s.URL), "http://")) {
			return c.errorAt(joinPath(path, "h2c"), "h2c applies only to a streamable-http server with an http:// url (https negotiates HTTP/2 by itself)")
		}
		for k, v := range s.Headers {
			if !validHeaderName(k) {
				return c.errorAt(joinPath(joinPath(path, "headers"), k), fmt.Sprintf("%q is not a valid HTTP header name", k))
			}
			if strings.ContainsAny(v, "\r\n\x00") {
				return c.errorAt(joinPath(joinPath(path, "headers"), k), "header values must not contain line breaks or NUL")
			}
		}
	}

	if s.ProtocolVersion != "" && !slices.Contains(mcp.SupportedProtocolVersions(), s.ProtocolVersion) {
		return c.errorAt(joinPath(path, "protocolVersion"), fmt.Sprintf("unsupported protocol version %q: use one of %s",
			s.ProtocolVersion, strings.Join(mcp.SupportedProtocolVersions(), ", ")))
	}
	for i, r := range s.Roots {
		rpath := indexPath(joinPath(path, "roots"), i)
		u, err := url.Parse(r.URI)
		if r.URI == "" || err != nil || u.Scheme != "file" {
			return c.errorAt(rpath, fmt.Sprintf("root uri %q must be a file:// URI", r.URI))
		}
	}
	switch {
	case s.RequestTimeout < 0:
		return c.errorAt(joinPath(path, "requestTimeout"), "must not be negative (0 means the default, 30s)")
	case s.MaxRequestTimeout < 0:
		return c.errorAt(joinPath(path, "maxRequestTimeout"), "must not be negative (0 means the default, 30m)")
	case s.MaxRequestTimeout > 0 && s.MaxRequestTimeout < s.RequestTimeout:
		return c.errorAt(joinPath(path, "maxRequestTimeout"), fmt.Sprintf("must be at least requestTimeout (%s)", s.RequestTimeout))
	}
	rs := joinPath(path, "restart")
	switch {
	case s.Restart.MaxRestarts < 0:
		return c.errorAt(joinPath(rs, "maxRestarts"), "must not be negative (0 means never restart)")
	case s.Restart.InitialBackoff <= 0:
		return c.errorAt(joinPath(rs, "initialBackoff"), "must be positive")
	case s.Restart.MaxBackoff < s.Restart.InitialBackoff:
		return c.errorAt(joinPath(rs, "maxBackoff"), fmt.Sprintf("must be at least initialBackoff (%s)", s.Restart.InitialBackoff))
	}
	return nil
}

func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("bad url %q: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("url %q must start with http:// or https://", raw)
	}
	if u.Host == "" {
		return fmt.Errorf("url %q has no host", raw)
	}
	return nil
}

// validHeaderName reports whether name is an HTTP token (RFC 9110, section 5.6.2).
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if r > unicode.MaxASCII || !(strings.ContainsRune("!#$%&'*+-.^_`|~", r) ||
			r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

func (c *Config) validateListen() error {
	l := c.Listen
	if l.GRPC == "" && l.HTTP == "" && l.GRPCSocket == "" {
		return c.errorAt("listen", "every listener is off: set listen.grpc, listen.http or listen.grpcSocket")
	}
	for _, a := range []struct{ key, addr string }{{"listen.grpc", l.GRPC}, {"listen.http", l.HTTP}, {"listen.admin", l.Admin}} {
		if a.addr == "" {
			continue
		}
		if err := CheckAddr(a.addr); err != nil {
			return c.errorAt(a.key, err.Error())
		}
	}
	for i, h := range l.AllowedHosts {
		key := fmt.Sprintf("listen.allowedHosts[%d]", i)
		if err := door.CheckPattern(h); err != nil {
			return c.errorAt(key, err.Error())
		}
		if strings.TrimSpace(h) == door.AnyHost && !c.Auth.Configured() {
			return c.errorAt(key, `"*" admits every name, which without authentication lets any web page act through DNS rebinding: `+
				"list the bridge's names, or configure auth (tokensFile, oidc or mtls.principalFrom)")
		}
	}
	if l.GRPC != "" && l.GRPC == l.HTTP && !strings.HasSuffix(l.GRPC, ":0") {
		return c.errorAt("listen.http", fmt.Sprintf("same address as listen.grpc (%s)", l.GRPC))
	}
	return nil
}

// CheckAddr reports whether addr is a host:port a TCP listener can use (host may be empty for
// every interface; port 0 picks a free port).
func CheckAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("bad address %q: want host:port, such as 127.0.0.1:8080", addr)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("bad port in %q: want a number from 0 to 65535", addr)
	}
	return nil
}

func (c *Config) validateTLS() error {
	t := c.TLS
	switch {
	case t.CertFile == "" && t.KeyFile != "":
		return c.errorAt("tls.keyFile", "set certFile too: TLS needs both a certificate and its key")
	case t.CertFile != "" && t.KeyFile == "":
		return c.errorAt("tls.certFile", "set keyFile too: TLS needs both a certificate and its key")
	case t.CertFile == "" && t.ClientCAFile != "":
		return c.errorAt("tls.clientCAFile", "mutual TLS needs certFile and keyFile for the server's own certificate")
	}
	for _, f := range []struct{ key, file string }{
		{"tls.certFile", t.CertFile}, {"tls.keyFile", t.KeyFile}, {"tls.clientCAFile", t.ClientCAFile},
	} {
		if f.file == "" {
			continue
		}
		if err := checkFile(f.file); err != nil {
			return c.errorAt(f.key, err.Error())
		}
	}
	return nil
}

// checkFile reports whether path is a readable regular file.
func checkFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fileError(path, "cannot read", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fileError(path, "cannot read", err)
	}
	if fi.IsDir() {
		return fmt.Errorf("%s is a directory, not a file", path)
	}
	return nil
}

func (c *Config) validateLimits() error {
	l := c.Limits
	if l.KeptResultsBytes < 0 {
		return c.errorAt("limits.keptResultsBytes", "must not be negative (0 means the default)")
	}
	if l.KeptResultsTTL < 0 {
		return c.errorAt("limits.keptResultsTTL", "must not be negative (0 means the default)")
	}
	for _, f := range []struct {
		key string
		v   int
	}{
		{"limits.maxMessageBytes", l.MaxMessageBytes},
		{"limits.maxSessions", l.MaxSessions},
		{"limits.maxSessionsPerPrincipal", l.MaxSessionsPerPrincipal},
		{"limits.maxPendingPerSession", l.MaxPendingPerSession},
		{"limits.maxStdioProcesses", l.MaxStdioProcesses},
		{"limits.maxHTTPConnections", l.MaxHTTPConnections},
		{"limits.approvalHistory", l.ApprovalHistory},
		{"limits.descriptorReserve", l.DescriptorReserve},
		{"limits.maxEventStreamsPerPrincipal", l.MaxEventStreamsPerPrincipal},
	} {
		if f.v < 0 {
			return c.errorAt(f.key, "must not be negative (0 means the default)")
		}
	}
	if l.ApprovalHistoryAge < 0 {
		return c.errorAt("limits.approvalHistoryAge", "must not be negative (0 means the default)")
	}
	if l.MaxStdioProcesses > mcpcore.MaxStdioProcessesCeiling {
		return c.errorAt("limits.maxStdioProcesses", fmt.Sprintf("must be at most %d: each running stdio server holds an OS thread, and the Go runtime aborts the process at its thread limit (10,000)", mcpcore.MaxStdioProcessesCeiling))
	}
	if l.OpenTimeout < 0 {
		return c.errorAt("limits.openTimeout", "must not be negative (0 means the default)")
	}
	if l.MaxMessageBytes < minMessageBytes || l.MaxMessageBytes > maxMessageBytes {
		return c.errorAt("limits.maxMessageBytes", fmt.Sprintf("must be between %d and %d", minMessageBytes, maxMessageBytes))
	}
	for _, f := range []struct {
		key string
		ok  bool
	}{
		{"pending.samplingTimeout", c.Pending.SamplingTimeout > 0},
		{"pending.elicitationTimeout", c.Pending.ElicitationTimeout > 0},
		{"pending.rootsTimeout", c.Pending.RootsTimeout > 0},
	} {
		if !f.ok {
			return c.errorAt(f.key, "must be positive")
		}
	}
	return nil
}
