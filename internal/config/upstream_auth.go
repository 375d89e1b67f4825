package config

import (
	"fmt"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/mcp-bridge/mcp-bridge/mcpcore/upstreamauth"
)

// Upstream credentials: how the bridge authenticates to an HTTP MCP server. A server's auth block says
// which kind; secrets come from files or environment variables, are read when the configuration loads, and
// are kept in fields the decoder never fills from the file and nothing prints.

// AuthType is the kind of upstream credentials of a server.
type AuthType string

// Upstream credential kinds.
const (
	// AuthOAuth runs the MCP authorization flow (OAuth 2.1): the authorization-code grant, whose browser
	// step a host answers, or the client-credentials grant.
	AuthOAuth AuthType = "oauth"
	// AuthBearer sends a fixed bearer token from a file or an environment variable.
	AuthBearer AuthType = "bearer"
	// AuthHeaders sends headers whose values come from files or environment variables.
	AuthHeaders AuthType = "headers"
)

// OAuth grants (auth.grant).
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
	// GrantJWTBearer is the JWT bearer grant (RFC 7523) with a platform-issued assertion (workload
	// identity, e.g. a Kubernetes service account token): assertionFile or assertionEnv.
	GrantJWTBearer = "jwt_bearer"
	// GrantEnterpriseManaged is Enterprise-Managed Authorization: the idp block exchanges an enterprise
	// identity assertion for an ID-JAG (RFC 8693), presented with the JWT bearer grant.
	GrantEnterpriseManaged = "enterprise_managed"
)

// ServerAuth is a server's auth block. Which keys apply depends on Type; the others must be unset.
type ServerAuth struct {
	// Type is oauth, bearer or headers.
	Type AuthType `yaml:"type"`

	// Bearer: the token is read from TokenFile (surrounding white space trimmed) or the environment
	// variable TokenEnv.
	TokenFile string `yaml:"tokenFile"`
	TokenEnv  string `yaml:"tokenEnv"`

	// Headers: header name → file holding its value, or → environment variable holding it.
	HeaderFiles map[string]string `yaml:"headerFiles"`
	HeaderEnv   map[string]string `yaml:"headerEnv"`

	// OAuth.
	// Grant is authorization_code (default) or client_credentials.
	Grant string `yaml:"grant"`
	// ClientID is a client pre-registered with the authorization server; ClientSecretFile or
	// ClientSecretEnv holds its secret (none for a public client).
	ClientID         string `yaml:"clientId"`
	ClientSecretFile string `yaml:"clientSecretFile"`
	ClientSecretEnv  string `yaml:"clientSecretEnv"`
	// Issuer binds the pre-registered client to that authorization server.
	Issuer string `yaml:"issuer"`
	// Scopes are requested when the server names none.
	Scopes []string `yaml:"scopes"`
	// RedirectURL is the redirect URL registered and sent to the authorization server.
	RedirectURL string `yaml:"redirectUrl"`
	// ClientMetadataURL is the bridge's client ID metadata document (https, with a path).
	ClientMetadataURL string `yaml:"clientMetadataUrl"`
	// DynamicRegistration allows registering with authorization servers that offer it (default true).
	DynamicRegistration *bool `yaml:"dynamicRegistration"`
	// Enterprise grants (ADR 0011). Key material and assertions are files or environment variables,
	// read by package upstreamauth at every use (a rotated file is picked up); the loader only checks that they exist.
	// ClientKeyFile or ClientKeyEnv holds the private key of private_key_jwt client authentication (PEM
	// or JWK); ClientKeyAlg its JWS algorithm (default: the key's own).
	ClientKeyFile string `yaml:"clientKeyFile"`
	ClientKeyEnv  string `yaml:"clientKeyEnv"`
	ClientKeyAlg  string `yaml:"clientKeyAlg"`
	// AssertionFile or AssertionEnv holds the JWT of the jwt_bearer grant.
	AssertionFile string `yaml:"assertionFile"`
	AssertionEnv  string `yaml:"assertionEnv"`
	// IdP is the enterprise identity provider of the enterprise_managed grant.
	IdP *IdPAuth `yaml:"idp"`
	// DPoP sender-constrains the tokens (RFC 9449).
	DPoP bool `yaml:"dpop"`

	// Secrets read at load time, never from the file itself; they print as "[redacted]".
	BearerToken       Secret            `yaml:"-"`
	HeaderValues      map[string]Secret `yaml:"-"`
	ClientSecretValue Secret            `yaml:"-"`
}

