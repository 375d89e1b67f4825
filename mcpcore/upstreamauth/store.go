package upstreamauth

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// TokenStore keeps the OAuth grants of upstream servers: per server (configured name and endpoint URL)
// and per owner (the principal whose sessions use them). A grant is the access and refresh tokens with
// what is needed to refresh them (token endpoint, client id and secret). Every session of one owner to
// one server shares its grant; no other owner or server ever sees it.
//
// A store made by NewTokenStore lives in memory only. One made by OpenTokenStore also writes every change
// to a file, sealed with AES-256-GCM under a key the operator supplies (see ParseTokenStoreKey); the file
// is written atomically with mode 0600, and a file that does not decrypt under the key is an error, never
// silently replaced.
//
// A TokenStore is safe for concurrent use and may be shared by several Cores only if they never serve the
// same server and owner.
type TokenStore struct {
	path   string
	aead   cipher.AEAD // nil: memory only
	logger *slog.Logger

	mu     sync.Mutex // guards grants and flows, and serializes writes of the file
	grants map[grantKey]*storedGrant
	flows  map[grantKey]*oauthFlow
}

// grantKey names a grant: the server by name and endpoint (a server whose URL changes starts afresh), and
// the owner.
type grantKey struct {
	Server   string `json:"server"`
	Resource string `json:"resource"`
	Owner    string `json:"owner"`
}

// storedGrant is one grant as kept in memory and in the file.
type storedGrant struct {
	grantKey
	TokenURL     string           `json:"tokenUrl"`
	AuthStyle    oauth2.AuthStyle `json:"authStyle,omitempty"`
	ClientID     string           `json:"clientId"`
	ClientSecret string           `json:"clientSecret,omitempty"`
	Scopes       []string         `json:"scopes,omitempty"`
	AccessToken  string           `json:"accessToken"`
	TokenType    string           `json:"tokenType,omitempty"`
	RefreshToken string           `json:"refreshToken,omitempty"`
	Expiry       time.Time        `json:"expiry,omitzero"`
}

// tokenFileMagic starts a token file and is the AES-GCM additional data.
const tokenFileMagic = "mcp-bridge tokens v1\n"

// NewTokenStore returns an empty store that keeps grants in memory only.
func NewTokenStore() *TokenStore {
	return &TokenStore{logger: slog.Default(), grants: map[grantKey]*storedGrant{}, flows: map[grantKey]*oauthFlow{}}
}

// OpenTokenStore returns a store backed by the encrypted file at path, loading the grants it holds; a
// missing file is an empty store (the file is created at the first grant). key must be 32 bytes
// (AES-256). logger (nil: slog.Default) is told of failed writes; it never sees a token.
func OpenTokenStore(path string, key []byte, logger *slog.Logger) (*TokenStore, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("token store key: %d bytes, need 32", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("token store key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("token store key: %w", err)
	}
	s := NewTokenStore()
	s.path, s.aead = path, aead
	if logger != nil {
		s.logger = logger
	}
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return s, nil
	case err != nil:
		return nil, fmt.Errorf("token store: %w", err)
	}
	grants, err := s.open(data)
	if err != nil {
		return nil, fmt.Errorf("token store %s: %w", path, err)
	}
	for _, g := range grants {
		s.grants[g.grantKey] = g
	}
	return s, nil
}

// ParseTokenStoreKey reads a token store key as an operator writes it in a file or an environment
// variable: 64 hex digits or the standard or URL-safe base64 of 32 bytes (surrounding space ignored), or
// exactly 32 raw bytes.
func ParseTokenStoreKey(raw []byte) ([]byte, error) {
	t := strings.TrimSpace(string(raw))
	if len(t) == 64 {
		if k, err := hex.DecodeString(t); err == nil {
			return k, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(t); err == nil && len(k) == 32 {
			return k, nil
		}
	}
	if len(raw) == 32 {
		return slices.Clone(raw), nil
	}
	return nil, errors.New("token store key must be 32 bytes: 64 hex digits or base64")
}

// Forget deletes the grant of server (by configured name, any URL) for owner, so the next session
// authorizes afresh. Sessions already open keep the token they hold until it fails.
func (s *TokenStore) Forget(server, owner string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.grants {
		if k.Server == server && k.Owner == owner {
			delete(s.grants, k)
		}
	}
	for k := range s.flows {
		if k.Server == server && k.Owner == owner {
			delete(s.flows, k)
		}
	}
	return s.saveLocked()
}

// flow returns the shared flow of key, creating it with create on first use.
func (s *TokenStore) flow(key grantKey, create func() (*oauthFlow, error)) (*oauthFlow, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.flows[key]; f != nil {
		return f, nil
	}
	s.mu.Unlock()
	f, err := create() // outside the lock: it calls restore
	s.mu.Lock()
	if err != nil {
		return nil, err
	}
	if prev := s.flows[key]; prev != nil {
		return prev, nil // a concurrent first use won
	}
	s.flows[key] = f
	return f, nil
}

func (s *TokenStore) existingFlow(key grantKey) *oauthFlow {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.flows[key]
}

// put records a new grant for key and returns the token source the session's transport uses: cfg's, which
// refreshes the token with ctx's HTTP client, wrapped so that every new token is recorded too.
func (s *TokenStore) put(key grantKey, cfg *oauth2.Config, tok *oauth2.Token, ctx context.Context) oauth2.TokenSource {
	g := &storedGrant{
		grantKey:     key,
		TokenURL:     cfg.Endpoint.TokenURL,
		AuthStyle:    cfg.Endpoint.AuthStyle,
		ClientID:     cfg.ClientID,
		ClientSecret: cfg.ClientSecret,
		Scopes:       slices.Clone(cfg.Scopes),
	}
	g.setToken(tok)
	s.mu.Lock()
	s.grants[key] = g
	err := s.saveLocked()
	s.mu.Unlock()
	if err != nil {
		s.logger.Error("token store: saving a grant failed; it is kept in memory", "server", key.Server, "err", err)
	}
	return &storedTokenSource{store: s, key: key, inner: cfg.TokenSource(ctx, tok), last: tok.AccessToken}
}

// restore returns a token source for the stored grant of key, refreshing through hc, or nil if there is
// none.
func (s *TokenStore) restore(key grantKey, hc *http.Client) oauth2.TokenSource {
	s.mu.Lock()
	g := s.grants[key]
	s.mu.Unlock()
	if g == nil || (g.AccessToken == "" && g.RefreshToken == "") {
		return nil
	}
	cfg := &oauth2.Config{
		ClientID:     g.ClientID,
		ClientSecret: g.ClientSecret,
		Endpoint:     oauth2.Endpoint{TokenURL: g.TokenURL, AuthStyle: g.AuthStyle},
		Scopes:       slices.Clone(g.Scopes),
	}
	tok := &oauth2.Token{AccessToken: g.AccessToken, TokenType: g.TokenType, RefreshToken: g.RefreshToken, Expiry: g.Expiry}
	// The token source outlives any request: refreshes use a background context carrying the client.
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, hc)
	return &storedTokenSource{store: s, key: key, inner: cfg.TokenSource(ctx, tok), last: tok.AccessToken}
}

