// Package console serves the operator console: a browser page, built into the binary, from which a person
// sees the configured servers and their health, the sessions they own and their live events, answers what
// servers ask (elicitation, sampling, authorization) and runs tools.
//
// The console is static code and holds no data. Everything it shows it fetches from the bridge's REST API
// (/v1/…) as the signed-in principal, with the bearer token the person gave the page in an Authorization
// header; so it sees exactly what that principal may see, through the same authentication, policy and
// limits as any other REST client. The assets themselves are served without authentication, like
// /openapi.json: they are the same for everyone and a browser cannot attach an Authorization header to a
// page navigation. docs/adr/0060-operator-console.md records why, and why the page is safe against
// cross-site scripting and request forgery.
package console

import (
	"bytes"
	"cmp"
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/mcp-bridge/mcp-bridge/internal/config"
)

// Prefix is the path the console is served under; Handler expects to be mounted there.
const Prefix = "/console/"

//go:embed assets
var embedded embed.FS

// assets is the console's files, rooted at the assets directory.
var assets = func() fs.FS {
	sub, err := fs.Sub(embedded, "assets")
	if err != nil {
		panic(err) // the directory is embedded above; this cannot fail
	}
	return sub
}()

// ContentSecurityPolicy is the policy of every console response. The page runs only its own scripts
// (no inline script, no eval), applies only its own style sheets (no inline style), talks only to its
// own origin, may show images and audio of tool results given as data: URLs, and may not be framed.
const ContentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"media-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; " +
	"frame-ancestors 'none'"

// SetSecurityHeaders sets the headers every console response carries: the Content-Security-Policy, no
// MIME sniffing, no framing (for browsers without frame-ancestors), no referrer (a session id in the
// URL stays on the page), and a browsing context of its own.
func SetSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
}

// contentTypes are the types of the files the console has; a file of another type is not served.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
	".png":  "image/png",
}

// Options configure the console. The zero value is a console of a bridge without authentication.
type Options struct {
	// OIDC, if set, offers sign-in at an OpenID Connect identity provider.
	OIDC *OIDC
	// Principals says how the bridge names callers, so that the page can say whom it acts as. It is a
	// display: the bridge decides, on every call.
	Principals Principals
}

// Principals is what the page needs to name the principal it acts as.
type Principals struct {
	// Authenticated is whether calls need a principal (auth.tokensFile, auth.oidc or auth.mtls); without,
	// every caller is "local".
	Authenticated bool `json:"authenticated"`
	// Claim is the claim of a JWT that is its principal (auth.oidc.principalClaim); empty without auth.oidc.
	Claim string `json:"claim,omitempty"`
	// Certificates is whether a client certificate names the principal of a call without a token
	// (auth.mtls.principalFrom).
	Certificates bool `json:"certificates,omitempty"`
}

// OIDC is what the page needs to sign a person in at the identity provider (authorization code with PKCE;
// the console is a public client). None of it is secret: the page fetches it as config.json.
type OIDC struct {
	Issuer   string   `json:"issuer"`
	ClientID string   `json:"clientID"`
	Scopes   []string `json:"scopes"`
	// Token is the token of the provider's answer the page uses: "id_token" or "access_token".
	Token string `json:"token"`
}

// OptionsFrom returns the console's options of a configuration.
func OptionsFrom(cfg *config.Config) Options {
	var o Options
	a := cfg.Auth
	o.Principals.Authenticated = a.TokensFile != "" || a.OIDC != nil || a.MTLS.PrincipalFrom != ""
	o.Principals.Certificates = a.MTLS.PrincipalFrom != ""
	if a.OIDC != nil {
		o.Principals.Claim = cmp.Or(a.OIDC.PrincipalClaim, config.DefaultPrincipalClaim)
	}
	if c := cfg.Console.OIDC; c != nil && cfg.Auth.OIDC != nil {
		o.OIDC = &OIDC{Issuer: cfg.Auth.OIDC.Issuer, ClientID: c.ClientID, Scopes: c.Scopes, Token: c.Token}
	}
	return o
}

// Handler returns the console's handler, to be mounted at Prefix: GET and HEAD of its embedded files,
// index.html for the bare prefix, config.json (what the page needs to know of o), 404 for anything else,
// every response with SetSecurityHeaders. It is safe for concurrent use.
func Handler(o Options) http.Handler {
	csp := ContentSecurityPolicy
	if o.OIDC != nil {
		// The page fetches the provider's discovery document and exchanges the code at its token endpoint.
		if u, err := url.Parse(o.OIDC.Issuer); err == nil && u.Host != "" {
			csp = strings.Replace(csp, "connect-src 'self'", "connect-src 'self' "+u.Scheme+"://"+u.Host, 1)
		}
	}
	settings, err := json.Marshal(map[string]any{"oidc": o.OIDC, "principals": o.Principals})
	if err != nil {
		panic(err) // strings and a slice of strings always marshal
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		SetSecurityHeaders(w.Header())
		w.Header().Set("Content-Security-Policy", csp)
		if r.URL.Path == Prefix+"config.json" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", "no-cache")
			http.ServeContent(w, r, "config.json", time.Time{}, bytes.NewReader(settings))
			return
		}
		serve(w, r)
	})
}

func serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name, ok := strings.CutPrefix(r.URL.Path, Prefix)
	if !ok {
		http.NotFound(w, r)
		return
	}
	if name == "" {
		name = "index.html"
	}
	ctype, known := contentTypes[path.Ext(name)]
	if !known || !fs.ValidPath(name) {
		http.NotFound(w, r)
		return
	}
	body, err := fs.ReadFile(assets, name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", ctype)
	// The files change with the binary only; revalidate so that an upgraded bridge serves its own.
	w.Header().Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(body))
}

// ProtectAPI wraps the REST API so that a browser's cross-origin request that is not a safe method (a POST
// from a page of another site, which needs no CORS preflight) is refused with 403 PERMISSION_DENIED before it
// reaches the API (net/http's CrossOriginProtection: Sec-Fetch-Site, else Origin against Host). Requests
// that carry neither header — curl, the client libraries, any non-browser host — pass. With bearer tokens
// the API needs no such guard (a cross-site page cannot set an Authorization header); without them, on a
// laptop, the principal is ambient like a cookie, and this is what keeps another site from calling tools
// through the person's browser (docs/adr/0060-operator-console.md). Comparing Origin with Host cannot tell a
// DNS-rebound page (Host and Origin both evil.example) from the bridge's own: the door in front of every route
// checks the Host itself (internal/door, docs/adr/0090-the-door.md).
func ProtectAPI(api http.Handler) http.Handler {
	p := http.NewCrossOriginProtection()
	p.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		// google.rpc.Status, as the gateway's own errors: 7 is PERMISSION_DENIED.
		_, _ = w.Write([]byte(`{"code":7,"message":"cross-origin request refused: the API does not take writes from pages of other origins"}` + "\n"))
	}))
	return p.Handler(api)
}
