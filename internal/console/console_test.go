package console

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-bridge/mcp-bridge/internal/config"
)

func get(t *testing.T, h http.Handler, method, path string) *http.Response {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec.Result()
}

func TestHandler(t *testing.T) {
	tests := []struct {
		name, method, path string
		wantCode           int
		wantType           string
	}{
		{name: "index at the prefix", method: "GET", path: "/console/", wantCode: 200, wantType: "text/html; charset=utf-8"},
		{name: "index by name", method: "GET", path: "/console/index.html", wantCode: 200, wantType: "text/html; charset=utf-8"},
		{name: "module", method: "GET", path: "/console/app.js", wantCode: 200, wantType: "text/javascript; charset=utf-8"},
		{name: "style sheet", method: "GET", path: "/console/console.css", wantCode: 200, wantType: "text/css; charset=utf-8"},
		{name: "head", method: "HEAD", path: "/console/app.js", wantCode: 200, wantType: "text/javascript; charset=utf-8"},
		{name: "missing file", method: "GET", path: "/console/nope.js", wantCode: 404},
		{name: "unknown type", method: "GET", path: "/console/README", wantCode: 404},
		{name: "traversal", method: "GET", path: "/console/../console.go", wantCode: 404},
		{name: "dot segment", method: "GET", path: "/console/./app.js", wantCode: 404},
		{name: "outside the prefix", method: "GET", path: "/app.js", wantCode: 404},
		{name: "post", method: "POST", path: "/console/", wantCode: 405},
	}
	h := Handler(Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := get(t, h, tt.method, tt.path)
			if resp.StatusCode != tt.wantCode {
				t.Fatalf("%s %s = %d, want %d", tt.method, tt.path, resp.StatusCode, tt.wantCode)
			}
			if tt.wantType != "" && resp.Header.Get("Content-Type") != tt.wantType {
				t.Errorf("Content-Type = %q, want %q", resp.Header.Get("Content-Type"), tt.wantType)
			}
			// Every response, errors included, carries the security headers.
			for k, want := range map[string]string{
				"Content-Security-Policy": ContentSecurityPolicy,
				"X-Content-Type-Options":  "nosniff",
				"X-Frame-Options":         "DENY",
				"Referrer-Policy":         "no-referrer",
			} {
				if got := resp.Header.Get(k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			if resp.Header.Get("Set-Cookie") != "" {
				t.Error("the console set a cookie")
			}
		})
	}
}

