package state

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Ownership of sessions among replicas (docs/adr/0070-replicas-share-state.md).
//
// Exactly one replica serves a session at a time. It holds the session's lease, a Redis key set with
// SET NX PX semantics (in a Lua script) and renewed every third of its TTL by a compare-and-set; when the
// owner dies the key expires and another replica may take the session over; when it drains it deletes the
// key at once. Each grant carries a fencing token, "<counter>/<replica>/<process nonce>", which also goes
// into the session's fence key (kept, no TTL). Every write of the session's records carries the token
// (WithFence) and is done by a Lua script only while the fence key still holds it: an owner that was only
// paused (a GC pause, SIGSTOP, a stalled node) and lost its lease meanwhile has its writes refused
// (ErrFenced), and its next renewal tells it the session is gone.
//
// A Redis that lost its data (restarted without persistence, or from an old snapshot) must not hand one
// session to two replicas. Two things ensure it. The counter never goes backwards in practice: each grant
// takes max(counter+1, Redis's clock in microseconds), so even an empty Redis issues tokens above every
// earlier one. And tokens are compared whole, never by magnitude: the replica's name and a random nonce
// of its process make a token unique even if the counter did repeat, so an old owner's token never
// matches a new owner's fence. An owner whose fence key vanished (the data was lost) takes the lease
// again through the same script as any other replica — one of them wins — and rewrites the session's
// record (Reseeded).
//
// While Redis does not answer, a replica keeps serving the sessions it holds (no other replica can take
// them over: they cannot reach Redis either) and takes over none.

// HeldError is Acquire's error when another replica holds a live lease on the session.
type HeldError struct {
	Session string
	// Holder is the replica that holds it.
	Holder string
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("session %s is held by replica %s", e.Session, e.Holder)
}

// ErrNoLease: the replica does not hold the session's lease (Confirm).
var ErrNoLease = errors.New("state: this replica does not hold the session's lease")

// LeaseEvents are what the renewal loop tells its owner. Each function is called from the loop's goroutine
// and must not block for long; nil functions are skipped.
type LeaseEvents struct {
	// Lost: the replica no longer holds the session (another took it over, or its fence vanished and
	// another replica took it first). Stop serving it; its records are another replica's now.
	Lost func(session string)
	// Wanted: the replica named in the session id asks for it back (AskBack). Release it.
	Wanted func(session string)
	// Reseeded: Redis lost the session's keys and this replica holds the lease again; write the session's
	// records anew.
	Reseeded func(session string)
	// Reachable: Redis answers again (true) or stopped answering (false).
	Reachable func(ok bool)
}

// Leases is one replica's view of the sessions it owns. Create it with NewLeases; Run renews. It is safe
// for concurrent use.
type Leases struct {
	rs      *RedisStore
	replica string
	nonce   string
	ttl     time.Duration
	logger  *slog.Logger

	down       atomic.Bool // the last renewal found Redis unreachable (or, from the start, not yet checked)
	keyRefused atomic.Bool // the check left from the start failed: logged once

	mu    sync.Mutex           // guards held (and each held lease's validUntil), ended and gone
	held  map[string]*lease    // by session id
	ended map[string]time.Time // sessions that ended for good (Forget), still held for endedGrace
	gone  map[string]time.Time // sessions this replica gave up or lost, and when (until it acquires them again, or goneKeep)
}

// lease is a held lease: its token and until when it is surely valid, by this process's monotonic clock.
type lease struct {
	token      string
	validUntil time.Time
}

// leaseMargin is the share of the TTL by which a replica counts its lease as over before Redis expires it
// (the time a request takes to reach Redis counts against it, and clocks drift).
const leaseMargin = 5

// NewLeases returns the leases of replica over the sessions kept in rs. ttl is how long a lease lasts
// without renewal.
func NewLeases(rs *RedisStore, replica string, ttl time.Duration, logger *slog.Logger) *Leases {
	if logger == nil {
		logger = slog.Default()
	}
	l := &Leases{rs: rs, replica: replica, nonce: strings.ToLower(rand.Text()[:10]), ttl: ttl, logger: logger,
		held: map[string]*lease{}, ended: map[string]time.Time{}, gone: map[string]time.Time{}}
	l.down.Store(rs.StartedDown()) // Redis did not answer at start: nothing that needs it until it does
	return l
}

