package mcpcore

// The call ids of tools/calls kept in the store (docs/adr/0099-call-ids-outlive-a-crash.md): a tools/call
// with a host-chosen id writes its record before it is sent upstream (callBegins); when it has an outcome a
// resumed call can get (kept.go) the record is rewritten as completed and stays in the store for the kept
// results' TTL (callEnds), so that after a kill -9 the next process still knows the id and does not run the
// call a second time. callIDRecords deletes such records when their TTL ends — on a clock, not on the next
// use — and with their session. The schedule is the core's (one heap, one timer); which records belong to a
// session is the session's (Session.callIDs), so that they go with it.

import (
	"container/heap"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcp-bridge/mcp-bridge/internal/state"
)

// callBegins writes the record of a tools/call with a host-chosen id before it is sent upstream, so that
// the id outlives the process (docs/adr/0099): after a kill -9 the next process (or the replica that takes
// the session over) finds it, and a call under that id without resume is refused ErrCallIDUsed instead of
// running the tool a second time; with resume its outcome is unknown (ADR 0022). The MRTR round record of
// the same call, if it has one, is written under the same key over it. It reports whether it wrote.
//
// A write refused because this replica no longer holds the session (another took it over: ErrNotHeld,
// state.ErrFenced) fails the call with ErrSessionMoved before anything is sent: the host retries through
// the proxy, resuming by id. Any other failure of the store is logged and the call goes on, as every write
// of the core does (the store's health says so).
func (r *sessionRecords) callBegins(call *activeCall) (bool, error) {
	s := r.s
	if s.core.opts.Store == nil || call.opts.CallID == "" || call.opts.MintedID {
		return false, nil // no state kept, or an id no host can call again
	}
	key := roundKey(s.id, call.id)
	b, err := json.Marshal(inFlightRecord(s.id, call))
	if err != nil {
		return false, err
	}
	ctx, cancel := storeCtx()
	defer cancel()
	switch err := s.core.opts.Store.Put(ctx, state.KindCall, key, b); {
	case errors.Is(err, state.ErrNotHeld) || errors.Is(err, state.ErrFenced):
		return false, fmt.Errorf("%w: this replica no longer holds the session (%v)", ErrSessionMoved, err)
	case err != nil:
		s.logger.Warn("the call's id is not kept in the state store: a call under it after a crash may run again", "call_id", call.id, "error", err)
	}
	if call.resume != nil {
		call.resume.mu.Lock()
		call.resume.idKept = true
		call.resume.mu.Unlock()
	}
	return true, nil
}

// inFlightRecord is the record of a tools/call in flight upstream that has no round: its id, no arguments.
func inFlightRecord(sessionID string, call *activeCall) callRecord {
	created := time.Now()
	if call.resume != nil {
		created = call.resume.rec.Created
	}
	return callRecord{Version: recordVersion, SessionID: sessionID, CallID: call.id, Method: call.method, Name: call.name, Digest: call.digest.get(), InFlight: true, Created: created}
}

// callEnds settles the record of a call whose id is kept in the store (callBegins, or a resumed round)
// once the call ended: when its outcome is kept for a resumed call (keptOutcome) the record is rewritten as
// completed and stays until the kept results' TTL ends (callIDRecords deletes it then, or with the
// session); otherwise — the call was cut off and its fate is unknown, as it is to this process — it is
// deleted. When the bridge is shutting down or the session ended, the record is left or deleted as the
// session's are.
func (r *sessionRecords) callEnds(call *activeCall, keptOutcome bool) {
	s := r.s
	if call.resume == nil {
		return
	}
	call.resume.mu.Lock()
	idKept := call.resume.idKept
	call.resume.idKept = false
	call.resume.mu.Unlock()
	if !idKept {
		return
	}
	key := roundKey(s.id, call.id)
	switch {
	case s.core.keeping() && !keptOutcome:
		return // in flight for the next process: its outcome is unknown there
	case !keptOutcome || (s.ctx.Err() != nil && !s.core.keeping()):
		s.core.del(state.KindCall, key)
		return
	}
	rec := inFlightRecord(s.id, call)
	rec.Ended = time.Now()
	s.core.put(state.KindCall, key, rec)
	s.core.callIDs.add(s, call.id, rec.Ended.Add(s.core.kept.policy.TTL))
}

