package gateway

import (
	"context"
	"net"
	"sync"
)

// Listener is the in-memory listener of the gateway's connection to the gRPC server (Dial): each dial is
// one net.Pipe, whose ends report the network Network so that the gRPC side can tell gateway calls
// apart. (grpc's test/bufconn does the same job, but it is a test package and stays out of the binary.)
//
// Close is idempotent: it ends Accept with net.ErrClosed and refuses later dials; connections already made
// live until their ends are closed (the gRPC server and the gateway's ClientConn close theirs).
type Listener struct {
	conns chan net.Conn // unbuffered: a dial hands its server end straight to Accept
	done  chan struct{} // closed by Close
	once  sync.Once
}

// NewListener returns an open listener; the gRPC server serves it and Dial connects to it.
func NewListener() *Listener {
	return &Listener{conns: make(chan net.Conn), done: make(chan struct{})}
}

// Accept returns the server end of the next dialed connection, or net.ErrClosed once l is closed.
// Accept returns the server end of the next dialed connection, or net.ErrClosed once l is closed.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close ends Accept and refuses later dials; it is idempotent and never fails.
// Close ends Accept and refuses later dials; it is idempotent and never fails.
func (l *Listener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

// Addr is the address both ends of its connections report, on Network.
// Addr is the address both ends of its connections report, on Network.
func (l *Listener) Addr() net.Addr { return inprocAddr{} }

// DialContext returns the client end of a new connection once Accept has taken its server end.
func (l *Listener) DialContext(ctx context.Context) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- inprocConn{server}:
		return inprocConn{client}, nil
	case <-l.done:
		client.Close()
		server.Close()
		return nil, net.ErrClosed
	case <-ctx.Done():
		client.Close()
		server.Close()
		return nil, ctx.Err()
	}
}

type inprocAddr struct{}

func (inprocAddr) Network() string { return Network }
func (inprocAddr) String() string  { return Network }

type inprocConn struct{ net.Conn }

func (inprocConn) LocalAddr() net.Addr  { return inprocAddr{} }
func (inprocConn) RemoteAddr() net.Addr { return inprocAddr{} }
