package config

import (
	"net/url"
	"slices"
	"strings"
)

// Console configures the operator console: a page in the browser, built into the binary, that calls the
// REST API as the principal whose bearer token the person gives it (docs/adr/0060-operator-console.md).
type Console struct {
	// Enabled serves the console under /console/ on the HTTP listener; unset means on. The page holds no
	// data: what it shows comes from the API, behind the API's authentication.
	Enabled *bool `yaml:"enabled"`
	// OIDC, if set, lets a person sign in to the console at auth.oidc's identity provider (authorization
	// code flow with PKCE, the console being a public client) instead of pasting a token.
	OIDC *ConsoleOIDC `yaml:"oidc"`
}

// ConsoleOIDC is the console's client registration at the identity provider of auth.oidc. The provider
// must allow the redirect URI http(s)://<bridge>/console/ for the client, and cross-origin requests from
// the bridge's origin to its discovery document and token endpoint (CORS), as it does for any browser app.
type ConsoleOIDC struct {
	// ClientID is the console's client id at the provider (a public client: no secret).
	ClientID string `yaml:"clientID"`
	// Scopes are requested at sign-in (default: openid).
	Scopes []string `yaml:"scopes"`
	// Token is which token of the provider's answer the console sends as its bearer token: id_token (the
	// default; its aud is the client id, so auth.oidc.audience must be that id) or access_token (when the
	// provider issues JWT access tokens for auth.oidc.audience).
	Token string `yaml:"token"`
}

// On reports whether the console is served.
func (c Console) On() bool { return c.Enabled == nil || *c.Enabled }

// validateConsole checks the console block and fills in its defaults.
func (c *Config) validateConsole() error {
	o := c.Console.OIDC
	if o == nil {
		return nil
	}
	switch {
	case c.Auth.OIDC == nil:
		return c.errorAt("console.oidc", "needs auth.oidc: the console signs in at the identity provider the bridge trusts")
	case strings.TrimSpace(o.ClientID) == "":
		return c.errorAt("console.oidc.clientID", "required: the console's client id at the identity provider")
	}
	if u, err := url.Parse(c.Auth.OIDC.Issuer); err != nil || u.Scheme != "https" && u.Scheme != "http" {
		return c.errorAt("console.oidc", "auth.oidc.issuer must be an http(s) URL for a browser to sign in there")
	}
	switch o.Token {
	case "":
		o.Token = "id_token"
	case "id_token", "access_token":
	default:
		return c.errorAt("console.oidc.token", "unknown value "+o.Token+": use id_token or access_token")
	}
	if len(o.Scopes) == 0 {
		o.Scopes = []string{"openid"}
	}
	if !slices.Contains(o.Scopes, "openid") {
		o.Scopes = append([]string{"openid"}, o.Scopes...)
	}
	return nil
}
