package state

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// The Redis engine: the shared store of replicas that cover for each other (docs/adr/0070-replicas-share-state.md).
//
// Layout under the key prefix P (RedisOptions.KeyPrefix, default "mcp-bridge:"):
//
//	P rec:<kind>      a hash per kind: field = record key, value = the (sealed) record
//	P lease:<session> the live lease of a session: its fence, expiring (PX) unless renewed (lease.go)
//	P fence:<session> the fence of the session's current owner, kept: every fenced write compares it
//	P want:<session>  the replica named in the session id asks its current holder to hand it back
//	P counter         the fencing counter, never lower than Redis's clock in microseconds
//
// Lua scripts touch several keys at once, so a Redis Cluster is not supported: a single primary (with
// replicas and Sentinel, or a managed service's failover) is. Records of one kind live in one hash, so
// List is one HSCAN.

// DefaultRedisPrefix is the key prefix of RedisOptions.KeyPrefix left empty.
const DefaultRedisPrefix = "mcp-bridge:"

// RedisOptions say how to reach Redis.
type RedisOptions struct {
	// Address is host:port of the Redis primary.
	Address string
	// Username and Password authenticate (AUTH); both may be empty. They never appear in errors or logs.
	Username, Password string
	// TLS, when set, connects with TLS.
	TLS *tls.Config
	// KeyPrefix starts every key the bridge writes (default DefaultRedisPrefix), so that several bridges
	// (or other applications) can share one Redis.
	KeyPrefix string
	// Timeout bounds dialling and each command's read and write (default 2s).
	Timeout time.Duration
}

// RedisStore is the Redis engine. It is safe for concurrent use. Writes made with a context carrying a
// Fence (WithFence) are checked in Redis against the session's current owner and refused with ErrFenced
// when another replica took the session over.
type RedisStore struct {
	rdb    *redis.Client
	prefix string
	addr   string
	closed atomic.Bool

	// pending, when set, is the check Open could not make because Redis did not answer at start (the key's
	// canary); the leases make it when Redis answers, and count Redis as unreachable until it passes.
	pending atomic.Pointer[func(context.Context) error]
}

// checkPending makes the check Open left for later, once: nil when there is none or it passed.
func (s *RedisStore) checkPending(ctx context.Context) error {
	f := s.pending.Load()
	if f == nil {
		return nil
	}
	if err := (*f)(ctx); err != nil {
		return err
	}
	s.pending.CompareAndSwap(f, nil)
	return nil
}

// StartedDown reports whether Redis had not answered at start and the key is not checked yet.
func (s *RedisStore) StartedDown() bool { return s.pending.Load() != nil }

// ErrFenced is the error of a write made under a fence that is no longer the session's: another replica
// took the session over (or Redis lost the lease). The write did not happen.
var ErrFenced = errors.New("state: write refused: the session is owned by another replica now")

// ErrNotHeld is the error of a write for a session this replica does not hold (any more): it gave the
// session up or lost its lease, so the write is refused before it reaches the store. The write did not
// happen. (ownership's fenced store returns it; the core asks for it when a write must not be lost.)
var ErrNotHeld = errors.New("state: write refused: this replica does not hold the session")

// Fence is what a fenced write carries: the session whose records it writes and the token its owner was
// granted (Leases.Acquire).
type Fence struct {
	Session string
	Token   string
}

type fenceKey struct{}

// WithFence returns ctx carrying f: Put and Delete of the Redis engine under it happen only while f.Token
// is the session's current fence. Other engines ignore it.
func WithFence(ctx context.Context, f Fence) context.Context {
	return context.WithValue(ctx, fenceKey{}, f)
}

// FenceOf returns the fence ctx carries (WithFence).
func FenceOf(ctx context.Context) (Fence, bool) { return fenceFrom(ctx) }

func fenceFrom(ctx context.Context) (Fence, bool) {
	f, ok := ctx.Value(fenceKey{}).(Fence)
	return f, ok && f.Session != ""
}

// OpenRedis connects to Redis and checks that it answers (PING, which also checks AUTH). Its errors name
// the address and what failed, never the password. When Redis does not answer (ErrUnreachable) it returns
// the store along with the error, for a caller that starts without Redis.
func OpenRedis(ctx context.Context, opts RedisOptions) (*RedisStore, error) {
	if opts.Address == "" {
		return nil, errors.New("state: redis: no address")
	}
	if opts.KeyPrefix == "" {
		opts.KeyPrefix = DefaultRedisPrefix
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 2 * time.Second
	}
	rdb := redis.NewClient(&redis.Options{
		Addr:         opts.Address,
		Username:     opts.Username,
		Password:     opts.Password,
		TLSConfig:    opts.TLS,
		DialTimeout:  opts.Timeout,
		ReadTimeout:  opts.Timeout,
		WriteTimeout: opts.Timeout,
		MaxRetries:   1,
		// The bridge's calls carry their own deadlines; a cancelled context must return at once.
		ContextTimeoutEnabled: true,
		DisableIdentity:       true, // no CLIENT SETINFO: older and managed Redis refuse it
		// No cluster maintenance notifications (a Redis Enterprise feature): their circuit breaker runs a
		// goroutine that outlives Close.
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	})
	s := &RedisStore{rdb: rdb, prefix: opts.KeyPrefix, addr: opts.Address}
	if err := rdb.Ping(ctx).Err(); err != nil {
		err = s.wrap("connecting", err)
		if errors.Is(err, ErrUnreachable) {
			return s, err // the caller may start without it (Open does)
		}
		_ = rdb.Close()
		return nil, err
	}
	return s, nil
}

