package mcpcore

// Approvals (docs/adr/0080-approvals.md): a tool call that the server's policy says needs approval waits,
// before anything is sent upstream, for a person other than the caller to approve it. The call becomes a
// pending request of KindApproval in the caller's session, bound to the exact call — caller, server, tool, the
// arguments in a canonical JSON form and their SHA-256 digest, the policy rule that matched — with an expiry.
//
// Visibility. An approval request's Owner stays the caller (it counts against the caller's session, ends with
// it, and is kept with it), but it is shown to, and decided by, its Approvers only: the dispatcher's owner
// check (visibleTo) admits the approvers for KindApproval and nobody else — not the caller unless
// Approvers.AllowSelf says so. It is not published on the session's own event stream (the caller's host would
// be shown a request it may not decide); receivers read it from the dispatcher's feed (Dispatcher.Watch) and
// Dispatcher.ListApprovals.
//
// Only an approval sends the call upstream, and then with exactly the arguments that were approved: the
// canonical form is what is sent, and its digest is checked again right before sending. A denial fails the
// call with ErrApprovalDenied, the expiry with ErrApprovalExpired, the caller giving up ends the request with
// OutcomeCallEnded.
//
// Durability. Pending approval requests are kept in the state store like any pending request (durable.go); an
// approval answered but whose call has not been sent yet is kept with its answer. After a restart Core.Restore
// re-raises a pending approval under its id (restoreApproval); the caller's retry with the same call id
// resumes the call: it must carry the same tool and arguments (same digest) — else ErrApprovalArgumentsChanged
// — and it waits for the decision, and on approval sends the approved arguments.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mcp-bridge/mcp-bridge/internal/state"
	"github.com/mcp-bridge/mcp-bridge/internal/untrusted"
)

// DefaultApprovalExpiry is how long an approval request waits for a decision when ApprovalPolicy.Expiry is
// not set.
const DefaultApprovalExpiry = 10 * time.Minute

// maxApprovalReason bounds the reason of a decision, in bytes.
const maxApprovalReason = 4096

// ApprovalPolicy says which tools of a server need approval, who may approve, and for how long a request
// waits. It is part of the server's Policy.
type ApprovalPolicy struct {
	// Tools are globs (as in Filter) of the tool names whose calls need approval.
	Tools []string
	// Approvers may decide the server's approval requests.
	Approvers Approvers
	// Expiry is how long a request waits for a decision (DefaultApprovalExpiry when 0).
	Expiry time.Duration
}

// Approvers names who may decide an approval request: a principal matching one of Principals (globs), or an
// identity in a group matching one of Groups (globs). The caller itself never may, unless AllowSelf.
type Approvers struct {
	Principals []string `json:"principals,omitempty"`
	Groups     []string `json:"groups,omitempty"`
	AllowSelf  bool     `json:"allowSelf,omitempty"`
}

// Identity is who acts on a pending request: a principal, and the groups its identity provider put it in.
type Identity struct {
	Principal string
	Groups    []string
}

// Admits reports whether who may decide an approval request of caller.
func (a *Approvers) Admits(caller string, who Identity) bool {
	if a == nil || who.Principal == "" {
		return false
	}
	if who.Principal == caller && !a.AllowSelf {
		return false
	}
	if matchAny(a.Principals, who.Principal) {
		return true
	}
	for _, g := range who.Groups {
		if matchAny(a.Groups, g) {
			return true
		}
	}
	return false
}

// ApprovalRequest is the payload of a KindApproval pending request: the call waiting for approval.
type ApprovalRequest struct {
	// Caller is the principal that made the call (the session's owner).
	Caller string
	// Server is the configured server's name, Tool the tool called.
	Server string
	Tool   string
	// Arguments are the call's arguments in canonical JSON (CanonicalJSON): exactly what is sent upstream
	// once approved.
	Arguments json.RawMessage
	// Digest is the lower-case hex SHA-256 of Arguments.
	Digest string
	// Rule is the approval pattern of the server's policy that matched the tool.
	Rule string
	// Approvers may decide it (the policy's, when the request was raised or restored).
	Approvers Approvers
	// Warnings are what the untrusted-text inspection found in the tool name ("tool") and the arguments
	// ("arguments.amount", keys and values): shown to every approver, with the request (docs/adr/0091).
	Warnings []untrusted.Finding `json:",omitempty"`
}

