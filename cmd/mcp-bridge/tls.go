package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/mcp-bridge/mcp-bridge/internal/config"
	"google.golang.org/grpc/credentials"
)

// serverTLS builds the TLS configuration both TCP listeners share, or nil when TLS is off. With a
// client CA it requires and verifies client certificates (mutual TLS).
func serverTLS(t config.TLS) (*tls.Config, error) {
	if !t.Enabled() {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("tls: certificate %s with key %s: %v", t.CertFile, t.KeyFile, err)
	}
	tc := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if t.MutualTLS() {
		pem, err := os.ReadFile(t.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("tls: client CA file: %v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls: client CA file %s holds no PEM certificate", t.ClientCAFile)
		}
		tc.ClientCAs = pool
		tc.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return tc, nil
}

// gatewayNetwork is the network name of the in-process connection the REST gateway uses to reach
// the gRPC server: peer.FromContext(ctx).Addr.Network() in a handler or interceptor. Metadata
// the bridge itself sets for REST calls (clientCertMetadataKey) may be trusted only on it.
const gatewayNetwork = "mcpbridge-gateway"

// clientCertMetadataKey carries, on gateway calls made for a REST client that presented a verified
// TLS client certificate, that certificate (DER). The gateway drops any such key a client sends
// itself; on the TCP and Unix listeners the gRPC peer's own TLS state is the source of truth.
const clientCertMetadataKey = "x-mcpbridge-client-cert-bin"

// listenerCredentials is TLS on TCP connections and no transport security on the others: the
// in-process gateway connection (the peer is this process, the HTTP listener did the TLS) and the
// Unix socket (whose file permissions decide who may connect). One grpc.Server thus serves every
// listener with one set of interceptors.
type listenerCredentials struct {
	tls credentials.TransportCredentials
}

// localAuthInfo is the AuthInfo of a connection that did not go through TLS.
type localAuthInfo struct {
	credentials.CommonAuthInfo
	network string
}

func (a localAuthInfo) AuthType() string { return "local-" + a.network }

func (c listenerCredentials) ServerHandshake(conn net.Conn) (net.Conn, credentials.AuthInfo, error) {
	if network := conn.LocalAddr().Network(); network != "tcp" {
		return conn, localAuthInfo{
			CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.PrivacyAndIntegrity},
			network:        network,
		}, nil
	}
	return c.tls.ServerHandshake(conn)
}

func (c listenerCredentials) ClientHandshake(context.Context, string, net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return nil, nil, errors.New("listenerCredentials are for servers only")
}

func (c listenerCredentials) Info() credentials.ProtocolInfo { return c.tls.Info() }

func (c listenerCredentials) Clone() credentials.TransportCredentials {
	return listenerCredentials{tls: c.tls.Clone()}
}

//nolint:staticcheck // part of the interface; unused by gRPC.
func (c listenerCredentials) OverrideServerName(name string) error {
	return c.tls.OverrideServerName(name) //nolint:staticcheck
}
