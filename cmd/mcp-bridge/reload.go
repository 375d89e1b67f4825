package main

// Live configuration (docs/adr/0095-live-configuration.md): on SIGHUP, and when the configuration file (or a
// file it names: tokens, TLS certificate, key and client CAs) changes, the bridge reads the file again. A
// valid file whose changes are all live is applied as a whole; a file that changes a key that needs a restart
// is refused, naming the key, and nothing of it is applied; an invalid file changes nothing.

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/mcp-bridge/mcp-bridge/internal/config"
	"github.com/mcp-bridge/mcp-bridge/internal/state"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
	"github.com/prometheus/client_golang/prometheus"
)

// Results of a reload attempt, the label of mcpbridge_config_reloads_total.
const (
	reloadApplied   = "applied"   // a new generation is in force
	reloadUnchanged = "unchanged" // the file held nothing new
	reloadInvalid   = "invalid"   // the file could not be loaded; the generation in force stays
	reloadRefused   = "refused"   // the file changes keys that need a restart; nothing of it was applied
	reloadFailed    = "failed"    // applying failed (e.g. an identity provider's CA file); nothing was applied
)

// watchSettle is how long the watch lets a burst of file events settle before it reads the files once.
const watchSettle = 100 * time.Millisecond

// liveService is a service that takes a new configuration while it serves (withAudit).
type liveService interface {
	reconfigure(cfg *config.Config, changed []string, logger *slog.Logger) (mcpcore.ReconfigureReport, error)
}

// reloader owns the generation of the configuration in force: every reload goes through it, one at a time.
type reloader struct {
	fl     *flags
	b      *bridge
	logger *slog.Logger

	mu  sync.Mutex     // serializes reloads; guards cfg
	cfg *config.Config // in force

	generation atomic.Int64
	last       atomic.Pointer[reloadStatus]
	reloads    *prometheus.CounterVec // by result; nil without metrics
}

// reloadStatus is what /readyz shows of the configuration.
type reloadStatus struct {
	Generation  int64     `json:"generation"`
	File        string    `json:"file,omitempty"`
	LastAttempt time.Time `json:"lastAttempt,omitzero"`
	LastResult  string    `json:"lastResult,omitempty"`
	LastError   string    `json:"lastError,omitempty"`
}

func newReloader(fl *flags, b *bridge, cfg *config.Config, obs *observability) *reloader {
	r := &reloader{fl: fl, b: b, logger: b.logger, cfg: cfg}
	r.generation.Store(1)
	r.last.Store(&reloadStatus{Generation: 1, File: cfg.File})
	if obs != nil && obs.registry != nil {
		r.reloads = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcpbridge_config_reloads_total",
			Help: "Reloads of the configuration file, by result: applied, unchanged, invalid, refused (a key needs a restart), failed.",
		}, []string{"result"})
		for _, res := range []string{reloadApplied, reloadUnchanged, reloadInvalid, reloadRefused, reloadFailed} {
			r.reloads.WithLabelValues(res)
		}
		obs.registry.MustRegister(r.reloads, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "mcpbridge_config_generation",
			Help: "The generation of the configuration in force: 1 at start, one more at every reload applied.",
		}, func() float64 { return float64(r.generation.Load()) }))
	}
	return r
}

// status is the configuration's part of /readyz.
func (r *reloader) status() any { return r.last.Load() }