// inspectApproval returns the untrusted-text findings of an approval request's tool and arguments.
func inspectApproval(tool string, canon []byte) []untrusted.Finding {
	var r untrusted.Report
	r.String("tool", tool)
	_ = r.JSON("arguments", canon) // canonical JSON: valid
	return r.Findings
}

// ApprovalAnswer is an approver's decision.
type ApprovalAnswer struct {
	// Approve is true to let the call go upstream, false to deny it.
	Approve bool
	// Reason says why (shown to the caller on a denial, and audited).
	Reason string
	// Digest must equal the request's Digest when approving: the approver approves the arguments it saw.
	Digest string
	// DecidedBy is the approver's principal; the dispatcher sets it (decidedBy).
	DecidedBy string `json:",omitempty"`
}

// decidedBy returns a, an answer (or a cancel's answer) of who to req, with the approver named; an approver's
// error answer becomes a denial with the error's message as its reason. Other kinds' answers are unchanged.
func decidedBy(req *PendingRequest, a Answer, who Identity) Answer {
	if req.Kind != KindApproval {
		return a
	}
	var ap ApprovalAnswer
	switch {
	case a.Approval != nil:
		ap = *a.Approval
	case a.Error != nil:
		ap = ApprovalAnswer{Reason: a.Error.Message}
	default:
		return a
	}
	ap.DecidedBy = who.Principal
	return Answer{Approval: &ap}
}

// ApprovalError is the error of a call whose approval request was denied or expired: it matches
// ErrApprovalDenied or ErrApprovalExpired, and says which request, rule, approver and reason.
type ApprovalError struct {
	Err       error // ErrApprovalDenied or ErrApprovalExpired
	RequestID string
	Rule      string
	DecidedBy string // the approver that denied it; empty for an expiry or an unknown approver
	Reason    string // the approver's reason (a denial)
	Expires   time.Time
}

func (e *ApprovalError) Error() string {
	if e.Err == ErrApprovalExpired {
		return fmt.Sprintf("%v: request %s expired at %s", e.Err, e.RequestID, e.Expires.UTC().Format(time.RFC3339))
	}
	by := ""
	if e.DecidedBy != "" {
		by = " (" + e.DecidedBy + ")"
	}
	return fmt.Sprintf("%v%s: %s", e.Err, by, e.Reason)
}

func (e *ApprovalError) Unwrap() error { return e.Err }

func denied(req *PendingRequest, a Answer) error {
	by := ""
	if a.Approval != nil {
		by = a.Approval.DecidedBy
	}
	return &ApprovalError{Err: ErrApprovalDenied, RequestID: req.ID, Rule: req.Approval.Rule, DecidedBy: by, Reason: denialReason(a), Expires: req.Deadline}
}

// validateApprovalAnswer checks an approver's decision against its request.
func validateApprovalAnswer(req *ApprovalRequest, a *ApprovalAnswer) []FieldViolation {
	var vs []FieldViolation
	if len(a.Reason) > maxApprovalReason {
		vs = append(vs, FieldViolation{Field: "reason", Description: fmt.Sprintf("longer than %d bytes", maxApprovalReason)})
	} else if !utf8.ValidString(a.Reason) {
		vs = append(vs, FieldViolation{Field: "reason", Description: "not valid UTF-8"})
	}
	switch {
	case a.Approve && a.Digest == "":
		vs = append(vs, FieldViolation{Field: "arguments_sha256", Description: "required when approving: the arguments_sha256 of the request approved"})
	case a.Digest != "" && (req == nil || a.Digest != req.Digest):
		vs = append(vs, FieldViolation{Field: "arguments_sha256", Description: "does not match the request's arguments_sha256: the arguments approved are not the call's"})
	}
	return vs
}

