package state

import (
	"testing"

	"go.uber.org/goleak"
)

// Every store's goroutine (the file engine's writer) ends at Close.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
