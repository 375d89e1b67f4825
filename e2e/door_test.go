package e2e

// The door: what a request meets before authentication (docs/adr/0090-the-door.md) — the Host check against
// DNS rebinding, the Bearer challenge, the safe headers.

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// doorRoute is one route of a listener, with what a local caller gets from it.
type doorRoute struct {
	method, path, body string
	local              int // the status a local caller gets
}

// doorRoutes are every route of the HTTP listener without authentication.
var doorRoutes = []doorRoute{
	{"GET", "/healthz", "", http.StatusOK},
	{"GET", "/readyz", "", http.StatusOK},
	{"GET", "/metrics", "", http.StatusOK},
	{"GET", "/openapi.json", "", http.StatusOK},
	{"GET", "/console/", "", http.StatusOK},
	{"GET", "/v1/servers", "", http.StatusOK},
	{"POST", "/v1/sessions", `{"server": "demo"}`, http.StatusOK},
	{"GET", "/nowhere", "", http.StatusNotFound},
}

// rebound sends what a page on http://NAME:PORT/ sends once its name points at the bridge: Host NAME:PORT,
// the page's own origin, same-origin by the browser's account.
func rebound(t *testing.T, addr, name string, rt doorRoute) (int, http.Header, string) {
	t.Helper()
	_, port, _ := net.SplitHostPort(addr)
	var body io.Reader
	if rt.body != "" {
		body = strings.NewReader(rt.body)
	}
	req, err := http.NewRequestWithContext(testCtx(t), rt.method, "http://"+addr+rt.path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = net.JoinHostPort(name, port)
	req.Header.Set("Origin", "http://"+req.Host)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	if rt.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s (Host %s): %v", rt.method, rt.path, req.Host, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(raw)
}

// TestDoorRefusesRebinding: on a bridge without auth, a request for another name (DNS rebinding) is refused
// with 421 naming listen.allowedHosts on every route of the HTTP and admin listeners; loopback names,
// addresses and the listed names are served; every answer carries nosniff.
func TestDoorRefusesRebinding(t *testing.T) {
	b := start(t, bridgeConfig{
		args:  []string{"--admin-addr", "127.0.0.1:0"},
		extra: "listen:\n  allowedHosts: [bridge.test, \"*.corp.test\"]\n",
	})
	admin := []doorRoute{{"GET", "/metrics", "", 200}, {"GET", "/healthz", "", 200}, {"GET", "/readyz", "", 200}}
	for _, l := range []struct {
		addr   string
		routes []doorRoute
	}{{b.http, doorRoutes}, {b.admin, admin}} {
		for _, rt := range l.routes {
			for _, name := range []string{"evil.example", "bridge.test.evil.example", "corp.test", "localhost.evil.example"} {
				code, h, body := rebound(t, l.addr, name, rt)
				if code != http.StatusMisdirectedRequest || !strings.Contains(body, "listen.allowedHosts") {
					t.Errorf("%s %s%s as %s = %d %q, want 421 naming listen.allowedHosts", rt.method, l.addr, rt.path, name, code, body)
				}
				if h.Get("X-Content-Type-Options") != "nosniff" {
					t.Errorf("%s %s as %s: no nosniff", rt.method, rt.path, name)
				}
			}
			for _, name := range []string{"127.0.0.1", "127.1.2.3", "localhost", "LOCALHOST.", "app.localhost", "::1", "bridge.test", "a.corp.test"} {
				code, h, body := rebound(t, l.addr, name, rt)
				if code != rt.local {
					t.Errorf("%s %s%s as %s = %d %q, want %d", rt.method, l.addr, rt.path, name, code, body, rt.local)
				}
				if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") == "" ||
					!strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
					t.Errorf("%s %s as %s: headers %v, want nosniff, Referrer-Policy, frame-ancestors", rt.method, rt.path, name, h)
				}
			}
		}
	}
}