// approvalRule returns the approval pattern that tool matches, or "".
func (p *Policy) approvalRule(tool string) string {
	if p == nil || p.Approval == nil {
		return ""
	}
	for _, pat := range p.Approval.Tools {
		if Glob(pat, tool) {
			return pat
		}
	}
	return ""
}

// ApprovalRule returns the approval pattern of p that tool matches, or "" when its calls need no approval.
func (p *Policy) ApprovalRule(tool string) string { return p.approvalRule(tool) }

// NeedsApproval reports whether calls of tool need approval under p.
func (p *Policy) NeedsApproval(tool string) bool { return p.approvalRule(tool) != "" }

// visibleTo reports whether who may see (and answer) req: its owner for every kind but KindApproval, which
// only its approvers see.
func visibleTo(req *PendingRequest, who Identity) bool {
	if req.Kind == KindApproval {
		return req.Approval != nil && req.Approval.Approvers.Admits(req.Owner, who)
	}
	return req.Owner == who.Principal
}

// ListApprovals returns the pending approval requests who may decide, oldest first. The returned requests are
// shared and must not be modified.
func (d *Dispatcher) ListApprovals(who Identity) []*PendingRequest {
	d.mu.Lock()
	var out []*PendingRequest
	for _, e := range d.pending {
		if e.req.Kind == KindApproval && visibleTo(e.req, who) {
			out = append(out, e.req)
		}
	}
	d.mu.Unlock()
	slices.SortFunc(out, compareRequests)
	return out
}

// ApprovalFilter is the RequestFilter of the approval requests who may decide.
func ApprovalFilter(who Identity) RequestFilter {
	return func(pr *PendingRequest) bool { return pr.Kind == KindApproval && visibleTo(pr, who) }
}

// approvalCancelAnswer is what a host's Cancel of an approval request means: a denial.
func approvalCancelAnswer(reason string) Answer {
	r := "cancelled by an approver"
	if reason != "" {
		r += ": " + reason
	}
	return Answer{Approval: &ApprovalAnswer{Reason: r}}
}

// --- the call's side ---

