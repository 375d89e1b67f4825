package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// parseDocument parses data into a node tree: as JSON when name ends in .json, as YAML when it
// ends in .yaml or .yml, and otherwise as JSON if it starts with '{' and parses as JSON, else as
// YAML. It returns nil for a document with no content (an empty or all-comment YAML file).
func parseDocument(name string, data []byte) (*yaml.Node, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")) // a UTF-8 byte order mark
	switch strings.ToLower(filepath.Ext(name)) {
	case ".json":
		return parseJSON(name, data)
	case ".yaml", ".yml":
		return parseYAML(name, data)
	}
	if trimmed := bytes.TrimLeft(data, " \t\r\n"); len(trimmed) > 0 && trimmed[0] == '{' {
		n, jsonErr := parseJSON(name, data)
		if jsonErr == nil {
			return n, nil
		}
		// A YAML flow mapping also starts with '{'; if YAML cannot read it either, the JSON
		// error is the more useful one.
		if n, err := parseYAML(name, data); err == nil {
			return n, nil
		}
		return nil, jsonErr
	}
	return parseYAML(name, data)
}

var yamlLineError = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func parseYAML(name string, data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, yamlError(name, data, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, yamlError(name, data, err)
		}
		return nil, &Error{File: name, Line: extra.Line, Msg: "more than one YAML document; a config file holds exactly one"}
	}
	if doc.Kind == yaml.DocumentNode {
		if len(doc.Content) == 0 {
			return nil, nil
		}
		return doc.Content[0], nil
	}
	return &doc, nil
}

func yamlError(name string, data []byte, err error) *Error {
	msg := err.Error()
	if m := yamlLineError.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		if l := yamlProblemLine(data, m[2]); l > line {
			line = l
		}
		return &Error{File: name, Line: line, Msg: "invalid YAML: " + m[2], Err: err}
	}
	return &Error{File: name, Msg: "invalid YAML: " + strings.TrimPrefix(msg, "yaml: "), Err: err}
}

// yamlProblemLine finds the line a YAML syntax error is on. The YAML parser reports the line
// where the enclosing block began, which for a mistake deep inside a long block is far from
// it; the first prefix of the file, in whole lines, that fails with the same problem ends on
// the line at fault. It returns 0 when no prefix does.
func yamlProblemLine(data []byte, problem string) int {
	lines := bytes.SplitAfter(data, []byte("\n"))
	if len(lines) > 1000 || len(data) > 64<<10 {
		return 0 // the search is quadratic; config files are far smaller than this
	}
	var prefix []byte
	for i, l := range lines {
		prefix = append(prefix, l...)
		var n yaml.Node
		err := yaml.Unmarshal(prefix, &n)
		if err == nil {
			continue
		}
		if m := yamlLineError.FindStringSubmatch(err.Error()); m != nil && m[2] == problem {
			return i + 1
		}
	}
	return 0
}

// parseJSON reads data as JSON into the node tree the YAML decoder produces. encoding/json checks it, so
// that only JSON is accepted and its syntax errors are the messages; yaml.v3 — YAML 1.2 is a superset of
// JSON — then builds the tree with lines and columns, so that one decoder serves both formats.
func parseJSON(name string, data []byte) (*yaml.Node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var v json.RawMessage
	err := dec.Decode(&v)
	if err == nil {
		off := int(dec.InputOffset())
		for off < len(data) && strings.IndexByte(" \t\r\n", data[off]) >= 0 {
			off++
		}
		if _, err = dec.Token(); err == nil {
			line, col := lineCol(data, off)
			return nil, &Error{File: name, Line: line, Column: col, Msg: "invalid JSON: unexpected data after the top-level value"}
		} else if errors.Is(err, io.EOF) {
			return parseYAML(name, jsonForYAML(data))
		}
	}
	var syntax *json.SyntaxError
	switch {
	case errors.As(err, &syntax):
		line, col := lineCol(data, syntaxErrorOffset(data, syntax))
		return nil, &Error{File: name, Line: line, Column: col, Msg: "invalid JSON: " + syntax.Error(), Err: err}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		line, col := lineCol(data, len(data))
		return nil, &Error{File: name, Line: line, Column: col, Msg: "invalid JSON: unexpected end of input", Err: err}
	default:
		return nil, &Error{File: name, Msg: "invalid JSON: " + err.Error(), Err: err}
	}
}

