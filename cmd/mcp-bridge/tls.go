package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"github.com/mcp-bridge/mcp-bridge/internal/config"
)

// tlsFiles are the certificate, key and client CA files of the listeners, as last read successfully.
type tlsFiles struct {
	t    config.TLS
	mu   sync.Mutex // serializes reload
	cert atomic.Pointer[tls.Certificate]
	cas  atomic.Pointer[x509.CertPool] // nil without mutual TLS
	// read is what the files held at the last successful read, to tell a rotation from nothing new.
	read atomic.Pointer[[3][]byte]
}

// newTLSFiles reads the TLS files of the listeners; nil when TLS is off. The certificate, its key and the
// client CAs (mutual TLS: clients must present a certificate one of them signed) are read again by reload
// (a reload of the configuration, or a change of the files the watch sees): new handshakes present what
// the files hold then, and connections already up keep theirs.
func newTLSFiles(t config.TLS) (*tlsFiles, error) {
	if !t.Enabled() {
		return nil, nil
	}
	f := &tlsFiles{t: t}
	if _, err := f.reload(); err != nil {
		return nil, err
	}
	return f, nil
}

// reload reads the files again; on an error what was read before stays in force. changed reports whether
// the files held something new.
func (f *tlsFiles) reload() (changed bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.t
	certPEM, err := os.ReadFile(t.CertFile)
	if err != nil {
		return false, fmt.Errorf("tls: certificate %s: %v", t.CertFile, err)
	}
	keyPEM, err := os.ReadFile(t.KeyFile)
	if err != nil {
		return false, fmt.Errorf("tls: key %s: %v", t.KeyFile, err)
	}
	var caPEM []byte
	if t.MutualTLS() {
		if caPEM, err = os.ReadFile(t.ClientCAFile); err != nil {
			return false, fmt.Errorf("tls: client CA file: %v", err)
		}
	}
	if old := f.read.Load(); old != nil && bytes.Equal(old[0], certPEM) && bytes.Equal(old[1], keyPEM) && bytes.Equal(old[2], caPEM) {
		return false, nil
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return false, fmt.Errorf("tls: certificate %s with key %s: %v", t.CertFile, t.KeyFile, err)
	}
	var pool *x509.CertPool
	if t.MutualTLS() {
		pool = x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caPEM) {
			return false, fmt.Errorf("tls: client CA file %s holds no PEM certificate", t.ClientCAFile)
		}
	}
	f.cert.Store(&cert)
	f.cas.Store(pool)
	f.read.Store(&[3][]byte{certPEM, keyPEM, caPEM})
	return true, nil
}

func (f *tlsFiles) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return f.cert.Load(), nil
}

// config is a TLS configuration for a listener offering nextProtos (ALPN), reading the certificate and the
// client CAs in force at every handshake.
func (f *tlsFiles) config(nextProtos []string) *tls.Config {
	base := func() *tls.Config {
		tc := &tls.Config{GetCertificate: f.getCertificate, MinVersion: tls.VersionTLS12, NextProtos: nextProtos}
		if f.t.MutualTLS() {
			tc.ClientCAs = f.cas.Load()
			tc.ClientAuth = tls.RequireAndVerifyClientCert
		}
		return tc
	}
	tc := base()
	if f.t.MutualTLS() {
		// The client CAs are read by the handshake from the configuration: one made for each handshake
		// carries the pool in force.
		tc.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) { return base(), nil }
	}
	return tc
}
