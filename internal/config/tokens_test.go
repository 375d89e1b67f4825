package config

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoadTokens(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		content string
		want    Tokens
		wantErr string // the error with the directory stripped
	}{
		{
			name:    "lines",
			file:    "tokens",
			content: "# token principal\n\ntok-a alice\n  tok-b\tbob  \n",
			want:    Tokens{"tok-a": "alice", "tok-b": "bob"},
		},
		{
			name:    "yaml map",
			file:    "tokens.yaml",
			content: "alice: tok-a\nci-bot: [tok-old, tok-new]\n",
			want:    Tokens{"tok-a": "alice", "tok-old": "ci-bot", "tok-new": "ci-bot"},
		},
		{
			name:    "json map",
			file:    "tokens.json",
			content: `{"alice": "tok-a", "bob": ["tok-b"]}`,
			want:    Tokens{"tok-a": "alice", "tok-b": "bob"},
		},
		{
			name:    "line with one field",
			file:    "tokens.txt",
			content: "tok-a alice\ntok-b\n",
			wantErr: `tokens.txt:2: want "token principal", got 1 fields`,
		},
		{
			name:    "line with three fields",
			file:    "tokens.txt",
			content: "tok-a alice admin\n",
			wantErr: `tokens.txt:1: want "token principal", got 3 fields`,
		},
		{
			name:    "duplicate token",
			file:    "tokens.txt",
			content: "tok-a alice\ntok-a bob\n",
			wantErr: `tokens.txt:2: duplicate token`,
		},
		{
			name:    "duplicate token in yaml",
			file:    "tokens.yml",
			content: "alice: tok-a\nbob: tok-a\n",
			wantErr: `duplicate token`,
		},
		{
			name:    "empty",
			file:    "tokens.txt",
			content: "# nobody\n",
			wantErr: `tokens.txt: no tokens: a tokens file that accepts nobody locks every client out`,
		},
		{
			name:    "empty yaml",
			file:    "tokens.yaml",
			content: "",
			wantErr: `tokens.yaml: no tokens: a tokens file that accepts nobody locks every client out`,
		},
		{
			name:    "token with a space",
			file:    "tokens.yaml",
			content: "alice: \"tok a\"\n",
			wantErr: `tokens.yaml:1:1: alice: tokens must be non-empty without white space`,
		},
		{
			name:    "principal with a space",
			file:    "tokens.yaml",
			content: "\"alice smith\": tok-a\n",
			wantErr: `tokens.yaml:1:1: bad principal "alice smith": must be non-empty without white space`,
		},
		{
			name:    "nested value",
			file:    "tokens.yaml",
			content: "alice: {token: x}\n",
			wantErr: `tokens.yaml:1:8: alice: must be a list, not a mapping`,
		},
		{
			name:    "bad yaml",
			file:    "tokens.yaml",
			content: "alice: [x\n",
			wantErr: `tokens.yaml:1: invalid YAML: did not find expected ',' or ']'`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, tt.file, tt.content)
			got, err := LoadTokens(path)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("LoadTokens succeeded with %v", got)
				}
				msg := strings.TrimPrefix(err.Error(), filepath.Dir(path)+string(filepath.Separator))
				if !strings.Contains(msg, tt.wantErr) {
					t.Errorf("error\n got: %s\nwant: %s", msg, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("tokens (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadTokensMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	_, err := LoadTokens(path)
	if err == nil || err.Error() != path+": cannot read tokens file: no such file" {
		t.Errorf("LoadTokens(missing) = %v", err)
	}
}

func TestTokensLookup(t *testing.T) {
	tokens := Tokens{"tok-a": "alice", "tok-b": "bob"}
	for _, tt := range []struct {
		token, principal string
		ok               bool
	}{
		{"tok-a", "alice", true},
		{"tok-b", "bob", true},
		{"tok-", "", false},
		{"tok-ab", "", false},
		{"", "", false},
	} {
		p, ok := tokens.Lookup(tt.token)
		if p != tt.principal || ok != tt.ok {
			t.Errorf("Lookup(%q) = %q, %v; want %q, %v", tt.token, p, ok, tt.principal, tt.ok)
		}
	}
	if _, ok := Tokens(nil).Lookup("x"); ok {
		t.Error("nil Tokens accepted a token")
	}
}

func TestExpand(t *testing.T) {
	t.Setenv("MCPB_A", "alpha")
	t.Setenv("MCPB_EMPTY", "")
	tests := []struct {
		in, want, wantErr string
	}{
		{in: "plain", want: "plain"},
		{in: "$HOME and $", want: "$HOME and $"},
		{in: "${MCPB_A}", want: "alpha"},
		{in: "Bearer ${MCPB_A}!", want: "Bearer alpha!"},
		{in: "${MCPB_A}${MCPB_A}", want: "alphaalpha"},
		{in: "${MCPB_EMPTY}", want: ""},
		{in: "${MCPB_EMPTY:-fallback}", want: "fallback"},
		{in: "${MCPB_UNSET_X:-fall back}", want: "fall back"},
		{in: "${MCPB_UNSET_X:-}", want: ""},
		{in: "$${MCPB_A}", want: "${MCPB_A}"},
		{in: "a$${b}c${MCPB_A}", want: "a${b}calpha"},
		{in: "${MCPB_UNSET_X}", wantErr: "environment variable MCPB_UNSET_X is not set (write ${MCPB_UNSET_X:-default} to allow that)"},
		{in: "${}", wantErr: "bad variable reference ${}: names are letters, digits and '_', not starting with a digit"},
		{in: "${A-B}", wantErr: "bad variable reference ${A-B}: names are letters, digits and '_', not starting with a digit"},
		{in: "x${MCPB_A", wantErr: `unterminated "${" in "${MCPB_A"`},
	}
	for _, tt := range tests {
		got, err := expand(tt.in)
		if tt.wantErr != "" {
			if err == nil || err.Error() != tt.wantErr {
				t.Errorf("expand(%q) = %q, %v; want error %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("expand(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

// FuzzParse feeds arbitrary bytes to the config decoder, as both YAML and JSON: it must return a
// config or an *Error, never panic.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"mcpServers:\n  a:\n    command: x\n",
		`{"mcpServers": {"a": {"url": "http://h/", "headers": {"A": "b"}}}}`,
		"listen: {grpc: ':1'}\nlimits: {maxSessions: 3}\nsessions: {idleTimeout: 5m}\n",
		"a: &x [1]\nb: *x\n",
		"[1, 2]",
		"",
	} {
		f.Add("c.yaml", []byte(seed))
		f.Add("c.json", []byte(seed))
	}
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		if !strings.HasSuffix(name, ".json") {
			name = "c.yaml"
		}
		c, err := Parse(filepath.Join(t.TempDir(), name), data)
		if err == nil && c == nil {
			t.Fatal("nil config without an error")
		}
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("error %v is %T, not *Error", err, err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error spans lines: %q", err)
			}
		}
	})
}