// reload reads the configuration file again and applies it if it can; trigger says why, for the log.
func (r *reloader) reload(trigger string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.b.tls != nil {
		if changed, err := r.b.tls.reload(); err != nil {
			r.logger.Error("TLS files not reloaded; the certificate in force is kept", "trigger", trigger, "error", err)
		} else if changed {
			r.logger.Info("TLS certificate reloaded: new connections present it", "trigger", trigger, "cert", r.b.tls.t.CertFile)
		}
	}
	gen := r.generation.Load()
	cfg, err := r.fl.loadConfig()
	if err != nil {
		return r.finish(reloadInvalid, err, slog.LevelError, "configuration not reloaded: the file is invalid; the configuration in force is kept",
			"trigger", trigger, "error", oneLine(err.Error()), "generation", gen)
	}
	changed := config.ChangedKeys(r.cfg, cfg)
	if len(changed) == 0 {
		return r.finish(reloadUnchanged, nil, slog.LevelDebug, "configuration unchanged", "trigger", trigger, "generation", gen)
	}
	if keys := config.RestartKeys(r.cfg, cfg); len(keys) > 0 {
		err := fmt.Errorf("%s: %s changed and needs a restart; nothing of the file was applied", cfg.File, strings.Join(keys, ", "))
		return r.finish(reloadRefused, err, slog.LevelError, "configuration not reloaded: a key needs a restart; the configuration in force is kept",
			"trigger", trigger, "keys", keys, "error", err.Error(), "generation", gen)
	}
	ls, ok := r.b.svc.(liveService)
	if !ok {
		err := errors.New("this service cannot take a new configuration while it serves")
		return r.finish(reloadFailed, err, slog.LevelError, "configuration not reloaded", "trigger", trigger, "error", err)
	}
	rotated := slices.Contains(changed, "state.key")
	if rotated {
		if err := r.rekey(cfg.State.Key.Reveal()); err != nil {
			err = fmt.Errorf("%s: %w; nothing of the file was applied", cfg.State.KeySource(), err)
			return r.finish(reloadRefused, err, slog.LevelError, "configuration not reloaded: the state key cannot rotate; the configuration in force is kept", "trigger", trigger, "error", oneLine(err.Error()), "generation", gen)
		}
	}
	rep, err := ls.reconfigure(cfg, changed, r.logger)
	if err != nil {
		if rotated { // back to the old sealing key; the new one still opens what it sealed meanwhile
			if rerr := r.rekey(r.cfg.State.Key.Reveal() + "\n" + cfg.State.Key.Reveal()); rerr != nil {
				r.logger.Error("state key: the rotation could not be undone; the new key seals", "error", rerr)
			}
		}
		return r.finish(reloadFailed, err, slog.LevelError, "configuration not reloaded; the configuration in force is kept", "trigger", trigger, "error", oneLine(err.Error()), "generation", gen)
	}
	r.b.setHosts(cfg)
	r.b.setConsole(cfg)
	if r.b.gate != nil {
		r.b.gate.max.Store(int64(cmp.Or(cfg.Limits.MaxHTTPConnections, defaultHTTPConnections())))
	}
	if rotated {
		r.logger.Info("state key rotated: the first key of the file seals what is written from now on; the others open what they sealed", "key_file", cfg.State.KeySource())
	}
	r.cfg = cfg
	r.generation.Add(1)
	return r.finish(reloadApplied, nil, slog.LevelInfo, "configuration reloaded", "trigger", trigger, "generation", gen+1, "changed", changed,
		"servers_added", rep.Added, "servers_removed", rep.Removed, "servers_changed", rep.Changed, "sessions_ending", rep.Retiring)
}

// rekey makes the key ring written in raw (state.ParseKeyRing) the state store's.
func (r *reloader) rekey(raw string) error {
	if r.b.store == nil {
		return errors.New("no state store to rotate the key of")
	}
	ring, err := state.ParseKeyRing([]byte(raw))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), rekeyTimeout)
	defer cancel()
	return state.Rekey(ctx, r.b.store, ring)
}

// rekeyTimeout bounds a rotation's check of the records and its write of the canary.
const rekeyTimeout = 30 * time.Second

// finish ends a reload: it publishes the result (/readyz, the metric) and then logs msg. The order matters: a
// test or an operator that waits for the log line finds /readyz already showing this reload.
func (r *reloader) finish(result string, err error, level slog.Level, msg string, args ...any) string {
	r.record(result, err)
	r.logger.Log(context.Background(), level, msg, args...)
	return result
}

func (r *reloader) record(result string, err error) {
	st := &reloadStatus{Generation: r.generation.Load(), File: r.cfg.File, LastAttempt: time.Now().UTC(), LastResult: result}
	if err != nil {
		st.LastError = oneLine(err.Error())
	}
	r.last.Store(st)
	if r.reloads != nil {
		r.reloads.WithLabelValues(result).Inc()
	}
}

// watchedFiles are the files whose change triggers a reload: the configuration file, the tokens file, the
// TLS files and the state key file.
func (r *reloader) watchedFiles() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var files []string
	for _, f := range []string{r.cfg.File, r.cfg.Auth.TokensFile, r.cfg.TLS.CertFile, r.cfg.TLS.KeyFile, r.cfg.TLS.ClientCAFile, r.cfg.State.KeyFile} {
		if f != "" {
			files = append(files, f)
		}
	}
	return files
}

