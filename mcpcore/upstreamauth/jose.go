package upstreamauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Key material and assertions of the enterprise grants, and the JOSE they need (ADR 0011): client
// assertions for private_key_jwt (RFC 7523 §2.2) and DPoP proofs (RFC 9449), signed with go-jose.

// SecretSource is where a credential comes from: a file (read again at every use, so a rotated file —
// a Kubernetes projected service account token, a renewed key — is picked up without a restart), an
// environment variable, or a value given in process (embedders, tests). Exactly one should be set. The
// credential is a secret: it never reaches a log, an error or an event.
type SecretSource struct {
	File  string
	Env   string
	Value string
}

// errNoSecret is returned by read for an empty SecretSource.
var errNoSecret = errors.New("no file, environment variable or value configured")

// read returns the credential, surrounding white space trimmed. Errors name the file or variable, never
// the content.
func (s *SecretSource) read() (string, error) {
	switch {
	case s == nil:
		return "", errNoSecret
	case s.File != "":
		b, err := os.ReadFile(s.File)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				return "", fmt.Errorf("reading %s: %w", s.File, pe.Err)
			}
			return "", fmt.Errorf("reading %s: %w", s.File, err)
		}
		v := strings.TrimSpace(string(b))
		if v == "" {
			return "", fmt.Errorf("%s is empty", s.File)
		}
		return v, nil
	case s.Env != "":
		v := strings.TrimSpace(os.Getenv(s.Env))
		if v == "" {
			return "", fmt.Errorf("environment variable %s is not set", s.Env)
		}
		return v, nil
	case s.Value != "":
		return strings.TrimSpace(s.Value), nil
	}
	return "", errNoSecret
}

// where names the source for errors and logs (never its content).
func (s *SecretSource) where() string {
	switch {
	case s == nil:
		return "nothing"
	case s.File != "":
		return "file " + s.File
	case s.Env != "":
		return "environment variable " + s.Env
	}
	return "the configured value"
}

// ParsePrivateKey parses a private key as operators keep them: PEM (PKCS #8, SEC 1 "EC PRIVATE KEY",
// PKCS #1 "RSA PRIVATE KEY") or a JWK with its private part. It returns an *ecdsa.PrivateKey,
// *rsa.PrivateKey or ed25519.PrivateKey. Errors never quote the input.
func ParsePrivateKey(data []byte) (crypto.Signer, error) {
	text := strings.TrimSpace(string(data))
	if strings.HasPrefix(text, "{") {
		var jwk jose.JSONWebKey
		if err := jwk.UnmarshalJSON([]byte(text)); err != nil {
			return nil, errors.New("not a valid JWK")
		}
		if jwk.IsPublic() {
			return nil, errors.New("the JWK has no private key")
		}
		return signerOf(jwk.Key)
	}
	block, _ := pem.Decode([]byte(text))
	if block == nil {
		return nil, errors.New("neither PEM nor a JWK")
	}
	switch block.Type {
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, errors.New("PKCS #8 private key does not parse")
		}
		return signerOf(k)
	case "EC PRIVATE KEY":
		k, err := x509.ParseECPrivateKey(block.Bytes)
		if err != nil {
			return nil, errors.New("EC private key does not parse")
		}
		return k, nil
	case "RSA PRIVATE KEY":
		k, err := x509.ParsePKCS1PrivateKey(block.Bytes)
		if err != nil {
			return nil, errors.New("RSA private key does not parse")
		}
		return signerOf(k)
	}
	return nil, fmt.Errorf("PEM block %q is not a private key", block.Type)
}

func signerOf(k any) (crypto.Signer, error) {
	switch k := k.(type) {
	case *ecdsa.PrivateKey:
		return k, nil
	case *rsa.PrivateKey:
		if k.N.BitLen() < 2048 {
			return nil, errors.New("RSA keys must have at least 2048 bits")
		}
		return k, nil
	case ed25519.PrivateKey:
		return k, nil
	}
	return nil, fmt.Errorf("unsupported private key type %T", k)
}

// ClientKeyAlgorithms are the JWS algorithms the bridge signs private_key_jwt client assertions with
// (Config.ClientKeyAlg); which of them fits depends on the key (signingAlg). Read it, do not change it.
var ClientKeyAlgorithms = []string{"ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA"}