// callIDRecords deletes the records of call ids (callEnds, and those Restore found) when the kept
// results' TTL ends, on a timer of its own, or when their session ends (takeSession). Safe for concurrent
// use; close stops the timer and waits for a deletion under way.
//
// mu guards the heap and every session's sessionCallIDs: a record is in its session's set exactly while it is
// scheduled and not taken, and no map keyed by session id holds it.
type callIDRecords struct {
	del func(key string) // deletes a record from the store

	mu      sync.Mutex
	h       callIDHeap
	timer   *time.Timer
	closed  bool
	running sync.WaitGroup // the timer's function while it runs
}

// sessionCallIDs are the scheduled call-id records of one session, by call id (Session.callIDs). Guarded by
// Core.callIDs.mu.
type sessionCallIDs struct {
	m map[string]*callIDItem
}

type callIDItem struct {
	s       *Session
	callID  string
	expires time.Time
	gone    bool // taken with its session: skipped when it reaches the top of the heap
}

type callIDHeap []*callIDItem

func (h callIDHeap) Len() int           { return len(h) }
func (h callIDHeap) Less(i, j int) bool { return h[i].expires.Before(h[j].expires) }
func (h callIDHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *callIDHeap) Push(x any)        { *h = append(*h, x.(*callIDItem)) }
func (h *callIDHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return it
}

func newCallIDRecords(del func(key string)) *callIDRecords {
	return &callIDRecords{del: del}
}

// add schedules the deletion of the record of call callID of session s at expires.
func (r *callIDRecords) add(s *Session, callID string, expires time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	calls := &s.callIDs
	if calls.m == nil {
		calls.m = map[string]*callIDItem{}
	}
	if old := calls.m[callID]; old != nil {
		old.gone = true
	}
	it := &callIDItem{s: s, callID: callID, expires: expires}
	calls.m[callID] = it
	heap.Push(&r.h, it)
	r.armLocked()
}

// takeSession removes the records of a session's calls from the schedule and returns their call ids: the
// session ended, and its records go with it.
func (r *callIDRecords) takeSession(s *Session) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for callID, it := range s.callIDs.m {
		it.gone = true
		out = append(out, callID)
	}
	s.callIDs.m = nil
	return out
}

// scheduled is how many call-id records of s are scheduled.
func (r *callIDRecords) scheduled(s *Session) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(s.callIDs.m)
}

func (r *callIDRecords) armLocked() {
	if r.timer != nil || r.closed || len(r.h) == 0 {
		return
	}
	r.running.Add(1)
	r.timer = time.AfterFunc(time.Until(r.h[0].expires), r.expire)
}

// expire deletes the records whose TTL ended and arms the timer for the next.
func (r *callIDRecords) expire() {
	defer r.running.Done()
	r.mu.Lock()
	r.timer = nil
	now := time.Now()
	var keys []string
	for len(r.h) > 0 && !now.Before(r.h[0].expires) {
		it := heap.Pop(&r.h).(*callIDItem)
		if it.gone {
			continue
		}
		keys = append(keys, roundKey(it.s.id, it.callID))
		delete(it.s.callIDs.m, it.callID)
	}
	r.armLocked()
	r.mu.Unlock()
	for _, k := range keys {
		r.del(k)
	}
}

// close stops the timer and waits for a deletion under way. The records stay in the store: the next
// process schedules them again (Restore). Idempotent.
func (r *callIDRecords) close() {
	r.mu.Lock()
	r.closed = true
	if r.timer != nil && r.timer.Stop() {
		r.running.Done()
	}
	r.timer = nil
	r.mu.Unlock()
	r.running.Wait()
}
