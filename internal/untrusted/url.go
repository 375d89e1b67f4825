package untrusted

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// Destination is where a URL a person is asked to open leads.
type Destination struct {
	// Scheme is "https", or "http" for a loopback host.
	Scheme string
	// Host is the host in ASCII (punycode for an internationalized name), without the port.
	Host string
	// RegistrableDomain is the host's eTLD+1 (Public Suffix List); empty for an IP address or a loopback
	// name.
	RegistrableDomain string
	// Loopback: the host is localhost (or a name under it) or a loopback address.
	Loopback bool
}

// maxURL bounds the URL a server may ask a person to open, in bytes.
const maxURL = 8192

// ErrURLRefused is the error of a URL the bridge does not show a person.
var ErrURLRefused = errors.New("url refused")

// CheckURL parses the URL a server asks a person to open (a URL-mode elicitation) and returns where it leads.
// Only absolute https URLs are accepted, and http ones for a loopback host; a relative URL, another scheme
// (javascript:, data:, file:), user information ("https://bank.example@evil.example/"), a missing host,
// characters a person cannot see, and a URL longer than 8 KiB are refused with ErrURLRefused and why.
func CheckURL(raw string) (Destination, error) {
	if len(raw) > maxURL {
		return Destination{}, fmt.Errorf("%w: longer than %d bytes", ErrURLRefused, maxURL)
	}
	if fs := String("url", raw); len(fs) > 0 {
		return Destination{}, fmt.Errorf("%w: it holds %s characters (%s)", ErrURLRefused, fs[0].Kind, strings.Join(fs[0].CodePointStrings(), ", "))
	}
	u, err := url.Parse(raw)
	if err != nil {
		return Destination{}, fmt.Errorf("%w: not a URL: %v", ErrURLRefused, err)
	}
	if !u.IsAbs() {
		return Destination{}, fmt.Errorf("%w: a relative URL; only absolute https URLs (and http for loopback hosts) are allowed", ErrURLRefused)
	}
	if sc := strings.ToLower(u.Scheme); sc != "https" && sc != "http" {
		return Destination{}, fmt.Errorf("%w: scheme %q; only https (and http for loopback hosts) is allowed", ErrURLRefused, sc)
	}
	if u.Opaque != "" {
		return Destination{}, fmt.Errorf("%w: not a hierarchical URL (no // after the scheme)", ErrURLRefused)
	}
	if u.User != nil {
		return Destination{}, fmt.Errorf("%w: it carries user information before the host", ErrURLRefused)
	}
	d := Destination{Scheme: strings.ToLower(u.Scheme)}
	host := u.Hostname()
	if host == "" {
		return Destination{}, fmt.Errorf("%w: it names no host", ErrURLRefused)
	}
	if ip := net.ParseIP(host); ip != nil {
		d.Host, d.Loopback = ip.String(), ip.IsLoopback()
	} else {
		ascii, err := idna.Lookup.ToASCII(strings.TrimSuffix(host, "."))
		if err != nil {
			return Destination{}, fmt.Errorf("%w: host %q is not a valid name: %v", ErrURLRefused, host, err)
		}
		d.Host = ascii
		d.Loopback = ascii == "localhost" || strings.HasSuffix(ascii, ".localhost")
		if !d.Loopback {
			if rd, err := publicsuffix.EffectiveTLDPlusOne(ascii); err == nil {
				d.RegistrableDomain = rd
			}
		}
	}
	switch {
	case d.Scheme == "https":
	case d.Scheme == "http" && d.Loopback:
	default:
		return Destination{}, fmt.Errorf("%w: http is allowed for loopback hosts only; use https", ErrURLRefused)
	}
	return d, nil
}