// jsonForYAML spells, in the strings of valid JSON, what JSON allows and yaml.v3 does not read as JSON
// means it, as an escape both read alike: an escaped surrogate pair (\ud83d\ude00, as Python writes
// non-BMP characters) becomes one \U escape, a lone surrogate and invalid UTF-8 U+FFFD (as encoding/json
// reads them), an escaped solidus (\/) a plain one, and a raw character outside YAML's printable set or
// one YAML takes for a line break (U+0085, U+2028, U+2029, which it would fold into spaces) an escape.
// Between tokens a tab becomes a space. Other bytes are left alone, so lines do not move; a column after a rewritten character on its line may
// shift by a few.
func jsonForYAML(data []byte) []byte {
	var out []byte // nil until something needs rewriting
	inString := false
	for i := 0; i < len(data); {
		c, size := data[i], 1
		repl := ""
		switch {
		case !inString && c == '\t':
			repl = " " // YAML refuses tabs where it looks for indentation; between JSON tokens a space is the same
		case !inString:
			inString = c == '"'
		case c == '"':
			inString = false
		case c == '\\':
			size = 2 // the escape and the escaped character
			if hi, ok := hexEscape(data, i); ok && hi >= 0xD800 && hi < 0xE000 {
				repl, size = `\uFFFD`, 6 // a lone surrogate
				if lo, ok := hexEscape(data, i+6); ok && hi < 0xDC00 && lo >= 0xDC00 && lo < 0xE000 {
					repl, size = fmt.Sprintf("\\U%08x", 0x10000+(hi-0xD800)<<10+(lo-0xDC00)), 12
				}
			} else if data[i+1] == '/' {
				repl = "/"
			}
		case c < 0x20 || c == 0x7f:
			repl = fmt.Sprintf("\\x%02x", c)
		case c >= 0x80:
			var r rune
			r, size = utf8.DecodeRune(data[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				repl = `\uFFFD`
			case r == '\u0085':
				repl = `\N`
			case r == '\u2028':
				repl = `\L`
			case r == '\u2029':
				repl = `\P`
			case r < 0xa0 || r == 0xfffe || r == 0xffff:
				repl = fmt.Sprintf("\\u%04x", r)
			}
		}
		if repl != "" && out == nil {
			out = append(make([]byte, 0, len(data)+16), data[:i]...)
		}
		switch {
		case repl != "":
			out = append(out, repl...)
		case out != nil:
			out = append(out, data[i:i+size]...)
		}
		i += size
	}
	if out == nil {
		return data
	}
	return out
}

// hexEscape returns the code unit of the \uXXXX escape at data[i:], if there is one.
func hexEscape(data []byte, i int) (rune, bool) {
	if i+6 > len(data) || data[i] != '\\' || data[i+1] != 'u' {
		return 0, false
	}
	v, err := strconv.ParseUint(string(data[i+2:i+6]), 16, 16)
	return rune(v), err == nil
}

var invalidCharacter = regexp.MustCompile(`^invalid character '(.)'`)

// syntaxErrorOffset returns the offset of the character a JSON syntax error is about.
// encoding/json reports the offset just past it for some errors and at it for others; the
// character quoted in the message tells which.
func syntaxErrorOffset(data []byte, err *json.SyntaxError) int {
	off := int(err.Offset)
	if m := invalidCharacter.FindStringSubmatch(err.Error()); m != nil && off > 0 && off <= len(data) &&
		data[off-1] == m[1][0] && (off == len(data) || data[off] != m[1][0]) {
		return off - 1
	}
	return off
}

// lineCol converts a byte offset into a 1-based line and column (counted in bytes).
func lineCol(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = off - bytes.LastIndexByte(before, '\n')
	return line, col
}

// decoder fills Go values from a node tree strictly: unknown keys, duplicate keys and values of
// the wrong kind are errors. Keys are matched against `yaml` struct tags, case-sensitively.
// Keys absent from the file leave the destination's value (the default) alone, and so does an
// explicit null.
type decoder struct {
	file      string
	positions map[string]position
}

var durationType = reflect.TypeFor[time.Duration]()

func (d *decoder) errorf(n *yaml.Node, path, format string, args ...any) *Error {
	return &Error{File: d.file, Line: n.Line, Column: n.Column, Path: path, Msg: fmt.Sprintf(format, args...)}
}

func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return nil
	}
	if v.Type() == durationType {
		return d.duration(n, v, path)
	}
	if v.Type() == reflect.TypeFor[tokenList]() && n.Kind == yaml.ScalarNode {
		var s string
		if err := d.decode(n, reflect.ValueOf(&s).Elem(), path); err != nil {
			return err
		}
		v.Set(reflect.ValueOf(tokenList{s}))
		return nil
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		return d.decode(n, v.Elem(), path)
	case reflect.Struct:
		return d.structure(n, v, path)
	case reflect.Map:
		return d.mapping(n, v, path)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return d.errorf(n, path, "must be a list, not %s", describe(n))
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, item := range n.Content {
			ipath := indexPath(path, i)
			d.positions[ipath] = position{item.Line, item.Column}
			if err := d.decode(item, s.Index(i), ipath); err != nil {
				return err
			}
		}
		v.Set(s)
		return nil
	case reflect.String:
		// Numbers and booleans are taken as their text, so that YAML's `PORT: 8080` is the
		// string "8080" as an environment variable must be.
		if n.Kind != yaml.ScalarNode {
			return d.errorf(n, path, "must be a string, not %s", describe(n))
		}
		v.SetString(n.Value)
		return nil
	case reflect.Int:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
			return d.errorf(n, path, "must be an integer, not %s", describe(n))
		}
		i, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64)
		if err != nil || int64(int(i)) != i {
			return d.errorf(n, path, "integer %s is out of range", n.Value)
		}
		v.SetInt(i)
		return nil
	case reflect.Float64:
		if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") {
			return d.errorf(n, path, "must be a number, not %s", describe(n))
		}
		f, err := strconv.ParseFloat(strings.ReplaceAll(n.Value, "_", ""), 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return d.errorf(n, path, "bad number %s", n.Value)
		}
		v.SetFloat(f)
		return nil
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
			return d.errorf(n, path, "must be true or false, not %s", describe(n))
		}
		b, err := strconv.ParseBool(n.Value)
		if err != nil {
			return d.errorf(n, path, "must be true or false, not %q", n.Value)
		}
		v.SetBool(b)
		return nil
	}
	return d.errorf(n, path, "cannot decode into %s", v.Type()) // a bug in the Config types
}

