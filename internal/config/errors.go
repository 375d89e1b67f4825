package config

import (
	"fmt"
	"strconv"
	"strings"
)

// Error is a configuration problem: where it is and what is wrong. Error() renders it as one
// line, "file:line:col: key.path: message", leaving out the parts that are unknown.
type Error struct {
	// File is the file the problem is in (the config file, or the tokens file it names).
	File string
	// Line and Column locate the problem in File, 1-based; zero when unknown.
	Line, Column int
	// Path is the key path, e.g. "mcpServers.foo.url"; empty for the file as a whole.
	Path string
	// Msg says what is wrong, in lower case.
	Msg string
	// Err is the underlying error, if any (an *fs.PathError for a missing file).
	Err error
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
	} else {
		b.WriteString("config")
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	// One line, whatever the file held: a key or value quoted into the message may not add more.
	return strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(b.String())
}

func (e *Error) Unwrap() error { return e.Err }

// position is where a key or value was in the file.
type position struct{ line, column int }

// joinPath appends key to a key path: "a.b" for plain keys, `a["x.y"]` for keys that contain
// anything but letters, digits, '_' and '-'.
func joinPath(path, key string) string {
	plain := key != ""
	for _, r := range key {
		if !(r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			plain = false
			break
		}
	}
	switch {
	case !plain:
		return path + "[" + strconv.Quote(key) + "]"
	case path == "":
		return key
	default:
		return path + "." + key
	}
}

func indexPath(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}
