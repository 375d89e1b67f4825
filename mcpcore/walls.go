package mcpcore

// Walls: the limits of the process itself — descriptors (RLIMIT_NOFILE) and OS threads — that the core's
// own limits must stay under (docs/adr/0094-walls-and-hostile-input.md). Every upstream session holds
// descriptors (an HTTP/1.1 connection for a Streamable HTTP session's standalone stream, three pipes for a
// stdio server) and every stdio server an OS thread (its reaper waits in wait4). Reaching the descriptor
// limit would not only refuse a new session: every live session's next call that needs a new connection,
// the health endpoint and new host connections would fail too. So the core refuses a new session while
// fewer than Limits.DescriptorReserve descriptors are left, keeping those for the live ones.

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime/debug"
	"syscall"
)

// Bounds of the process the limits are checked against.
const (
	// MaxStdioProcessesCeiling is the highest limits.maxStdioProcesses the configuration accepts: each
	// running stdio server holds an OS thread and the Go runtime aborts the process at its thread limit
	// (10,000 by default; runtime/debug.SetMaxThreads), which the rest of the bridge needs some of.
	MaxStdioProcessesCeiling = 8192
	// MinDescriptorReserve is the smallest default reserve (Limits.DescriptorReserve); the default is a
	// tenth of the descriptor limit, at least this.
	MinDescriptorReserve = 64
	// DescriptorsPerStdioSession and DescriptorsPerHTTPSession are what one session holds while it is open,
	// for the start-up comparison of limits (Walls.Check).
	DescriptorsPerStdioSession = 3
	DescriptorsPerHTTPSession  = 1
)

// Walls are the process's own limits.
type Walls struct {
	NoFileSoft, NoFileHard uint64 // RLIMIT_NOFILE; Go raises the soft limit to the hard one at start (since 1.19)
	MaxThreads             int    // runtime/debug.SetMaxThreads
}

// ProcessWalls reads the process's limits.
func ProcessWalls() Walls {
	var w Walls
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) == nil {
		w.NoFileSoft, w.NoFileHard = rl.Cur, rl.Max
	}
	w.MaxThreads = debug.SetMaxThreads(10000)
	debug.SetMaxThreads(w.MaxThreads)
	return w
}

// descriptorReserve is the reserve for a descriptor limit of limit: Limits.DescriptorReserve, or a tenth
// of the limit and at least MinDescriptorReserve.
func (l Limits) descriptorReserve(limit uint64) uint64 {
	if l.DescriptorReserve > 0 {
		return uint64(l.DescriptorReserve)
	}
	return max(MinDescriptorReserve, limit/10)
}

// DescriptorReserve is the reserve l keeps for a descriptor limit of limit.
func DescriptorReserve(l Limits, limit uint64) uint64 { return l.descriptorReserve(limit) }

// Check compares the core's limits with the walls and returns one sentence per limit the process cannot
// honour, naming the configuration key to lower or the process limit to raise. Empty when all fit.
func (w Walls) Check(l Limits) []string {
	l = l.withDefaults()
	var out []string
	if w.NoFileSoft > 0 && w.NoFileSoft != math.MaxUint64 {
		reserve := l.descriptorReserve(w.NoFileSoft)
		need := uint64(l.MaxSessions)*DescriptorsPerHTTPSession + uint64(l.MaxStdioProcesses)*(DescriptorsPerStdioSession-DescriptorsPerHTTPSession) + reserve
		if need > w.NoFileSoft {
			fit := uint64(0)
			if w.NoFileSoft > reserve {
				fit = (w.NoFileSoft - reserve) / DescriptorsPerHTTPSession
			}
			out = append(out, fmt.Sprintf("limits.maxSessions (%d) and limits.maxStdioProcesses (%d) need about %d descriptors with the reserve of %d (limits.descriptorReserve), but the process may open %d (RLIMIT_NOFILE, hard limit %d): about %d HTTP sessions fit; new sessions beyond are refused with DESCRIPTOR_LIMIT. Raise the descriptor limit (ulimit -n, LimitNOFILE, the container's nofile) or lower limits.maxSessions",
				l.MaxSessions, l.MaxStdioProcesses, need, reserve, w.NoFileSoft, w.NoFileHard, fit))
		}
	}
	if w.MaxThreads > 0 && l.MaxStdioProcesses > w.MaxThreads-threadsHeadroom {
		out = append(out, fmt.Sprintf("limits.maxStdioProcesses (%d) is near the Go runtime's thread limit (%d), which aborts the process when reached: each running stdio server holds a thread; lower limits.maxStdioProcesses",
			l.MaxStdioProcesses, w.MaxThreads))
	}
	return out
}

// threadsHeadroom is the threads the bridge needs besides one per stdio server.
const threadsHeadroom = 1024

// openDescriptors counts the process's open descriptors; ok is false where it cannot tell (no /proc).
// Counting needs one descriptor itself: at the wall that fails with EMFILE, reported as the limit (n = -1
// and ok true).
func openDescriptors() (n int, ok bool) {
	f, err := os.Open("/proc/self/fd")
	if err != nil {
		if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
			return -1, true
		}
		return 0, false
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return 0, false
	}
	return len(names) - 1, true // not counting f itself
}

// checkDescriptors refuses a new session when fewer than the reserve of descriptors are left.
func (c *Core) checkDescriptors() error {
	limit, ok := nofileLimit()
	if !ok {
		return nil // no limit to keep a reserve of
	}
	reserve := Limits{DescriptorReserve: c.tuned().descriptorReserve}.descriptorReserve(limit)
	n, ok := c.countFDs()
	if !ok {
		return nil
	}
	if n >= 0 && uint64(n)+reserve < limit {
		return nil
	}
	c.stats.descriptorRefusals.Add(1)
	open := fmt.Sprintf("%d", n)
	if n < 0 {
		open = "all"
	}
	return fmt.Errorf("%w: %s of the process's %d descriptors are open and the last %d are kept for live sessions, health checks and new clients (limits.descriptorReserve); raise the process's descriptor limit (ulimit -n, LimitNOFILE, the container's nofile) or lower limits.maxSessions",
		ErrDescriptorLimit, open, limit, reserve)
}

// nofileLimit is the process's soft descriptor limit; false when it has none or cannot tell.
func nofileLimit() (uint64, bool) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		return 0, false
	}
	return rl.Cur, rl.Cur != math.MaxUint64
}

// countFDs is openDescriptors, replaceable by tests.
func (c *Core) countFDs() (int, bool) {
	if c.testFDs != nil {
		return c.testFDs()
	}
	return openDescriptors()
}

// MaxNestingDepth bounds how deeply the JSON the core forwards is nested: a tool's arguments sent upstream
// (deeper is the host's error, INVALID_ARGUMENT) and a server's result coming back (deeper is the server's
// bad message, UPSTREAM_BAD_MESSAGE). Servers crash on far less than the protocol allows (the demo server
// exits at 998 levels), and the bridge's protobuf conversion fails at ~5,000 (INTERNAL, no reason) after
// walking the whole tree. No MCP schema or result of any use comes near it. It is the bridge's one nesting
// limit: the server package checks a host's request against it before anything walks the request.
const MaxNestingDepth = 128

// JSONTooDeep reports whether the JSON text b nests objects and arrays more than max levels. It scans the
// bytes once (strings skipped), without decoding, so it costs far less than the decoding it guards.
func JSONTooDeep(b []byte, max int) bool {
	depth, inString, escaped := 0, false, false
	for _, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			if depth++; depth > max {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}
