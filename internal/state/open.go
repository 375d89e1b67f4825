package state

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"
)

// Config is where the bridge keeps its state, as the configuration's state block and the --state-file and
// --state-reset flags say.
type Config struct {
	// File is the state file. Empty keeps state in memory: a restart loses every session.
	File string
	// Memory says that memory was chosen explicitly (state.memory: true); otherwise Open logs a line saying
	// what a restart loses.
	Memory bool
	// Key is the sealing key as the operator wrote it (ParseKey reads it). Empty with a File: the key in
	// "<File>.key", generated on first start.
	Key []byte
	// KeySource says where Key came from, for messages: a file's path or "$NAME" of an environment variable.
	KeySource string
	// Reset starts over: FileOptions.Reset.
	Reset bool
	// NoSync skips the fsync of each write: FileOptions.NoSync.
	NoSync bool
	// LockTimeout: FileOptions.LockTimeout (zero: DefaultLockTimeout).
	LockTimeout time.Duration
	// Redis, when set, keeps the state in Redis (shared by replicas) instead of a file; Key is then
	// required (every replica seals with it).
	Redis *RedisOptions
	// OnHealth is told when the store becomes degraded or healthy again (Tracked); may be nil.
	OnHealth func(healthy bool)
}

// KeyFile is the key file Open generates beside a state file given without a key.
func KeyFile(stateFile string) string { return stateFile + ".key" }

// Open opens the store cfg describes: the file engine, sealed, or memory; tracked. Its errors are one line
// naming the file and what is wrong (a *FileError for a state file that cannot be used); the binary
// prints it and exits with status 2. logger (nil: slog.Default) is told which store is used and, later,
// of failing writes.
func Open(ctx context.Context, cfg Config, logger *slog.Logger) (*TrackedStore, error) {
	if logger == nil {
		logger = slog.Default()
	}
	if cfg.Redis != nil {
		return openRedis(ctx, cfg, logger)
	}
	if cfg.File == "" {
		if !cfg.Memory {
			logger.Info("state kept in memory: a restart loses every session, pending request and answer (set state.file or --state-file to keep them)")
		}
		return Tracked(NewMemory(), logger, cfg.OnHealth), nil
	}
	path, err := filepath.Abs(cfg.File)
	if err != nil {
		return nil, fileError(cfg.File, err)
	}
	if cfg.LockTimeout <= 0 {
		cfg.LockTimeout = DefaultLockTimeout
	}
	if cfg.Reset {
		aside, err := moveAside(path, cfg.LockTimeout)
		if err != nil {
			return nil, err
		}
		if aside != "" {
			logger.Warn("state: started over (--state-reset): the old state file was moved aside", "file", path, "moved_to", aside)
		}
	}
	var keys [][]byte
	source := cfg.KeySource
	if len(cfg.Key) > 0 {
		if keys, err = ParseKeyRing(cfg.Key); err != nil {
			return nil, fmt.Errorf("state key from %s: %v", cfg.KeySource, err)
		}
	}
	fs, err := OpenFile(path, FileOptions{LockTimeout: cfg.LockTimeout, NoSync: cfg.NoSync, Logger: logger})
	if err != nil {
		return nil, err
	}
	if keys == nil {
		if keys, source, err = generatedKey(ctx, path, fs, logger); err != nil {
			_ = fs.Close()
			return nil, err
		}
	}
	s, err := Sealed(ctx, fs, keys[0], keys[1:]...)
	if err != nil {
		_ = fs.Close()
		if errors.Is(err, ErrWrongKey) {
			return nil, &FileError{Path: path, Problem: ErrWrongKey, Detail: source, Err: err}
		}
		return nil, fileError(path, err)
	}
	logger.Info("state kept in a file: sessions, pending requests and answers survive a restart", "file", path, "fsync", !cfg.NoSync)
	return Tracked(s, logger, cfg.OnHealth), nil
}