// signingAlg returns the JWS algorithm to sign with key: want when it is set (and fits the key), else the
// key's natural one (ES256/ES384/ES512 by curve, RS256, EdDSA).
func signingAlg(key crypto.Signer, want string) (jose.SignatureAlgorithm, error) {
	var natural jose.SignatureAlgorithm
	var fits []jose.SignatureAlgorithm
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		switch k.Curve {
		case elliptic.P256():
			natural = jose.ES256
		case elliptic.P384():
			natural = jose.ES384
		case elliptic.P521():
			natural = jose.ES512
		default:
			return "", errors.New("unsupported elliptic curve")
		}
		fits = []jose.SignatureAlgorithm{natural}
	case *rsa.PrivateKey:
		natural = jose.RS256
		fits = []jose.SignatureAlgorithm{jose.RS256, jose.RS384, jose.RS512, jose.PS256, jose.PS384, jose.PS512}
	case ed25519.PrivateKey:
		natural = jose.EdDSA
		fits = []jose.SignatureAlgorithm{jose.EdDSA}
	default:
		return "", fmt.Errorf("unsupported private key type %T", key)
	}
	if want == "" {
		return natural, nil
	}
	for _, a := range fits {
		if string(a) == want {
			return a, nil
		}
	}
	return "", fmt.Errorf("algorithm %s does not fit the key (use %s)", want, natural)
}

// clientAssertion is a private_key_jwt client assertion (RFC 7523 §2.2, 3): issuer and subject the client
// id, audience the authorization server's issuer identifier (draft-ietf-oauth-rfc7523bis), a unique jti,
// valid for a minute.
func clientAssertion(key crypto.Signer, alg jose.SignatureAlgorithm, clientID, audience string, now time.Time) (string, error) {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", fmt.Errorf("client assertion signer: %w", err)
	}
	claims := jwt.Claims{
		Issuer:    clientID,
		Subject:   clientID,
		Audience:  jwt.Audience{audience},
		ID:        randomID(),
		IssuedAt:  jwt.NewNumericDate(now),
		NotBefore: jwt.NewNumericDate(now.Add(-5 * time.Second)),
		Expiry:    jwt.NewNumericDate(now.Add(time.Minute)),
	}
	return jwt.Signed(signer).Claims(claims).Serialize()
}

// randomID is a 128-bit random identifier (jti), base64url.
func randomID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// dpopKey is the key a flow's DPoP proofs are signed with (RFC 9449): an ES256 key made when the flow is,
// kept in memory only, so tokens bound to it are useless to anyone who reads them elsewhere, and a restart
// of the bridge starts with a new key (and new tokens).
type dpopKey struct {
	signer jose.Signer
	jkt    string // the JWK SHA-256 thumbprint (RFC 7638) of the public key, base64url
}

func newDPoPKey() (*dpopKey, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	opts := (&jose.SignerOptions{EmbedJWK: true}).WithType("dpop+jwt")
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: priv}, opts)
	if err != nil {
		return nil, err
	}
	tp, err := (&jose.JSONWebKey{Key: &priv.PublicKey}).Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, err
	}
	return &dpopKey{signer: signer, jkt: base64.RawURLEncoding.EncodeToString(tp)}, nil
}

// dpopProof claims (RFC 9449 §4.2).
type dpopClaims struct {
	JTI   string `json:"jti"`
	HTM   string `json:"htm"`
	HTU   string `json:"htu"`
	IAT   int64  `json:"iat"`
	ATH   string `json:"ath,omitempty"`
	Nonce string `json:"nonce,omitempty"`
}

// proof returns a fresh DPoP proof for a request: method, target URI without query and fragment, the
// access token's hash when one is presented (resource requests), the server's nonce when it gave one.
func (k *dpopKey) proof(method, target, accessToken, nonce string, now time.Time) (string, error) {
	c := dpopClaims{JTI: randomID(), HTM: method, HTU: htu(target), IAT: now.Unix(), Nonce: nonce}
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		c.ATH = base64.RawURLEncoding.EncodeToString(sum[:])
	}
	return jwt.Signed(k.signer).Claims(c).Serialize()
}

// htu is target without query and fragment (RFC 9449 §4.2).
func htu(target string) string {
	if i := strings.IndexAny(target, "?#"); i >= 0 {
		return target[:i]
	}
	return target
}