// TestDoorWithAuth: with auth the Host check is on only when listen.allowedHosts is set ("*" admits any).
func TestDoorWithAuth(t *testing.T) {
	auth := "auth:\n  tokensFile: tokens.txt\n"
	files := map[string]string{"tokens.txt": "tok-alice alice\n"}
	route := doorRoute{"GET", "/openapi.json", "", http.StatusOK}
	for _, c := range []struct {
		name, listen string
		want         int
	}{
		{"no list", "", http.StatusOK},
		{"a list", "listen:\n  allowedHosts: [bridge.test]\n", http.StatusMisdirectedRequest},
		{"any", "listen:\n  allowedHosts: [\"*\"]\n", http.StatusOK},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := start(t, bridgeConfig{extra: auth + c.listen, files: files})
			if code, _, body := rebound(t, b.http, "evil.example", route); code != c.want {
				t.Errorf("as evil.example = %d %q, want %d", code, body, c.want)
			}
		})
	}
}

// TestDoorAnyHostNeedsAuth: "*" without auth is refused at start, naming the key.
func TestDoorAnyHostNeedsAuth(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/bridge.yaml"
	if err := os.WriteFile(path, []byte("listen:\n  allowedHosts: [\"*\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(binary, "--config", path, "--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "listen.allowedHosts[0]") || !strings.Contains(string(out), "DNS rebinding") {
		t.Errorf("allowedHosts [*] without auth: %v %s, want a start error naming listen.allowedHosts[0]", err, out)
	}
}

// attackerPage tries what a rebound page does: create a session, and report the status.
const attackerPage = `<!doctype html><title>cute cats</title><script>
window.attack = fetch('/v1/sessions', {method: 'POST', headers: {'Content-Type': 'application/json'},
  body: JSON.stringify({server: 'demo'})}).then(r => r.text().then(t => r.status + ' ' + t), e => 'error ' + e);
</script>`

// TestDoorRebindingInChromium is DNS rebinding in a real browser. Chromium resolves evil.example to 127.0.0.1
// (--host-resolver-rules). The rebinding itself — the name answering first with the attacker's server, then
// with the bridge — is played by a front on one port: it serves the attacker's page at "/" and passes every
// other request, its Host untouched, to the bridge, as the rebound name would. The page's script, same-origin
// by the browser's account, tries to create a session: refused (421) for evil.example, while the same page
// loaded as 127.0.0.1 gets its session — so the test can tell.
func TestDoorRebindingInChromium(t *testing.T) {
	b := start(t, bridgeConfig{})
	target, _ := url.Parse("http://" + b.http)
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = r.In.Host // the browser's Host, as the rebound name delivers it
	}}
	front := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = io.WriteString(w, attackerPage)
			return
		}
		proxy.ServeHTTP(w, r)
	}), ReadHeaderTimeout: 10 * time.Second}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() { defer close(served); _ = front.Serve(ln) }() // ends at Close below
	t.Cleanup(func() { _ = front.Close(); <-served })
	_, port, _ := net.SplitHostPort(ln.Addr().String())

	ctx, stop := startChromium(t, chromedp.Flag("host-resolver-rules", "MAP evil.example 127.0.0.1"))
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()

	attack := func(origin string) string {
		if _, err := chromedp.Run(ctx, chromedp.Navigate(origin+"/")); err != nil {
			t.Fatalf("%s: %v", origin, err)
		}
		got, err := chromedp.Run(ctx, chromedp.Evaluate[string](`window.attack`, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("%s: %v", origin, err)
		}
		return got
	}
	if got := attack("http://evil.example:" + port); !strings.HasPrefix(got, "421 ") || !strings.Contains(got, "listen.allowedHosts") {
		t.Errorf("the rebound page's POST /v1/sessions = %q, want 421 naming listen.allowedHosts", got)
	}
	if got := attack("http://127.0.0.1:" + port); !strings.HasPrefix(got, "200 ") || !strings.Contains(got, "sessionId") {
		t.Errorf("the same page on 127.0.0.1: POST /v1/sessions = %q, want 200 and a session", got)
	}
}

