package gateway

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

func TestInprocListener(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l := NewListener()
	accepted := make(chan net.Conn, 1)
	go func() { // ends when Accept returns: one connection, or the Close below
		c, err := l.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	c, err := l.DialContext(ctx)
	if err != nil {
		t.Fatal(err)
	}
	s := <-accepted
	if s == nil {
		t.Fatal("Accept failed")
	}
	if c.RemoteAddr().Network() != Network || s.LocalAddr().Network() != Network {
		t.Errorf("addresses %v, %v; want the network %s", c.RemoteAddr(), s.LocalAddr(), Network)
	}
	go func() { c.Write([]byte("ping")); c.Close() }() // ends when the server end has read it
	if b, err := io.ReadAll(s); err != nil || string(b) != "ping" {
		t.Errorf("read %q, %v", b, err)
	}
	s.Close()

	l.Close()
	l.Close() // idempotent
	if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept after Close: %v, want net.ErrClosed", err)
	}
	if _, err := l.DialContext(ctx); !errors.Is(err, net.ErrClosed) {
		t.Errorf("DialContext after Close: %v, want net.ErrClosed", err)
	}
}