// approve runs the approval of a tools/call when the server's policy asks for one: it returns the arguments
// to send (the approved canonical form) or why the call must not be sent. Without a matching rule it returns
// args unchanged. ra is the call's approval restored after a restart, if any. The call's request deadline
// does not run while it waits: a person, not the server, is being waited for.
func (s *Session) approve(ctx context.Context, call *activeCall, tool string, args any, ra *restoredApproval) (any, error) {
	rule := s.policy().approvalRule(tool)
	if rule == "" && ra == nil {
		return args, nil
	}
	canon, err := CanonicalJSON(rawArguments(args))
	if err != nil {
		return nil, &InvalidError{Err: errInvalidArguments, Violations: []FieldViolation{{Field: "arguments", Description: err.Error()}}}
	}
	digest := digestOf(canon)
	call.deadline.pause()
	defer call.deadline.resume()
	c := s.core
	var (
		req     *PendingRequest
		answer  Answer
		outcome Outcome
	)
	if ra != nil {
		// A call resumed after a restart: the retry must be the call that was (or is being) approved.
		if ra.req.Approval.Tool != tool || ra.req.Approval.Digest != digest {
			s.restoredApprovals.put(ra.req.OriginCallID, ra) // the right retry may still come
			return nil, fmt.Errorf("%w: call %s was submitted for approval as tool %q with arguments_sha256 %s; this retry has tool %q with arguments_sha256 %s",
				ErrApprovalArgumentsChanged, call.id, ra.req.Approval.Tool, ra.req.Approval.Digest, tool, digest)
		}
		req = ra.req
		if answer, outcome, err = ra.wait(ctx, c.dispatcher); err != nil {
			return nil, err
		}
	} else {
		p := s.policy().Approval
		expiry := p.Expiry
		if expiry <= 0 {
			expiry = DefaultApprovalExpiry
		}
		now := time.Now()
		req = &PendingRequest{
			ID: newRequestID(), SessionID: s.id, Owner: s.owner, OriginCallID: call.id, OriginMethod: "tools/call", OriginName: tool,
			Kind: KindApproval, Created: now, Deadline: now.Add(expiry),
			Approval: &ApprovalRequest{Caller: s.owner, Server: s.server.Name, Tool: tool, Arguments: canon, Digest: digest, Rule: rule, Approvers: p.Approvers,
				Warnings: inspectApproval(tool, canon)},
		}
		// The approver's host continues the call's trace (ServerRequest.trace_context), as for any request.
		endSpan := s.ops.traceServerRequest(ctx, req, call)
		// The caller giving up (its context ends) ends the request with OutcomeCallEnded.
		actx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
		stop := context.AfterFunc(ctx, func() { cancel(errCallEnded) })
		answer, outcome, err = c.dispatcher.submit(actx, req, nil)
		stop()
		cancel(nil)
		endSpan(outcome)
		if err != nil {
			return nil, err
		}
	}
	c.history.add(c.tuned().approvalHistory, req, answer, outcome, c.draining.Load())
	switch outcome {
	case OutcomeAnswered:
	case OutcomeCancelledByHost:
		return nil, denied(req, answer)
	case OutcomeTimedOut:
		return nil, &ApprovalError{Err: ErrApprovalExpired, RequestID: req.ID, Rule: req.Approval.Rule, Expires: req.Deadline}
	case OutcomeCallEnded:
		if ctx.Err() != nil {
			return nil, &unsentError{ctxError(ctx)}
		}
		return nil, &unsentError{fmt.Errorf("%w: approval request %s ended: %s", context.Canceled, req.ID, outcome)}
	default: // OutcomeSessionClosed (the session closed, or the bridge is draining)
		if c.draining.Load() {
			// A restart: the request is kept (durable.go), and the caller's retry with this call id resumes it.
			return nil, &unsentError{fmt.Errorf("%w: approval request %s is kept for the next process: call again with call id %s", ErrShuttingDown, req.ID, call.id)}
		}
		if s.ctx.Err() != nil {
			return nil, &unsentError{s.closedError()}
		}
		return nil, &unsentError{fmt.Errorf("%w: approval request %s ended: %s", ErrSessionClosed, req.ID, outcome)}
	}
	// The decision is consumed (kept until now for a retry after a restart): a restart from here on asks again.
	c.del(state.KindRequest, req.ID)
	if answer.Approval == nil || !answer.Approval.Approve {
		return nil, denied(req, answer)
	}
	// Right before sending: what goes upstream is what was approved.
	if d := digestOf(req.Approval.Arguments); d != req.Approval.Digest || answer.Approval.Digest != req.Approval.Digest {
		return nil, fmt.Errorf("%w: the digest of the arguments to send (%s) is not the approved one (%s)", ErrApprovalArgumentsChanged, d, answer.Approval.Digest)
	}
	return req.Approval.Arguments, nil
}

// unsentError is the error of a call that ended while it waited for approval, before anything was sent
// upstream: resume.go remembers that a retry of it is not a repetition. It reads and matches as the error it
// wraps.
type unsentError struct{ err error }

func (e *unsentError) Error() string { return e.err.Error() }
func (e *unsentError) Unwrap() error { return e.err }

// approvalOutcome reports whether err is the definitive end of a call that needed approval — denied or
// expired: nothing was sent upstream, and a resumed call returns the same (resume.go keeps it).
func approvalOutcome(err error) bool {
	return errors.Is(err, ErrApprovalDenied) || errors.Is(err, ErrApprovalExpired)
}

// denialReason is what a denied caller is told.
func denialReason(a Answer) string {
	switch {
	case a.Approval != nil && a.Approval.Reason != "":
		return a.Approval.Reason
	case a.Error != nil:
		return a.Error.Message
	}
	return "no reason given"
}