// TestDoorBearerChallenge: a 401 carries an RFC 6750 challenge — error="invalid_token" for a wrong token, no
// error for none, never the token — and API answers carry nosniff.
func TestDoorBearerChallenge(t *testing.T) {
	b := start(t, bridgeConfig{
		extra: "auth:\n  tokensFile: tokens.txt\n",
		files: map[string]string{"tokens.txt": "tok-alice alice\n"},
	})
	get := func(path, token string) *http.Response {
		req, _ := http.NewRequestWithContext(testCtx(t), "GET", "http://"+b.http+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp
	}
	for _, path := range []string{"/v1/servers", "/v1/identity", "/v1/sessions/s-x/events"} {
		resp := get(path, "")
		if got := resp.Header.Values("WWW-Authenticate"); resp.StatusCode != 401 || len(got) != 1 || got[0] != `Bearer realm="mcp-bridge"` {
			t.Errorf("%s without a token = %d, WWW-Authenticate %q, want 401 and a bare Bearer challenge", path, resp.StatusCode, got)
		}
		resp = get(path, "not-the-token-4711")
		got := resp.Header.Get("WWW-Authenticate")
		if resp.StatusCode != 401 || !strings.HasPrefix(got, `Bearer realm="mcp-bridge"`) || !strings.Contains(got, `error="invalid_token"`) || strings.Contains(got, "4711") {
			t.Errorf("%s with a wrong token = %d, WWW-Authenticate %q, want 401 and error=\"invalid_token\" without the token", path, resp.StatusCode, got)
		}
	}
	for _, path := range []string{"/v1/servers", "/openapi.json", "/healthz", "/console/"} {
		for _, token := range []string{"", "tok-alice"} {
			if resp := get(path, token); resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("X-Frame-Options") != "DENY" {
				t.Errorf("%s (token %q) = %d, headers %v: want nosniff and X-Frame-Options", path, token, resp.StatusCode, resp.Header)
			}
		}
	}
}

// vmHWM is the peak resident set size of process pid, in bytes (VmHWM of /proc/PID/status).
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Skipf("no /proc (%v): peak memory cannot be read on this system", err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM %q: %v", v, err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/PID/status")
	return 0
}