// update records a refreshed token of key.
func (s *TokenStore) update(key grantKey, tok *oauth2.Token) {
	s.mu.Lock()
	g := s.grants[key]
	if g == nil {
		s.mu.Unlock()
		return // forgotten meanwhile
	}
	g.setToken(tok)
	err := s.saveLocked()
	s.mu.Unlock()
	if err != nil {
		s.logger.Error("token store: saving a refreshed token failed; it is kept in memory", "server", key.Server, "err", err)
	}
}

func (g *storedGrant) setToken(tok *oauth2.Token) {
	g.AccessToken, g.TokenType, g.Expiry = tok.AccessToken, tok.TokenType, tok.Expiry
	if tok.RefreshToken != "" {
		g.RefreshToken = tok.RefreshToken
	}
}

// storedTokenSource records each new token its inner source hands out.
type storedTokenSource struct {
	store *TokenStore
	key   grantKey
	inner oauth2.TokenSource

	mu   sync.Mutex // guards last
	last string     // the access token last recorded
}

func (t *storedTokenSource) Token() (*oauth2.Token, error) {
	tok, err := t.inner.Token()
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	changed := tok.AccessToken != t.last
	t.last = tok.AccessToken
	t.mu.Unlock()
	if changed {
		t.store.update(t.key, tok)
	}
	return tok, nil
}

// saveLocked writes the grants to the file, if the store has one: sealed, to a temporary file in the
// same directory, then renamed over the old one. The caller holds s.mu.
func (s *TokenStore) saveLocked() error {
	if s.aead == nil {
		return nil
	}
	grants := make([]*storedGrant, 0, len(s.grants))
	for _, g := range s.grants {
		grants = append(grants, g)
	}
	slices.SortFunc(grants, func(a, b *storedGrant) int {
		return strings.Compare(a.Server+"\x00"+a.Resource+"\x00"+a.Owner, b.Server+"\x00"+b.Resource+"\x00"+b.Owner)
	})
	plain, err := json.Marshal(struct {
		Grants []*storedGrant `json:"grants"`
	}{grants})
	if err != nil {
		return err
	}
	nonce := make([]byte, s.aead.NonceSize())
	_, _ = rand.Read(nonce)
	out := append([]byte(tokenFileMagic), nonce...)
	out = s.aead.Seal(out, nonce, plain, []byte(tokenFileMagic))
	tmp, err := os.CreateTemp(filepath.Dir(s.path), "."+filepath.Base(s.path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	if err := tmp.Chmod(0o600); err != nil {
		_ = tmp.Close()
		return err
	}
	if _, err := tmp.Write(out); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		_ = tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), s.path)
}

// open decrypts and decodes a token file.
func (s *TokenStore) open(data []byte) ([]*storedGrant, error) {
	rest, ok := bytes.CutPrefix(data, []byte(tokenFileMagic))
	if !ok {
		return nil, errors.New("not an mcp-bridge token file")
	}
	n := s.aead.NonceSize()
	if len(rest) < n {
		return nil, errors.New("token file truncated")
	}
	plain, err := s.aead.Open(nil, rest[:n], rest[n:], []byte(tokenFileMagic))
	if err != nil {
		return nil, errors.New("token file does not decrypt with this key")
	}
	var f struct {
		Grants []*storedGrant `json:"grants"`
	}
	if err := json.Unmarshal(plain, &f); err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	return f.Grants, nil
}
