package state

import "context"

// FilePath is the path of a store made by OpenFile (tests).
func FilePath(s Store) string { return s.(*fileStore).path }

// RedisPrefix is the key prefix of a Redis store.
func RedisPrefix(s Store) string { return s.(*RedisStore).prefix }

// RenewNow runs one round of the renewal loop.
func (l *Leases) RenewNow(ctx context.Context, ev LeaseEvents) { l.renewAll(ctx, ev) }
