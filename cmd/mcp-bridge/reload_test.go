package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-bridge/mcp-bridge/internal/config"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// fakeLive is a bridgeService that takes new configurations and records them.
type fakeLive struct {
	bridgeService // nil: only reconfigure is called
	applied       []*config.Config
}

func (f *fakeLive) reconfigure(cfg *config.Config, _ []string, _ *slog.Logger) (mcpcore.ReconfigureReport, error) {
	f.applied = append(f.applied, cfg)
	return mcpcore.ReconfigureReport{}, nil
}

func TestReloader(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bridge.yaml")
	write := func(body string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	base := "mcpServers:\n  a:\n    command: x\n"
	write(base)
	fl, err := parseFlags([]string{"--config", path, "--grpc-addr", "127.0.0.1:0"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := fl.loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	svc := &fakeLive{}
	var logs bytes.Buffer
	// seen is the status /readyz showed when each reload's record was logged: a test or an operator that
	// waits for the log line must find the status of that reload, not the one before it.
	var r *reloader
	var seen []*reloadStatus
	h := handlerFunc{Handler: slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}), onHandle: func(slog.Record) { seen = append(seen, r.last.Load()) }}
	b := &bridge{svc: svc, logger: slog.New(h)}
	r = newReloader(fl, b, cfg, nil)

	steps := []struct {
		body, want string
		gen        int64
		logs       string
	}{
		{base, reloadUnchanged, 1, ""},
		{base + "  b:\n    command: y\n", reloadApplied, 2, "configuration reloaded"},
		{"mcpServers: [\n", reloadInvalid, 2, "bridge.yaml:1"},
		{base + "listen:\n  admin: 127.0.0.1:0\n", reloadRefused, 2, "listen.admin changed and needs a restart"},
		// The flag wins over the file: a listener the flag sets is not a change.
		{base + "  b:\n    command: y\nlisten:\n  grpc: 127.0.0.1:9\n", reloadUnchanged, 2, ""},
		{base, reloadApplied, 3, ""},
	}
	for i, st := range steps {
		logs.Reset()
		seen = nil
		write(st.body)
		if got := r.reload("test"); got != st.want {
			t.Fatalf("step %d: reload = %s, want %s; log: %s", i, got, st.want, logs.String())
		}
		if g := r.generation.Load(); g != st.gen {
			t.Errorf("step %d: generation %d, want %d", i, g, st.gen)
		}
		if !strings.Contains(logs.String(), st.logs) {
			t.Errorf("step %d: log %q lacks %q", i, logs.String(), st.logs)
		}
		s := r.last.Load()
		if s.LastResult != st.want || s.Generation != st.gen {
			t.Errorf("step %d: status %+v", i, s)
		}
		if len(seen) == 0 || seen[len(seen)-1] != s {
			t.Errorf("step %d: when the reload was logged /readyz still showed %+v, want %+v", i, seen, s)
		}
	}
	if len(svc.applied) != 2 {
		t.Errorf("%d configurations applied, want 2", len(svc.applied))
	}
}

// handlerFunc is a slog.Handler that calls onHandle before it hands each record on.
type handlerFunc struct {
	slog.Handler
	onHandle func(slog.Record)
}

func (h handlerFunc) Handle(ctx context.Context, rec slog.Record) error {
	h.onHandle(rec)
	return h.Handler.Handle(ctx, rec)
}

func TestCheckSubcommand(t *testing.T) {
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.yaml"), filepath.Join(dir, "bad.yaml")
	_ = os.WriteFile(good, []byte("mcpServers:\n  a:\n    command: x\n"), 0o600)
	_ = os.WriteFile(bad, []byte("mcpServers:\n  a:\n    comand: x\n"), 0o600)
	var out, errOut bytes.Buffer
	if code := run(t.Context(), []string{"check", "--config", good}, &out, &errOut); code != exitOK || !strings.Contains(out.String(), "ok") {
		t.Errorf("check good = %d %q %q", code, out.String(), errOut.String())
	}
	out.Reset()
	if code := run(t.Context(), []string{"check", "--config", bad}, &out, &errOut); code != exitBadInput || !strings.Contains(errOut.String(), "bad.yaml:3") {
		t.Errorf("check bad = %d %q", code, errOut.String())
	}
	if code := run(t.Context(), []string{"check"}, &out, &errOut); code != exitBadInput {
		t.Errorf("check without a file = %d", code)
	}
}
