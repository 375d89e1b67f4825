// Package stdiotransport is the stdio transport of the MCP servers this project ships (the demo server,
// the e2e probe, the bench's upstream): the SDK's stdio transport, except that a stdin and stdout that are
// pipes are read and written through the Go runtime's poller instead of blocking read(2) and write(2).
//
// Why: under load a server built with Go 1.26 was seen, rarely (about one call in 100,000 in stress runs),
// to sit in a garbage collection's stop-the-world for seconds with a request already read and its stdin
// reader blocked in read(2), answering only once the next message arrived on stdin. A reader parked in
// the poller holds no OS thread in a system call. See docs/adr/0008-session-state-machine.md (case 5).
package stdiotransport

import (
	"io"
	"os"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// New returns the transport for serving one MCP session on the process's stdin and stdout.
func New() mcp.Transport {
	return &mcp.IOTransport{Reader: pollable(os.Stdin), Writer: pollable(os.Stdout)}
}

// pollable returns f through the runtime's poller when it is a pipe (a terminal is left alone: making it
// non-blocking would change it for every process that shares it).
func pollable(f *os.File) io.ReadWriteCloser {
	var st syscall.Stat_t
	fd := int(f.Fd())
	if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFIFO {
		return f
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		return f
	}
	return os.NewFile(uintptr(fd), f.Name())
}
