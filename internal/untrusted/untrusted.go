// Package untrusted finds, in text a server or a host supplies, the characters a person may not see as they
// are: bidirectional controls that reorder what is shown, invisible and control characters, words that mix
// the letters of look-alike scripts, and object keys that read alike but differ
// (docs/adr/0091-untrusted-text-and-approval-visibility.md). The bridge attaches its findings to every
// approval request and server request it delivers, so that every approver — the console, a Python or Java
// host, the audit log — is warned of the same things.
//
// The inspection only reports; it never changes the text. What is shown, approved and sent stays the bytes
// the caller or the server supplied.
package untrusted

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Kind is what a Finding is about.
type Kind int

// Kinds of findings.
const (
	// BidiControl: U+202A–202E, U+2066–2069, U+200E, U+200F, U+061C, which reorder the text around them.
	BidiControl Kind = iota + 1
	// Invisible: zero-width characters (U+200B–200D, U+2060–2064, U+FEFF), the soft hyphen, variation
	// selectors, tag characters (U+E0000–E007F), Hangul fillers, and every other format (Cf), private-use
	// (Co) or unassigned (Cn, as of Go's Unicode tables) code point. A zero-width joiner between two symbols
	// and a variation selector after a symbol or digit (emoji sequences) are not reported.
	Invisible
	// Control: C0 and C1 controls other than tab, line feed and carriage return; invalid UTF-8 (reported
	// as U+FFFD).
	Control
	// MixedScript: one word (a run of letters and marks) has letters of two of Latin, Greek and Cyrillic,
	// the scripts whose letters look alike ("pаypal" with a Cyrillic а). The code points are the letters
	// not of the word's most frequent script.
	MixedScript
	// KeyCollision: two keys of one object differ but are equal once the characters of the kinds above are
	// removed and NFKC applied. Reported on each such key but the first in sorted order.
	KeyCollision
)

var kindNames = map[Kind]string{
	BidiControl: "bidi_control", Invisible: "invisible", Control: "control", MixedScript: "mixed_script", KeyCollision: "key_collision",
}