// rawArguments returns the JSON of args as toolArguments left them (json.RawMessage or an empty map).
func rawArguments(args any) []byte {
	if raw, ok := args.(json.RawMessage); ok {
		return raw
	}
	b, err := json.Marshal(args)
	if err != nil {
		return nil
	}
	return b
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// --- the history ---

// ApprovalHistoryLimits bound the history of approval requests that ended (Options.ApprovalHistory).
type ApprovalHistoryLimits struct {
	// Max is the number of records kept (the oldest go first); 0 means DefaultApprovalHistoryMax.
	Max int
	// MaxAge is how long a record is kept; 0 means DefaultApprovalHistoryAge.
	MaxAge time.Duration
}

// Defaults of ApprovalHistoryLimits.
const (
	DefaultApprovalHistoryMax = 1000
	DefaultApprovalHistoryAge = 24 * time.Hour
)

// ApprovalOutcome is how an approval request ended, in the history.
type ApprovalOutcome int

// Outcomes of approval requests.
const (
	ApprovalApproved ApprovalOutcome = iota + 1
	ApprovalDenied
	ApprovalExpired
	ApprovalWithdrawn     // the caller gave up first
	ApprovalSessionClosed // the session closed, or the bridge drained, first
)

// ApprovalRecord is one approval request that ended, as the history keeps it: in memory, bounded, lost on a
// restart (the audit log is the durable record).
type ApprovalRecord struct {
	RequestID, SessionID, CallID string
	Request                      ApprovalRequest // Arguments left out: the history keeps no payloads
	Outcome                      ApprovalOutcome
	DecidedBy, Reason            string
	Created, Ended, Expires      time.Time
}

// approvalHistory is the bounded history of approval requests that ended. The zero value is ready.
type approvalHistory struct {
	mu      sync.Mutex       // guards records
	records []ApprovalRecord // oldest first
}

// add records the end of req, and drops what the limits no longer admit.
func (h *approvalHistory) add(lim ApprovalHistoryLimits, req *PendingRequest, a Answer, o Outcome, draining bool) {
	rec := ApprovalRecord{RequestID: req.ID, SessionID: req.SessionID, CallID: req.OriginCallID, Request: *req.Approval,
		Created: req.Created, Ended: time.Now(), Expires: req.Deadline}
	rec.Request.Arguments = nil
	switch o {
	case OutcomeAnswered, OutcomeCancelledByHost:
		rec.Outcome = ApprovalDenied
		if a.Approval != nil {
			rec.DecidedBy = a.Approval.DecidedBy
			if a.Approval.Approve && o == OutcomeAnswered {
				rec.Outcome = ApprovalApproved
			}
		}
		if rec.Outcome == ApprovalDenied {
			rec.Reason = denialReason(a)
		} else if a.Approval != nil {
			rec.Reason = a.Approval.Reason
		}
	case OutcomeTimedOut:
		rec.Outcome, rec.Reason = ApprovalExpired, "expired at "+req.Deadline.UTC().Format(time.RFC3339)
	case OutcomeCallEnded:
		rec.Outcome, rec.Reason = ApprovalWithdrawn, "the caller gave up before a decision"
	default:
		if draining {
			return // kept in the store, and asked again after the restart
		}
		rec.Outcome, rec.Reason = ApprovalSessionClosed, "the session closed before a decision"
	}
	limit, age := lim.Max, lim.MaxAge
	if limit <= 0 {
		limit = DefaultApprovalHistoryMax
	}
	if age <= 0 {
		age = DefaultApprovalHistoryAge
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, rec)
	drop := max(0, len(h.records)-limit)
	for drop < len(h.records) && time.Since(h.records[drop].Ended) > age {
		drop++
	}
	if drop > 0 {
		h.records = slices.Delete(h.records, 0, drop)
	}
}

// ApprovalHistory returns the approval requests that ended which who may see — as an approver of the
// request (the approvers it had), or as its caller — newest first.
func (c *Core) ApprovalHistory(who Identity) []ApprovalRecord {
	age := c.tuned().approvalHistory.MaxAge
	if age <= 0 {
		age = DefaultApprovalHistoryAge
	}
	c.history.mu.Lock()
	defer c.history.mu.Unlock()
	var out []ApprovalRecord
	for i := len(c.history.records) - 1; i >= 0; i-- {
		r := c.history.records[i]
		if time.Since(r.Ended) > age {
			break
		}
		if (who.Principal != "" && r.Request.Caller == who.Principal) || r.Request.Approvers.Admits(r.Request.Caller, who) {
			out = append(out, r)
		}
	}
	return out
}

// ApprovalHistoryLen is the number of records the history holds (a metric).
func (c *Core) ApprovalHistoryLen() int {
	c.history.mu.Lock()
	defer c.history.mu.Unlock()
	return len(c.history.records)
}

// --- approvals restored after a restart ---

// restoredApproval is an approval request of an earlier process: re-raised and pending (entry), or decided
// before the restart (answer).
type restoredApproval struct {
	req    *PendingRequest
	entry  *pendingEntry // nil when answered before the restart
	answer *Answer
}

// wait returns the decision of a restored approval: the kept answer, or the re-raised request's end. When
// ctx ends first, the request ends with OutcomeCallEnded (no submit waits for a restored request).
func (ra *restoredApproval) wait(ctx context.Context, d *Dispatcher) (Answer, Outcome, error) {
	if ra.entry == nil {
		if ra.answer == nil {
			return Answer{}, 0, fmt.Errorf("%w: approval request %s has no decision", ErrApprovalExpired, ra.req.ID)
		}
		if time.Now().After(ra.req.Deadline) {
			return Answer{}, OutcomeTimedOut, nil
		}
		return *ra.answer, OutcomeAnswered, nil
	}
	e := ra.entry
	select {
	case <-e.done:
	case <-ctx.Done():
		d.finish(e, OutcomeCallEnded, Answer{}, context.Cause(ctx).Error())
		<-e.done
	}
	e.pubMu.Lock()
	e.pubMu.Unlock() //nolint:staticcheck // an empty critical section on purpose: EventRequestEnded is out
	return e.answer, e.outcome, nil
}

// restoreApproval brings back a kept approval request (Core.Restore): re-raised under its id when still
// pending, remembered with its decision when decided, for the caller's retry with the same call id. Its
// approvers are those the server's policy names now, when it still has an approval policy. It reports
// whether the request was re-raised. s is its session, nil when that was not restored.
func (c *Core) restoreApproval(r requestRecord, s *Session) bool {
	req := r.Request
	if req.Approval == nil || req.OriginCallID == "" || s == nil {
		c.dispatcher.endRestored(req, s != nil)
		c.del(state.KindRequest, req.ID)
		return false
	}
	if sc, ok := c.table()[req.Approval.Server]; ok && sc.Policy != nil && sc.Policy.Approval != nil {
		req.Approval.Approvers = sc.Policy.Approval.Approvers
	}
	if r.Answer != nil {
		if time.Now().After(req.Deadline) {
			c.del(state.KindRequest, req.ID)
			return false
		}
		s.restoredApprovals.put(req.OriginCallID, &restoredApproval{req: req, answer: r.Answer})
		return false
	}
	s.restoredApprovals.put(req.OriginCallID, &restoredApproval{req: req, entry: c.dispatcher.restore(req)})
	return true
}

// --- canonical JSON ---

// CanonicalJSON returns the canonical form of the JSON value in b, following RFC 8785 (JSON Canonicalization
// Scheme): no insignificant white space; object members sorted by their names compared as UTF-16 code units;
// strings with only the escapes JCS uses (\" \\ \b \f \n \r \t, and \u00xx in lower-case hex for the other
// control characters) and every other character as UTF-8; numbers as IEEE 754 doubles written the way
// ECMAScript's Number.prototype.toString does (1e21, 0.000001, 1e-7, -0 as 0). Duplicate member names,
// numbers beyond the double range and invalid JSON are errors. An integer with more than 15–17 significant
// digits is written as the double nearest to it, as JCS specifies: what is approved is this form, and it is
// what is sent.
func CanonicalJSON(b []byte) ([]byte, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		b = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var buf bytes.Buffer
	if err := canonValue(dec, &buf, 0); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON value")
	}
	return buf.Bytes(), nil
}

