//go:build !unix

package state

import (
	"os"
	"time"
)

// lockFile is a no-op where there is no flock: bbolt's own lock still guards every open.
func lockFile(*os.File, time.Duration) error { return nil }
