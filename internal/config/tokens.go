package config

import (
	"bufio"
	"bytes"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"unicode"
)

// LoadTokens reads a bearer-tokens file. Its format depends on its extension:
//
//   - .yaml, .yml or .json: a mapping from principal to a token or a list of tokens
//     (several tokens per principal allow rotating them):
//
//     alice: 3f9c0c2e6b1d4a7f
//     ci-bot: [tok-old-7d2e, tok-new-91aa]
//
//   - anything else: one "token principal" pair per line, separated by white space; blank lines
//     and lines starting with # are ignored:
//
//     # token            principal
//     3f9c0c2e6b1d4a7f   alice
//
// Tokens and principals are non-empty and contain no white space; a token may appear only once.
// A file with no tokens is an error, as it would lock every client out.
func LoadTokens(path string) (Tokens, error) {
	data, err := readFile(path, "tokens file")
	if err != nil {
		return nil, err
	}
	var tokens Tokens
	switch strings.ToLower(filepath.Ext(path)) {
	case ".yaml", ".yml", ".json":
		tokens, err = parseTokenMap(path, data)
	default:
		tokens, err = parseTokenLines(path, data)
	}
	if err != nil {
		return nil, err
	}
	if len(tokens) == 0 {
		return nil, &Error{File: path, Msg: "no tokens: a tokens file that accepts nobody locks every client out"}
	}
	return tokens, nil
}

func parseTokenLines(path string, data []byte) (Tokens, error) {
	tokens := Tokens{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Fields(text)
		if len(fields) != 2 {
			return nil, &Error{File: path, Line: line, Msg: fmt.Sprintf("want \"token principal\", got %d fields", len(fields))}
		}
		if _, dup := tokens[fields[0]]; dup {
			return nil, &Error{File: path, Line: line, Msg: "duplicate token"}
		}
		tokens[fields[0]] = fields[1]
	}
	if err := sc.Err(); err != nil {
		return nil, &Error{File: path, Msg: "cannot read tokens file: " + err.Error(), Err: err}
	}
	return tokens, nil
}

func parseTokenMap(path string, data []byte) (Tokens, error) {
	root, err := parseDocument(path, data)
	if err != nil || root == nil {
		return Tokens{}, err
	}
	d := &decoder{file: path, positions: map[string]position{}}
	// Each value is a token or a list of tokens; decode both shapes into a list.
	var byPrincipal map[string]tokenList
	if err := d.decode(root, reflect.ValueOf(&byPrincipal).Elem(), ""); err != nil {
		return nil, err
	}
	tokens := Tokens{}
	for principal, list := range byPrincipal {
		p := d.positions[joinPath("", principal)]
		if principal == "" || strings.ContainsFunc(principal, unicode.IsSpace) {
			return nil, &Error{File: path, Line: p.line, Column: p.column, Msg: fmt.Sprintf("bad principal %q: must be non-empty without white space", principal)}
		}
		for _, tok := range list {
			if tok == "" || strings.ContainsFunc(tok, unicode.IsSpace) {
				return nil, &Error{File: path, Line: p.line, Column: p.column, Path: principal, Msg: "tokens must be non-empty without white space"}
			}
			if _, dup := tokens[tok]; dup {
				return nil, &Error{File: path, Line: p.line, Column: p.column, Path: principal, Msg: "duplicate token"}
			}
			tokens[tok] = principal
		}
	}
	return tokens, nil
}

// tokenList is one principal's tokens: a single string or a list of strings in the file.
type tokenList []string
