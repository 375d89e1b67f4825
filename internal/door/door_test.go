package door

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestAdmits(t *testing.T) {
	h := NewHosts([]string{"Bridge.Example.com.", "*.corp.test"})
	for _, c := range []struct {
		host string
		want bool
	}{
		{"", true},
		{"localhost", true},
		{"localhost:8080", true},
		{"LocalHost.:8080", true},
		{"app.localhost:1", true},
		{"127.0.0.1:8080", true},
		{"127.9.9.9", true},
		{"[::1]:8080", true},
		{"[::1]", true},
		{"10.1.2.3:80", true}, // an IP literal cannot be rebound
		{"bridge.example.com:443", true},
		{"BRIDGE.example.com", true},
		{"a.corp.test:8080", true},
		{"a.b.corp.test", true},
		{"corp.test", false},
		{"xcorp.test", false},
		{"evil.example:8080", false},
		{"localhost.evil.example", false},
		{"bridge.example.com.evil.example", false},
		{"127.0.0.1.nip.io", false},
	} {
		if got := h.Admits(c.host); got != c.want {
			t.Errorf("Admits(%q) = %v, want %v", c.host, got, c.want)
		}
	}
	if !NewHosts([]string{"*"}).Admits("evil.example") {
		t.Error(`"*" does not admit every name`)
	}
}

func TestCheckPattern(t *testing.T) {
	for _, ok := range []string{"*", "bridge.example.com", "*.example.com", "svc_1.ns"} {
		if err := CheckPattern(ok); err != nil {
			t.Errorf("CheckPattern(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "*.", "a.*.com", "http://x", "x:8080", "[::1]", "a..b", "bad name", "*example.com"} {
		if err := CheckPattern(bad); err == nil {
			t.Errorf("CheckPattern(%q) = nil, want an error", bad)
		}
	}
}

func TestGuard(t *testing.T) {
	h := Guard(NewHosts(nil), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }))
	r := httptest.NewRequest("GET", "http://evil.example:8080/v1/sessions", nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusMisdirectedRequest || !strings.Contains(w.Body.String(), AllowedHostsKey) || w.Header().Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("evil.example: %d %v %q", w.Code, w.Header(), w.Body)
	}
	r = httptest.NewRequest("GET", "http://127.0.0.1:8080/", nil)
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusOK || w.Header().Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("127.0.0.1: %d %v", w.Code, w.Header())
	}
}
