package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/mcp-bridge/mcp-bridge/server"
	"github.com/mcp-bridge/mcp-bridge/server/gateway"
)

// apiDoor wraps the REST API with what a request meets before it is parsed (docs/adr/0090-the-door.md):
//   - with authentication by tokens only (no client certificates naming principals), a request without a
//     bearer token is answered 401 before its body is read;
//   - a body larger than limits.maxMessageBytes is 413, naming the key;
//   - a body nested deeper than server.MaxNestingDepth is 400, found by one pass over its bytes before the
//     gateway parses it.
//
// The body is read into memory (the gateway would read it whole to parse it) and handed on.
func (b *bridge) apiDoor(api http.Handler) http.Handler {
	maxBytes := int64(b.cfg.Limits.MaxMessageBytes)
	tokensOnly := b.cfg.Auth.Configured() && b.cfg.Auth.MTLS.PrincipalFrom == ""
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tokensOnly && !hasBearer(r) {
			w.Header().Set("WWW-Authenticate", gateway.BearerChallenge(r))
			writeStatus(w, http.StatusUnauthorized, 16, // UNAUTHENTICATED
				`missing bearer token: send the header "authorization: Bearer <token>"`, server.ReasonUnauthenticated)
			return
		}
		if r.Body == nil || r.Body == http.NoBody {
			api.ServeHTTP(w, r)
			return
		}
		tooLarge := func() {
			writeStatus(w, http.StatusRequestEntityTooLarge, 8, // RESOURCE_EXHAUSTED
				fmt.Sprintf("the request body is larger than %d bytes (limits.maxMessageBytes): raise limits.maxMessageBytes to send larger requests", maxBytes),
				server.ReasonMessageTooLarge)
		}
		if r.ContentLength > maxBytes {
			tooLarge()
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBytes))
		var mbe *http.MaxBytesError
		switch {
		case errors.As(err, &mbe):
			tooLarge()
			return
		case err != nil:
			writeStatus(w, http.StatusBadRequest, 3, "reading the request body: "+err.Error(), server.ReasonInvalidInput) // INVALID_ARGUMENT
			return
		}
		if jsonDepth(body) > server.MaxNestingDepth {
			writeStatus(w, http.StatusBadRequest, 3, server.TooDeepMessage, server.ReasonInvalidInput)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		api.ServeHTTP(w, r)
	})
}

// hasBearer reports whether r carries "Authorization: Bearer <something>".
func hasBearer(r *http.Request) bool {
	scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	return ok && strings.EqualFold(scheme, "bearer") && strings.TrimSpace(token) != ""
}

// jsonDepth returns the deepest nesting of objects and arrays in the JSON text b (outside strings); it stops
// counting once past server.MaxNestingDepth. It does not validate: the parser does that after.
func jsonDepth(b []byte) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			if depth > deepest {
				deepest = depth
				if deepest > server.MaxNestingDepth {
					return deepest
				}
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// writeStatus answers a google.rpc.Status with a google.rpc.ErrorInfo of reason as JSON, as the gateway's own
// errors are.
func writeStatus(w http.ResponseWriter, httpStatus, code int, msg, reason string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(httpStatus)
	_ = json.NewEncoder(w).Encode(map[string]any{"code": code, "message": msg, "details": []any{map[string]any{
		"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": server.ErrorDomain}}})
}
