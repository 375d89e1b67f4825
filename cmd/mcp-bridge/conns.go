package main

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// HTTP connection bounds (docs/adr/0090-the-door.md, docs/configuration.md "limits").
const (
	// httpIdleTimeout closes a keep-alive HTTP connection that carried no request for this long.
	httpIdleTimeout = 2 * time.Minute
	// httpReadHeaderTimeout bounds how long a request's headers may take to arrive.
	httpReadHeaderTimeout = 10 * time.Second
	// minHTTPConnections is the smallest default connection cap, whatever the descriptor limit.
	minHTTPConnections = 64
	// grpcMaxConnectionIdle closes a gRPC connection without an RPC for this long (keepalive.ServerParameters).
	grpcMaxConnectionIdle = 5 * time.Minute
)

// defaultHTTPConnections is the default of limits.maxHTTPConnections: half the process's descriptor limit (the
// rest is for gRPC connections, upstream sessions, stdio pipes and files), at least minHTTPConnections.
func defaultHTTPConnections() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur == 0 || rl.Cur > 1<<30 {
		return 1 << 15
	}
	return max(minHTTPConnections, int(rl.Cur/2))
}

// connGate caps the connections one HTTP server holds. A connection over the cap makes room by closing the
// connection that has waited longest without a request in flight (idle keep-alive, or opened and silent): so
// idle clients, however many, cannot lock out a new one, and a request in flight is never cut. When every
// connection has a request in flight, the new one is closed. Install it with http.Server.ConnState; it is safe
// for concurrent use.
type connGate struct {
	max     atomic.Int64 // limits.maxHTTPConnections; a reload changes it (from the next connection)
	evicted atomic.Int64 // connections closed to make room, for the metric

	mu    sync.Mutex // guards conns
	conns map[net.Conn]*gateConn
}

type gateConn struct {
	busy  bool      // a request in flight (StateActive)
	since time.Time // when it last became not busy
}

func newConnGate(maxConns int) *connGate {
	g := &connGate{conns: map[net.Conn]*gateConn{}}
	g.max.Store(int64(maxConns))
	return g
}

// open reports the connections the gate holds.
func (g *connGate) open() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.conns)
}

// connState is the http.Server's ConnState hook.
func (g *connGate) connState(c net.Conn, s http.ConnState) {
	var victim net.Conn
	g.mu.Lock()
	switch s {
	case http.StateNew:
		if int64(len(g.conns)) >= g.max.Load() {
			victim = g.oldestQuietLocked()
			if victim == nil {
				victim = c // every connection is working: refuse the new one
			} else {
				delete(g.conns, victim)
			}
			g.evicted.Add(1)
		}
		if victim != c {
			g.conns[c] = &gateConn{since: time.Now()}
		}
	case http.StateActive:
		if gc := g.conns[c]; gc != nil {
			gc.busy = true
		}
	case http.StateIdle:
		if gc := g.conns[c]; gc != nil {
			gc.busy, gc.since = false, time.Now()
		}
	case http.StateClosed, http.StateHijacked:
		delete(g.conns, c)
	}
	g.mu.Unlock()
	if victim != nil {
		_ = victim.Close() // its serving goroutine sees the error and ends; StateClosed finds it gone
	}
}

// oldestQuietLocked returns the connection without a request in flight that has been quiet longest, or nil.
// Linear in the connections; it runs only when the cap is reached.
func (g *connGate) oldestQuietLocked() net.Conn {
	var oldest net.Conn
	var since time.Time
	for c, gc := range g.conns {
		if !gc.busy && (oldest == nil || gc.since.Before(since)) {
			oldest, since = c, gc.since
		}
	}
	return oldest
}