func (d *decoder) duration(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		return d.errorf(n, path, `must be a duration such as "30s" or "5m", not %s`, describe(n))
	}
	dur, err := time.ParseDuration(n.Value)
	if err != nil {
		return d.errorf(n, path, `bad duration %q: use a number with a unit, such as "30s", "1m30s" or "500ms"`, n.Value)
	}
	if dur < 0 {
		return d.errorf(n, path, "duration %q is negative", n.Value)
	}
	v.SetInt(int64(dur))
	return nil
}

// extraKeyDecoder lets a struct accept keys that have no field of their own (synonyms).
type extraKeyDecoder interface {
	decodeExtraKey(d *decoder, key string, n *yaml.Node, path string) (handled bool, err error)
}

func (d *decoder) structure(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.MappingNode {
		return d.errorf(n, path, "must be a mapping of keys to values, not %s", describe(n))
	}
	fields := map[string]int{}
	var names []string
	for i := range v.NumField() {
		f := v.Type().Field(i)
		tag := strings.Split(f.Tag.Get("yaml"), ",")[0]
		if tag == "" || tag == "-" || !f.IsExported() {
			continue
		}
		fields[tag] = i
		names = append(names, tag)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		key := kn.Value
		kpath := joinPath(path, key)
		if seen[key] {
			return d.errorf(kn, kpath, "duplicate key")
		}
		seen[key] = true
		d.positions[kpath] = position{kn.Line, kn.Column}
		fi, ok := fields[key]
		if !ok {
			if x, isX := v.Addr().Interface().(extraKeyDecoder); isX {
				handled, err := x.decodeExtraKey(d, key, vn, kpath)
				if err != nil {
					return err
				}
				if handled {
					continue
				}
			}
			msg := "unknown key"
			if s := suggest(key, names); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			if path == "" {
				msg += "; the top-level keys are " + strings.Join(names, ", ")
			}
			return d.errorf(kn, kpath, "%s", msg)
		}
		if err := d.decode(vn, v.Field(fi), kpath); err != nil {
			return err
		}
	}
	return nil
}