// maxCanonDepth bounds nesting, as the SDK's and the gateway's decoders do.
const maxCanonDepth = 1000

func canonValue(dec *json.Decoder, buf *bytes.Buffer, depth int) error {
	if depth > maxCanonDepth {
		return errors.New("nested too deeply")
	}
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("not valid JSON: %v", err)
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			type member struct {
				key string
				val []byte
			}
			var ms []member
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return fmt.Errorf("not valid JSON: %v", err)
				}
				k, _ := kt.(string)
				if seen[k] {
					return fmt.Errorf("duplicate member %q", k)
				}
				seen[k] = true
				var vb bytes.Buffer
				if err := canonValue(dec, &vb, depth+1); err != nil {
					return err
				}
				ms = append(ms, member{k, vb.Bytes()})
			}
			if _, err := dec.Token(); err != nil {
				return fmt.Errorf("not valid JSON: %v", err)
			}
			slices.SortFunc(ms, func(a, b member) int { return compareUTF16(a.key, b.key) })
			buf.WriteByte('{')
			for i, m := range ms {
				if i > 0 {
					buf.WriteByte(',')
				}
				canonString(buf, m.key)
				buf.WriteByte(':')
				buf.Write(m.val)
			}
			buf.WriteByte('}')
		case '[':
			buf.WriteByte('[')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					buf.WriteByte(',')
				}
				if err := canonValue(dec, buf, depth+1); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil {
				return fmt.Errorf("not valid JSON: %v", err)
			}
			buf.WriteByte(']')
		}
	case string:
		canonString(buf, t)
	case json.Number:
		s, err := canonNumber(string(t))
		if err != nil {
			return err
		}
		buf.WriteString(s)
	case bool:
		buf.WriteString(strconv.FormatBool(t))
	case nil:
		buf.WriteString("null")
	}
	return nil
}