// deepBody is a CallTool body whose arguments nest depth arrays deep.
func deepBody(depth int) string {
	return `{"arguments": {"a": ` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}}`
}

// TestDoorDeepBodyBeforeAuth: a 10 KB body nested 5,000 deep, without a token, to a bridge with auth, is 401
// at a cost of less than 50 MB of peak memory (it was ~0.85 GB); with a token it is 400 naming the nesting
// limit, as cheaply; gRPC refuses the same depth the same way; an over-limit body is 413 naming the key.
func TestDoorDeepBodyBeforeAuth(t *testing.T) {
	b := start(t, bridgeConfig{
		extra: "auth:\n  tokensFile: tokens.txt\nlimits:\n  maxMessageBytes: 65536\n",
		files: map[string]string{"tokens.txt": "tok-alice alice\n"},
	})
	sid, _ := b.rest("tok-alice").must("POST", "/v1/sessions", `{"server": "demo"}`)["sessionId"].(string)
	pid := b.cmd.Process.Pid
	before := vmHWM(t, pid)
	body := deepBody(5000)
	path := "/v1/sessions/" + sid + "/tools/echo:call"
	if code, out := b.rest("").do("POST", path, body); code != http.StatusUnauthorized {
		t.Errorf("deep body without a token = %d %v, want 401", code, out)
	}
	if code, out := b.rest("wrong").do("POST", path, body); code != http.StatusBadRequest && code != http.StatusUnauthorized {
		t.Errorf("deep body with a wrong token = %d %v, want 400 or 401", code, out)
	}
	code, out := b.rest("tok-alice").do("POST", path, body)
	if msg, _ := out["message"].(string); code != http.StatusBadRequest || !strings.Contains(msg, "deeper than 128 levels") {
		t.Errorf("deep body with a token = %d %v, want 400 naming the nesting limit", code, out)
	}
	if grown := vmHWM(t, pid) - before; grown > 50<<20 {
		t.Errorf("peak RSS grew by %d MB answering 5,000-deep bodies, want < 50 MB", grown>>20)
	} else {
		t.Logf("peak RSS before %d MB, grown by %d KB", before>>20, grown>>10)
	}
	// Just within the limit is served: 126 levels of arrays under the request object and arguments.
	if code, out := b.rest("tok-alice").do("POST", path, deepBody(126)); code != http.StatusOK {
		t.Errorf("a body 128 deep = %d %v, want 200", code, out)
	}
	if code, out := b.rest("tok-alice").do("POST", path, deepBody(127)); code != http.StatusBadRequest {
		t.Errorf("a body 129 deep = %d %v, want 400", code, out)
	}
	// gRPC: the same limit, counted on the message.
	args := &structpb.Value{}
	for range 130 {
		args = structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{args}})
	}
	_, err := b.client.CallTool(withToken(testCtx(t), "tok-alice"), &pb.CallToolRequest{SessionId: sid, Name: "echo",
		Arguments: &structpb.Struct{Fields: map[string]*structpb.Value{"a": args}}})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "deeper than 128 levels") {
		t.Errorf("gRPC CallTool 132 deep = %v, want INVALID_ARGUMENT naming the nesting limit", err)
	}
	// Over limits.maxMessageBytes: 413 naming the key.
	big := `{"arguments": {"a": "` + strings.Repeat("x", 70000) + `"}}`
	code, out = b.rest("tok-alice").do("POST", path, big)
	if msg, _ := out["message"].(string); code != http.StatusRequestEntityTooLarge || !strings.Contains(msg, "limits.maxMessageBytes") || !strings.Contains(msg, "65536") {
		t.Errorf("a 70 KB body = %d %v, want 413 naming limits.maxMessageBytes and 65536", code, out)
	}
	// Over the limit on gRPC: RESOURCE_EXHAUSTED, and logged (grpc-go refuses it before any interceptor).
	_, err = b.client.CallTool(withToken(testCtx(t), "tok-alice"), &pb.CallToolRequest{SessionId: sid, Name: "echo",
		Arguments: &structpb.Struct{Fields: map[string]*structpb.Value{"a": structpb.NewStringValue(strings.Repeat("x", 70000))}}})
	if status.Code(err) != codes.ResourceExhausted {
		t.Errorf("gRPC CallTool of 70 KB = %v, want RESOURCE_EXHAUSTED", err)
	}
	b.logs.waitFor(t, func(rec map[string]any) bool {
		return rec["msg"] == "gRPC message refused" && rec["method"] == "/mcpbridge.v1.BridgeService/CallTool"
	})
}

// TestDoorIdleConnections: idle keep-alive connections, more than the process has descriptors for, do not lock
// out a new REST or gRPC client: past limits.maxHTTPConnections (by default half the descriptor limit) the
// connection quiet longest is closed to make room. The bridge runs under prlimit --nofile=256, so a few hundred
// connections are enough (20,000 at the usual limit).
func TestDoorIdleConnections(t *testing.T) {
	prlimit, err := exec.LookPath("prlimit")
	if err != nil {
		t.Skip("prlimit (util-linux) is not installed: the descriptor limit cannot be lowered")
	}
	wrapper := filepath.Join(t.TempDir(), "mcp-bridge-nofile")
	script := "#!/bin/sh\nexec " + strconv.Quote(prlimit) + " --nofile=256:256 -- " + strconv.Quote(binary) + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	real := binary
	binary = wrapper // start runs it; tests that change binary run alone (no t.Parallel here)
	b := start(t, bridgeConfig{})
	binary = real

	var idle []net.Conn
	t.Cleanup(func() {
		for _, c := range idle {
			c.Close()
		}
	})
	for i := range 400 {
		c, err := net.DialTimeout("tcp", b.http, 10*time.Second)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		idle = append(idle, c)
		// One request, then the connection stays open and idle (keep-alive). Its answer is read, so that the
		// request is over before the next connection: a connection with a request in flight is never closed
		// to make room, and a new client arriving while all of them were still being answered would be
		// refused (the gate's rule), which is not what this test is about. An answer that does not come (the
		// connection was already closed to make room) is not waited for.
		_, _ = io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	// A new client of each kind is served; each call is bounded, so a bridge that cannot accept fails, not hangs.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+b.http+"/v1/servers", nil)
	client := &http.Client{Transport: &http.Transport{}} // a connection of its own
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("a new REST client after 400 idle connections: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("a new REST client: %d", resp.StatusCode)
	}
	conn, err := grpc.NewClient(b.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := pb.NewBridgeServiceClient(conn).ListServers(ctx, &pb.ListServersRequest{}); err != nil {
		t.Errorf("a new gRPC client after 400 idle connections: %v", err)
	}
	req, _ = http.NewRequestWithContext(ctx, "GET", "http://"+b.http+"/metrics", nil)
	if resp, err = client.Do(req); err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(metrics), "mcp_bridge_http_connections_closed_at_limit_total") {
		t.Error("/metrics has no mcp_bridge_http_connections_closed_at_limit_total")
	}
}
