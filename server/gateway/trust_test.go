package gateway

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"net/http/httptest"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/mcp-bridge/mcp-bridge/server"
)

// The certificate metadata key is believed only on the gateway's own connection: a gRPC client on TCP or
// the Unix socket that sends it names nobody.
func TestCallerInfoTrustsCertMetadataOnlyFromTheGateway(t *testing.T) {
	cert := &x509.Certificate{Raw: []byte("not parsed here"), Subject: pkix.Name{CommonName: "mallory"}}
	srv := httptest.NewTLSServer(nil)
	defer srv.Close()
	raw := srv.Certificate().Raw
	forged := metadata.Pairs(ClientCertMetadataKey, string(raw))
	at := func(addr net.Addr, auth credentials.AuthInfo) context.Context {
		return peer.NewContext(metadata.NewIncomingContext(context.Background(), forged), &peer.Peer{Addr: addr, AuthInfo: auth})
	}
	if got := CallerInfo(at(&net.UnixAddr{Net: "unix", Name: "/s"}, nil)); got.Transport != "unix" || got.Cert != nil {
		t.Errorf("unix socket = %+v, want no certificate", got)
	}
	if got := CallerInfo(at(&net.TCPAddr{}, nil)); got.Transport != "grpc" || got.Cert != nil {
		t.Errorf("TCP without TLS = %+v, want no certificate", got)
	}
	tlsInfo := credentials.TLSInfo{State: tls.ConnectionState{VerifiedChains: [][]*x509.Certificate{{cert}}}}
	if got := CallerInfo(at(&net.TCPAddr{}, tlsInfo)); got.Cert != cert {
		t.Errorf("TCP with TLS = %+v, want the connection's certificate", got)
	}
	if got := CallerInfo(at(inprocAddr{}, nil)); got.Transport != "rest" || got.Cert == nil || string(got.Cert.Raw) != string(raw) {
		t.Errorf("gateway = %+v, want the forwarded certificate", got)
	}
}

func TestSetRetryAfter(t *testing.T) {
	st, derr := status.New(codes.ResourceExhausted, "rate limit reached").WithDetails(
		&errdetails.ErrorInfo{Reason: server.ReasonRateLimited}, &errdetails.RetryInfo{RetryDelay: durationpb.New(1500 * time.Millisecond)})
	if derr != nil {
		t.Fatal(derr)
	}
	err := st.Err()
	w := httptest.NewRecorder()
	setRetryAfter(w, err)
	if got := w.Header().Get("Retry-After"); got != "2" {
		t.Errorf("Retry-After = %q, want 2 (1.5 s rounded up)", got)
	}
}