// run reloads on every signal from hup and every change the watch sees, until stop is closed. It owns the
// watch.
func (r *reloader) run(hup <-chan os.Signal, stop <-chan struct{}) {
	var events <-chan fsnotify.Event
	var errs <-chan error
	var watchedNames map[string]bool // base names in the watched directories that trigger a reload
	if files := r.watchedFiles(); len(files) > 0 {
		w, err := fsnotify.NewWatcher()
		if err != nil {
			r.logger.Warn("cannot watch the configuration file; reload it with SIGHUP", "error", err)
		} else {
			defer func() { _ = w.Close() }()
			watchedNames = map[string]bool{"..data": true} // a Kubernetes ConfigMap or Secret volume swaps it
			dirs := map[string]bool{}
			for _, f := range files {
				watchedNames[filepath.Base(f)] = true
				dirs[filepath.Dir(f)] = true
			}
			for d := range dirs {
				// The directory, not the file: an editor's or Kubernetes's replacement of the file is a
				// new inode the file's watch would not see.
				if err := w.Add(d); err != nil {
					r.logger.Warn("cannot watch a directory of the configuration; reload with SIGHUP", "dir", d, "error", err)
				}
			}
			events, errs = w.Events, w.Errors
		}
	}
	var settle *time.Timer
	var settled <-chan time.Time
	defer func() {
		if settle != nil {
			settle.Stop()
		}
	}()
	for {
		select {
		case <-stop:
			return
		case <-hup:
			r.reload("SIGHUP")
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if !watchedNames[filepath.Base(ev.Name)] || ev.Op == fsnotify.Chmod {
				continue
			}
			if settle == nil {
				settle = time.NewTimer(watchSettle)
			} else {
				settle.Reset(watchSettle)
			}
			settled = settle.C
		case <-settled:
			settled = nil
			r.reload("file changed")
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			r.logger.Warn("watching the configuration file", "error", err)
		}
	}
}

// reconfigure applies cfg to the running service: every part is built first, then the core's servers and
// limits and the service's principals, tokens and rate limits are swapped.
func (w *withAudit) reconfigure(cfg *config.Config, changed []string, logger *slog.Logger) (mcpcore.ReconfigureReport, error) {
	live, err := liveOptions(cfg)
	if err != nil {
		return mcpcore.ReconfigureReport{}, err
	}
	auditChanged := slices.Contains(changed, "audit")
	var audit *slog.Logger
	var closeAudit func() error
	if auditChanged {
		if audit, closeAudit, err = openAudit(cfg.Audit); err != nil {
			return mcpcore.ReconfigureReport{}, err
		}
	}
	opts := coreOptions(cfg, logger, w.UpstreamAuth())
	rep := w.Core().Reconfigure(mcpcore.Reconfiguration{
		Servers:              opts.Servers,
		MaxSessions:          cfg.Limits.MaxSessions,
		MaxSessionsPerOwner:  cfg.Limits.MaxSessionsPerPrincipal,
		MaxPendingPerSession: cfg.Limits.MaxPendingPerSession,
		OpenTimeout:          opts.Limits.OpenTimeout,
		DescriptorReserve:    opts.Limits.DescriptorReserve,
		ApprovalHistory:      opts.ApprovalHistory,
		KeptResults:          opts.KeptResults,
		MaxStdioProcesses:    cfg.Limits.MaxStdioProcesses,
	})
	w.Reconfigure(live)
	if auditChanged {
		// Every record goes wholly to the old log or to the new one: SetAudit returns once none is being
		// written to the old one, which is closed then.
		w.SetAudit(audit, cfg.Audit.IncludePayloads)
		if old := w.closeAudit.replace(closeAudit); old != nil {
			_ = old()
		}
		logger.Info("audit log switched", "output", cfg.Audit.Output, "include_payloads", cfg.Audit.IncludePayloads)
	}
	return rep, nil
}

// runCheck is `mcp-bridge check --config FILE`: it loads and validates the file as the bridge would at
// start (the files it names included), starts nothing, and exits 0 when the file is good.
func runCheck(_ context.Context, args []string, o runOptions) int {
	fs := flag.NewFlagSet("mcp-bridge check", flag.ContinueOnError)
	fs.SetOutput(o.stdout)
	file := fs.String("config", "", "the configuration `file` to check")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: mcp-bridge check --config FILE\n\nValidates a configuration file without starting anything: exits 0 when the bridge would\nstart with it, 2 with the file, line and key of the first problem otherwise.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := parseQuietly(fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		fmt.Fprintf(o.stderr, "mcp-bridge check: %v (see mcp-bridge check -help)\n", err)
		return exitBadInput
	}
	if *file == "" || fs.NArg() > 0 {
		fmt.Fprintln(o.stderr, "mcp-bridge check: give the file to check: mcp-bridge check --config FILE")
		return exitBadInput
	}
	cfg, err := config.Load(*file)
	if err == nil {
		_, err = newTLSFiles(cfg.TLS)
	}
	if err != nil {
		fmt.Fprintf(o.stderr, "mcp-bridge check: %s\n", oneLine(err.Error()))
		return exitBadInput
	}
	fmt.Fprintf(o.stdout, "%s: ok (%d servers: %s)\n", cfg.File, len(cfg.MCPServers), strings.Join(cfg.ServerNames(), ", "))
	return exitOK
}
