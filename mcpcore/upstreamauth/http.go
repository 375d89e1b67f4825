package upstreamauth

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// URL and address safety for the OAuth client (MCP 2025-11-25 security best practices, "Server-Side
// Request Forgery" and "Authorization URL validation"): the URLs it fetches — protected-resource metadata,
// authorization-server metadata, registration and token endpoints — come from the server and the
// authorization server, so each is checked before it is used and every connection's address is checked
// when it is made (after DNS, so a name resolving to a forbidden address is caught too).

// errForbiddenAddress is returned for connections to link-local and metadata addresses.
var errForbiddenAddress = errors.New("address not allowed for OAuth requests (link-local or metadata)")

// metadataAddrs are cloud instance-metadata endpoints outside the link-local ranges.
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("fd00:ec2::254"),   // AWS IMDS over IPv6
	netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
	netip.MustParseAddr("192.0.0.192"),     // Oracle Cloud (legacy)
}

// forbiddenAddr reports whether the OAuth client must not connect to a: link-local (which holds the
// 169.254.169.254 metadata service of most clouds), a known metadata address, unspecified or multicast.
func forbiddenAddr(a netip.Addr) bool {
	a = a.Unmap()
	if a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsUnspecified() || a.IsMulticast() {
		return true
	}
	for _, m := range metadataAddrs {
		if a == m {
			return true
		}
	}
	return false
}

// isLoopbackHost reports whether host (without port) is localhost or a loopback address.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	a, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && a.Unmap().IsLoopback()
}

// checkOAuthURL checks a URL the OAuth client is about to fetch or hand to a person: https, or http on a
// loopback host (or anywhere when allowHTTP); no user info; a host.
func checkOAuthURL(u *url.URL, allowHTTP bool) error {
	switch strings.ToLower(u.Scheme) {
	case "https":
	case "http":
		if !allowHTTP && !isLoopbackHost(u.Hostname()) {
			return fmt.Errorf("http URL on a non-loopback host %q (https required)", u.Hostname())
		}
	default:
		return fmt.Errorf("scheme %q not allowed (https required)", u.Scheme)
	}
	if u.Host == "" {
		return errors.New("URL without a host")
	}
	if u.User != nil {
		return errors.New("URL with user info")
	}
	if a, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err == nil && forbiddenAddr(a) {
		return errForbiddenAddress
	}
	return nil
}

// newOAuthHTTPClient returns the HTTP client of the OAuth flows: base for the round trips, with the
// scheme checked on every request and redirect hop and, when base is an *http.Transport, the address on
// every new connection (unless AllowLinkLocal). The client follows at most 5 redirects and gives up on a request after 30s.
func newOAuthHTTPClient(base http.RoundTripper, opts Options) *http.Client {
	rt := base
	if t, ok := base.(*http.Transport); ok {
		// OAuth requests are few (discovery, registration, a token now and then): no idle connections to
		// keep, and none left behind when the core closes.
		t = t.Clone()
		t.DisableKeepAlives = true
		if !opts.AllowLinkLocal {
			d := &net.Dialer{Timeout: 10 * time.Second, Control: dialControl}
			t.DialContext = d.DialContext
		}
		rt = t
	}
	return &http.Client{
		Transport: &checkedTransport{base: rt, opts: opts},
		Timeout:   30 * time.Second,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("stopped after 5 redirects")
			}
			return checkOAuthURL(req.URL, opts.AllowInsecureHTTP)
		},
	}
}

// dialControl refuses connections to forbidden addresses; it runs after name resolution.
func dialControl(network, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return err
	}
	if forbiddenAddr(a) {
		return fmt.Errorf("%w: %s", errForbiddenAddress, a)
	}
	return nil
}

// checkedTransport checks each request's URL before it goes out. When the base transport is not an
// *http.Transport (tests), literal forbidden addresses are still refused here.
type checkedTransport struct {
	base http.RoundTripper
	opts Options
}

func (t *checkedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := checkOAuthURL(req.URL, t.opts.AllowInsecureHTTP); err != nil {
		if !(t.opts.AllowLinkLocal && errors.Is(err, errForbiddenAddress)) {
			if req.Body != nil {
				_ = req.Body.Close()
			}
			return nil, fmt.Errorf("oauth request to %s://%s refused: %w", req.URL.Scheme, req.URL.Host, err)
		}
	}
	return t.base.RoundTrip(req)
}
