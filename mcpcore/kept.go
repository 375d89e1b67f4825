package mcpcore

// The outcomes of completed tools/calls kept for resumed calls (resume.go, docs/adr/0093-kept-results-and-call-ids.md).
//
// One store for the whole bridge (Core.kept), bounded in bytes (KeptResultsPolicy.MaxBytes) and in time
// (KeptResultsPolicy.TTL). A result is kept in its encoded form — the JSON the bridge would send again —
// not as the decoded maps the SDK built, and decoded again only for the resumed call that asks for it.
// Expiry runs on a clock: a timer owned by the store ends every outcome at its TTL whether or not anybody
// calls again. When a new outcome does not fit, the oldest are evicted first; an evicted outcome leaves a
// small mark (its call id, until the outcome's own expiry), so that a resumed call is told its outcome was
// evicted (ErrKeptOutcomeEvicted) rather than that it is unknown, and a new call under that id is refused
// (ErrCallIDUsed) rather than run a second time.

import (
	"container/list"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of KeptResultsPolicy.
const (
	// DefaultKeptResultsBytes fits a small pod: 64 MiB of kept outcomes for the whole bridge.
	DefaultKeptResultsBytes = 64 << 20
	// DefaultKeptResultsTTL is how long a completed call's outcome is kept for a resumed call.
	DefaultKeptResultsTTL = 5 * time.Minute
)

const (
	// keptEntryOverhead is what an entry costs besides its call id and its encoded outcome (the entry, its
	// list element and map slot), counted against the budget.
	keptEntryOverhead = 192
	// maxEvictedMarks bounds the marks of evicted outcomes (each ~ its key and keptEntryOverhead); the
	// oldest mark goes first.
	maxEvictedMarks = 1 << 16
)

// KeptResultsPolicy bounds the outcomes of completed tools/calls kept for resumed calls (Options.KeptResults).
type KeptResultsPolicy struct {
	// MaxBytes bounds the encoded outcomes kept by the whole bridge (default DefaultKeptResultsBytes). An
	// outcome larger than the bound is not kept; otherwise the oldest are evicted to make room.
	MaxBytes int64
	// TTL is how long an outcome is kept (default DefaultKeptResultsTTL).
	TTL time.Duration
}

func (p KeptResultsPolicy) withDefaults() KeptResultsPolicy {
	if p.MaxBytes <= 0 {
		p.MaxBytes = DefaultKeptResultsBytes
	}
	if p.TTL <= 0 {
		p.TTL = DefaultKeptResultsTTL
	}
	return p
}

// KeptStats describe the kept outcomes (Core.KeptStats).
type KeptStats struct {
	Outcomes int    // outcomes kept now
	Bytes    int64  // what they cost, counted against KeptResultsPolicy.MaxBytes
	Evicted  uint64 // outcomes evicted to make room for newer ones, since New
	Expired  uint64 // outcomes that reached their TTL, since New
	Refused  uint64 // outcomes too large for the whole budget, not kept, since New
}

// keptOutcome is the outcome of a completed tools/call, for a resumed call.
type keptOutcome struct {
	result *mcp.CallToolResult
	task   *Task
	err    error
	// unsent: the call ended while it waited for approval, before anything was sent upstream (approval.go):
	// a resumed call is not a repetition, and goes on as a new call (asking for approval again).
	unsent bool
	// digest is the call's callDigest: a call without resume under its id with the same one is the same
	// call delivered again (docs/adr/0106).
	digest string
}

// keptEntry is a kept outcome in its compact form, or the mark of an evicted one (evicted).
type keptEntry struct {
	key     string
	result  []byte // the encoded *mcp.CallToolResult; nil for the other outcomes
	task    *Task
	err     error
	unsent  bool
	digest  string // the call's callDigest, kept by marks too
	evicted bool   // a mark: the outcome was kept and evicted, or too large to keep
	unknown bool   // a mark: the call was in flight when an earlier process died (markUnknown)
	size    int64
	expires time.Time
	elem    *list.Element // in keptResults.live or .marks
}

// keptResults is the bridge-wide store of kept outcomes, by roundKey(session, call id). Safe for
// concurrent use. Its expiry timer is its own: close stops it.
type keptResults struct {
	policy KeptResultsPolicy
	now    func() time.Time

	mu     sync.Mutex            // guards the fields below
	m      map[string]*keptEntry // kept outcomes and evicted marks
	live   list.List             // kept outcomes, oldest (= first to expire: one TTL for all) first
	marks  list.List             // marks of evicted outcomes, oldest first
	bytes  int64                 // of live
	timer  *time.Timer           // armed for the first expiry while anything is kept
	closed bool

	evicted, expired, refused atomic.Uint64
}

func newKeptResults(p KeptResultsPolicy) *keptResults {
	return &keptResults{policy: p.withDefaults(), now: time.Now, m: map[string]*keptEntry{}}
}

// errKeptTooLarge: the outcome does not fit the whole budget.
var errKeptTooLarge = errors.New("outcome larger than the kept results budget")

// add keeps o under key for the TTL, evicting the oldest outcomes to make room. It reports why it did
// not keep it.
func (k *keptResults) add(key string, o *keptOutcome) error {
	e := &keptEntry{key: key, task: o.task, err: o.err, unsent: o.unsent, digest: o.digest}
	size := int64(keptEntryOverhead + 2*len(key))
	if o.result != nil {
		raw, err := json.Marshal(o.result)
		if err != nil {
			return err
		}
		e.result = raw
		size += int64(cap(raw))
	}
	if o.task != nil {
		if raw, err := json.Marshal(o.task); err == nil {
			size += int64(len(raw)) // kept decoded (small unless it carries a result), counted as its encoding
		}
	}
	if o.err != nil {
		size += int64(len(o.err.Error()))
	}
	e.size = size
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return nil
	}
	if size > k.policy.MaxBytes {
		k.refused.Add(1)
		k.markLocked(key, k.now().Add(k.policy.TTL), o.digest) // known, but its outcome is not here
		return errKeptTooLarge
	}
	k.removeLocked(key)
	for k.bytes+size > k.policy.MaxBytes {
		old := k.live.Front().Value.(*keptEntry)
		k.removeLocked(old.key)
		k.markLocked(old.key, old.expires, old.digest)
		k.evicted.Add(1)
	}
	e.expires = k.now().Add(k.policy.TTL)
	e.elem = k.live.PushBack(e)
	k.m[key] = e
	k.bytes += size
	k.armLocked()
	return nil
}

