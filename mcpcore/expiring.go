package mcpcore

import (
	"time"
)

// This file holds the Dispatcher's bounded memory of ended things (tombstones, late answers).

// expiring is a map whose entries are forgotten after ttl or when more than max are held, oldest first.
// Insertion order is the age order, so eviction is amortised O(1). It is not safe for concurrent use (the
// Dispatcher guards it with its mutex).
type expiring[V any] struct {
	ttl   time.Duration
	max   int
	m     map[string]expiringValue[V]
	order []expiringKey // oldest first, from head
	head  int
}

type expiringValue[V any] struct {
	v  V
	at time.Time
}

type expiringKey struct {
	key string
	at  time.Time
}

func newExpiring[V any](ttl time.Duration, maxEntries int) expiring[V] {
	return expiring[V]{ttl: ttl, max: maxEntries, m: make(map[string]expiringValue[V])}
}

func (x *expiring[V]) add(key string, v V, now time.Time) {
	x.m[key] = expiringValue[V]{v: v, at: now}
	x.order = append(x.order, expiringKey{key: key, at: now})
	x.prune(now)
}

// get returns the value of key if it is held and not expired.
func (x *expiring[V]) get(key string, now time.Time) (V, bool) {
	ev, ok := x.m[key]
	if !ok || now.Sub(ev.at) > x.ttl {
		var zero V
		return zero, false
	}
	return ev.v, true
}

// prune forgets what is older than ttl and what exceeds max.
func (x *expiring[V]) prune(now time.Time) {
	for x.head < len(x.order) {
		k := x.order[x.head]
		if len(x.order)-x.head <= x.max && now.Sub(k.at) <= x.ttl {
			break
		}
		// The key may have been added again later (a session closed twice); delete only its own entry.
		if ev, ok := x.m[k.key]; ok && ev.at.Equal(k.at) {
			delete(x.m, k.key)
		}
		x.order[x.head] = expiringKey{}
		x.head++
	}
	if x.head > 1024 && x.head > len(x.order)/2 {
		n := copy(x.order, x.order[x.head:])
		clear(x.order[n:])
		x.order = x.order[:n]
		x.head = 0
	}
}

// remove forgets key (its place in the age order is skipped by prune).
func (x *expiring[V]) remove(key string) { delete(x.m, key) }

func (x *expiring[V]) len() int { return len(x.m) }

// each calls f for every entry held and not expired, in no particular order.
func (x *expiring[V]) each(now time.Time, f func(key string, v V)) {
	x.prune(now)
	for k, ev := range x.m {
		if now.Sub(ev.at) <= x.ttl {
			f(k, ev.v)
		}
	}
}
