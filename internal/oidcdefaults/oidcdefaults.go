// Package oidcdefaults holds the defaults of OIDC bearer-token verification. Both the configuration file
// (internal/config) and the token verifier (server.OIDCOptions) read them from here, so that the
// configuration parser, and the console that links it, do not depend on the gRPC service. A leaf: it
// imports only the standard library.
package oidcdefaults

import "time"

// The defaults of the verifier's options.
const (
	// PrincipalClaim names the claim whose string value is the principal.
	PrincipalClaim = "sub"
	// ClockSkew is the leeway for exp, nbf and iat.
	ClockSkew = time.Minute
	// RefreshInterval is the age after which the issuer's keys are fetched again.
	RefreshInterval = time.Hour
	// MinRefreshInterval bounds how often a token with an unknown key id, or a failed fetch, makes the
	// bridge fetch the keys.
	MinRefreshInterval = 30 * time.Second
)

// Algorithms are the JWS algorithms the verifier can accept — the asymmetric ones; symmetric algorithms
// and "none" never are — and the default of the accepted set. Read it, do not change it.
var Algorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