// markLocked leaves the mark of an outcome that is not kept under key until expires.
func (k *keptResults) markLocked(key string, expires time.Time, digest string) {
	k.removeLocked(key)
	if k.marks.Len() >= maxEvictedMarks {
		k.removeLocked(k.marks.Front().Value.(*keptEntry).key)
	}
	e := &keptEntry{key: key, evicted: true, expires: expires, digest: digest}
	e.elem = k.marks.PushBack(e)
	k.m[key] = e
	k.armLocked()
}

// markUnknown records that a call is known, its outcome not: it was in flight when an earlier process
// died (Core.Restore found a request it raised). A call without Resume under its id is refused; a resumed
// one is answered as ADR 0022 says of an unknown outcome.
func (k *keptResults) markUnknown(key string) { k.markUnknownUntil(key, k.now().Add(k.policy.TTL), "") }

// markUnknownUntil is markUnknown until expires (a call's record says when it began: callBegins).
func (k *keptResults) markUnknownUntil(key string, expires time.Time, digest string) {
	k.markUntil(key, expires, digest, true)
}

// markUntil leaves the mark of a call that is known and whose outcome is not here until expires, unless
// anything is kept under key already: unknown (its outcome was never had), or evicted.
func (k *keptResults) markUntil(key string, expires time.Time, digest string, unknown bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed || k.m[key] != nil {
		return
	}
	k.markLocked(key, expires, digest)
	if unknown {
		k.m[key].evicted, k.m[key].unknown = false, true
	}
}

