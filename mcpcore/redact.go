package mcpcore

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// This file holds the core's one mechanism that keeps a server's secrets in the core: a redactor per
// session, applied wherever text leaves the core — the errors of Core.Open and of the Session's operations,
// every record of the session's logger (a slog.Handler wrapper) and the reasons of its state changes
// (State, EventStateChanged). Go's net/http puts the request URL into its errors (*url.Error), and the SDK
// wraps those, so without it a key in a URL's query reaches hosts and logs.
//
// What is secret, for a server's configuration:
//   - in every URL the text holds (not only the server's): the values of the query and the password of the
//     userinfo, replaced by "***" whatever their length;
//   - anywhere in the text, in plain or URL-escaped form: the server's query values and userinfo password,
//     its header values (and the credential after an auth scheme such as "Bearer "), the values of its
//     environment (stdio) and its OAuth client secret — when at least minSecretLen characters long, so
//     that a value such as "1" or "true" does not garble every message.

// redactedText replaces a secret; net/http writes a URL's password the same way.
const redactedText = "***"

// minSecretLen is the length from which a configured value is replaced wherever it occurs.
const minSecretLen = 6

// urlPattern finds URLs in text: a scheme, "://", and everything up to white space or a quote.
var urlPattern = regexp.MustCompile("[a-zA-Z][a-zA-Z0-9+.-]*://[^\\s\"'<>`]+")

// redactor replaces secrets in text. The zero value and nil redact URLs only. It is immutable, so safe
// for concurrent use.
type redactor struct {
	secrets *strings.Replacer // nil when there are no values to replace
}

// newRedactor returns the redactor of the secrets of the given servers' configurations.
func newRedactor(cfgs ...ServerConfig) *redactor {
	var vals []string
	add := func(v string) {
		for _, f := range []string{v, url.QueryEscape(v), url.PathEscape(v)} {
			if len(f) >= minSecretLen {
				vals = append(vals, f)
			}
		}
	}
	for _, cfg := range cfgs {
		if u, err := url.Parse(cfg.URL); err == nil {
			if p, ok := u.User.Password(); ok {
				add(p)
			}
			for _, kv := range strings.Split(u.RawQuery, "&") {
				_, v, _ := strings.Cut(kv, "=")
				add(v)
				if d, err := url.QueryUnescape(v); err == nil {
					add(d)
				}
			}
		}
		for _, v := range cfg.Headers {
			add(v)
			if _, cred, ok := strings.Cut(strings.TrimSpace(v), " "); ok {
				add(strings.TrimSpace(cred))
			}
		}
		for _, v := range cfg.Env {
			add(v)
		}
		if cfg.OAuth != nil {
			for _, v := range cfg.OAuth.Secrets() {
				add(v)
			}
		}
	}
	if len(vals) == 0 {
		return &redactor{}
	}
	// Longest first: strings.Replacer tries the pairs in order at each position.
	slices.SortFunc(vals, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	vals = slices.Compact(vals)
	pairs := make([]string, 0, 2*len(vals))
	for _, v := range vals {
		pairs = append(pairs, v, redactedText)
	}
	return &redactor{secrets: strings.NewReplacer(pairs...)}
}

// redact returns text without the redactor's secrets and with every URL's query values and password
// replaced.
func (r *redactor) redact(text string) string {
	if r != nil && r.secrets != nil {
		text = r.secrets.Replace(text)
	}
	if !strings.Contains(text, "://") {
		return text
	}
	return urlPattern.ReplaceAllStringFunc(text, redactURL)
}

// redactURL replaces the password of a URL's userinfo and the values of its query, keeping the rest as it
// was written.
func redactURL(u string) string {
	scheme, rest, _ := strings.Cut(u, "://")
	authEnd := strings.IndexAny(rest, "/?#")
	if authEnd < 0 {
		authEnd = len(rest)
	}
	authority, tail := rest[:authEnd], rest[authEnd:]
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		if user, _, ok := strings.Cut(authority[:at], ":"); ok {
			authority = user + ":" + redactedText + authority[at:]
		}
	}
	if q := strings.IndexByte(tail, '?'); q >= 0 {
		path, query := tail[:q], tail[q+1:]
		query, frag, hasFrag := strings.Cut(query, "#")
		parts := strings.Split(query, "&")
		for i, kv := range parts {
			if k, v, ok := strings.Cut(kv, "="); ok && v != "" {
				parts[i] = k + "=" + redactedText
			}
		}
		tail = path + "?" + strings.Join(parts, "&")
		if hasFrag {
			tail += "#" + frag
		}
	}
	return scheme + "://" + authority + tail
}

// err returns err with its text redacted; errors.Is and errors.As see the original chain. It returns err
// itself when there is nothing to redact.
func (r *redactor) err(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if red := r.redact(msg); red != msg {
		return &redactedError{err: err, msg: red}
	}
	return err
}

// redactedError is an error whose text had secrets removed.
type redactedError struct {
	err error
	msg string
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redactLogger returns a logger that writes through l's handler with every record's message and attribute
// values redacted by r.
func redactLogger(l *slog.Logger, r *redactor) *slog.Logger {
	return slog.New(&redactHandler{inner: l.Handler(), r: r})
}

// redactHandler is a slog.Handler that redacts records before its inner handler sees them.
type redactHandler struct {
	inner slog.Handler
	r     *redactor
}

func (h *redactHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

func (h *redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.redact(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.inner.Handle(ctx, out)
}

func (h *redactHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		red[i] = h.attr(a)
	}
	return &redactHandler{inner: h.inner.WithAttrs(red), r: h.r}
}

func (h *redactHandler) WithGroup(name string) slog.Handler {
	return &redactHandler{inner: h.inner.WithGroup(name), r: h.r}
}

// attr redacts an attribute's value: strings, errors and anything that prints as text.
func (h *redactHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.r.redact(v.String()))
	case slog.KindGroup:
		g := v.Group()
		red := make([]any, len(g))
		for i, ga := range g {
			red[i] = h.attr(ga)
		}
		return slog.Group(a.Key, red...)
	case slog.KindAny:
		var s string
		if err, ok := v.Any().(error); ok {
			s = err.Error()
		} else {
			s = fmt.Sprint(v.Any())
		}
		if red := h.r.redact(s); red != s {
			return slog.String(a.Key, red)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