func (d *decoder) mapping(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.MappingNode {
		return d.errorf(n, path, "must be a mapping, not %s", describe(n))
	}
	if v.IsNil() {
		v.Set(reflect.MakeMapWithSize(v.Type(), len(n.Content)/2))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		if kn.Kind != yaml.ScalarNode {
			return d.errorf(kn, path, "keys must be strings, not %s", describe(kn))
		}
		key := kn.Value
		kpath := joinPath(path, key)
		if seen[key] {
			return d.errorf(kn, kpath, "duplicate key")
		}
		seen[key] = true
		d.positions[kpath] = position{kn.Line, kn.Column}
		elem := reflect.New(v.Type().Elem()).Elem()
		if elem.Type() == reflect.TypeFor[*Server]() {
			s := newServer()
			s.Name = key
			elem.Set(reflect.ValueOf(s))
			if vn.Kind == yaml.ScalarNode && vn.Tag == "!!null" {
				return d.errorf(kn, kpath, "is empty; a server needs a command or a url")
			}
		}
		if err := d.decode(vn, elem, kpath); err != nil {
			return err
		}
		v.SetMapIndex(reflect.ValueOf(key), elem)
	}
	return nil
}

// decodeExtraKey accepts "servers", VS Code's name for the mcpServers block, and explains why
// VS Code's "inputs" cannot be used.
func (c *Config) decodeExtraKey(d *decoder, key string, n *yaml.Node, path string) (bool, error) {
	switch key {
	case "servers":
		if _, both := d.positions["mcpServers"]; both {
			return true, d.errorf(n, path, "both servers and mcpServers are set; keep one")
		}
		c.serversKey = key
		return true, d.decode(n, reflect.ValueOf(&c.MCPServers).Elem(), path)
	case "inputs":
		return true, d.errorf(n, path, "VS Code input variables are not supported: remove inputs and write ${VAR} to take a value from the environment")
	}
	return false, nil
}

// decodeExtraKey accepts "type", the desktop hosts' name for the transport.
func (s *Server) decodeExtraKey(d *decoder, key string, n *yaml.Node, path string) (bool, error) {
	if key != "type" {
		return false, nil
	}
	var t string
	if err := d.decode(n, reflect.ValueOf(&t).Elem(), path); err != nil {
		return true, err
	}
	s.typeAlias = t
	return true, nil
}

// describe names the kind of a node for error messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		v := n.Value
		if len(v) > 40 {
			v = v[:37] + "..."
		}
		switch {
		case n.Tag == "!!null":
			return "null"
		case n.Tag == "!!str" || !strconv.CanBackquote(v) || strings.ContainsAny(v, "`"):
			return strconv.Quote(v)
		default:
			return v
		}
	}
	return "this value"
}

// suggest returns the known name closest to key, if one is close enough to be a likely typo.
func suggest(key string, known []string) string {
	best, bestDist := "", 3
	for _, k := range known {
		if strings.EqualFold(k, key) {
			return k
		}
		if dist := editDistance(strings.ToLower(key), strings.ToLower(k)); dist < bestDist {
			best, bestDist = k, dist
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
