package config

import (
	"fmt"

	"github.com/mcp-bridge/mcp-bridge/internal/state"
)

// State says where the bridge keeps what must outlive its process: sessions, pending requests and accepted
// answers, multi round-trip calls between rounds, task handles (docs/adr/0020-state-store.md). Without a
// file the state lives in memory and a restart loses it.
type State struct {
	// File is the state file (a bbolt database; its directory is created, mode 0700). Relative paths are
	// relative to the config file's directory. The --state-file flag overrides it.
	File string `yaml:"file"`
	// KeyFile or KeyEnv hold the AES-256 key that seals every record (64 hex digits or base64 of 32 bytes,
	// as oauth.tokenStoreKeyFile). Neither: a key is generated on first start into "<file>.key" (0600),
	// which must then be kept with the file.
	KeyFile string `yaml:"keyFile"`
	KeyEnv  string `yaml:"keyEnv"`
	// Memory keeps state in memory only, explicitly: a restart loses every session. It is what a bridge
	// without file does too, but without the line in the log saying so.
	Memory bool `yaml:"memory"`
	// FSync, when false, skips the fsync of each write: what was written survives the bridge's end
	// (kill -9, an OOM kill) but not a power cut or a crash of the machine, which may also leave a file
	// that only --state-reset opens. Default true.
	FSync *bool `yaml:"fsync"`
	// Redis, when set, keeps the state in a Redis all replicas share, instead of a file (state_redis.go).
	Redis *StateRedis `yaml:"redis"`

	// Key is the key as written in KeyFile or KeyEnv (state.ParseKey decodes it), read at load time.
	Key Secret `yaml:"-"`
	// Reset moves an existing state file aside and starts empty: the --state-reset flag (there is no key
	// for it in the file, so that a start-over is never left on by accident).
	Reset bool `yaml:"-"`
}

// Durable reports whether what the bridge keeps outlives its process: state in a file or in Redis. It is
// the one answer to "where does state live" that every decision asks (what the core writes, where upstream
// OAuth grants go, whether /readyz reports the store's write health); nothing else looks at File or Redis
// for it.
func (s *State) Durable() bool { return s.File != "" || s.Redis != nil }

// Shared reports whether replicas share the state (Redis): records another process wrote may appear at any
// time, so what is looked up is read from the store, not from what this process loaded at start.
func (s *State) Shared() bool { return s.Redis != nil }

// Sync reports whether each write is synced to disk (fsync, default true).
func (s *State) Sync() bool { return s.FSync == nil || *s.FSync }

// KeySource names where the key comes from, for messages: the key file, "$NAME", or the generated key
// file beside the state file.
func (s *State) KeySource() string {
	switch {
	case s.KeyFile != "":
		return s.KeyFile
	case s.KeyEnv != "":
		return "$" + s.KeyEnv
	case s.File != "":
		return state.KeyFile(s.File)
	}
	return ""
}

// validateState checks the state block.
func (c *Config) validateState() error {
	s := &c.State
	switch {
	case s.KeyFile != "" && s.KeyEnv != "":
		return c.errorAt("state.keyEnv", "set keyFile or keyEnv, not both")
	case s.Memory && s.File != "":
		return c.errorAt("state.memory", "memory: true keeps nothing, but state.file is set; keep one")
	case s.Memory && s.FSync != nil:
		return c.errorAt("state.fsync", "there is nothing to sync with memory: true")
	case s.Redis != nil:
		return c.validateStateRedis()
	case s.File == "" && (s.KeyFile != "" || s.KeyEnv != ""):
		return c.errorAt("state", "a state key without state.file")
	}
	return nil
}

// readStateKey reads the state key the block names and checks that it is one.
func (c *Config) readStateKey() error {
	if err := c.readStateRedisSecrets(); err != nil {
		return err
	}
	s := &c.State
	var (
		key  string
		err  error
		path string
	)
	switch {
	case s.KeyFile != "":
		path = "state.keyFile"
		s.Key, err = c.secretFile(path, s.KeyFile)
	case s.KeyEnv != "":
		path = "state.keyEnv"
		s.Key, err = c.secretEnv(path, s.KeyEnv)
	default:
		return nil
	}
	if err != nil {
		return err
	}
	key = s.Key.Reveal()
	if _, err := state.ParseKeyRing([]byte(key)); err != nil {
		return c.errorAt(path, fmt.Sprintf("%s: %v", s.KeySource(), err))
	}
	return nil
}
