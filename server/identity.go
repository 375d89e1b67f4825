package server

import (
	"context"
	"crypto/x509"
	"fmt"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"
)

// identityAPI says who the caller is: how the call reached the service (callerOf) and GetIdentity.
// Service embeds it.
type identityAPI struct{ s *Service }

// CallerInfo is how a call reached the service, as the process that owns the listeners knows it
// (Options.Caller).
type CallerInfo struct {
	// Transport is "grpc" (TCP), "unix" (the Unix socket) or "rest" (the REST gateway).
	Transport string
	// Cert is the client's verified TLS certificate (the leaf of its verified chain), for gRPC over TLS
	// and for REST calls whose client presented one; nil otherwise.
	Cert *x509.Certificate
}

// The values of Options.CertPrincipal: which part of a client certificate is the principal.
const (
	CertCommonName = "commonName" // the subject's CN
	CertSubject    = "subject"    // the whole subject DN, e.g. "CN=alice,O=Example"
	CertDNSName    = "dnsName"    // the first DNS subject alternative name
	CertEmail      = "email"      // the first email SAN
	CertURI        = "uri"        // the first URI SAN, e.g. a SPIFFE ID
)

// certPrincipal returns the principal a verified client certificate names by the rule from
// (Options.CertPrincipal).
func certPrincipal(cert *x509.Certificate, from string) (string, error) {
	var p string
	switch from {
	case CertCommonName:
		p = cert.Subject.CommonName
	case CertSubject:
		p = cert.Subject.String()
	case CertDNSName:
		if len(cert.DNSNames) > 0 {
			p = cert.DNSNames[0]
		}
	case CertEmail:
		if len(cert.EmailAddresses) > 0 {
			p = cert.EmailAddresses[0]
		}
	case CertURI:
		if len(cert.URIs) > 0 {
			p = cert.URIs[0].String()
		}
	default:
		return "", fmt.Errorf("unknown certificate principal rule %q", from)
	}
	if err := checkPrincipal(p); err != nil {
		return "", fmt.Errorf("the client certificate's %s %v", from, err)
	}
	return p, nil
}

// callerOf returns how the call of ctx reached the service.
func (ia *identityAPI) callerOf(ctx context.Context) CallerInfo {
	s := ia.s
	if s.opts.Caller == nil {
		return DirectCaller(ctx)
	}
	return s.opts.Caller(ctx)
}

// DirectCaller is CallerInfo for a call that reached the gRPC server directly (no gateway that forwards
// certificates): "grpc", with the TLS connection's verified client certificate if any. It is the default of
// Options.Caller; package gateway's CallerInfo falls back to it for calls that did not come through it.
func DirectCaller(ctx context.Context) CallerInfo {
	info := CallerInfo{Transport: "grpc"}
	if p, ok := peer.FromContext(ctx); ok {
		if ti, ok := p.AuthInfo.(credentials.TLSInfo); ok && len(ti.State.VerifiedChains) > 0 && len(ti.State.VerifiedChains[0]) > 0 {
			info.Cert = ti.State.VerifiedChains[0][0]
		}
	}
	return info
}
