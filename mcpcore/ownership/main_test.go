package ownership

import (
	"testing"

	"go.uber.org/goleak"
)

// The owner's one goroutine (the leases' renewal) ends at Close.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
