package upstreamauth

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/mcp-bridge/mcp-bridge/internal/state"
)

// TokenStore keeps the OAuth grants of upstream servers: per server (configured name and endpoint URL)
// and per owner (the principal whose sessions use them). A grant is the access and refresh tokens with
// what is needed to refresh them (token endpoint, client id and secret). Every session of one owner to
// one server shares its grant; no other owner or server ever sees it.
//
// A store made by NewTokenStore lives in memory only. One made by OpenStateTokenStore keeps every grant as
// a record of the bridge's state store (state.KindGrant; sealed there, docs/adr/0021), so that grants live
// and move with the rest of the bridge's state. One made by OpenTokenStore writes every change to its own
// file, sealed with AES-256-GCM under a key the operator supplies (see ParseTokenStoreKey): the form before
// the state store, still read once to move its grants (MigrateTokenFile); the file is written atomically
// with mode 0600, and a file that does not decrypt under the key is an error, never silently replaced.
//
// A TokenStore is safe for concurrent use and may be shared by several Cores only if they never serve the
// same server and owner.
type TokenStore struct {
	path   string
	aead   cipher.AEAD // nil: no file of its own
	state  state.Store // nil: not in the state store
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
	k, err := state.ParseKey(raw) // the state store's keys are read the same way
	if err != nil {
		return nil, fmt.Errorf("token store %w", err)
	}
	return k, nil
}

// Forget deletes the grant of server (by configured name, any URL) for owner, so the next session
// authorizes afresh. Sessions already open keep the token they hold until it fails.
func (s *TokenStore) Forget(server, owner string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var gone []grantKey
	for k := range s.grants {
		if k.Server == server && k.Owner == owner {
			delete(s.grants, k)
			gone = append(gone, k)
		}
	}
	for k := range s.flows {
		if k.Server == server && k.Owner == owner {
			delete(s.flows, k)
		}
	}
	return s.saveLocked(gone...)
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
	err := s.saveLocked(key)
	s.mu.Unlock()
	if err != nil {
		s.logger.Error("token store: saving a grant failed; it is kept in memory", "server", key.Server, "err", err)
	}
	return &storedTokenSource{store: s, key: key, inner: cfg.TokenSource(ctx, tok), last: tok.AccessToken}
}

// restore returns a token source for the stored grant of key, refreshing through hc, or nil if there is
// none. A store in the state store reads the grant's record first: replicas sharing their state (Redis)
// each write the grants their people give, so the record is newer than what this process loaded at start
// (a grant given through another replica, a token it refreshed since).
func (s *TokenStore) restore(key grantKey, hc *http.Client) oauth2.TokenSource {
	s.reload(key)
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

// reload replaces the grant of key held in memory by its record in the state store, if s is in one and the
// record is there; a record that is gone or cannot be read leaves memory as it is (a store that does not
// answer must not cost a session the grant it already has).
func (s *TokenStore) reload(key grantKey) {
	if s.state == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), stateTimeout)
	defer cancel()
	b, err := s.state.Get(ctx, state.KindGrant, key.recordKey())
	if err != nil {
		if !errors.Is(err, state.ErrNotFound) {
			s.logger.Warn("token store: reading a grant failed; the one in memory is used", "server", key.Server, "err", err)
		}
		return
	}
	var g storedGrant
	if json.Unmarshal(b, &g) != nil || g.grantKey != key {
		s.logger.Error("token store: a kept grant does not decode; it is ignored", "key", key.recordKey())
		return
	}
	s.mu.Lock()
	s.grants[key] = &g
	s.mu.Unlock()
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
	err := s.saveLocked(key)
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

// saveLocked writes the grants that changed — those of keys — to the state store, or every grant to the
// file, if the store has either. The caller holds s.mu.
func (s *TokenStore) saveLocked(keys ...grantKey) error {
	if s.state != nil {
		return s.saveStateLocked(keys)
	}
	if s.aead == nil {
		return nil
	}
	return s.saveFileLocked()
}

// saveFileLocked writes the grants to the file: sealed, to a temporary file in the same directory, then
// renamed over the old one. The caller holds s.mu.
func (s *TokenStore) saveFileLocked() error {
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

// stateTimeout bounds one read or write of the state store on the token store's behalf.
const stateTimeout = 10 * time.Second

// recordKey is a grant's key in the state store: its server, resource and owner, each escaped, joined by
// "/" (so that no value can make two grants' keys equal).
func (k grantKey) recordKey() string {
	return url.PathEscape(k.Server) + "/" + url.PathEscape(k.Resource) + "/" + url.PathEscape(k.Owner)
}

// OpenStateTokenStore returns a token store whose grants are records of st (state.KindGrant), loading the
// ones st holds. logger (nil: slog.Default) is told of failed writes; it never sees a token.
func OpenStateTokenStore(ctx context.Context, st state.Store, logger *slog.Logger) (*TokenStore, error) {
	s := NewTokenStore()
	s.state = st
	if logger != nil {
		s.logger = logger
	}
	err := st.List(ctx, state.KindGrant, func(key string, v []byte) error {
		var g storedGrant
		if ok := json.Unmarshal(v, &g) == nil; !ok || g.recordKey() != key {
			s.logger.Error("token store: a kept grant does not decode; it is ignored", "key", key)
			return nil
		}
		s.grants[g.grantKey] = &g
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("token store: reading the grants: %w", err)
	}
	return s, nil
}

// saveStateLocked writes the grants of keys to the state store — a grant that is gone is deleted — one
// record each: a refreshed token rewrites its own grant, not every owner's. The caller holds s.mu.
func (s *TokenStore) saveStateLocked(keys []grantKey) error {
	ctx, cancel := context.WithTimeout(context.Background(), stateTimeout)
	defer cancel()
	var errs []error
	for _, k := range keys {
		g, ok := s.grants[k]
		if !ok {
			errs = append(errs, s.state.Delete(ctx, state.KindGrant, k.recordKey()))
			continue
		}
		b, err := json.Marshal(g)
		if err == nil {
			err = s.state.Put(ctx, state.KindGrant, k.recordKey(), b)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// MigrateTokenFile moves the grants of the token file at path (oauth.tokenStoreFile, sealed with key) into
// s, a store in the state store, once: grants s already holds win; the file is then renamed to
// "<path>.migrated" so that it is not read again (and can be deleted once the operator is satisfied). A
// missing file is nothing to do. It reports how many grants moved.
func (s *TokenStore) MigrateTokenFile(path string, key []byte) (int, error) {
	if s.state == nil {
		return 0, errors.New("token store: not in the state store")
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	old, err := OpenTokenStore(path, key, s.logger)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	var moved []grantKey
	for k, g := range old.grants {
		if _, ok := s.grants[k]; !ok {
			s.grants[k] = g
			moved = append(moved, k)
		}
	}
	n := len(moved)
	err = s.saveLocked(moved...)
	s.mu.Unlock()
	if err != nil {
		return 0, fmt.Errorf("token store: moving the grants of %s into the state store: %w", path, err)
	}
	if err := os.Rename(path, path+".migrated"); err != nil {
		return n, fmt.Errorf("token store: the grants of %s moved into the state store, but the file could not be renamed: %w", path, err)
	}
	return n, nil
}