// TTL is the lease's time to live.
func (l *Leases) TTL() time.Duration { return l.ttl }

// Replica is the name of the replica whose leases these are.
func (l *Leases) Replica() string { return l.replica }

// Down reports whether Redis stopped answering the renewals.
func (l *Leases) Down() bool { return l.down.Load() }

// acquireScript grants the lease when no live lease holds the session.
var acquireScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur then return {0, cur} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local n = tonumber(redis.call('GET', KEYS[3]) or '0') + 1
if n < now then n = now end
local ns = string.format('%d', n)
redis.call('SET', KEYS[3], ns)
local tok = ns .. '/' .. ARGV[1] .. '/' .. ARGV[2]
redis.call('SET', KEYS[1], tok, 'PX', ARGV[3])
redis.call('SET', KEYS[2], tok)
return {1, tok}`)

// renewScript extends a lease its caller holds: 1 renewed, 2 renewed and asked back, 0 lost, 3 vanished.
var renewScript = redis.NewScript(`
local f = redis.call('GET', KEYS[2])
if not f then return 3 end
if f ~= ARGV[1] then return 0 end
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
if redis.call('EXISTS', KEYS[3]) == 1 then return 2 end
return 1`)

// releaseScript gives a lease up: the lease key goes, and the fence no longer admits the old token.
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[2], 'released/' .. ARGV[1])
return 1`)

// forgetScript drops the keys of a session that ended for good; its fence stays a while for the writes
// that finish its end.
var forgetScript = redis.NewScript(`
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1], KEYS[3])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1`)

// Acquire takes the session's lease and returns its fence. A session this replica holds already is
// confirmed with Redis instead. Errors: *HeldError when another replica's live lease holds it; ErrUnreachable
// (wrapped) when Redis does not answer.
func (l *Leases) Acquire(ctx context.Context, session string) (Fence, error) {
	if f, err := l.Confirm(ctx, session); !errors.Is(err, ErrNoLease) {
		return f, err
	}
	sent := time.Now()
	res, err := acquireScript.Run(ctx, l.rs.rdb, []string{l.rs.leaseKey(session), l.rs.fenceKey(session), l.rs.counterKey()},
		l.replica, l.nonce, l.ttl.Milliseconds()).Slice()
	if err != nil {
		return Fence{}, l.rs.wrap("acquiring a lease", err)
	}
	ok, _ := res[0].(int64)
	tok, _ := res[1].(string)
	if ok != 1 {
		return Fence{}, &HeldError{Session: session, Holder: tokenReplica(tok)}
	}
	l.mu.Lock()
	l.held[session] = &lease{token: tok, validUntil: sent.Add(l.ttl - l.ttl/leaseMargin)}
	delete(l.ended, session)
	delete(l.gone, session)
	l.mu.Unlock()
	_ = l.rs.rdb.Del(ctx, l.rs.wantKey(session)).Err() // a request to hand it back is answered
	return Fence{Session: session, Token: tok}, nil
}

// tokenReplica is the replica named in a token "<counter>/<replica>/<nonce>".
func tokenReplica(tok string) string {
	parts := strings.Split(tok, "/")
	if len(parts) == 3 {
		return parts[1]
	}
	return "?"
}

// Fence returns the fence of a session this replica holds (or ended less than a minute ago), for its
// writes.
func (l *Leases) Fence(session string) (Fence, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if h := l.held[session]; h != nil {
		return Fence{Session: session, Token: h.token}, true
	}
	return Fence{}, false
}

// Holds reports whether this replica surely holds the session now: the lease was renewed less than its
// TTL (less a margin) ago by this process's monotonic clock, or Redis does not answer (then nobody can
// take the session over, and the replica keeps serving it). A replica that was paused past its lease
// finds its lease over here and must Confirm it with Redis before acting.
func (l *Leases) Holds(session string) bool {
	l.mu.Lock()
	h := l.held[session]
	valid := h != nil && time.Now().Before(h.validUntil) // validUntil moves under mu (renewals, Confirm)
	l.mu.Unlock()
	return h != nil && (valid || l.down.Load())
}

