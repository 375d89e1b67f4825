package state

// FilePath is the path of a store made by OpenFile (tests).
func FilePath(s Store) string { return s.(*fileStore).path }

// RedisPrefix is the key prefix of a Redis store.
func RedisPrefix(s Store) string { return s.(*RedisStore).prefix }
