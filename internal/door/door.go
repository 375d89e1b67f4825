// Package door is what every HTTP request meets before anything else: the check that the request's Host is a
// name of this bridge (against DNS rebinding), and the safe headers every answer carries.
//
// DNS rebinding: a page on http://evil.example:8080/ whose name the attacker re-points at 127.0.0.1 is, to the
// browser, the same origin as the bridge on 127.0.0.1:8080; its requests carry "Host: evil.example:8080" and
// pass any check that compares Origin with Host. Only the Host itself tells them apart: a bridge answers the
// names that are its own (loopback names and addresses, IP literals, and the names an operator lists in
// listen.allowedHosts) and refuses the rest with 421 Misdirected Request. docs/adr/0090-the-door.md records
// the choices.
package door

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// AllowedHostsKey is the configuration key that admits more names; refusals name it.
const AllowedHostsKey = "listen.allowedHosts"

// AnyHost is the listen.allowedHosts entry that admits every name; the configuration accepts it only with
// authentication configured.
const AnyHost = "*"

// Hosts decides whether a request's Host is a name of this bridge. The zero value admits loopback names,
// IP literals and requests without a Host only. A Hosts is safe for concurrent use once built.
type Hosts struct {
	any      bool
	exact    map[string]bool // lower case, no trailing dot
	suffixes []string        // ".example.com" for "*.example.com"
}

// NewHosts returns the Hosts that admits, besides the defaults, the names of allowed: a name ("bridge.example.com"),
// a wildcard ("*.example.com": every name under example.com, not example.com itself) or AnyHost. Entries are
// matched case-insensitively and without a port; CheckPattern says which entries are valid.
func NewHosts(allowed []string) *Hosts {
	h := &Hosts{exact: map[string]bool{}}
	for _, a := range allowed {
		if strings.TrimSpace(a) == AnyHost {
			h.any = true
			continue
		}
		a = normalize(a)
		switch {
		case a == AnyHost:
			// "*." is no pattern (CheckPattern refuses it); it admits nothing
			h.any = true
		case strings.HasPrefix(a, "*."):
			h.suffixes = append(h.suffixes, a[1:])
		default:
			h.exact[a] = true
		}
	}
	return h
}

// CheckPattern returns an error saying what is wrong with an entry of listen.allowedHosts, or nil.
func CheckPattern(p string) error {
	if strings.TrimSpace(p) == AnyHost {
		return nil
	}
	n := normalize(p)
	if strings.ContainsAny(n, ":/[]") {
		return fmt.Errorf("%q: want a host name without scheme, port or path, such as bridge.example.com or *.example.com", p)
	}
	name := strings.TrimPrefix(n, "*.")
	if name == "" || strings.Contains(name, "*") {
		return fmt.Errorf("%q: a wildcard is \"*.\" followed by a domain, such as *.example.com", p)
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 {
			return fmt.Errorf("%q: not a host name (an empty or over-long label)", p)
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return fmt.Errorf("%q: not a host name (character %q)", p, r)
			}
		}
	}
	return nil
}

func normalize(name string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(name)), ".")
}

// Admits reports whether hostport, a request's Host ("name", "name:port", "[::1]:port"), is a name of this
// bridge. An empty Host (HTTP/1.0; no browser sends one) is admitted.
func (h *Hosts) Admits(hostport string) bool {
	if hostport == "" || h.any {
		return true
	}
	host := hostport
	if hst, _, err := net.SplitHostPort(hostport); err == nil {
		host = hst
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	// An IP literal is never a rebinding: the page's origin is then that address, which is the bridge's own.
	if _, err := netip.ParseAddr(host); err == nil {
		return true
	}
	host = normalize(host)
	if host == "localhost" || strings.HasSuffix(host, ".localhost") { // RFC 6761: always loopback
		return true
	}
	if h.exact[host] {
		return true
	}
	for _, s := range h.suffixes {
		if strings.HasSuffix(host, s) && len(host) > len(s) {
			return true
		}
	}
	return false
}

// Guard wraps next: a request whose Host hosts does not admit is refused with 421 Misdirected Request and a
// JSON body (google.rpc.Status, as the gateway's errors) naming listen.allowedHosts; hosts nil admits every
// Host. Every answer, refused or not, carries SetHeaders.
func Guard(hosts *Hosts, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		SetHeaders(w.Header())
		if hosts != nil && !hosts.Admits(r.Host) {
			refuse(w, r.Host)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func refuse(w http.ResponseWriter, host string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusMisdirectedRequest)
	// 7 is google.rpc.Code PERMISSION_DENIED.
	_ = json.NewEncoder(w).Encode(map[string]any{
		"code": 7,
		"message": fmt.Sprintf("host %q is not a name of this bridge (a guard against DNS rebinding): "+
			"add the name to %s in the configuration to serve it", host, AllowedHostsKey),
	})
}

// SetHeaders sets the headers every HTTP answer of the bridge carries: no MIME sniffing, no framing, no
// referrer, no embedding by pages of other origins, and a policy that lets an answer run nothing. The
// console's handler replaces the Content-Security-Policy with its own for its pages.
func SetHeaders(h http.Header) {
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
}
