package main

import (
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Bad input ends the bridge with exit status 2 and one line on stderr that names the problem
// and where it is, and nothing else: no usage text, no stack trace.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	busySocket := filepath.Join(dir, "busy.sock")
	busyUnix, err := net.Listen("unix", busySocket)
	if err != nil {
		t.Fatal(err)
	}
	defer busyUnix.Close()
	notSocket := write("plain-file", "x")
	write("cert.pem", "not a certificate") // for tls.yaml below
	write("key.pem", "not a key")

	tests := []struct {
		name string
		args []string
		want string // a regular expression for the whole line, after "mcp-bridge: "
	}{
		{
			name: "missing config file",
			args: []string{"--config", filepath.Join(dir, "nope.yaml")},
			want: `.*/nope\.yaml: cannot read config file: no such file`,
		},
		{
			name: "bad yaml",
			args: []string{"--config", write("bad.yaml", "mcpServers:\n  a: [\n")},
			want: `.*/bad\.yaml:\d+: invalid YAML: .+`,
		},
		{
			name: "bad json",
			args: []string{"--config", write("bad.json", `{"mcpServers": {"a": {"command": "x"}}`)},
			want: `.*/bad\.json:1:\d+: invalid JSON: unexpected end of input`,
		},
		{
			name: "unknown field",
			args: []string{"--config", write("unknown.yaml", "mcpServers:\n  a:\n    command: x\n    comand: y\n")},
			want: `.*/unknown\.yaml:4:5: mcpServers\.a\.comand: unknown key \(did you mean "command"\?\)`,
		},
		{
			name: "server with neither command nor url",
			args: []string{"--config", write("neither.json", "{\n  \"mcpServers\": {\n    \"foo\": {\"args\": [\"x\"]}\n  }\n}\n")},
			want: `.*/neither\.json:3:5: mcpServers\.foo: neither "command" nor "url" is set: .*`,
		},
		{
			name: "bad duration",
			args: []string{"--config", write("duration.yaml", "sessions:\n  idleTimeout: forever\n")},
			want: `.*/duration\.yaml:2:16: sessions\.idleTimeout: bad duration "forever": .*`,
		},
		{
			name: "http port in use",
			args: []string{"--http-addr", busy.Addr().String()},
			want: `cannot listen on ` + regexp.QuoteMeta(busy.Addr().String()) + ` \(HTTP\): address already in use; another process holds it \(another mcp-bridge, e\.g\. .make run.\?\): stop it, or choose another address with --http-addr or listen\.http`,
		},
		{
			name: "grpc port in use",
			args: []string{"--grpc-addr", busy.Addr().String()},
			want: `cannot listen on ` + regexp.QuoteMeta(busy.Addr().String()) + ` \(gRPC\): address already in use; another process holds it \(another mcp-bridge, e\.g\. .make run.\?\): stop it, or choose another address with --grpc-addr or listen\.grpc`,
		},
		{
			name: "port in use from the config file",
			args: []string{"--config", write("busy.yaml", "listen:\n  http: "+busy.Addr().String()+"\n"), "--http-addr", "127.0.0.1:0", "--grpc-addr", busy.Addr().String()},
			want: `cannot listen on ` + regexp.QuoteMeta(busy.Addr().String()) + ` \(gRPC\): address already in use; another process holds it \(another mcp-bridge, e\.g\. .make run.\?\): stop it, or choose another address with --grpc-addr or listen\.grpc`,
		},
		{
			name: "socket in use",
			args: []string{"--grpc-socket", busySocket},
			want: `cannot listen on .*/busy\.sock \(gRPC socket\): address already in use; .* with --grpc-socket or listen\.grpcSocket`,
		},
		{
			name: "socket path is a file",
			args: []string{"--grpc-socket", notSocket},
			want: `cannot listen on .*/plain-file \(gRPC socket\): .*/plain-file exists and is not a socket; choose another address with --grpc-socket or listen\.grpcSocket`,
		},
		{
			name: "bad address flag",
			args: []string{"--grpc-addr", "localhost"},
			want: `--grpc-addr: bad address "localhost": want host:port, such as 127\.0\.0\.1:8080`,
		},
		{
			name: "every listener off",
			args: []string{"--grpc-addr", "", "--http-addr", ""},
			want: `every listener is off: give --grpc-addr, --http-addr or --grpc-socket an address`,
		},
		{
			name: "same address twice",
			args: []string{"--grpc-addr", "127.0.0.1:7777", "--http-addr", "127.0.0.1:7777"},
			want: `gRPC and HTTP cannot both listen on 127\.0\.0\.1:7777`,
		},
		{
			name: "unknown flag",
			args: []string{"--port", "80"},
			want: `flag provided but not defined: -port \(see mcp-bridge -help\)`,
		},
		{
			name: "flag without value",
			args: []string{"--config"},
			want: `flag needs an argument: -config \(see mcp-bridge -help\)`,
		},
		{
			name: "unexpected argument",
			args: []string{"serve"},
			want: `unexpected argument "serve" \(the subcommands are demo-server and version; see mcp-bridge -help\)`,
		},
		{
			name: "bad log level",
			args: []string{"--log-level", "loud"},
			want: `--log-level: unknown level "loud" \(use debug, info, warn or error\)`,
		},
		{
			name: "bad log format",
			args: []string{"--log-format", "xml"},
			want: `--log-format: unknown format "xml" \(use text or json\)`,
		},
		{
			name: "state reset without a state file",
			args: []string{"--state-reset"},
			want: `--state-reset: there is no state file to start over \(set state.file or --state-file\)`,
		},
		{
			name: "empty state file flag",
			args: []string{"--state-file="},
			want: `--state-file: empty path \(leave the flag out to keep state in memory\)`,
		},
		{
			name: "corrupt state file",
			args: []string{"--state-file", write("state.db", "not a state file")},
			want: `state file .*/state\.db is corrupt \(not a state file\): move it aside, or start over with --state-reset \(the file is kept as <file>\.bad-<time>\)`,
		},
		{
			name: "state key that is no key",
			args: []string{"--config", write("state.yaml", "state:\n  file: s.db\n  keyFile: plain-file\n")},
			want: `.*/state\.yaml:3:3: state\.keyFile: .*/plain-file: key must be 32 bytes: 64 hex digits or base64`,
		},
		{
			name: "unreadable certificate",
			args: []string{"--config", write("tls.yaml", "tls:\n  certFile: cert.pem\n  keyFile: key.pem\n")},
			want: `tls: certificate .*/cert\.pem with key .*/key\.pem: tls: failed to find any PEM data in certificate input`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr lockedBuffer
			code := run(t.Context(), append([]string{"--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0"}, tt.args...), &stdout, &stderr)
			if code != exitBadInput {
				t.Errorf("exit status %d, want %d", code, exitBadInput)
			}
			out := stderr.String()
			if !strings.HasSuffix(out, "\n") || strings.Count(out, "\n") != 1 {
				t.Fatalf("stderr is not exactly one line:\n%s", out)
			}
			line := strings.TrimSuffix(out, "\n")
			if !regexp.MustCompile(`^mcp-bridge: ` + tt.want + `$`).MatchString(line) {
				t.Errorf("stderr\n got: %s\nwant: mcp-bridge: %s", line, tt.want)
			}
			if stdout.String() != "" {
				t.Errorf("stdout: %q", stdout.String())
			}
		})
	}
}

func TestDemoServerBadInput(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"demo-server", "extra"}, `mcp-bridge demo-server: unexpected argument "extra"`},
		{[]string{"demo-server", "--log-level", "loud"}, `mcp-bridge demo-server: --log-level: unknown level "loud" (use debug, info, warn or error)`},
		{[]string{"demo-server", "--nope"}, `mcp-bridge demo-server: flag provided but not defined: -nope (see mcp-bridge demo-server -help)`},
	} {
		var stdout, stderr lockedBuffer
		if code := run(t.Context(), tt.args, &stdout, &stderr); code != exitBadInput {
			t.Errorf("%v: exit %d, want %d", tt.args, code, exitBadInput)
		}
		if got := stderr.String(); got != tt.want+"\n" {
			t.Errorf("%v: stderr\n got: %q\nwant: %q", tt.args, got, tt.want+"\n")
		}
	}
}