// IdPAuth is the idp block of the enterprise_managed grant.
type IdPAuth struct {
	// Issuer (for discovery of the token endpoint) or TokenEndpoint: at least one.
	Issuer        string `yaml:"issuer"`
	TokenEndpoint string `yaml:"tokenEndpoint"`
	// ClientID is the bridge's client at the IdP; ClientSecretFile or ClientSecretEnv its secret, if any.
	ClientID         string `yaml:"clientId"`
	ClientSecretFile string `yaml:"clientSecretFile"`
	ClientSecretEnv  string `yaml:"clientSecretEnv"`
	// SubjectTokenFile or SubjectTokenEnv holds the identity assertion to exchange (an ID token unless
	// SubjectTokenType names another RFC 8693 token type).
	SubjectTokenFile string `yaml:"subjectTokenFile"`
	SubjectTokenEnv  string `yaml:"subjectTokenEnv"`
	SubjectTokenType string `yaml:"subjectTokenType"`
}

// Secret is a credential read from a file or the environment. It formats as "[redacted]" with every verb
// of package fmt and in JSON, so that logging a configuration cannot leak it; Reveal returns the value.
type Secret string

// Reveal returns the secret's value.
func (s Secret) Reveal() string { return string(s) }

// String implements fmt.Stringer.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "[redacted]"
}

// GoString implements fmt.GoStringer.
func (s Secret) GoString() string { return s.String() }

// Format implements fmt.Formatter for every verb.
func (s Secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(s.String())) }

// MarshalJSON implements json.Marshaler.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + s.String() + `"`), nil }

// ClientSecret is the OAuth client secret read from ClientSecretFile or ClientSecretEnv ("" if none).
// It is a secret: do not log it.
func (a *ServerAuth) ClientSecret() string {
	if a == nil {
		return ""
	}
	return a.ClientSecretValue.Reveal()
}

// DynamicRegistrationAllowed reports whether the bridge may register itself dynamically.
func (a *ServerAuth) DynamicRegistrationAllowed() bool {
	return a == nil || a.DynamicRegistration == nil || *a.DynamicRegistration
}

// UpstreamHeaders returns the headers to send with every request to the server: its headers block plus,
// for auth type bearer, Authorization, and for auth type headers, the headers read from files and the
// environment. The values are secrets: do not log them. The map is a copy.
func (s *Server) UpstreamHeaders() map[string]string {
	h := maps.Clone(s.Headers)
	if s.Auth == nil {
		return h
	}
	if h == nil && (s.Auth.BearerToken != "" || len(s.Auth.HeaderValues) > 0) {
		h = map[string]string{}
	}
	switch s.Auth.Type {
	case AuthBearer:
		h["Authorization"] = "Bearer " + s.Auth.BearerToken.Reveal()
	case AuthHeaders:
		for k, v := range s.Auth.HeaderValues {
			h[k] = v.Reveal()
		}
	}
	return h
}

// OAuth is the bridge-wide configuration of upstream OAuth (the oauth block).
type OAuth struct {
	// TokenStoreFile, if set, keeps the OAuth grants in this file, encrypted with AES-256-GCM under the
	// key in TokenStoreKeyFile or the environment variable TokenStoreKeyEnv (64 hex digits or base64 of
	// 32 bytes). Without it grants are kept in memory and a restart asks again.
	TokenStoreFile    string `yaml:"tokenStoreFile"`
	TokenStoreKeyFile string `yaml:"tokenStoreKeyFile"`
	TokenStoreKeyEnv  string `yaml:"tokenStoreKeyEnv"`
	// AuthorizationTimeout is how long an authorization request waits for a host (default 10m).
	AuthorizationTimeout time.Duration `yaml:"authorizationTimeout"`
	// AllowLinkLocal allows OAuth requests to link-local and cloud metadata addresses (refused by default).
	AllowLinkLocal bool `yaml:"allowLinkLocal"`
	// AllowInsecureHTTP allows http:// authorization servers on hosts other than loopback.
	AllowInsecureHTTP bool `yaml:"allowInsecureHttp"`

	// TokenStoreKey is the key as written in TokenStoreKeyFile or TokenStoreKeyEnv (hex or base64;
	// upstreamauth.ParseTokenStoreKey decodes it), read at load time; empty without a token store file.
	TokenStoreKey Secret `yaml:"-"`
}

