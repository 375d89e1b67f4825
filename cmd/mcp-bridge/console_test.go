package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-bridge/mcp-bridge/internal/console"
)

// The console's wiring: on unless the configuration turns it off, its page open to anyone (it holds no
// data), the API it calls behind the same bearer authentication as ever, and cross-site writes refused.
func TestConsoleWiring(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens.txt")
	if err := os.WriteFile(tokens, []byte("tok-alice alice\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	withAuth := twoServers + "auth:\n  tokensFile: " + tokens + "\n"
	tests := []struct {
		name        string
		config      string
		wantConsole bool
	}{
		{name: "on by default", config: withAuth, wantConsole: true},
		{name: "on", config: withAuth + "console:\n  enabled: true\n", wantConsole: true},
		{name: "off", config: withAuth + "console:\n  enabled: false\n", wantConsole: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := startBridge(t, runOptions{}, "--config", writeConfig(t, "bridge.yaml", tt.config))
			base := "http://" + tb.addrs.HTTP

			code, body := httpGet(t, nil, base+"/console/")
			switch {
			case tt.wantConsole && (code != http.StatusOK || !strings.Contains(string(body), `<script type="module" src="app.js">`)):
				t.Errorf("GET /console/ = %d %.80s, want the page", code, body)
			case !tt.wantConsole && code != http.StatusNotFound:
				t.Errorf("GET /console/ with the console off = %d, want 404", code)
			}
			if tt.wantConsole {
				resp, err := http.Get(base + "/console/app.js")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if got := resp.Header.Get("Content-Security-Policy"); got != console.ContentSecurityPolicy {
					t.Errorf("CSP of app.js = %q", got)
				}
				// /console redirects to the page.
				resp, err = http.Get(base + "/console")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.Request.URL.Path != "/console/" || resp.StatusCode != http.StatusOK {
					t.Errorf("GET /console ended at %s with %d", resp.Request.URL.Path, resp.StatusCode)
				}
			}

			// What the console calls is the API, authenticated as before.
			if code, body := httpGet(t, nil, base+"/v1/servers"); code != http.StatusUnauthorized {
				t.Errorf("GET /v1/servers without a token = %d %s, want 401", code, body)
			}
			if code, body := httpGet(t, nil, base+"/v1/servers", "Authorization", "Bearer tok-alice",
				"Sec-Fetch-Site", "same-origin"); code != http.StatusOK {
				t.Errorf("GET /v1/servers as the console sends it = %d %s", code, body)
			}

			// A page of another site cannot write, token or not.
			req, err := http.NewRequestWithContext(testContext(t), http.MethodPost, base+"/v1/sessions", strings.NewReader(`{"server":"zeta"}`))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Sec-Fetch-Site", "cross-site")
			req.Header.Set("Origin", "https://evil.example")
			req.Header.Set("Authorization", "Bearer tok-alice")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("cross-site POST /v1/sessions = %d, want 403", resp.StatusCode)
			}
		})
	}
}