// markEvictedUntil records that a call completed and its outcome is not kept here, until expires: it
// completed in an earlier process, whose memory had its outcome (callids.go). A call without Resume under
// its id is refused; a resumed one is told its outcome was evicted.
func (k *keptResults) markEvictedUntil(key string, expires time.Time, digest string) {
	k.markUntil(key, expires, digest, false)
}

// removeLocked drops what is kept under key.
func (k *keptResults) removeLocked(key string) {
	e := k.m[key]
	if e == nil {
		return
	}
	delete(k.m, key)
	if e.evicted || e.unknown {
		k.marks.Remove(e.elem)
		return
	}
	k.live.Remove(e.elem)
	k.bytes -= e.size
}

// get returns the outcome kept under key; evicted reports that it was kept and evicted (or too large to
// keep); ok that anything is known of it (o is nil for a call known by markUnknown).
func (k *keptResults) get(key string) (o *keptOutcome, evicted, ok bool) {
	k.mu.Lock()
	e := k.m[key]
	if e != nil && !k.now().Before(e.expires) {
		e = nil // expired: the timer is about to drop it
	}
	k.mu.Unlock()
	switch {
	case e == nil:
		return nil, false, false
	case e.evicted:
		return nil, true, true
	case e.unknown:
		return nil, false, true
	}
	o = &keptOutcome{task: e.task, err: e.err, unsent: e.unsent, digest: e.digest}
	if e.result != nil {
		o.result = new(mcp.CallToolResult)
		if err := json.Unmarshal(e.result, o.result); err != nil {
			// Encoded by the bridge itself a moment ago: not expected. Said as the server's bad message.
			return &keptOutcome{err: errors.Join(ErrBadMessage, err)}, false, true
		}
	}
	return o, false, true
}

// digest reports whether anything is known of key (an outcome, or a mark) and the call's digest ("" when
// none is known: a mark from a record written before digests, or a request's origin call).
func (k *keptResults) digest(key string) (string, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	e := k.m[key]
	if e == nil || !k.now().Before(e.expires) {
		return "", false
	}
	return e.digest, true
}

// armLocked arms the timer for the first expiry, if it is not armed and anything is kept.
func (k *keptResults) armLocked() {
	if k.timer != nil || k.closed {
		return
	}
	first, ok := k.firstExpiryLocked()
	if !ok {
		return
	}
	// The timer's function is the store's only background work; it ends when it returns, and close stops
	// the timer.
	k.timer = time.AfterFunc(max(first.Sub(k.now()), 0), k.expire)
}

func (k *keptResults) firstExpiryLocked() (time.Time, bool) {
	var first time.Time
	for _, l := range []*list.List{&k.live, &k.marks} {
		if f := l.Front(); f != nil {
			if t := f.Value.(*keptEntry).expires; first.IsZero() || t.Before(first) {
				first = t
			}
		}
	}
	return first, !first.IsZero()
}

// expire drops what reached its TTL and arms the timer for the next expiry.
func (k *keptResults) expire() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.timer = nil
	now := k.now()
	for _, l := range []*list.List{&k.live, &k.marks} {
		for f := l.Front(); f != nil && !now.Before(f.Value.(*keptEntry).expires); f = l.Front() {
			e := f.Value.(*keptEntry)
			if !e.evicted && !e.unknown {
				k.expired.Add(1)
			}
			k.removeLocked(e.key)
		}
	}
	k.armLocked()
}

// close drops everything and stops the timer. Idempotent.
func (k *keptResults) close() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.closed = true
	if k.timer != nil {
		k.timer.Stop()
		k.timer = nil
	}
	k.m = map[string]*keptEntry{}
	k.live.Init()
	k.marks.Init()
	k.bytes = 0
}

func (k *keptResults) stats() KeptStats {
	k.mu.Lock()
	defer k.mu.Unlock()
	return KeptStats{Outcomes: k.live.Len(), Bytes: k.bytes, Evicted: k.evicted.Load(), Expired: k.expired.Load(), Refused: k.refused.Load()}
}

// KeptStats describes the outcomes kept for resumed calls.
func (c *Core) KeptStats() KeptStats { return c.kept.stats() }
