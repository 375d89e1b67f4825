package config

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
)

// Load reads the configuration file at path, decodes it strictly (YAML or JSON, by extension or
// by content), expands ${VAR} references, resolves relative paths against the file's directory,
// reads the tokens file it names and validates the result. An empty path returns Default().
//
// Every error is an *Error that names the file and, where it can, the line and key path.
func Load(path string) (*Config, error) {
	if path == "" {
		return Default(), nil
	}
	data, err := readFile(path, "config file")
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse is Load for data already read; name is the file name used in messages, for choosing the
// format by extension and as the base of relative paths.
func Parse(name string, data []byte) (*Config, error) {
	root, err := parseDocument(name, data)
	if err != nil {
		return nil, err
	}
	c := newConfig()
	c.File = name
	if root != nil {
		d := &decoder{file: name, positions: c.positions}
		if err := d.decode(root, reflect.ValueOf(c).Elem(), ""); err != nil {
			return nil, err
		}
		if _, both := c.positions["mcpServers"]; both && c.serversKey == "servers" {
			return nil, c.errorAt("mcpServers", "both servers and mcpServers are set; keep one")
		}
	}
	if c.MCPServers == nil {
		c.MCPServers = map[string]*Server{DemoServerName: DemoServer()}
	}
	c.applyZeroDefaults()
	c.applyPolicyDefaults()
	if err := c.expandEnv(); err != nil {
		return nil, err
	}
	c.resolvePaths(filepath.Dir(name))
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if err := c.readSecrets(); err != nil {
		return nil, err
	}
	if err := c.readStateKey(); err != nil {
		return nil, err
	}
	if c.Auth.TokensFile != "" {
		tokens, err := LoadTokens(c.Auth.TokensFile)
		if err != nil {
			return nil, err
		}
		c.Auth.Tokens = tokens
	}
	return c, nil
}

// maxFileSize bounds the config and tokens files the bridge reads.
const maxFileSize = 16 << 20

// readFile reads a file of at most maxFileSize bytes; what names the file in messages.
func readFile(path, what string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fileError(path, "cannot read "+what, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, fileError(path, "cannot read "+what, err)
	}
	if len(data) > maxFileSize {
		return nil, &Error{File: path, Msg: fmt.Sprintf("%s is larger than %d MiB", what, maxFileSize>>20)}
	}
	return data, nil
}

// fileError describes a file that cannot be read, without the Go error's "open path:" prefix
// (the path is already in the message).
func fileError(path, what string, err error) *Error {
	msg := err.Error()
	var pe *fs.PathError
	if errors.As(err, &pe) {
		msg = pe.Err.Error()
	}
	if errors.Is(err, fs.ErrNotExist) {
		msg = "no such file"
	}
	return &Error{File: path, Msg: what + ": " + msg, Err: err}
}

// applyZeroDefaults replaces limits set to 0 by their defaults: for the limits, 0 means "the
// default", not "nothing allowed".
func (c *Config) applyZeroDefaults() {
	l := &c.Limits
	for _, f := range []struct {
		v   *int
		def int
	}{
		{&l.MaxMessageBytes, DefaultMaxMessageBytes},
		{&l.MaxSessions, DefaultMaxSessions},
		{&l.MaxSessionsPerPrincipal, DefaultMaxSessionsPerPrincipal},
		{&l.MaxPendingPerSession, DefaultMaxPendingPerSession},
		{&l.MaxStdioProcesses, DefaultMaxStdioProcesses},
		{&l.MaxEventStreamsPerPrincipal, DefaultMaxEventStreamsPerPrincipal},
	} {
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	if l.OpenTimeout == 0 {
		l.OpenTimeout = DefaultOpenTimeout
	}
}

// resolvePaths makes the file paths in the configuration absolute, relative to base (the config
// file's directory). A server's command is left alone: a bare name is looked up on PATH.
func (c *Config) resolvePaths(base string) {
	abs := func(p *string) {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(base, *p)
		}
	}
	abs(&c.TLS.CertFile)
	abs(&c.TLS.KeyFile)
	abs(&c.TLS.ClientCAFile)
	abs(&c.Auth.TokensFile)
	abs(&c.Listen.GRPCSocket)
	abs(&c.State.File)
	abs(&c.State.KeyFile)
	if r := c.State.Redis; r != nil {
		abs(&r.PasswordFile)
		abs(&r.CAFile)
	}
	c.resolveAuthPaths(abs)
	c.resolvePolicyPaths(abs)
	for _, s := range c.MCPServers {
		abs(&s.Cwd)
		// A command written as a relative path ("./server", "bin/server") is relative to the
		// server's cwd when it has one (as os/exec runs it) and otherwise to the config file's
		// directory: the bridge's own working directory is nothing a config file can rely on.
		// A bare name is looked up on PATH.
		if !filepath.IsAbs(s.Command) && strings.ContainsAny(s.Command, `/\`) {
			dir := base
			if s.Cwd != "" {
				dir = s.Cwd
			}
			s.Command = filepath.Join(dir, s.Command)
		}
	}
}

// pos returns the position recorded for path or, failing that, for the nearest enclosing key.
func (c *Config) pos(path string) position {
	for path != "" {
		if p, ok := c.positions[path]; ok {
			return p
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			break
		}
		path = path[:i]
	}
	return position{}
}

// errorAt returns an *Error for the key path, located where the file had it.
func (c *Config) errorAt(path, msg string) *Error {
	p := c.pos(path)
	return &Error{File: c.File, Line: p.line, Column: p.column, Path: path, Msg: msg}
}
