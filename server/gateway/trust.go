package gateway

import (
	"context"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/mcp-bridge/mcp-bridge/internal/telemetry"
	"github.com/mcp-bridge/mcp-bridge/server"
)

// The rule for trusting a client certificate, in one place. A gRPC call's certificate is its TLS
// connection's verified chain (server.DirectCaller). A REST call reaches the gRPC service through the
// gateway, so the HTTP listener's TLS state is forwarded by the gateway itself as metadata
// (ClientCertMetadataKey, forwardClientCert); that metadata is believed only on the gateway's own
// connection (Network), and a REST client cannot forge it (incomingHeaderMatcher drops the bridge's keys).
// ListenerCredentials keep TLS off the in-process connection and the Unix socket.

// Network is the network name of the in-process connection the REST gateway uses to reach the gRPC
// server: peer.FromContext(ctx).Addr.Network() in a handler or interceptor. Metadata the bridge itself sets
// for REST calls (ClientCertMetadataKey) may be trusted only on it.
const Network = "mcpbridge-gateway"

// ClientCertMetadataKey carries, on gateway calls made for a REST client that presented a verified TLS
// client certificate, that certificate (DER). The gateway drops any such key a client sends itself; on the
// TCP and Unix listeners the gRPC peer's own TLS state is the source of truth.
const ClientCertMetadataKey = "x-mcpbridge-client-cert-bin"

// reservedMetadataPrefix is the metadata namespace only the bridge itself may set.
const reservedMetadataPrefix = "x-mcpbridge-"

// CallerInfo tells the service how a call reached it (server.Options.Caller). On the gateway's in-process
// connection the REST client's certificate comes as metadata the gateway itself set; on the Unix socket
// there is none; on TCP it is the TLS connection's verified chain.
func CallerInfo(ctx context.Context) server.CallerInfo {
	p, ok := peer.FromContext(ctx)
	if ok && p.Addr != nil {
		switch p.Addr.Network() {
		case Network:
			info := server.CallerInfo{Transport: "rest"}
			md, _ := metadata.FromIncomingContext(ctx)
			if v := md.Get(ClientCertMetadataKey); len(v) == 1 {
				if cert, err := x509.ParseCertificate([]byte(v[0])); err == nil {
					info.Cert = cert
				}
			}
			return info
		case "unix":
			return server.CallerInfo{Transport: "unix"}
		}
	}
	return server.DirectCaller(ctx)
}

// forwardClientCert passes the REST client's verified TLS certificate to the gRPC side.
func forwardClientCert(_ context.Context, r *http.Request) metadata.MD {
	if r.TLS == nil || len(r.TLS.VerifiedChains) == 0 || len(r.TLS.VerifiedChains[0]) == 0 {
		return nil
	}
	return metadata.Pairs(ClientCertMetadataKey, string(r.TLS.VerifiedChains[0][0].Raw))
}

// incomingHeaderMatcher forwards headers as the gateway does by default, except that a client
// may not set the bridge's own metadata keys (Grpc-Metadata-X-Mcpbridge-…), and that the W3C trace
// context headers (traceparent, tracestate, baggage) go on as metadata of the same names, where the
// gRPC side takes the trace context from (docs/adr/0014).
func incomingHeaderMatcher(key string) (string, bool) {
	for _, h := range telemetry.TraceHeaders {
		if strings.EqualFold(key, h) {
			return h, true
		}
	}
	if strings.HasPrefix(strings.ToLower(key), strings.ToLower(runtime.MetadataHeaderPrefix)+reservedMetadataPrefix) {
		return "", false
	}
	return runtime.DefaultHeaderMatcher(key)
}

// ListenerCredentials returns the gRPC server's transport credentials for every listener: tls on TCP
// connections and no transport security on the others — the in-process gateway connection (the peer is
// this process, the HTTP listener did the TLS) and the Unix socket (whose file permissions decide who may
// connect). One grpc.Server thus serves every listener with one set of interceptors.
func ListenerCredentials(tls credentials.TransportCredentials) credentials.TransportCredentials {
	return listenerCredentials{tls: tls}
}

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