// compareUTF16 orders strings by their UTF-16 code units (RFC 8785 section 3.2.3).
func compareUTF16(a, b string) int {
	ua, ub := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	return slices.Compare(ua, ub)
}

func canonString(buf *bytes.Buffer, s string) {
	buf.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			buf.WriteString(`\"`)
		case '\\':
			buf.WriteString(`\\`)
		case '\b':
			buf.WriteString(`\b`)
		case '\f':
			buf.WriteString(`\f`)
		case '\n':
			buf.WriteString(`\n`)
		case '\r':
			buf.WriteString(`\r`)
		case '\t':
			buf.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(buf, `\u%04x`, r)
			} else {
				buf.WriteRune(r)
			}
		}
	}
	buf.WriteByte('"')
}

// canonNumber writes a JSON number as ECMAScript's Number.prototype.toString writes the double it denotes.
func canonNumber(lit string) (string, error) {
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return "", fmt.Errorf("number %s is outside the range of a double", lit)
	}
	if f == 0 {
		return "0", nil
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	// The shortest digits that round-trip, and the exponent: f = 0.d1d2…dk × 10^n.
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddddde±xx
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	k, n := len(digits), x+1
	var out string
	switch {
	case k <= n && n <= 21:
		out = digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		out = digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		out = "0." + strings.Repeat("0", -n) + digits
	default:
		m := digits[:1]
		if k > 1 {
			m += "." + digits[1:]
		}
		es := "+"
		if n-1 < 0 {
			es = "-"
		}
		out = m + "e" + es + strconv.Itoa(abs(n-1))
	}
	return sign + out, nil
}

func abs(i int) int {
	if i < 0 {
		return -i
	}
	return i
}
