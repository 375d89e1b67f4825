package config

import (
	"encoding/json"
	"fmt"
	"testing"

	"go.yaml.in/yaml/v3"
)

// JSON that yaml.v3 would not read as JSON means it still reads as JSON: escaped surrogate pairs (Python's
// json.dump), raw control characters and the characters YAML takes for line breaks.
func TestParseJSONReadsWhatYAMLWouldNot(t *testing.T) {
	for _, tc := range []struct {
		name, json, want string
	}{
		{"surrogate pair", `{"d": "a \ud83d\ude00 b"}`, "a \U0001F600 b"},
		{"escaped quote and backslash", `{"d": "\"\\\ud83d\ude00"}`, "\"\\\U0001F600"},
		{"lone escapes", `{"d": "\u00e9\/\n"}`, "é/\n"},
		{"next line", "{\"d\": \"a\u0085b\"}", "a\u0085b"},
		{"line and paragraph separators", "{\"d\": \"a\u2028b\u2029c\"}", "a\u2028b\u2029c"},
		{"lone surrogate", `{"d": "a\udc00b\ud800"}`, "a\uFFFDb\uFFFD"},
		{"delete", "{\"d\": \"a\x7fb\"}", "a\x7fb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := parseJSON("c.json", []byte(tc.json))
			if err != nil {
				t.Fatal(err)
			}
			if n.Kind != yaml.MappingNode || len(n.Content) != 2 || n.Content[1].Value != tc.want {
				t.Errorf("value = %q, want %q", n.Content[1].Value, tc.want)
			}
		})
	}
}

// FuzzParseJSON: what encoding/json accepts, parseJSON reads, to the same structure and strings.
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{`{"a": [1, 2.5, "x", true, null, {}]}`, `{"d": "\ud83d\ude00"}`, "{\"d\": \"\u2028\"}", `"\\"`, `{"a":"\/\udc00"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var want any
		if json.Unmarshal(data, &want) != nil || len(data) > 4096 {
			return
		}
		n, err := parseJSON("c.json", data)
		if err != nil {
			t.Fatalf("%q: encoding/json reads it, parseJSON: %v", data, err)
		}
		if path, ok := sameJSON(n, want, "$"); !ok {
			t.Errorf("%q: at %s the node tree differs from encoding/json's reading", data, path)
		}
	})
}

// sameJSON reports whether n has want's structure and strings (numbers, booleans and null are compared by
// kind only), and where it first differs.
func sameJSON(n *yaml.Node, want any, path string) (string, bool) {
	switch w := want.(type) {
	case map[string]any:
		if n.Kind != yaml.MappingNode {
			return path, false
		}
		got := map[string]*yaml.Node{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			got[n.Content[i].Value] = n.Content[i+1] // a duplicate key: the last, as encoding/json
		}
		if len(got) != len(w) {
			return path, false
		}
		for k, v := range w {
			gn, ok := got[k]
			if !ok {
				return path + "." + k, false
			}
			if p, ok := sameJSON(gn, v, path+"."+k); !ok {
				return p, false
			}
		}
	case []any:
		if n.Kind != yaml.SequenceNode || len(n.Content) != len(w) {
			return path, false
		}
		for i, v := range w {
			if p, ok := sameJSON(n.Content[i], v, fmt.Sprintf("%s[%d]", path, i)); !ok {
				return p, false
			}
		}
	case string:
		return path, n.Kind == yaml.ScalarNode && n.Tag == "!!str" && n.Value == w
	default:
		return path, n.Kind == yaml.ScalarNode && n.Tag != "!!str"
	}
	return path, true
}
