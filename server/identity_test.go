package server

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// The sources of principals together: a bearer token decides when sent (static, else JWT), a certificate
// when not; nothing is UNAUTHENTICATED.
func TestAuthenticateSources(t *testing.T) {
	k1 := testKey(t, "k1")
	idp := &fakeIDP{}
	idp.set(false, k1)
	a := newAuthenticator(map[string]string{"static-token": "ci-bot"})
	var cert *x509.Certificate
	a.configure(Options{
		OIDC:          &OIDCOptions{Issuer: testIssuer, Audience: "bridge", HTTPClient: &http.Client{Transport: idp}},
		CertPrincipal: CertCommonName,
		Caller:        func(context.Context) CallerInfo { return CallerInfo{Transport: "grpc", Cert: cert} },
	}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	jwt := signClaims(t, k1, claimsFor("alice", time.Now()))
	bearer := func(tok string) context.Context {
		return metadata.NewIncomingContext(context.Background(), metadata.Pairs("authorization", "Bearer "+tok))
	}
	alice := &x509.Certificate{Subject: pkix.Name{CommonName: "cert-alice"}}
	for _, tc := range []struct {
		name string
		ctx  context.Context
		cert *x509.Certificate
		want string
		code codes.Code
	}{
		{"static token", bearer("static-token"), alice, "ci-bot", codes.OK},
		{"jwt", bearer(jwt), alice, "alice", codes.OK},
		{"certificate", context.Background(), alice, "cert-alice", codes.OK},
		{"bad token beats a certificate", bearer("nope"), alice, "", codes.Unauthenticated},
		{"bad jwt", bearer(jwt[:len(jwt)-4] + "AAAA"), nil, "", codes.Unauthenticated},
		{"nothing", context.Background(), nil, "", codes.Unauthenticated},
		{"certificate without a CN", context.Background(), &x509.Certificate{}, "", codes.Unauthenticated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cert = tc.cert
			p, err := a.authenticate(tc.ctx)
			if status.Code(err) != tc.code || p != tc.want {
				t.Fatalf("authenticate = %q, %v; want %q, %v", p, err, tc.want, tc.code)
			}
		})
	}
}