// generatedKey returns the key in the key file beside the state file, and its path. Without a key file, it
// generates one — unless the store holds records sealed under a key (the canary), which would never open
// again.
func generatedKey(ctx context.Context, path string, fs Store, logger *slog.Logger) ([][]byte, string, error) {
	keyPath := KeyFile(path)
	raw, err := os.ReadFile(keyPath)
	switch {
	case err == nil:
		k, err := ParseKeyRing(raw)
		if err != nil {
			return nil, "", fmt.Errorf("state key file %s: %v", keyPath, err)
		}
		return k, keyPath, nil
	case !errors.Is(err, os.ErrNotExist):
		return nil, "", fmt.Errorf("state key file %s: %v", keyPath, systemDetail(err))
	}
	switch _, err := fs.Get(ctx, kindSeal, keyCanary); {
	case err == nil:
		return nil, "", &FileError{Path: path, Problem: ErrNoKey, Detail: keyPath}
	case !errors.Is(err, ErrNotFound):
		return nil, "", fileError(path, err)
	}
	raw = NewKey()
	if err := writeNew(keyPath, raw); err != nil {
		return nil, "", fileError(keyPath, err)
	}
	logger.Info("state: generated a sealing key for the new state file; keep it with the file (without it the file does not open)", "key_file", keyPath)
	k, _ := ParseKey(raw)
	return [][]byte{k}, keyPath, nil
}

// writeNew writes a new file (mode 0600, never replacing one) and syncs it and its directory.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
		return err
	}
	syncDir(filepath.Dir(path))
	return nil
}

// openRedis opens the Redis engine, sealed with the key every replica shares.
func openRedis(ctx context.Context, cfg Config, logger *slog.Logger) (*TrackedStore, error) {
	if len(cfg.Key) == 0 {
		return nil, fmt.Errorf("state in redis %s needs a key all replicas share (state.keyFile or state.keyEnv)", cfg.Redis.Address)
	}
	keys, err := ParseKeyRing(cfg.Key)
	if err != nil {
		return nil, fmt.Errorf("state key from %s: %v", cfg.KeySource, err)
	}
	rs, err := OpenRedis(ctx, *cfg.Redis)
	if errors.Is(err, ErrUnreachable) && rs != nil {
		// Start without it: the replica serves nothing that needs the store until Redis answers and the key
		// opens the canary (the leases check it; Leases.Down is true until then).
		ss, serr := newSealed(rs, keys)
		if serr != nil {
			_ = rs.Close()
			return nil, serr
		}
		check := func(ctx context.Context) error {
			if err := ss.checkCanary(ctx); err != nil {
				if errors.Is(err, ErrWrongKey) {
					return fmt.Errorf("state in redis %s (prefix %q) does not open with the key from %s (sealed with another key): give the replicas' key", rs.addr, rs.prefix, cfg.KeySource)
				}
				return err
			}
			return nil
		}
		rs.pending.Store(&check)
		logger.Warn("state: redis does not answer at start; serving, but refusing new sessions and takeovers until it does", "address", rs.addr, "err", err)
		return Tracked(ss, logger, cfg.OnHealth), nil
	}
	if err != nil {
		return nil, err
	}
	s, err := Sealed(ctx, rs, keys[0], keys[1:]...)
	if err != nil {
		_ = rs.Close()
		if errors.Is(err, ErrWrongKey) {
			return nil, fmt.Errorf("state in redis %s (prefix %q) does not open with the key from %s (sealed with another key): give the replicas' key", rs.addr, rs.prefix, cfg.KeySource)
		}
		return nil, err
	}
	logger.Info("state kept in redis, shared by the replicas: sessions, pending requests and answers survive a restart and move to another replica when this one goes", "address", rs.addr, "prefix", rs.prefix, "tls", cfg.Redis.TLS != nil)
	return Tracked(s, logger, cfg.OnHealth), nil
}

// RedisEngine returns the Redis engine under s (a store Open returned), or nil when s is not kept in
// Redis.
func RedisEngine(s Store) *RedisStore {
	rs, _ := under[*RedisStore](s)
	return rs
}

// under returns the store of type T that s is or wraps (through the tracked and sealed stores Open makes).
func under[T Store](s Store) (T, bool) {
	for {
		if v, ok := s.(T); ok {
			return v, true
		}
		switch v := s.(type) {
		case *TrackedStore:
			s = v.Store
		case *sealed:
			s = v.Store
		default:
			var none T
			return none, false
		}
	}
}
