package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStateRedis(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "redis.pass"), []byte("pa55word\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MCPB_TEST_STATE_KEY", strings.Repeat("cd", 32))
	t.Setenv("MCPB_TEST_REDIS_PASS", "from-env")
	t.Setenv("MCPB_TEST_REDIS_USER", "bridge")
	for _, tc := range []struct {
		name, content string
		check         func(t *testing.T, r *StateRedis)
	}{
		{"minimal", "state:\n  keyEnv: MCPB_TEST_STATE_KEY\n  redis:\n    address: redis:6379\n", func(t *testing.T, r *StateRedis) {
			if r.Address != "redis:6379" || r.LeaseTTL != DefaultLeaseTTL || r.Password != "" || r.TLS {
				t.Errorf("redis = %+v", r)
			}
		}},
		{"password file, tls, prefix", "state:\n  keyEnv: MCPB_TEST_STATE_KEY\n  redis:\n    address: redis:6380\n    passwordFile: redis.pass\n    tls: true\n    keyPrefix: \"team-a:\"\n    leaseTTL: 3s\n", func(t *testing.T, r *StateRedis) {
			if r.Password.Reveal() != "pa55word" || !r.TLS || r.KeyPrefix != "team-a:" || r.LeaseTTL != 3*time.Second || r.PasswordFile != filepath.Join(dir, "redis.pass") {
				t.Errorf("redis = %+v", r)
			}
		}},
		{"user and password from the environment", "state:\n  keyEnv: MCPB_TEST_STATE_KEY\n  redis:\n    address: redis:6379\n    usernameEnv: MCPB_TEST_REDIS_USER\n    passwordEnv: MCPB_TEST_REDIS_PASS\n", func(t *testing.T, r *StateRedis) {
			if r.Username.Reveal() != "bridge" || r.Password.Reveal() != "from-env" {
				t.Errorf("redis = %+v", r)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse(filepath.Join(dir, "c.yaml"), []byte(tc.content))
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c.State.Redis)
		})
	}
}

func TestStateRedisErrors(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("MCPB_TEST_STATE_KEY", strings.Repeat("cd", 32))
	const key = "  keyEnv: MCPB_TEST_STATE_KEY\n"
	for _, tc := range []struct{ name, content, want string }{
		{"no address", "state:\n" + key + "  redis:\n    tls: true\n", "state.redis.address: required"},
		{"bad address", "state:\n" + key + "  redis:\n    address: nohost\n", "state.redis.address"},
		{"no shared key", "state:\n  redis:\n    address: r:6379\n", "state.redis: the replicas must share the state key"},
		{"file and redis", "state:\n  file: s.db\n" + key + "  redis:\n    address: r:6379\n", "state.file and state.redis are both set"},
		{"two passwords", "state:\n" + key + "  redis:\n    address: r:6379\n    passwordEnv: A\n    passwordFile: b\n", "set passwordEnv or passwordFile, not both"},
		{"ca without tls", "state:\n" + key + "  redis:\n    address: r:6379\n    caFile: ca.pem\n", "caFile and serverName need tls: true"},
		{"short lease", "state:\n" + key + "  redis:\n    address: r:6379\n    leaseTTL: 100ms\n", "state.redis.leaseTTL: at least 1s"},
		{"password env unset", "state:\n" + key + "  redis:\n    address: r:6379\n    passwordEnv: MCPB_TEST_NEVER_SET\n", "environment variable MCPB_TEST_NEVER_SET is not set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(filepath.Join(dir, "c.yaml"), []byte(tc.content))
			if err == nil {
				t.Fatal("Parse succeeded, want an error")
			}
			if !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}
