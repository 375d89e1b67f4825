package mcpcore

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	r := newRedactor(ServerConfig{
		URL:     "http://user:hunter22@example.com/sse?api_key=k3y-v4lue%2Fx&mode=x",
		Headers: map[string]string{"Authorization": "Bearer tok-123456", "X-Tenant": "acme"},
		Env:     map[string]string{"API_TOKEN": "env-s3cret", "DEBUG": "1"},
	})
	tests := []struct {
		name, in, want string
	}{
		{"net/http error", `Get "http://user:***@example.com/sse?api_key=k3y-v4lue%2Fx&mode=x": dial tcp: refused`,
			`Get "http://user:***@example.com/sse?api_key=***&mode=***": dial tcp: refused`},
		{"any URL's query and password", "see https://a:b@other.org/p?q=1&flag#frag and ws://h/x?t=abc",
			"see https://a:***@other.org/p?q=***&flag#frag and ws://h/x?t=***"},
		{"decoded query value alone", "key k3y-v4lue/x rejected", "key *** rejected"},
		{"password alone", "password hunter22", "password ***"},
		{"header value and its credential", "sent Bearer tok-123456; token tok-123456", "sent ***; token ***"},
		{"env value", "stderr: using env-s3cret", "stderr: using ***"},
		{"short values stay", "DEBUG=1 tenant acme", "DEBUG=1 tenant acme"},
		{"no URL", "connection lost", "connection lost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.redact(tt.in); got != tt.want {
				t.Errorf("redact(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestRedactErrorKeepsChain(t *testing.T) {
	r := newRedactor(ServerConfig{URL: "http://h/sse?api_key=secret-value"})
	err := r.err(fmt.Errorf("%w: Get \"http://h/sse?api_key=secret-value\": refused", ErrUnavailable))
	if !errors.Is(err, ErrUnavailable) {
		t.Errorf("errors.Is(%v, ErrUnavailable) = false", err)
	}
	if strings.Contains(err.Error(), "secret-value") {
		t.Errorf("error shows the secret: %v", err)
	}
	plain := errors.New("nothing secret")
	if r.err(plain) != plain {
		t.Error("an error without secrets was wrapped")
	}
}

func TestRedactLogger(t *testing.T) {
	var buf bytes.Buffer
	r := newRedactor(ServerConfig{Headers: map[string]string{"X-Api-Key": "hdr-secret-1"}})
	l := redactLogger(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})), r).
		With("url", "http://h/?k=v")
	l.Debug("sending hdr-secret-1", "error", errors.New("bad hdr-secret-1"), slog.Group("g", "v", "x hdr-secret-1"), "args", []string{"hdr-secret-1"})
	out := buf.String()
	if strings.Contains(out, "hdr-secret-1") || strings.Contains(out, "k=v") {
		t.Errorf("log shows a secret: %s", out)
	}
	if !strings.Contains(out, `"msg":"sending ***"`) {
		t.Errorf("log lost its message: %s", out)
	}
}
