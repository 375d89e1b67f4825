package untrusted

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestJSON(t *testing.T) {
	tests := []struct {
		name string
		json string
		want []Finding
	}{
		{"plain", `{"to":"bob","amount":100,"note":"hello, world\n"}`, nil},
		{"the issue's call", `{"amount":"\u202e1000000","note":"ok \u202eyenom lla refsnart","to":"bob","to\u200b":"mallory"}`, []Finding{
			{Path: "a.to", Kind: 0}, // placeholder, replaced below
		}},
		{"control and invisible", `{"x":["a\u0007b","c\u00add","e\ufeff"]}`, []Finding{
			{Path: "a.x[0]", Kind: Control, CodePoints: []rune{7}},
			{Path: "a.x[1]", Kind: Invisible, CodePoints: []rune{0xad}},
			{Path: "a.x[2]", Kind: Invisible, CodePoints: []rune{0xfeff}},
		}},
		{"mixed script", `{"host":"pаypal"}`, []Finding{
			{Path: "a.host", Kind: MixedScript, CodePoints: []rune{0x430}, Detail: "a word mixes Latin and Cyrillic letters"},
		}},
		{"scripts apart are fine", `{"t":"Москва and London, Αθήνα"}`, nil},
		{"emoji sequences are fine", `{"t":"👩‍💻 ❤️ 1️⃣"}`, nil},
		{"tag characters", "{\"t\":\"hi\U000E0041\U000E0042\"}", []Finding{
			{Path: "a.t", Kind: Invisible, CodePoints: []rune{0xe0041, 0xe0042}},
		}},
		{"NFKC collision", `{"ｆｏｏ":1,"foo":2}`, []Finding{
			{Path: `a["\uff46\uff4f\uff4f"]`, Kind: KeyCollision, CodePoints: []rune{0xff46, 0xff4f}, InKey: true, Detail: `collides with "foo" once invisible characters are removed and NFKC applied`},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := JSON("a", []byte(tt.json))
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if tt.name == "the issue's call" {
				want = []Finding{
					{Path: "a.amount", Kind: BidiControl, CodePoints: []rune{0x202e}},
					{Path: "a.note", Kind: BidiControl, CodePoints: []rune{0x202e}},
					{Path: `a["to\u200b"]`, Kind: Invisible, CodePoints: []rune{0x200b}, InKey: true},
					{Path: `a["to\u200b"]`, Kind: KeyCollision, CodePoints: []rune{0x200b}, InKey: true, Detail: `collides with "to" once invisible characters are removed and NFKC applied`},
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestInvalidUTF8(t *testing.T) {
	got := String("s", "a\xffb")
	if len(got) != 1 || got[0].Kind != Control {
		t.Fatalf("findings = %+v, want one control finding", got)
	}
}

func TestBound(t *testing.T) {
	var r Report
	for range MaxFindings + 5 {
		r.String("s", "\u202e")
	}
	if len(r.Findings) != MaxFindings || !r.Truncated {
		t.Fatalf("%d findings, truncated %v", len(r.Findings), r.Truncated)
	}
}

func TestCheckURL(t *testing.T) {
	tests := []struct {
		url     string
		want    Destination
		refused bool
	}{
		{url: "https://login.example.co.uk/a?b=c", want: Destination{Scheme: "https", Host: "login.example.co.uk", RegistrableDomain: "example.co.uk"}},
		{url: "HTTPS://Example.COM:8443/x", want: Destination{Scheme: "https", Host: "example.com", RegistrableDomain: "example.com"}},
		{url: "https://bücher.example/", want: Destination{Scheme: "https", Host: "xn--bcher-kva.example", RegistrableDomain: "xn--bcher-kva.example"}},
		{url: "http://127.0.0.1:8080/cb", want: Destination{Scheme: "http", Host: "127.0.0.1", Loopback: true}},
		{url: "http://localhost/cb", want: Destination{Scheme: "http", Host: "localhost", Loopback: true}},
		{url: "http://[::1]/cb", want: Destination{Scheme: "http", Host: "::1", Loopback: true}},
		{url: "/v1/sessions", refused: true},
		{url: "//evil.example/x", refused: true},
		{url: "javascript:alert(1)", refused: true},
		{url: "data:text/html,<script>alert(1)</script>", refused: true},
		{url: "file:///etc/passwd", refused: true},
		{url: "http://example.com/", refused: true},
		{url: "https://bank.example@evil.example/", refused: true},
		{url: "https://evil.example/\u202etxt.exe", refused: true},
		{url: "https:///nohost", refused: true},
		{url: "https:example.com", refused: true},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			got, err := CheckURL(tt.url)
			if tt.refused {
				if !errors.Is(err, ErrURLRefused) {
					t.Fatalf("CheckURL = %+v, %v; want refused", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("destination (-want +got):\n%s", diff)
			}
		})
	}
}
