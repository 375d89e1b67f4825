package main

import (
	"context"
	"net"
	"sync"
)

// inprocListener is the in-memory listener of the gateway's connection to the gRPC server: each dial is
// one net.Pipe, whose ends report the network gatewayNetwork so that the gRPC side can tell gateway calls
// apart. (grpc's test/bufconn does the same job, but it is a test package and stays out of the binary.)
//
// Close is idempotent: it ends Accept with net.ErrClosed and refuses later dials; connections already made
// live until their ends are closed (the gRPC server and the gateway's ClientConn close theirs).
type inprocListener struct {
	conns chan net.Conn // unbuffered: a dial hands its server end straight to Accept
	done  chan struct{} // closed by Close
	once  sync.Once
}

func newInprocListener() *inprocListener {
	return &inprocListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *inprocListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *inprocListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *inprocListener) Addr() net.Addr { return inprocAddr{} }

// DialContext returns the client end of a new connection once Accept has taken its server end.
func (l *inprocListener) DialContext(ctx context.Context) (net.Conn, error) {
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

func (inprocAddr) Network() string { return gatewayNetwork }
func (inprocAddr) String() string  { return gatewayNetwork }

type inprocConn struct{ net.Conn }

func (inprocConn) LocalAddr() net.Addr  { return inprocAddr{} }
func (inprocConn) RemoteAddr() net.Addr { return inprocAddr{} }