// Confirm renews a held lease now and returns its fence: ErrNoLease when this replica does not hold it
// (any more: it is dropped), ErrUnreachable (wrapped) when Redis does not answer.
func (l *Leases) Confirm(ctx context.Context, session string) (Fence, error) {
	l.mu.Lock()
	h := l.held[session]
	l.mu.Unlock()
	if h == nil {
		return Fence{}, ErrNoLease
	}
	sent := time.Now()
	n, err := renewScript.Run(ctx, l.rs.rdb, []string{l.rs.leaseKey(session), l.rs.fenceKey(session), l.rs.wantKey(session)},
		h.token, l.ttl.Milliseconds()).Int()
	if err != nil {
		return Fence{}, l.rs.wrap("renewing a lease", err)
	}
	switch n {
	case 1, 2:
		l.mu.Lock()
		if l.held[session] == h {
			h.validUntil = sent.Add(l.ttl - l.ttl/leaseMargin)
		}
		l.mu.Unlock()
		return Fence{Session: session, Token: h.token}, nil
	}
	l.Drop(session)
	return Fence{}, ErrNoLease
}

// Drop forgets a lease without telling Redis (it was lost).
func (l *Leases) Drop(session string) {
	l.mu.Lock()
	if l.held[session] != nil {
		l.gone[session] = time.Now()
	}
	delete(l.held, session)
	l.mu.Unlock()
}

// Gone reports whether this replica gave the session up or lost it (and has not taken it again): its
// writes must be refused, not take the lease anew.
func (l *Leases) Gone(session string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, gone := l.gone[session]
	return gone
}

// Release gives the session up at once, so that another replica may take it over: this replica stops
// writing its records first (Fence fails), then the lease key is deleted and the fence refuses the old
// token. A lease that is not held is not an error.
func (l *Leases) Release(ctx context.Context, session string) error {
	l.mu.Lock()
	h := l.held[session]
	delete(l.held, session)
	if h != nil {
		l.gone[session] = time.Now()
	}
	l.mu.Unlock()
	if h == nil {
		return nil
	}
	err := releaseScript.Run(ctx, l.rs.rdb, []string{l.rs.leaseKey(session), l.rs.fenceKey(session)}, h.token).Err()
	return l.rs.wrap("releasing a lease", err)
}

// Relinquish hands the session over to another replica: this replica stops writing its records at once
// (Fence fails, Gone is true), closeLocal stops serving it here while the lease still keeps others out
// (so that the old upstream connection is closed before a new owner opens one), then the lease is
// released. A session not held is only closed locally.
func (l *Leases) Relinquish(ctx context.Context, session string, closeLocal func()) error {
	l.mu.Lock()
	h := l.held[session]
	delete(l.held, session)
	l.gone[session] = time.Now()
	l.mu.Unlock()
	closeLocal()
	if h == nil {
		return nil
	}
	err := releaseScript.Run(ctx, l.rs.rdb, []string{l.rs.leaseKey(session), l.rs.fenceKey(session)}, h.token).Err()
	return l.rs.wrap("releasing a lease", err)
}

// goneKeep is how long a replica remembers the sessions it gave up or lost, refusing their writes.
const goneKeep = time.Hour

// endedGrace is how long the fence of a session that ended for good still admits its owner's writes (the
// deletions that finish its end).
const endedGrace = time.Minute

// Forget drops the lease of a session that ended for good (its record was deleted): no renewal, and its
// keys go (the fence after endedGrace).
func (l *Leases) Forget(ctx context.Context, session string) {
	l.mu.Lock()
	h := l.held[session]
	if h != nil {
		l.ended[session] = time.Now()
	}
	l.mu.Unlock()
	if h == nil {
		return
	}
	_ = forgetScript.Run(ctx, l.rs.rdb, []string{l.rs.leaseKey(session), l.rs.fenceKey(session), l.rs.wantKey(session)},
		h.token, endedGrace.Milliseconds()).Err()
}

// AskBack asks the replica holding the session to hand it over (the session id names this replica, which
// is serving again). The holder's renewal sees it within a third of the TTL (LeaseEvents.Wanted).
func (l *Leases) AskBack(ctx context.Context, session string) error {
	return l.rs.wrap("asking for a session back", l.rs.rdb.Set(ctx, l.rs.wantKey(session), l.replica, l.ttl).Err())
}

// Held lists the sessions this replica holds.
func (l *Leases) Held() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, 0, len(l.held))
	for s := range l.held {
		out = append(out, s)
	}
	return out
}

