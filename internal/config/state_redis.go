package config

import (
	"time"
)

// StateRedis is the shared state of replicas that cover for each other (state.redis; docs/scaling.md,
// docs/adr/0070-replicas-share-state.md): every replica keeps sessions, pending requests and MRTR rounds
// in one Redis, sealed with the state key all replicas share (keyFile or keyEnv is required), and owns
// each session it serves through a lease there, so that another replica takes a session over when its
// owner dies or drains.
type StateRedis struct {
	// Address is host:port of the Redis primary (a single primary, or a Sentinel-managed or cloud
	// service's primary endpoint; Redis Cluster is not supported).
	Address string `yaml:"address"`
	// UsernameEnv names the environment variable holding the ACL user name (AUTH user pass); empty: the
	// default user.
	UsernameEnv string `yaml:"usernameEnv"`
	// PasswordEnv or PasswordFile hold the password (AUTH); neither: no AUTH.
	PasswordEnv  string `yaml:"passwordEnv"`
	PasswordFile string `yaml:"passwordFile"`
	// TLS connects with TLS. CAFile, when set, is the CA that signs the server's certificate (default:
	// the system's roots); ServerName overrides the name checked in it (default: the address's host).
	TLS        bool   `yaml:"tls"`
	CAFile     string `yaml:"caFile"`
	ServerName string `yaml:"serverName"`
	// KeyPrefix starts every key the bridge writes (default "mcp-bridge:"): several bridges can share a
	// Redis under different prefixes.
	KeyPrefix string `yaml:"keyPrefix"`
	// LeaseTTL is how long a replica's hold on a session lasts without renewal (default 5s): after a
	// replica dies its sessions can be taken over this long after its last renewal. It is renewed every
	// third of it.
	LeaseTTL time.Duration `yaml:"leaseTTL"`

	// Username and Password are read at load time from the sources above.
	Username Secret `yaml:"-"`
	Password Secret `yaml:"-"`
}

// DefaultLeaseTTL is state.redis.leaseTTL's default.
const DefaultLeaseTTL = 5 * time.Second

// validateStateRedis checks state.redis.
func (c *Config) validateStateRedis() error {
	r := c.State.Redis
	if r == nil {
		return nil
	}
	s := &c.State
	switch {
	case r.Address == "":
		return c.errorAt("state.redis.address", "required: host:port of the Redis primary")
	case CheckAddr(r.Address) != nil:
		return c.errorAt("state.redis.address", CheckAddr(r.Address).Error())
	case s.File != "":
		return c.errorAt("state.redis", "state.file and state.redis are both set; keep one (replicas share Redis)")
	case s.Memory:
		return c.errorAt("state.memory", "memory: true keeps nothing, but state.redis is set; keep one")
	case s.KeyFile == "" && s.KeyEnv == "":
		return c.errorAt("state.redis", "the replicas must share the state key: set state.keyFile or state.keyEnv")
	case r.PasswordEnv != "" && r.PasswordFile != "":
		return c.errorAt("state.redis.passwordFile", "set passwordEnv or passwordFile, not both")
	case !r.TLS && (r.CAFile != "" || r.ServerName != ""):
		return c.errorAt("state.redis.tls", "caFile and serverName need tls: true")
	case r.LeaseTTL < 0 || (r.LeaseTTL > 0 && r.LeaseTTL < time.Second):
		return c.errorAt("state.redis.leaseTTL", "at least 1s")
	}
	if r.LeaseTTL == 0 {
		r.LeaseTTL = DefaultLeaseTTL
	}
	return nil
}

// readStateRedisSecrets reads the Redis user name and password at load time.
func (c *Config) readStateRedisSecrets() error {
	r := c.State.Redis
	if r == nil {
		return nil
	}
	var err error
	if r.UsernameEnv != "" {
		if r.Username, err = c.secretEnv("state.redis.usernameEnv", r.UsernameEnv); err != nil {
			return err
		}
	}
	switch {
	case r.PasswordEnv != "":
		r.Password, err = c.secretEnv("state.redis.passwordEnv", r.PasswordEnv)
	case r.PasswordFile != "":
		r.Password, err = c.secretFile("state.redis.passwordFile", r.PasswordFile)
	}
	return err
}
