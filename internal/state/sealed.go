package state

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// KeySize is the size of a sealing key: AES-256.
const KeySize = 32

// ParseKey reads a sealing key as an operator writes it in a file or an environment variable: 64 hex
// digits or the standard or URL-safe base64 (padded or not) of 32 bytes, surrounding space ignored, or
// exactly 32 raw bytes. The OAuth token store key (oauth.tokenStoreKeyFile) is read the same way.
func ParseKey(raw []byte) ([]byte, error) {
	t := strings.TrimSpace(string(raw))
	if len(t) == 2*KeySize {
		if k, err := hex.DecodeString(t); err == nil {
			return k, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(t); err == nil && len(k) == KeySize {
			return k, nil
		}
	}
	if len(raw) == KeySize {
		return slices.Clone(raw), nil
	}
	return nil, errors.New("key must be 32 bytes: 64 hex digits or base64")
}

// NewKey returns a new random key, as ParseKey reads it: 64 hex digits and a newline.
func NewKey() []byte {
	k := make([]byte, KeySize)
	_, _ = rand.Read(k) // never fails (crypto/rand)
	return []byte(hex.EncodeToString(k) + "\n")
}

// ErrSealBroken is the error of a record that does not open under the store's key: its bytes were
// altered, or it was copied from another kind or key.
var ErrSealBroken = errors.New("state: a record does not open under the key (altered, or copied from another record)")

// sealVersion starts every sealed value; the layout is sealVersion, a 12-byte nonce, then the AES-GCM
// ciphertext and tag.
const sealVersion = 1

// The canary: a record sealed with a known text, read back at every open to tell a wrong key from damage.
const (
	kindSeal   = Kind("seal")
	keyCanary  = "canary"
	canaryText = "mcp-bridge state key check"
)

// sealed is the store Sealed returns.
type sealed struct {
	Store
	aead cipher.AEAD
}

// Sealed returns a store that encrypts every value with AES-256-GCM under key before s sees it, and
// decrypts it on the way back. The additional data binds a value to its kind and key, so a value copied to
// another record does not open (ErrSealBroken). Kinds and keys (ids) stay clear. The returned store
// closes s.
//
// Sealed reads a canary record sealed under the key (writing it into a store that has none): a store
// sealed with another key is ErrWrongKey, never silently reset. key is 32 bytes (ParseKey).
func Sealed(ctx context.Context, s Store, key []byte) (Store, error) {
	ss, err := newSealed(s, key)
	if err != nil {
		return nil, err
	}
	v, err := ss.Get(ctx, kindSeal, keyCanary)
	switch {
	case errors.Is(err, ErrNotFound):
		if err := ss.Put(ctx, kindSeal, keyCanary, []byte(canaryText)); err != nil {
			return nil, err
		}
	case errors.Is(err, ErrSealBroken):
		return nil, ErrWrongKey
	case err != nil:
		return nil, err
	case string(v) != canaryText:
		return nil, ErrWrongKey
	}
	return ss, nil
}

// newSealed is Sealed without the canary check.
func newSealed(s Store, key []byte) (*sealed, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("state: sealing key is %d bytes, need %d", len(key), KeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("state: sealing key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("state: sealing key: %w", err)
	}
	return &sealed{Store: s, aead: aead}, nil
}

// additionalData binds a sealed value to its record.
func additionalData(kind Kind, key string) []byte {
	return fmt.Appendf(nil, "mcp-bridge state v%d\x00%s\x00%s", sealVersion, kind, key)
}

func (s *sealed) seal(kind Kind, key string, value []byte) []byte {
	ns := s.aead.NonceSize()
	out := make([]byte, 1+ns, 1+ns+len(value)+s.aead.Overhead())
	out[0] = sealVersion
	_, _ = rand.Read(out[1 : 1+ns])
	return s.aead.Seal(out, out[1:1+ns], value, additionalData(kind, key))
}

func (s *sealed) open(kind Kind, key string, value []byte) ([]byte, error) {
	ns := s.aead.NonceSize()
	if len(value) < 1+ns+s.aead.Overhead() || value[0] != sealVersion {
		return nil, fmt.Errorf("%s/%s: %w", kind, key, ErrSealBroken)
	}
	v, err := s.aead.Open(nil, value[1:1+ns], value[1+ns:], additionalData(kind, key))
	if err != nil {
		return nil, fmt.Errorf("%s/%s: %w", kind, key, ErrSealBroken)
	}
	if v == nil {
		v = []byte{}
	}
	return v, nil
}

func (s *sealed) Put(ctx context.Context, kind Kind, key string, value []byte) error {
	if err := checkRecord(kind, key); err != nil {
		return err
	}
	return s.Store.Put(ctx, kind, key, s.seal(kind, key, value))
}

// Get returns ErrSealBroken (wrapped, naming the record) for a record that does not open.
func (s *sealed) Get(ctx context.Context, kind Kind, key string) ([]byte, error) {
	v, err := s.Store.Get(ctx, kind, key)
	if err != nil {
		return nil, err
	}
	return s.open(kind, key, v)
}

// List stops at the first record that does not open and returns ErrSealBroken (wrapped, naming it).
func (s *sealed) List(ctx context.Context, kind Kind, fn func(key string, value []byte) error) error {
	return s.Store.List(ctx, kind, func(key string, value []byte) error {
		v, err := s.open(kind, key, value)
		if err != nil {
			return err
		}
		return fn(key, v)
	})
}
