package state

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// ErrClosed is the error of every method but Close on a store that was closed.
var ErrClosed = errors.New("state: store closed")

// checkRecord rejects what no engine can keep: an empty kind or key.
func checkRecord(kind Kind, key string) error {
	switch {
	case kind == "":
		return errors.New("state: empty kind")
	case key == "":
		return fmt.Errorf("state: %s: empty key", kind)
	}
	return nil
}

// memory is the engine without durability: NewMemory.
type memory struct {
	mu      sync.RWMutex // guards records and closed
	records map[Kind]map[string][]byte
	closed  bool
}

// NewMemory returns an empty store that keeps its records in memory only: a restart loses them. Put is
// durable only for the life of the process. It is for tests and for `state: {memory: true}`.
func NewMemory() Store {
	return &memory{records: map[Kind]map[string][]byte{}}
}

func (m *memory) Put(ctx context.Context, kind Kind, key string, value []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkRecord(kind, key); err != nil {
		return err
	}
	v := slices.Clone(value)
	if v == nil {
		v = []byte{}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	recs := m.records[kind]
	if recs == nil {
		recs = map[string][]byte{}
		m.records[kind] = recs
	}
	recs[key] = v
	return nil
}

func (m *memory) Delete(ctx context.Context, kind Kind, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkRecord(kind, key); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	delete(m.records[kind], key)
	return nil
}

func (m *memory) Get(ctx context.Context, kind Kind, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkRecord(kind, key); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return nil, ErrClosed
	}
	v, ok := m.records[kind][key]
	if !ok {
		return nil, ErrNotFound
	}
	return slices.Clone(v), nil
}

// List copies the records of kind first, so that fn runs without the lock (and may even call back into
// the store, though the Store contract does not promise it).
func (m *memory) List(ctx context.Context, kind Kind, fn func(key string, value []byte) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if kind == "" {
		return errors.New("state: empty kind")
	}
	m.mu.RLock()
	if m.closed {
		m.mu.RUnlock()
		return ErrClosed
	}
	type record struct {
		key   string
		value []byte
	}
	recs := make([]record, 0, len(m.records[kind]))
	for k, v := range m.records[kind] {
		recs = append(recs, record{k, slices.Clone(v)})
	}
	m.mu.RUnlock()
	for _, r := range recs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(r.key, r.value); err != nil {
			return err
		}
	}
	return nil
}

func (m *memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	m.records = nil
	return nil
}