// validateServerAuth checks a server's auth block; path is the server's key path.
func (c *Config) validateServerAuth(path string, s *Server) error {
	a := s.Auth
	if a == nil {
		return nil
	}
	apath := joinPath(path, "auth")
	at := func(key, msg string) error { return c.errorAt(joinPath(apath, key), msg) }
	if s.Transport == TransportStdio {
		return c.errorAt(apath, "auth applies only to HTTP servers (url); give a stdio server its credentials in env")
	}
	type field struct {
		key string
		set bool
		typ AuthType
	}
	fields := []field{
		{"tokenFile", a.TokenFile != "", AuthBearer},
		{"tokenEnv", a.TokenEnv != "", AuthBearer},
		{"headerFiles", len(a.HeaderFiles) > 0, AuthHeaders},
		{"headerEnv", len(a.HeaderEnv) > 0, AuthHeaders},
		{"grant", a.Grant != "", AuthOAuth},
		{"clientId", a.ClientID != "", AuthOAuth},
		{"clientSecretFile", a.ClientSecretFile != "", AuthOAuth},
		{"clientSecretEnv", a.ClientSecretEnv != "", AuthOAuth},
		{"issuer", a.Issuer != "", AuthOAuth},
		{"scopes", len(a.Scopes) > 0, AuthOAuth},
		{"redirectUrl", a.RedirectURL != "", AuthOAuth},
		{"clientMetadataUrl", a.ClientMetadataURL != "", AuthOAuth},
		{"dynamicRegistration", a.DynamicRegistration != nil, AuthOAuth},
		{"clientKeyFile", a.ClientKeyFile != "", AuthOAuth},
		{"clientKeyEnv", a.ClientKeyEnv != "", AuthOAuth},
		{"clientKeyAlg", a.ClientKeyAlg != "", AuthOAuth},
		{"assertionFile", a.AssertionFile != "", AuthOAuth},
		{"assertionEnv", a.AssertionEnv != "", AuthOAuth},
		{"idp", a.IdP != nil, AuthOAuth},
		{"dpop", a.DPoP, AuthOAuth},
	}
	switch a.Type {
	case AuthOAuth, AuthBearer, AuthHeaders:
	case "":
		return at("type", "required: oauth, bearer or headers")
	default:
		return at("type", fmt.Sprintf("unknown auth type %q: use oauth, bearer or headers", a.Type))
	}
	for _, f := range fields {
		if f.set && f.typ != a.Type {
			return at(f.key, fmt.Sprintf("%s applies to auth type %s, not %s", f.key, f.typ, a.Type))
		}
	}
	switch a.Type {
	case AuthBearer:
		if (a.TokenFile == "") == (a.TokenEnv == "") {
			return c.errorAt(apath, "auth type bearer needs exactly one of tokenFile and tokenEnv")
		}
		if _, ok := s.Headers["Authorization"]; ok {
			return c.errorAt(joinPath(joinPath(path, "headers"), "Authorization"), "conflicts with auth type bearer")
		}
	case AuthHeaders:
		if len(a.HeaderFiles) == 0 && len(a.HeaderEnv) == 0 {
			return c.errorAt(apath, "auth type headers needs headerFiles or headerEnv")
		}
		for _, m := range []struct {
			key string
			m   map[string]string
		}{{"headerFiles", a.HeaderFiles}, {"headerEnv", a.HeaderEnv}} {
			for k, v := range m.m {
				if !validHeaderName(k) {
					return at(joinPath(m.key, k), fmt.Sprintf("%q is not a valid HTTP header name", k))
				}
				if v == "" {
					return at(joinPath(m.key, k), "empty")
				}
			}
		}
		for k := range a.HeaderFiles {
			if _, dup := a.HeaderEnv[k]; dup {
				return at(joinPath("headerEnv", k), "also set in headerFiles")
			}
		}
	case AuthOAuth:
		if s.Transport != TransportStreamableHTTP {
			return c.errorAt(apath, fmt.Sprintf("auth type oauth needs the streamable-http transport, not %s", s.Transport))
		}
		if _, ok := s.Headers["Authorization"]; ok {
			return c.errorAt(joinPath(joinPath(path, "headers"), "Authorization"), "conflicts with auth type oauth")
		}
		if err := c.validateGrant(apath, a); err != nil {
			return err
		}
		if a.ClientSecretFile != "" && a.ClientSecretEnv != "" {
			return at("clientSecretEnv", "set clientSecretFile or clientSecretEnv, not both")
		}
		if (a.ClientSecretFile != "" || a.ClientSecretEnv != "") && a.ClientID == "" {
			return at("clientId", "a client secret needs a clientId")
		}
		if a.RedirectURL != "" {
			u, err := url.Parse(a.RedirectURL)
			if err != nil || u.Scheme == "" || u.Host == "" && u.Opaque == "" || u.Fragment != "" {
				return at("redirectUrl", fmt.Sprintf("%q is not an absolute URL without a fragment", a.RedirectURL))
			}
		}
		if a.ClientMetadataURL != "" {
			u, err := url.Parse(a.ClientMetadataURL)
			if err != nil || u.Scheme != "https" || u.Host == "" || u.Path == "" || u.Path == "/" {
				return at("clientMetadataUrl", "must be an https URL with a path")
			}
		}
		if a.Issuer != "" {
			if err := checkURL(a.Issuer); err != nil {
				return at("issuer", err.Error())
			}
		}
		for i, sc := range a.Scopes {
			if sc == "" || strings.ContainsAny(sc, " \t\r\n\"\\") {
				return c.errorAt(indexPath(joinPath(apath, "scopes"), i), fmt.Sprintf("%q is not a valid OAuth scope", sc))
			}
		}
	}
	return nil
}

