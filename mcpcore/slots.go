package mcpcore

import "sync"

// slots is a counting semaphore whose size can change while slots are held (limits.maxStdioProcesses, live
// since docs/adr/0100): a larger limit admits more at once; a smaller one refuses new holders until enough
// of the running ones have released, and never takes a slot back from a holder.
type slots struct {
	mu      sync.Mutex
	running int
	limit   int
}

func newSlots(limit int) *slots { return &slots{limit: limit} }

// acquire takes a slot; false (and the limit then in force) when running holders already fill the limit.
func (s *slots) acquire() (ok bool, limit int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running >= s.limit {
		return false, s.limit
	}
	s.running++
	return true, s.limit
}

// release gives a slot back; each successful acquire releases once.
func (s *slots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running--
}

// setLimit replaces the limit; holders beyond a lowered limit keep their slots.
func (s *slots) setLimit(limit int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limit = limit
}

// counts returns the slots held and the limit.
func (s *slots) counts() (running, limit int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running, s.limit
}
