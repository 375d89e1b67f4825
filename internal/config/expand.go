package config

import (
	"fmt"
	"os"
	"strings"
)

// expandEnv replaces ${VAR} references in the values of each server's env, headers and url with
// the bridge's environment, so that secrets can stay out of the file.
func (c *Config) expandEnv() error {
	for _, name := range c.ServerNames() {
		s := c.MCPServers[name]
		spath := c.serverPath(name)
		for k, v := range s.Env {
			x, err := expand(v)
			if err != nil {
				return c.errorAt(joinPath(joinPath(spath, "env"), k), err.Error())
			}
			s.Env[k] = x
		}
		for k, v := range s.Headers {
			x, err := expand(v)
			if err != nil {
				return c.errorAt(joinPath(joinPath(spath, "headers"), k), err.Error())
			}
			s.Headers[k] = x
		}
		x, err := expand(s.URL)
		if err != nil {
			return c.errorAt(joinPath(spath, "url"), err.Error())
		}
		s.URL = x
	}
	return nil
}

// expand substitutes ${NAME} with the environment variable NAME and ${NAME:-default} with NAME,
// or default when NAME is unset or empty. "$${" stands for a literal "${". A reference to an
// unset variable without a default is an error: silently sending an empty API key is worse.
// A "$" not followed by "{" is left as it is.
func expand(s string) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		if i > 0 && s[i-1] == '$' { // "$${": a literal "${"
			b.WriteString(s[:i-1])
			b.WriteString("${")
			s = s[i+2:]
			continue
		}
		b.WriteString(s[:i])
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", fmt.Errorf("unterminated %q in %q", "${", s[i:])
		}
		ref := s[i+2 : i+end]
		name, def, hasDef := strings.Cut(ref, ":-")
		if !validEnvName(name) {
			return "", fmt.Errorf("bad variable reference ${%s}: names are letters, digits and '_', not starting with a digit", ref)
		}
		val, ok := os.LookupEnv(name)
		switch {
		case hasDef && val == "":
			val = def
		case !ok:
			return "", fmt.Errorf("environment variable %s is not set (write ${%s:-default} to allow that)", name, name)
		}
		b.WriteString(val)
		s = s[i+end+1:]
	}
}

func validEnvName(name string) bool {
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for _, r := range name {
		if !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}