// validateGrant checks auth.grant and the keys of the enterprise grants (ADR 0011).
func (c *Config) validateGrant(apath string, a *ServerAuth) error {
	at := func(key, msg string) error { return c.errorAt(joinPath(apath, key), msg) }
	hasSecret := a.ClientSecretFile != "" || a.ClientSecretEnv != ""
	hasKey := a.ClientKeyFile != "" || a.ClientKeyEnv != ""
	hasAssertion := a.AssertionFile != "" || a.AssertionEnv != ""
	switch {
	case a.ClientKeyFile != "" && a.ClientKeyEnv != "":
		return at("clientKeyEnv", "set clientKeyFile or clientKeyEnv, not both")
	case a.AssertionFile != "" && a.AssertionEnv != "":
		return at("assertionEnv", "set assertionFile or assertionEnv, not both")
	case hasKey && hasSecret:
		return at("clientKeyFile", "a client key and a client secret: the client authenticates with one")
	case hasKey && a.ClientID == "":
		return at("clientId", "a client key needs a clientId")
	case a.ClientKeyAlg != "" && !hasKey:
		return at("clientKeyAlg", "needs clientKeyFile or clientKeyEnv")
	}
	if a.ClientKeyAlg != "" && !slices.Contains(clientKeyAlgs, a.ClientKeyAlg) {
		return at("clientKeyAlg", fmt.Sprintf("unknown algorithm %q: use one of %s", a.ClientKeyAlg, strings.Join(clientKeyAlgs, ", ")))
	}
	if hasAssertion && a.Grant != GrantJWTBearer {
		key := "assertionFile"
		if a.AssertionFile == "" {
			key = "assertionEnv"
		}
		return at(key, "applies to grant jwt_bearer")
	}
	if a.IdP != nil && a.Grant != GrantEnterpriseManaged {
		return at("idp", "applies to grant enterprise_managed")
	}
	switch a.Grant {
	case "", GrantAuthorizationCode:
		if hasKey {
			return at("clientKeyFile", "private_key_jwt applies to the machine grants (client_credentials, jwt_bearer, enterprise_managed)")
		}
	case GrantClientCredentials:
		if a.ClientID == "" || (!hasSecret && !hasKey) {
			return at("grant", "client_credentials needs clientId and a client secret (clientSecretFile, clientSecretEnv) or key (clientKeyFile, clientKeyEnv)")
		}
	case GrantJWTBearer:
		if !hasAssertion {
			return at("grant", "jwt_bearer needs assertionFile or assertionEnv")
		}
	case GrantEnterpriseManaged:
		if a.ClientID == "" {
			return at("clientId", "enterprise_managed needs the client registered with the server's authorization server")
		}
		if a.IdP == nil {
			return at("grant", "enterprise_managed needs an idp block")
		}
		return c.validateIdP(joinPath(apath, "idp"), a.IdP)
	default:
		return at("grant", fmt.Sprintf("unknown grant %q: use authorization_code, client_credentials, jwt_bearer or enterprise_managed", a.Grant))
	}
	return nil
}

