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
	"sync"
	"sync/atomic"
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

// ParseKeyRing reads a key file that may hold several keys, one a line (blank lines and lines starting
// with # are skipped), each as ParseKey reads it: the first seals what is written, every one opens what was
// sealed under it. A key rotation writes the new key on the first line and keeps the old one below it until
// no record needs it (docs/adr/0100-live-secrets-audit-console-limits.md). A file of one key is read as ParseKey
// reads it (32 raw bytes included).
func ParseKeyRing(raw []byte) ([][]byte, error) {
	k, err := ParseKey(raw)
	if err == nil {
		return [][]byte{k}, nil
	}
	if !strings.Contains(strings.TrimSpace(string(raw)), "\n") {
		return nil, err // one line: ParseKey's error says it all
	}
	var ring [][]byte
	for i, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, err := ParseKey([]byte(line))
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", i+1, err)
		}
		ring = append(ring, k)
	}
	if len(ring) == 0 {
		return nil, errors.New("key must be 32 bytes: 64 hex digits or base64")
	}
	return ring, nil
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
	// ring is the keys in force: the first seals, each opens. Rekey replaces it.
	ring atomic.Pointer[keyRing]
	// mu is held shared by each write (its sealing and its write) and exclusively by Rekey, so that no
	// record is written under a key Rekey is retiring between its check and its swap.
	mu sync.RWMutex
}

// keyRing is a ring of keys: aeads[0] seals, every one opens; keys are kept to tell which ones a new ring
// leaves out (compared for equality only, never logged).
type keyRing struct {
	aeads []cipher.AEAD
	keys  [][]byte
}

// Sealed returns a store that encrypts every value with AES-256-GCM under key before s sees it, and
// decrypts it on the way back; older keys (a key ring, ParseKeyRing) open what was sealed under them. The additional data binds a value to its kind and key, so a value copied to
// another record does not open (ErrSealBroken). Kinds and keys (ids) stay clear. The returned store
// closes s.
//
// Sealed reads a canary record sealed under the key (writing it into a store that has none): a store
// sealed with another key is ErrWrongKey, never silently reset. key is 32 bytes (ParseKey).
func Sealed(ctx context.Context, s Store, key []byte, older ...[]byte) (Store, error) {
	ss, err := newSealed(s, append([][]byte{key}, older...))
	if err != nil {
		return nil, err
	}
	if err := ss.checkCanary(ctx); err != nil {
		return nil, err
	}
	return ss, nil
}

// checkCanary opens the canary under the ring, writing it under the sealing key into a store that has none.
func (ss *sealed) checkCanary(ctx context.Context) error {
	v, err := ss.Get(ctx, kindSeal, keyCanary)
	switch {
	case errors.Is(err, ErrNotFound):
		return ss.Put(ctx, kindSeal, keyCanary, []byte(canaryText))
	case errors.Is(err, ErrSealBroken):
		return ErrWrongKey
	case err != nil:
		return err
	case string(v) != canaryText:
		return ErrWrongKey
	}
	return nil
}

// newSealed is Sealed without the canary check.
func newSealed(s Store, keys [][]byte) (*sealed, error) {
	r, err := newKeyRing(keys)
	if err != nil {
		return nil, err
	}
	ss := &sealed{Store: s}
	ss.ring.Store(r)
	return ss, nil
}

func newKeyRing(keys [][]byte) (*keyRing, error) {
	if len(keys) == 0 {
		return nil, errors.New("state: no sealing key")
	}
	r := &keyRing{}
	for _, key := range keys {
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
		r.aeads = append(r.aeads, aead)
		r.keys = append(r.keys, slices.Clone(key))
	}
	return r, nil
}

// ErrKeyStillNeeded is Rekey's error when the new ring leaves out a key that records are still sealed under.
var ErrKeyStillNeeded = errors.New("state: records are still sealed under a key the new key file leaves out")

// Rekey replaces the keys of the sealed store under s (a store Open returned): keys[0] seals every record
// written from now on, each key opens what was sealed under it. A key in force that keys leaves out is
// dropped only when no record is sealed under it any more; otherwise nothing changes and the error
// (ErrKeyStillNeeded) says how many records still need it. The canary is sealed again under keys[0], so
// that a restart with the new key file opens the store. Writes wait while Rekey checks the records.
func Rekey(ctx context.Context, s Store, keys [][]byte) error {
	ss, ok := under[*sealed](s)
	if !ok {
		return errors.New("state: the store is not sealed")
	}
	next, err := newKeyRing(keys)
	if err != nil {
		return err
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	cur := ss.ring.Load()
	dropped := false
	for _, k := range cur.keys {
		if !slices.ContainsFunc(next.keys, func(n []byte) bool { return string(n) == string(k) }) {
			dropped = true
		}
	}
	if dropped {
		n := 0
		for _, kind := range append([]Kind{kindSeal}, Kinds...) {
			err := ss.Store.List(ctx, kind, func(key string, value []byte) error {
				if _, err := next.open(kind, key, value); err != nil {
					if _, err := cur.open(kind, key, value); err == nil && kind != kindSeal {
						n++
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		if n > 0 {
			return fmt.Errorf("%w: %d records (keep the old key on a line below the new one until they are written again or end)", ErrKeyStillNeeded, n)
		}
	}
	ss.ring.Store(next)
	return ss.Store.Put(ctx, kindSeal, keyCanary, next.seal(kindSeal, keyCanary, []byte(canaryText)))
}

// additionalData binds a sealed value to its record.
func additionalData(kind Kind, key string) []byte {
	return fmt.Appendf(nil, "mcp-bridge state v%d\x00%s\x00%s", sealVersion, kind, key)
}

// seal seals value under the ring's first key.
func (r *keyRing) seal(kind Kind, key string, value []byte) []byte {
	aead := r.aeads[0]
	ns := aead.NonceSize()
	out := make([]byte, 1+ns, 1+ns+len(value)+aead.Overhead())
	out[0] = sealVersion
	_, _ = rand.Read(out[1 : 1+ns])
	return aead.Seal(out, out[1:1+ns], value, additionalData(kind, key))
}

// open opens value under the first key of the ring that opens it (the sealing key is tried first).
func (r *keyRing) open(kind Kind, key string, value []byte) ([]byte, error) {
	ad := additionalData(kind, key)
	for _, aead := range r.aeads {
		ns := aead.NonceSize()
		if len(value) < 1+ns+aead.Overhead() || value[0] != sealVersion {
			break
		}
		v, err := aead.Open(nil, value[1:1+ns], value[1+ns:], ad)
		if err != nil {
			continue
		}
		if v == nil {
			v = []byte{}
		}
		return v, nil
	}
	return nil, fmt.Errorf("%s/%s: %w", kind, key, ErrSealBroken)
}

func (s *sealed) seal(kind Kind, key string, value []byte) []byte {
	return s.ring.Load().seal(kind, key, value)
}

func (s *sealed) open(kind Kind, key string, value []byte) ([]byte, error) {
	return s.ring.Load().open(kind, key, value)
}

func (s *sealed) Put(ctx context.Context, kind Kind, key string, value []byte) error {
	if err := checkRecord(kind, key); err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
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
