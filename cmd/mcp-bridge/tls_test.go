package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	mcpbridgev1 "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/server/gateway"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// testPKI is a CA with a server certificate for 127.0.0.1 and a client certificate for "alice".
type testPKI struct {
	dir       string
	pool      *x509.CertPool
	client    tls.Certificate
	clientDER []byte
	caFile    string
	certFile  string
	keyFile   string
}

func newTestPKI(t *testing.T) *testPKI {
	t.Helper()
	dir := t.TempDir()
	caKey := newKey(t)
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "mcp-bridge test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	issue := func(serial int64, tmpl *x509.Certificate) ([]byte, *ecdsa.PrivateKey) {
		key := newKey(t)
		tmpl.SerialNumber = big.NewInt(serial)
		tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der, key
	}
	serverDER, serverKey := issue(2, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "bridge"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	})
	clientDER, clientKey := issue(3, &x509.Certificate{
		Subject:     pkix.Name{CommonName: "alice"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
	p := &testPKI{
		dir:       dir,
		pool:      x509.NewCertPool(),
		clientDER: clientDER,
		caFile:    filepath.Join(dir, "ca.pem"),
		certFile:  filepath.Join(dir, "server.pem"),
		keyFile:   filepath.Join(dir, "server-key.pem"),
	}
	p.pool.AddCert(ca)
	writePEM(t, p.caFile, "CERTIFICATE", caDER)
	writePEM(t, p.certFile, "CERTIFICATE", serverDER)
	writePEM(t, p.keyFile, "PRIVATE KEY", marshalKey(t, serverKey))
	p.client = tls.Certificate{Certificate: [][]byte{clientDER}, PrivateKey: clientKey}
	return p
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func marshalKey(t *testing.T, key *ecdsa.PrivateKey) []byte {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// config writes a config file enabling TLS, and mutual TLS if mutual is set.
func (p *testPKI) config(t *testing.T, mutual bool) string {
	content := "tls:\n  certFile: server.pem\n  keyFile: server-key.pem\n"
	if mutual {
		content += "  clientCAFile: ca.pem\n"
	}
	path := filepath.Join(p.dir, "bridge.yaml")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func (p *testPKI) clientTLS(withCert bool) *tls.Config {
	tc := &tls.Config{RootCAs: p.pool, MinVersion: tls.VersionTLS12}
	if withCert {
		tc.Certificates = []tls.Certificate{p.client}
	}
	return tc
}

func (p *testPKI) httpClient(t *testing.T, withCert bool) *http.Client {
	tr := &http.Transport{TLSClientConfig: p.clientTLS(withCert), ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections) // before the bridge stops, so that its shutdown need not wait
	return &http.Client{Transport: tr}
}

func TestTLS(t *testing.T) {
	pki := newTestPKI(t)
	tb := startBridge(t, runOptions{}, "--config", pki.config(t, false))

	creds := grpc.WithTransportCredentials(credentials.NewTLS(pki.clientTLS(false)))
	if _, err := bridgeClient(t, tb.addrs.GRPC, creds).ListServers(testContext(t), &mcpbridgev1.ListServersRequest{}); err != nil {
		t.Errorf("gRPC over TLS: %v", err)
	}
	if _, err := bridgeClient(t, tb.addrs.GRPC).ListServers(testContext(t), &mcpbridgev1.ListServersRequest{}); err == nil {
		t.Error("plaintext gRPC accepted by a TLS listener")
	}
	code, body := httpGet(t, pki.httpClient(t, false), "https://"+tb.addrs.HTTP+"/v1/servers")
	if code != http.StatusOK {
		t.Errorf("REST over TLS = %d %s", code, body)
	}
	if code, _ := httpGet(t, pki.httpClient(t, false), "https://"+tb.addrs.HTTP+"/healthz"); code != http.StatusOK {
		t.Errorf("/healthz over TLS = %d", code)
	}
}

func TestMutualTLS(t *testing.T) {
	pki := newTestPKI(t)
	svc := newRecordingService()
	close(svc.release)
	socket := filepath.Join(pki.dir, "bridge.sock")
	tb := startBridge(t, svc.options(), "--config", pki.config(t, true), "--grpc-socket", socket)

	// gRPC: a client certificate is required.
	withCert := grpc.WithTransportCredentials(credentials.NewTLS(pki.clientTLS(true)))
	if _, err := bridgeClient(t, tb.addrs.GRPC, withCert).ListServers(testContext(t), &mcpbridgev1.ListServersRequest{}); err != nil {
		t.Errorf("gRPC with a client certificate: %v", err)
	}
	<-svc.entered
	withoutCert := grpc.WithTransportCredentials(credentials.NewTLS(pki.clientTLS(false)))
	if _, err := bridgeClient(t, tb.addrs.GRPC, withoutCert).ListServers(testContext(t), &mcpbridgev1.ListServersRequest{}); err == nil {
		t.Error("gRPC without a client certificate accepted")
	}

	// REST: the same, and the verified certificate reaches the service over the gateway.
	code, body := httpGet(t, pki.httpClient(t, true), "https://"+tb.addrs.HTTP+"/v1/servers")
	if code != http.StatusOK {
		t.Fatalf("REST with a client certificate = %d %s", code, body)
	}
	info := <-svc.entered
	if got := info.md.Get(gateway.ClientCertMetadataKey); len(got) != 1 || got[0] != string(pki.clientDER) {
		t.Errorf("%s on the gateway call: %d values, want the client certificate", gateway.ClientCertMetadataKey, len(got))
	}
	req, _ := http.NewRequestWithContext(testContext(t), http.MethodGet, "https://"+tb.addrs.HTTP+"/v1/servers", nil)
	if resp, err := pki.httpClient(t, false).Do(req); err == nil {
		resp.Body.Close()
		t.Errorf("REST without a client certificate = %d, want a TLS failure", resp.StatusCode)
	}

	// The Unix socket is local: no TLS on it.
	if _, err := bridgeClient(t, "unix://"+socket).ListServers(testContext(t), &mcpbridgev1.ListServersRequest{}); err != nil {
		t.Errorf("gRPC over the Unix socket: %v", err)
	}
	if info := <-svc.entered; info.network != "unix" {
		t.Errorf("socket call arrived over %q", info.network)
	}
}