// clientKeyAlgs are the JWS algorithms of private_key_jwt the bridge signs with (upstreamauth's).
var clientKeyAlgs = upstreamauth.ClientKeyAlgorithms

func (c *Config) validateIdP(ipath string, p *IdPAuth) error {
	at := func(key, msg string) error { return c.errorAt(joinPath(ipath, key), msg) }
	switch {
	case p.Issuer == "" && p.TokenEndpoint == "":
		return c.errorAt(ipath, "needs issuer or tokenEndpoint")
	case p.ClientID == "":
		return at("clientId", "required: the bridge's client at the IdP")
	case p.ClientSecretFile != "" && p.ClientSecretEnv != "":
		return at("clientSecretEnv", "set clientSecretFile or clientSecretEnv, not both")
	case (p.SubjectTokenFile == "") == (p.SubjectTokenEnv == ""):
		return c.errorAt(ipath, "needs exactly one of subjectTokenFile and subjectTokenEnv")
	}
	for _, u := range []struct{ key, v string }{{"issuer", p.Issuer}, {"tokenEndpoint", p.TokenEndpoint}} {
		if u.v != "" {
			if err := checkURL(u.v); err != nil {
				return at(u.key, err.Error())
			}
		}
	}
	if t := p.SubjectTokenType; t != "" && !strings.HasPrefix(t, "urn:") {
		return at("subjectTokenType", fmt.Sprintf("%q is not a token type URN (e.g. urn:ietf:params:oauth:token-type:id_token)", t))
	}
	return nil
}

// validateOAuth checks the oauth block.
func (c *Config) validateOAuth() error {
	o := &c.OAuth
	if o.AuthorizationTimeout < 0 {
		return c.errorAt("oauth.authorizationTimeout", "must not be negative")
	}
	hasKey := o.TokenStoreKeyFile != "" || o.TokenStoreKeyEnv != ""
	switch {
	case o.TokenStoreKeyFile != "" && o.TokenStoreKeyEnv != "":
		return c.errorAt("oauth.tokenStoreKeyEnv", "set tokenStoreKeyFile or tokenStoreKeyEnv, not both")
	case o.TokenStoreFile != "" && !hasKey:
		return c.errorAt("oauth.tokenStoreFile", "needs tokenStoreKeyFile or tokenStoreKeyEnv: tokens are stored encrypted")
	case o.TokenStoreFile == "" && hasKey:
		return c.errorAt("oauth", "a token store key without tokenStoreFile")
	}
	return nil
}