func (k Kind) String() string {
	if n, ok := kindNames[k]; ok {
		return n
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// MarshalText writes the kind's name, for JSON (the state store, the audit log).
func (k Kind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText reads a kind's name.
func (k *Kind) UnmarshalText(b []byte) error {
	for kind, n := range kindNames {
		if n == string(b) {
			*k = kind
			return nil
		}
	}
	return fmt.Errorf("unknown text warning kind %q", b)
}

// Bounds of an inspection's output.
const (
	// MaxFindings bounds the findings of one inspection; the rest are left out (Truncated says so).
	MaxFindings = 64
	// MaxCodePoints bounds the distinct code points of one finding.
	MaxCodePoints = 16
	// maxDepth bounds the nesting walked, as the decoders of the bridge do.
	maxDepth = 1000
)

// Finding is one thing found in one string.
type Finding struct {
	// Path is where: the prefix given to the inspection, then ".key" or `["key"]` (a key that is not a
	// plain identifier, JSON-quoted with every non-ASCII character escaped as \uXXXX) and "[i]" per level.
	Path string `json:"path"`
	Kind Kind   `json:"kind"`
	// CodePoints are the characters found, each once, in the order first seen; at most MaxCodePoints.
	CodePoints []rune `json:"codePoints,omitempty"`
	// InKey: the finding is in the object key the path ends with, not in its value.
	InKey bool `json:"inKey,omitempty"`
	// Detail says more, in words: the scripts mixed, or the key collided with.
	Detail string `json:"detail,omitempty"`
}

// CodePointStrings returns the finding's code points as "U+202E".
func (f Finding) CodePointStrings() []string {
	out := make([]string, len(f.CodePoints))
	for i, r := range f.CodePoints {
		out[i] = fmt.Sprintf("U+%04X", r)
	}
	return out
}

// Report collects findings up to MaxFindings.
type Report struct {
	Findings []Finding
	// Truncated: more findings than MaxFindings were left out.
	Truncated bool
}

func (r *Report) add(f Finding) {
	if len(r.Findings) >= MaxFindings {
		r.Truncated = true
		return
	}
	r.Findings = append(r.Findings, f)
}

// String inspects one string at path.
func String(path, s string) []Finding {
	var r Report
	r.String(path, s)
	return r.Findings
}

// String adds the findings of one string at path.
func (r *Report) String(path, s string) { r.inspectString(path, s, false) }

// Key adds the findings of one object key, at the path that ends with it (a map whose collisions the caller
// does not need: proto maps other than Struct are keyed by names the bridge chose or the protocol fixes).
func (r *Report) Key(path, key string) { r.inspectString(path, key, true) }

// JSON adds the findings of every string and object key of the JSON value in b, below prefix. Invalid JSON
// is reported as an error; the findings up to it are kept.
func (r *Report) JSON(prefix string, b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	r.Value(prefix, v)
	return nil
}

// JSON inspects the JSON value in b below prefix.
func JSON(prefix string, b []byte) ([]Finding, error) {
	var r Report
	err := r.JSON(prefix, b)
	return r.Findings, err
}

// Value adds the findings of a decoded JSON value (map[string]any, []any, string, numbers, bools, nil) below
// prefix. Object keys are walked in sorted order.
func (r *Report) Value(prefix string, v any) { r.value(prefix, v, 0) }

func (r *Report) value(path string, v any, depth int) {
	if depth > maxDepth || r.Truncated {
		return
	}
	switch x := v.(type) {
	case string:
		r.inspectString(path, x, false)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		first := map[string]string{} // folded key → the first key that folds to it
		for _, k := range keys {
			p := path + PathElement(k)
			r.key(p, k, first)
			r.value(p, x[k], depth+1)
		}
	case []any:
		for i, e := range x {
			r.value(path+"["+strconv.Itoa(i)+"]", e, depth+1)
		}
	}
}

// key reports the findings in the key k at path p, and its collision with an earlier key of its object
// (first maps the folded keys seen to the first key of each).
func (r *Report) key(p, k string, first map[string]string) {
	r.inspectString(p, k, true)
	f := Fold(k)
	if other, ok := first[f]; ok {
		r.add(Finding{Path: p, Kind: KeyCollision, CodePoints: differing(k, other), InKey: true,
			Detail: "collides with " + quoteASCII(other) + " once invisible characters are removed and NFKC applied"})
		return
	}
	first[f] = k
}

// differing returns the code points of a not in b (what makes a differ from the key it collides with).
func differing(a, b string) []rune {
	var out []rune
	for _, c := range a {
		if !strings.ContainsRune(b, c) && !slices.Contains(out, c) && len(out) < MaxCodePoints {
			out = append(out, c)
		}
	}
	return out
}

// Fold returns s without the characters of the kinds BidiControl, Invisible and Control, in NFKC: two keys
// that fold alike read alike.
func Fold(s string) string {
	var b strings.Builder
	rs := []rune(strings.ToValidUTF8(s, "\uFFFD"))
	for i, c := range rs {
		if classify(rs, i) == 0 {
			b.WriteRune(c)
		}
	}
	return norm.NFKC.String(b.String())
}

// inspectString adds one finding per kind found in s.
func (r *Report) inspectString(path, s string, inKey bool) {
	if r.Truncated || plainASCII(s) {
		return
	}
	var found [KeyCollision][]rune
	add := func(k Kind, c rune) {
		cps := found[k-1]
		if len(cps) < MaxCodePoints && !slices.Contains(cps, c) {
			found[k-1] = append(cps, c)
		}
	}
	var rs []rune
	for i := 0; i < len(s); {
		c, size := utf8.DecodeRuneInString(s[i:])
		i += size
		if c == utf8.RuneError && size == 1 {
			add(Control, utf8.RuneError)
			c = ' ' // a word ends at a byte that is no character
		}
		rs = append(rs, c)
	}
	for i := range rs {
		if k := classify(rs, i); k != 0 {
			add(k, rs[i])
		}
	}
	mixed, detail := mixedScripts(rs)
	for _, c := range mixed {
		add(MixedScript, c)
	}
	for k := BidiControl; k <= MixedScript; k++ {
		if cps := found[k-1]; len(cps) > 0 {
			f := Finding{Path: path, Kind: k, CodePoints: cps, InKey: inKey}
			if k == MixedScript {
				f.Detail = detail
			}
			r.add(f)
		}
	}
}

// Plain reports whether s is printable ASCII, tab, LF and CR only: nothing to find in it.
func Plain(s string) bool { return plainASCII(s) }

// plainASCII reports whether s is printable ASCII, tab, LF and CR only: nothing to find.
func plainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x7f || (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
			return false
		}
	}
	return true
}

// classify returns the kind of rs[i] when it is a character of the kinds BidiControl, Invisible or
// Control, else 0. Its neighbours decide for joiners and variation selectors in emoji sequences.
func classify(rs []rune, i int) Kind {
	c := rs[i]
	switch {
	case c == '\t' || c == '\n' || c == '\r':
		return 0
	case c < 0x20 || (c >= 0x7f && c <= 0x9f):
		return Control
	case c >= 0x202a && c <= 0x202e, c >= 0x2066 && c <= 0x2069, c == 0x200e, c == 0x200f, c == 0x061c:
		return BidiControl
	case c == 0x200d: // zero-width joiner: part of an emoji sequence between two symbols
		if i > 0 && i+1 < len(rs) && emojiBase(rs[i-1]) && emojiBase(rs[i+1]) {
			return 0
		}
		return Invisible
	case c >= 0xfe00 && c <= 0xfe0f, c >= 0xe0100 && c <= 0xe01ef: // variation selectors
		if i > 0 && (emojiBase(rs[i-1]) || unicode.IsDigit(rs[i-1]) || rs[i-1] == '#' || rs[i-1] == '*') {
			return 0
		}
		return Invisible
	case c == 0x200b, c == 0x200c, c >= 0x2060 && c <= 0x2064, c == 0xfeff, c == 0x00ad, c == 0x034f,
		c >= 0xe0000 && c <= 0xe007f, c == 0x115f, c == 0x1160, c == 0x3164, c == 0xffa0, c == 0x180e,
		c == 0x17b4, c == 0x17b5:
		return Invisible
	case unicode.Is(unicode.Cf, c), unicode.Is(unicode.Co, c):
		return Invisible
	case !assigned(c):
		return Invisible
	}
	return 0
}

// emojiBase reports whether c can take part in an emoji sequence (a symbol, or the sequence's own parts).
func emojiBase(c rune) bool {
	return unicode.Is(unicode.So, c) || unicode.Is(unicode.Sk, c) || c == 0xfe0f || (c >= 0x1f3fb && c <= 0x1f3ff)
}

// assigned reports whether c is an assigned code point in Go's Unicode tables (not Cn).
func assigned(c rune) bool {
	return unicode.In(c, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs)
}

// lookAlike are the scripts whose letters are confused with one another.
var lookAlike = []struct {
	name  string
	table *unicode.RangeTable
}{
	{"Latin", unicode.Latin}, {"Cyrillic", unicode.Cyrillic}, {"Greek", unicode.Greek},
}

// mixedScripts returns the letters of words that mix look-alike scripts which are not of their word's most
// frequent script, and a detail naming the scripts.
func mixedScripts(rs []rune) ([]rune, string) {
	var out []rune
	var names []string
	word := func(w []rune) {
		var counts [3]int
		for _, c := range w {
			for j, s := range lookAlike {
				if unicode.Is(s.table, c) {
					counts[j]++
				}
			}
		}
		n, top := 0, 0
		for j, c := range counts {
			if c > 0 {
				n++
				if c > counts[top] {
					top = j
				}
			}
		}
		if n < 2 {
			return
		}
		for j, c := range counts {
			if c > 0 && !slices.Contains(names, lookAlike[j].name) {
				names = append(names, lookAlike[j].name)
			}
		}
		for _, c := range w {
			if unicode.IsLetter(c) && !unicode.Is(lookAlike[top].table, c) && !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	start := -1
	for i, c := range rs {
		inWord := unicode.IsLetter(c) || unicode.IsMark(c)
		switch {
		case inWord && start < 0:
			start = i
		case !inWord && start >= 0:
			word(rs[start:i])
			start = -1
		}
	}
	if start >= 0 {
		word(rs[start:])
	}
	if len(out) == 0 {
		return nil, ""
	}
	return out, "a word mixes " + strings.Join(names, " and ") + " letters"
}

// PathElement is the path element of an object key: ".key" for a plain identifier, else `["key"]` with the
// key JSON-quoted and every non-ASCII or control character escaped as \uXXXX (so that the path itself shows
// what the key holds).
func PathElement(key string) string {
	if plainIdentifier(key) {
		return "." + key
	}
	return "[" + quoteASCII(key) + "]"
}

func plainIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '-' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9')) {
			return false
		}
	}
	return true
}

// quoteASCII JSON-quotes s with every character outside printable ASCII escaped as \uXXXX (UTF-16).
func quoteASCII(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		c, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteRune(c)
		case c >= 0x20 && c < 0x7f:
			b.WriteRune(c)
		case c > 0xffff:
			c -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+(c>>10), 0xdc00+(c&0x3ff))
		default:
			fmt.Fprintf(&b, `\u%04x`, c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
