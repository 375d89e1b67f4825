// Package state is the bridge's durable state: what it told a host it holds — a session, a pending
// question, an accepted answer, a multi round-trip call between rounds, a task handle, an OAuth grant —
// kept outside the process so that it outlives a crash, kill -9, an upgrade or (with a shared engine) the
// replica that wrote it. docs/adr/0020-state-store.md records the design.
//
// The core writes a record when the thing it describes changes, never per message — but for the id of a
// tools/call with a host call id while it is in flight (docs/adr/0099-call-ids-outlive-a-crash.md). Records are opaque bytes to an engine; Sealed encrypts them (AES-256-GCM) before any
// engine sees them, so every engine keeps them encrypted at rest.
//
// Engines: Memory (no durability: tests and `state: {memory: true}`), the embedded file engine (OpenFile,
// one bridge, a local file), and — for replicas — Redis (issue 22).
package state

import (
	"context"
	"errors"
)

// Kind is a family of records. Each kind is a separate key space.
type Kind string

// The kinds the bridge keeps.
const (
	// KindSession: one record per open session, by session id.
	KindSession Kind = "sessions"
	// KindRequest: one record per pending server request (and per ended one whose accepted answer has not
	// reached the server yet), by request id.
	KindRequest Kind = "requests"
	// KindCall: one record per multi round-trip call between rounds (and per resumable call), by
	// "<session id>/<call id>".
	KindCall Kind = "calls"
	// KindTask: one record per task handle, by "<session id>/<task id>".
	KindTask Kind = "tasks"
	// KindGrant: the upstream OAuth grants (the former oauth.tokenStoreFile), by grant key.
	KindGrant Kind = "grants"
)

// Kinds lists every kind, for engines that create their key spaces up front.
var Kinds = []Kind{KindSession, KindRequest, KindCall, KindTask, KindGrant}

// ErrNotFound is Get's error for a record that does not exist.
var ErrNotFound = errors.New("state: record not found")

// Store keeps records by kind and key. Implementations are safe for concurrent use. Every method honours
// ctx (an engine that cannot be interrupted returns once the operation is done). Errors name the engine and
// what failed, never a record's value.
type Store interface {
	// Put writes the record kind/key, replacing any earlier value. When Put returns nil the record is
	// durable: it survives a kill -9 of the process right afterwards.
	Put(ctx context.Context, kind Kind, key string, value []byte) error
	// Delete removes the record kind/key; removing a missing record is not an error.
	Delete(ctx context.Context, kind Kind, key string) error
	// Get returns the record kind/key, or ErrNotFound.
	Get(ctx context.Context, kind Kind, key string) ([]byte, error)
	// List calls fn for every record of kind, in no particular order, until fn returns an error (which
	// List returns). fn must not call back into the store. The value is valid only during the call.
	List(ctx context.Context, kind Kind, fn func(key string, value []byte) error) error
	// Close releases the store (the file lock of the embedded engine). It is idempotent.
	Close() error
}