// readSecrets reads the secrets the auth blocks name. A missing file or unset variable is an error
// naming the key, never the value.
func (c *Config) readSecrets() error {
	for _, name := range c.ServerNames() {
		s := c.MCPServers[name]
		a := s.Auth
		if a == nil {
			continue
		}
		apath := joinPath(c.serverPath(name), "auth")
		var err error
		switch a.Type {
		case AuthBearer:
			if a.TokenFile != "" {
				a.BearerToken, err = c.secretFile(joinPath(apath, "tokenFile"), a.TokenFile)
			} else {
				a.BearerToken, err = c.secretEnv(joinPath(apath, "tokenEnv"), a.TokenEnv)
			}
			if err == nil && strings.ContainsAny(a.BearerToken.Reveal(), "\r\n\x00 ") {
				err = c.errorAt(apath, "the bearer token contains white space or control characters")
			}
		case AuthHeaders:
			a.HeaderValues = map[string]Secret{}
			for _, k := range slices.Sorted(maps.Keys(a.HeaderFiles)) {
				if a.HeaderValues[k], err = c.secretFile(joinPath(joinPath(apath, "headerFiles"), k), a.HeaderFiles[k]); err != nil {
					return err
				}
			}
			for _, k := range slices.Sorted(maps.Keys(a.HeaderEnv)) {
				if a.HeaderValues[k], err = c.secretEnv(joinPath(joinPath(apath, "headerEnv"), k), a.HeaderEnv[k]); err != nil {
					return err
				}
			}
			for k, v := range a.HeaderValues {
				if strings.ContainsAny(v.Reveal(), "\r\n\x00") {
					return c.errorAt(joinPath(apath, k), "the header value contains a line break or NUL")
				}
			}
		case AuthOAuth:
			switch {
			case a.ClientSecretFile != "":
				a.ClientSecretValue, err = c.secretFile(joinPath(apath, "clientSecretFile"), a.ClientSecretFile)
			case a.ClientSecretEnv != "":
				a.ClientSecretValue, err = c.secretEnv(joinPath(apath, "clientSecretEnv"), a.ClientSecretEnv)
			}
			if err == nil {
				err = c.checkRotatingSecrets(apath, a)
			}
		}
		if err != nil {
			return err
		}
	}
	o := &c.OAuth
	var err error
	switch {
	case o.TokenStoreKeyFile != "":
		o.TokenStoreKey, err = c.secretFile("oauth.tokenStoreKeyFile", o.TokenStoreKeyFile)
	case o.TokenStoreKeyEnv != "":
		o.TokenStoreKey, err = c.secretEnv("oauth.tokenStoreKeyEnv", o.TokenStoreKeyEnv)
	}
	return err
}

// checkRotatingSecrets checks that the key material and assertions of the enterprise grants can be read
// now, so that a typo fails at start-up. Their values are not kept: package upstreamauth reads them at every use.
func (c *Config) checkRotatingSecrets(apath string, a *ServerAuth) error {
	check := func(key, file, env string) error {
		var err error
		switch {
		case file != "":
			_, err = c.secretFile(joinPath(apath, key+"File"), file)
		case env != "":
			_, err = c.secretEnv(joinPath(apath, key+"Env"), env)
		}
		return err
	}
	if err := check("clientKey", a.ClientKeyFile, a.ClientKeyEnv); err != nil {
		return err
	}
	if err := check("assertion", a.AssertionFile, a.AssertionEnv); err != nil {
		return err
	}
	if p := a.IdP; p != nil {
		ip := joinPath(apath, "idp")
		for _, k := range []struct{ key, file, env string }{
			{"clientSecret", p.ClientSecretFile, p.ClientSecretEnv},
			{"subjectToken", p.SubjectTokenFile, p.SubjectTokenEnv},
		} {
			var err error
			switch {
			case k.file != "":
				_, err = c.secretFile(joinPath(ip, k.key+"File"), k.file)
			case k.env != "":
				_, err = c.secretEnv(joinPath(ip, k.key+"Env"), k.env)
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// secretFile reads a secret from path, trimming surrounding white space.
func (c *Config) secretFile(key, path string) (Secret, error) {
	data, err := readFile(path, key)
	if err != nil {
		return "", err
	}
	v := strings.TrimSpace(string(data))
	if v == "" {
		return "", c.errorAt(key, fmt.Sprintf("%s is empty", path))
	}
	return Secret(v), nil
}

// secretEnv reads a secret from the environment variable name.
func (c *Config) secretEnv(key, name string) (Secret, error) {
	v, ok := os.LookupEnv(name)
	if !ok || strings.TrimSpace(v) == "" {
		return "", c.errorAt(key, fmt.Sprintf("environment variable %s is not set", name))
	}
	return Secret(strings.TrimSpace(v)), nil
}

// resolveAuthPaths makes the auth blocks' file paths absolute, relative to base.
func (c *Config) resolveAuthPaths(abs func(*string)) {
	abs(&c.OAuth.TokenStoreFile)
	abs(&c.OAuth.TokenStoreKeyFile)
	for _, s := range c.MCPServers {
		if s.Auth == nil {
			continue
		}
		abs(&s.Auth.TokenFile)
		abs(&s.Auth.ClientSecretFile)
		abs(&s.Auth.ClientKeyFile)
		abs(&s.Auth.AssertionFile)
		if p := s.Auth.IdP; p != nil {
			abs(&p.ClientSecretFile)
			abs(&p.SubjectTokenFile)
		}
		for k, p := range s.Auth.HeaderFiles {
			abs(&p)
			s.Auth.HeaderFiles[k] = p
		}
	}
}
