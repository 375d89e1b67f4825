package untrusted

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzJSON: any input is inspected without a panic; findings are bounded, carry their prefix, and name
// code points; a string with a flagged code point is reported.
func FuzzJSON(f *testing.F) {
	for _, s := range []string{`{"amount":"\u202e1","to":1,"to\u200b":2}`, `["pаypal","\u0007"]`, `"x"`, `{"a":{"b":[{"c":"\ufeff"}]}}`, `{"ｆ":1,"f":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fs, err := JSON("p", b)
		if err != nil {
			return
		}
		if len(fs) > MaxFindings {
			t.Fatalf("%d findings", len(fs))
		}
		for _, fd := range fs {
			if !strings.HasPrefix(fd.Path, "p") || fd.Kind < BidiControl || fd.Kind > KeyCollision || len(fd.CodePoints) > MaxCodePoints {
				t.Fatalf("bad finding %+v", fd)
			}
			if !utf8.ValidString(fd.Path) {
				t.Fatalf("path %q is not UTF-8", fd.Path)
			}
		}
		var v any
		_ = json.Unmarshal(b, &v)
		if s, ok := v.(string); ok && strings.ContainsRune(s, 0x202e) && len(fs) == 0 {
			t.Fatalf("U+202E in %q not reported", s)
		}
	})
}

// FuzzCheckURL: any URL is accepted or refused without a panic, and an accepted one is https or loopback.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"https://a.example/", "http://127.0.0.1/", "/v1/sessions", "javascript:x", "https://a@b/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := CheckURL(s)
		if err != nil {
			return
		}
		if !(d.Scheme == "https" || (d.Scheme == "http" && d.Loopback)) || d.Host == "" {
			t.Fatalf("accepted %q as %+v", s, d)
		}
	})
}