// Address is the Redis address the store talks to.
func (s *RedisStore) Address() string { return s.addr }

// Ping checks that Redis answers.
func (s *RedisStore) Ping(ctx context.Context) error {
	if s.closed.Load() {
		return ErrClosed
	}
	return s.wrap("ping", s.rdb.Ping(ctx).Err())
}

func (s *RedisStore) recKey(kind Kind) string        { return s.prefix + "rec:" + string(kind) }
func (s *RedisStore) leaseKey(session string) string { return s.prefix + "lease:" + session }
func (s *RedisStore) fenceKey(session string) string { return s.prefix + "fence:" + session }
func (s *RedisStore) wantKey(session string) string  { return s.prefix + "want:" + session }
func (s *RedisStore) counterKey() string             { return s.prefix + "counter" }

// wrap names the engine and the operation; go-redis's errors never carry the password, and a network
// error is reduced to what failed (no credentials are in addresses here).
func (s *RedisStore) wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("state: redis %s: %s: %w", s.addr, op, err)
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return fmt.Errorf("state: redis %s: %s: %w: %v", s.addr, op, ErrUnreachable, ne)
	}
	if errors.Is(err, redis.ErrClosed) {
		return ErrClosed
	}
	msg := err.Error()
	if strings.Contains(msg, "WRONGPASS") || strings.Contains(msg, "NOAUTH") || strings.Contains(msg, "NOPERM") {
		return fmt.Errorf("state: redis %s: %s: authentication failed (check the username and password)", s.addr, op)
	}
	return fmt.Errorf("state: redis %s: %s: %w", s.addr, op, err)
}

// ErrUnreachable: the Redis server does not answer (connection refused, reset, timed out).
var ErrUnreachable = errors.New("redis unreachable")

func (s *RedisStore) check(ctx context.Context, kind Kind, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkRecord(kind, key); err != nil {
		return err
	}
	if s.closed.Load() {
		return ErrClosed
	}
	return nil
}

// fencedPut writes a record only while the session's fence is the caller's.
var fencedPut = redis.NewScript(`
if redis.call('GET', KEYS[2]) ~= ARGV[3] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1`)

// fencedDel deletes a record only while the session's fence is the caller's.
var fencedDel = redis.NewScript(`
if redis.call('GET', KEYS[2]) ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
return 1`)

func (s *RedisStore) Put(ctx context.Context, kind Kind, key string, value []byte) error {
	if err := s.check(ctx, kind, key); err != nil {
		return err
	}
	if f, ok := fenceFrom(ctx); ok {
		n, err := fencedPut.Run(ctx, s.rdb, []string{s.recKey(kind), s.fenceKey(f.Session)}, key, value, f.Token).Int()
		if err != nil {
			return s.wrap("put", err)
		}
		if n == 0 {
			return fmt.Errorf("%s/%s: %w", kind, key, ErrFenced)
		}
		return nil
	}
	return s.wrap("put", s.rdb.HSet(ctx, s.recKey(kind), key, value).Err())
}

func (s *RedisStore) Delete(ctx context.Context, kind Kind, key string) error {
	if err := s.check(ctx, kind, key); err != nil {
		return err
	}
	if f, ok := fenceFrom(ctx); ok {
		n, err := fencedDel.Run(ctx, s.rdb, []string{s.recKey(kind), s.fenceKey(f.Session)}, key, f.Token).Int()
		if err != nil {
			return s.wrap("delete", err)
		}
		if n == 0 {
			return fmt.Errorf("%s/%s: %w", kind, key, ErrFenced)
		}
		return nil
	}
	return s.wrap("delete", s.rdb.HDel(ctx, s.recKey(kind), key).Err())
}

func (s *RedisStore) Get(ctx context.Context, kind Kind, key string) ([]byte, error) {
	if err := s.check(ctx, kind, key); err != nil {
		return nil, err
	}
	v, err := s.rdb.HGet(ctx, s.recKey(kind), key).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, s.wrap("get", err)
	}
	if v == nil {
		v = []byte{}
	}
	return v, nil
}

// List scans the kind's hash (HSCAN, which may return a field twice while Redis rehashes: each key is
// given to fn once).
func (s *RedisStore) List(ctx context.Context, kind Kind, fn func(key string, value []byte) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if kind == "" {
		return errors.New("state: empty kind")
	}
	if s.closed.Load() {
		return ErrClosed
	}
	seen := map[string]bool{}
	var cursor uint64
	for {
		kvs, next, err := s.rdb.HScan(ctx, s.recKey(kind), cursor, "*", 256).Result()
		if err != nil {
			return s.wrap("list", err)
		}
		for i := 0; i+1 < len(kvs); i += 2 {
			k := kvs[i]
			if seen[k] {
				continue
			}
			seen[k] = true
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(k, slices.Clip([]byte(kvs[i+1]))); err != nil {
				return err
			}
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}

// Close closes the connection pool. It is idempotent.
func (s *RedisStore) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	_ = s.rdb.Close()
	return nil
}

// RouteRedisLogs sends the Redis client's own log lines (connection pool retries, which it prints to stderr
// by default) to logger at level debug: the bridge reports Redis trouble itself, once. The client's logger is
// process-wide; the binary calls this once at start.
func RouteRedisLogs(logger *slog.Logger) {
	redis.SetLogger(redisLog{logger})
}

type redisLog struct{ l *slog.Logger }

func (r redisLog) Printf(ctx context.Context, format string, v ...any) {
	r.l.Log(ctx, slog.LevelDebug, "redis client: "+fmt.Sprintf(format, v...))
}