// ReleaseAll releases every lease (a drain): others may take the sessions over at once.
func (l *Leases) ReleaseAll(ctx context.Context) (released int, err error) {
	for _, s := range l.Held() {
		if e := l.Release(ctx, s); e != nil {
			err = e
			continue
		}
		released++
	}
	return released, err
}

// Run renews the held leases every third of the TTL until ctx ends, telling ev what changed. The caller
// owns it: it returns when ctx is done.
func (l *Leases) Run(ctx context.Context, ev LeaseEvents) {
	tick := time.NewTicker(l.ttl / 3)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		l.renewAll(ctx, ev)
	}
}

// renewAll renews every held lease in one pipeline.
func (l *Leases) renewAll(ctx context.Context, ev LeaseEvents) {
	l.mu.Lock()
	now := time.Now()
	for s, at := range l.ended {
		if now.Sub(at) > endedGrace {
			delete(l.ended, s)
			delete(l.held, s)
			l.gone[s] = now
		}
	}
	for s, at := range l.gone {
		if now.Sub(at) > goneKeep {
			delete(l.gone, s) // its local copy closed long ago: nothing writes for it any more
		}
	}
	type item struct {
		session string
		h       *lease
		cmd     *redis.Cmd
	}
	var items []item
	for s, h := range l.held {
		if _, ended := l.ended[s]; !ended {
			items = append(items, item{session: s, h: h})
		}
	}
	l.mu.Unlock()
	sent := time.Now()
	rctx, cancel := context.WithTimeout(ctx, l.ttl/3)
	defer cancel()
	pipe := l.rs.rdb.Pipeline()
	for i := range items {
		it := &items[i]
		it.cmd = renewScript.Eval(rctx, pipe, []string{l.rs.leaseKey(it.session), l.rs.fenceKey(it.session), l.rs.wantKey(it.session)},
			it.h.token, l.ttl.Milliseconds())
	}
	if len(items) == 0 {
		pipe.Ping(rctx)
	}
	_, err := pipe.Exec(rctx)
	if err != nil && !errors.Is(err, redis.Nil) && ctx.Err() == nil {
		var re redis.Error
		if !errors.As(err, &re) { // a network error: Redis is unreachable
			if !l.down.Swap(true) {
				l.logger.Warn("state: redis does not answer; serving the sessions held, taking none over until it does", "address", l.rs.addr, "err", l.rs.wrap("renewing leases", err))
				if ev.Reachable != nil {
					ev.Reachable(false)
				}
			}
			return
		}
	}
	if ctx.Err() != nil {
		return
	}
	if err := l.rs.checkPending(ctx); err != nil {
		// Redis answers, but the check left from the start fails (another key): stay unavailable.
		if !l.down.Swap(true) && ev.Reachable != nil {
			ev.Reachable(false)
		}
		if !l.keyRefused.Swap(true) {
			l.logger.Error("state: redis answers, but its state does not open with this replica's key; refusing new sessions and takeovers until it does (logged once)", "err", err)
		}
		return
	}
	if l.down.Swap(false) {
		l.logger.Info("state: redis answers again", "address", l.rs.addr)
		if ev.Reachable != nil {
			ev.Reachable(true)
		}
	}
	for _, it := range items {
		n, err := it.cmd.Int()
		if err != nil {
			continue // this one failed on its own (a script error): try again at the next tick
		}
		switch n {
		case 1, 2:
			l.mu.Lock()
			if l.held[it.session] == it.h {
				it.h.validUntil = sent.Add(l.ttl - l.ttl/leaseMargin)
			}
			l.mu.Unlock()
			if n == 2 && ev.Wanted != nil {
				ev.Wanted(it.session)
			}
		case 3:
			// Redis lost the session's keys: take the lease again like any replica would.
			l.Drop(it.session)
			if _, err := l.Acquire(ctx, it.session); err == nil {
				l.logger.Warn("state: redis lost a session's lease and fence (restarted without its data?); this replica holds it again and rewrites its record", "session", it.session)
				if ev.Reseeded != nil {
					ev.Reseeded(it.session)
				}
				continue
			}
			fallthrough
		default:
			l.Drop(it.session)
			if ev.Lost != nil {
				ev.Lost(it.session)
			}
		}
	}
}
