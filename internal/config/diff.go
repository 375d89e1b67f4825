package config

import (
	"reflect"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Live configuration (docs/adr/0095-live-configuration.md): which keys a running bridge can take from a new
// file, and which need a restart.

// liveKeys are the key paths a reload applies while the bridge serves; a key below one of them is live too.
// Every other key (listeners, TLS file paths, the state engine and its key, the replica, …) needs a
// restart, including keys added after this list was written: a key is live only when this list says so.
var liveKeys = []string{
	"mcpServers",
	"auth.tokensFile", "auth.tokens", "auth.oidc", "auth.mtls",
	"rateLimits",
	"limits.maxSessions", "limits.maxSessionsPerPrincipal", "limits.maxPendingPerSession",
	"state.key", // the key file's content (a rotation); its path needs a restart
	"listen.allowedHosts",
	"audit", "console",
	"limits.maxHTTPConnections", "limits.descriptorReserve", "limits.openTimeout", "limits.maxEventStreamsPerPrincipal",
	"limits.keptResultsBytes", "limits.keptResultsTTL", "limits.approvalHistory", "limits.approvalHistoryAge",
	"limits.maxStdioProcesses",
}

// IsLiveKey reports whether the key path can change without a restart.
func IsLiveKey(path string) bool {
	for _, k := range liveKeys {
		if path == k || strings.HasPrefix(path, k+".") || strings.HasPrefix(path, k+"[") {
			return true
		}
	}
	return false
}

// ChangedKeys returns the key paths whose values differ between old and new, sorted: below a live key
// (IsLiveKey), that live key alone. The servers block is compared under the name mcpServers whichever name
// the file gave it.
func ChangedKeys(old, new *Config) []string {
	var out []string
	diffValues(reflect.ValueOf(old).Elem(), reflect.ValueOf(new).Elem(), "", &out)
	slices.Sort(out)
	return slices.Compact(out)
}

// RestartKeys returns the keys of ChangedKeys that cannot change while the bridge serves; empty when new
// can be applied live.
func RestartKeys(old, new *Config) []string {
	return slices.DeleteFunc(ChangedKeys(old, new), IsLiveKey)
}

func diffValues(a, b reflect.Value, path string, out *[]string) {
	if path != "" && IsLiveKey(path) {
		for _, k := range liveKeys {
			if path == k || strings.HasPrefix(path, k+".") || strings.HasPrefix(path, k+"[") {
				if !reflect.DeepEqual(a.Interface(), b.Interface()) {
					*out = append(*out, k)
				}
				return
			}
		}
	}
	if a.Kind() == reflect.Struct && a.Type().PkgPath() != reflect.TypeFor[Config]().PkgPath() {
		if !reflect.DeepEqual(a.Interface(), b.Interface()) { // another package's value: compared whole
			*out = append(*out, path)
		}
		return
	}
	switch a.Kind() {
	case reflect.Struct:
		t := a.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() || (path == "" && f.Name == "File") {
				continue
			}
			diffValues(a.Field(i), b.Field(i), joinPath(path, keyName(f)), out)
		}
	case reflect.Pointer:
		if a.IsNil() != b.IsNil() {
			*out = append(*out, path)
		} else if !a.IsNil() {
			diffValues(a.Elem(), b.Elem(), path, out)
		}
	default:
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			*out = append(*out, path)
		}
	}
}

// keyName is a field's key in the file: its yaml name, or for a field the file does not set (yaml:"-") its
// Go name with a lower-case first letter.
func keyName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "" || name == "-" {
		r, n := utf8.DecodeRuneInString(f.Name)
		return string(unicode.ToLower(r)) + f.Name[n:]
	}
	return name
}