// TestEveryAssetIsServed: a file added to assets/ with a type the handler does not know would be embedded
// and never served.
func TestEveryAssetIsServed(t *testing.T) {
	h := Handler(Options{})
	err := fs.WalkDir(assets, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if resp := get(t, h, "GET", Prefix+path); resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s%s = %d", Prefix, path, resp.StatusCode)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestContentSecurityPolicy pins what the policy must say: only the page's own scripts, styles and
// connections, no plugins, no framing, no <base> or form targets elsewhere.
func TestContentSecurityPolicy(t *testing.T) {
	directives := map[string]string{}
	for _, d := range strings.Split(ContentSecurityPolicy, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
		directives[name] = value
	}
	for name, want := range map[string]string{
		"default-src": "'self'", "script-src": "'self'", "style-src": "'self'", "connect-src": "'self'",
		"object-src": "'none'", "base-uri": "'none'", "form-action": "'none'", "frame-ancestors": "'none'",
	} {
		if directives[name] != want {
			t.Errorf("%s = %q, want %q", name, directives[name], want)
		}
	}
	if strings.Contains(ContentSecurityPolicy, "unsafe-") {
		t.Errorf("the policy allows something unsafe: %s", ContentSecurityPolicy)
	}
}

// TestAssetsAreSafe checks the rules the console's code keeps, so that a change that breaks one fails here
// rather than in a browser: no inline script, style or handler in the page (the CSP would block them), and
// no API that parses a string as HTML or code in the modules (server-supplied text must stay text).
func TestAssetsAreSafe(t *testing.T) {
	html, err := fs.ReadFile(assets, "index.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []*regexp.Regexp{
		regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]`), // a script element with a body
		regexp.MustCompile(`<style`),
		regexp.MustCompile(`\sstyle=`),
		regexp.MustCompile(`\son[a-z]+=`),
		regexp.MustCompile(`https?://`), // no CDN: everything comes from the bridge
	} {
		if loc := bad.FindIndex(html); loc != nil {
			t.Errorf("index.html has %q", html[loc[0]:loc[1]])
		}
	}
	forbidden := regexp.MustCompile(`\.innerHTML|\.outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|createContextualFragment|DOMParser|\.srcdoc`)
	err = fs.WalkDir(assets, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".js") {
			return err
		}
		src, err := fs.ReadFile(assets, path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(src), "\n") {
			if m := forbidden.FindString(line); m != "" && !strings.HasPrefix(strings.TrimSpace(line), "//") {
				t.Errorf("%s:%d uses %s", path, i+1, m)
			}
			if strings.Contains(line, "http://") || strings.Contains(line, "https://") {
				if !strings.HasPrefix(strings.TrimSpace(line), "//") {
					t.Errorf("%s:%d names an outside URL", path, i+1)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestProtectAPI(t *testing.T) {
	api := ProtectAPI(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "{}") }))
	tests := []struct {
		name    string
		method  string
		headers map[string]string
		want    int
	}{
		{name: "curl (no browser headers)", method: "POST", want: 200},
		{name: "same origin (the console)", method: "POST", headers: map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://bridge.test"}, want: 200},
		{name: "typed by hand in the address bar", method: "POST", headers: map[string]string{"Sec-Fetch-Site": "none"}, want: 200},
		{name: "cross-site form post", method: "POST", headers: map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}, want: 403},
		{name: "cross-site, old browser (Origin only)", method: "POST", headers: map[string]string{"Origin": "https://evil.example"}, want: 403},
		{name: "cross-site delete", method: "DELETE", headers: map[string]string{"Sec-Fetch-Site": "cross-site"}, want: 403},
		{name: "cross-site read (the same-origin policy keeps the answer from the page)", method: "GET", headers: map[string]string{"Sec-Fetch-Site": "cross-site"}, want: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, "http://bridge.test/v1/sessions", strings.NewReader(`{"server":"demo"}`))
			for k, v := range tt.headers {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			api.ServeHTTP(rec, req)
			if rec.Code != tt.want {
				t.Fatalf("%s = %d %s, want %d", tt.method, rec.Code, rec.Body, tt.want)
			}
			if tt.want == 403 && (rec.Header().Get("Content-Type") != "application/json" || !strings.Contains(rec.Body.String(), `"code":7`)) {
				t.Errorf("refusal = %q %s, want a google.rpc.Status in JSON", rec.Header().Get("Content-Type"), rec.Body)
			}
		})
	}
}

func TestSettings(t *testing.T) {
	tests := []struct {
		name     string
		opts     Options
		wantJSON string
		wantCSP  string
	}{
		{name: "no auth", wantJSON: `{"oidc":null,"principals":{"authenticated":false}}`, wantCSP: ContentSecurityPolicy},
		{
			name: "sign-in at the identity provider",
			opts: Options{OIDC: &OIDC{Issuer: "https://idp.example:8443/realms/x", ClientID: "console", Scopes: []string{"openid"}, Token: "id_token"},
				Principals: Principals{Authenticated: true, Claim: "email"}},
			wantJSON: `{"oidc":{"issuer":"https://idp.example:8443/realms/x","clientID":"console","scopes":["openid"],"token":"id_token"},` +
				`"principals":{"authenticated":true,"claim":"email"}}`,
			wantCSP: strings.Replace(ContentSecurityPolicy, "connect-src 'self'", "connect-src 'self' https://idp.example:8443", 1),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := Handler(tt.opts)
			resp := get(t, h, "GET", "/console/config.json")
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || string(body) != tt.wantJSON {
				t.Errorf("config.json = %d %s, want %s", resp.StatusCode, body, tt.wantJSON)
			}
			for _, path := range []string{"/console/config.json", "/console/"} {
				if got := get(t, h, "GET", path).Header.Get("Content-Security-Policy"); got != tt.wantCSP {
					t.Errorf("CSP of %s = %q, want %q", path, got, tt.wantCSP)
				}
			}
		})
	}
}

func TestOptionsFrom(t *testing.T) {
	tests := []struct {
		name string
		auth config.Auth
		want Principals
	}{
		{name: "no auth", want: Principals{}},
		{name: "static tokens", auth: config.Auth{TokensFile: "tokens.txt"}, want: Principals{Authenticated: true}},
		{name: "oidc", auth: config.Auth{OIDC: &config.OIDC{Issuer: "https://idp.example", PrincipalClaim: "email"}}, want: Principals{Authenticated: true, Claim: "email"}},
		{name: "oidc, default claim", auth: config.Auth{OIDC: &config.OIDC{Issuer: "https://idp.example"}}, want: Principals{Authenticated: true, Claim: "sub"}},
		{name: "client certificates", auth: config.Auth{MTLS: config.MTLS{PrincipalFrom: "commonName"}}, want: Principals{Authenticated: true, Certificates: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := OptionsFrom(&config.Config{Auth: tt.auth}).Principals; got != tt.want {
				t.Errorf("Principals = %+v, want %+v", got, tt.want)
			}
		})
	}
}
