package mcpcore

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Policy is what the operator allows on one configured server: who may open sessions to it, and which
// tools, prompts and resources those sessions may see and use. A nil *Policy allows everything.
//
// The core enforces it at the one place every host operation passes through, the Session's operations
// (ops.go): a denied item is left out of list results and refused with ErrPermissionDenied before
// anything is sent upstream — whether the call comes from a unary RPC, a streaming one, a task-augmented
// call or an MRTR retry. The patterns are checked against each item as it is listed or used, so items a
// server adds later (announced by list_changed) obey the same rules. See docs/adr/0012-policy.md.
type Policy struct {
	// AllowedOwners are the principals (names or glob patterns) who may open sessions to the server;
	// empty allows everyone. To anyone else the server does not exist: Core.Open fails with
	// ErrServerNotFound exactly as for a name that is not configured.
	AllowedOwners []string
	// Tools filters tools by name, Prompts prompts by name, and Resources resources by URI (resource
	// templates by their URI template's text).
	Tools, Prompts, Resources Filter
	// Approval, when set, names the tools whose calls wait for an approver (approval.go).
	Approval *ApprovalPolicy
}

// Filter allows an item when it matches one of Allow (or Allow is empty) and none of Deny: deny wins.
// Patterns are globs where * matches any run of characters (slashes included) and ? any one character;
// every other character matches itself.
type Filter struct {
	Allow []string
	Deny  []string
}

// Allows reports whether f allows the item named name.
func (f Filter) Allows(name string) bool {
	if len(f.Allow) > 0 && !matchAny(f.Allow, name) {
		return false
	}
	return !matchAny(f.Deny, name)
}

// Empty reports whether f allows everything.
func (f Filter) Empty() bool { return len(f.Allow) == 0 && len(f.Deny) == 0 }

// AllowsOwner reports whether owner may open sessions to the server.
func (p *Policy) AllowsOwner(owner string) bool {
	return p == nil || len(p.AllowedOwners) == 0 || matchAny(p.AllowedOwners, owner)
}

func matchAny(patterns []string, s string) bool {
	for _, p := range patterns {
		if Glob(p, s) {
			return true
		}
	}
	return false
}

// Glob reports whether s matches pattern, where * matches any run of characters (including none and
// including slashes) and ? matches exactly one character. It runs in O(len(pattern)·len(s)) at worst.
func Glob(pattern, s string) bool {
	// The classic two-pointer wildcard match: on a mismatch after a *, let that * swallow one more
	// character of s and try again from there.
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		if p < len(pattern) {
			switch c := pattern[p]; c {
			case '*':
				star, mark = p, i
				p++
				continue
			case '?':
				_, n := utf8.DecodeRuneInString(s[i:])
				p++
				i += n
				continue
			default:
				if c == s[i] {
					p++
					i++
					continue
				}
			}
		}
		if star < 0 {
			return false
		}
		_, n := utf8.DecodeRuneInString(s[mark:])
		mark += n
		p, i = star+1, mark
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// The kinds of items a Policy filters, for messages.
const (
	itemTool     = "tool"
	itemPrompt   = "prompt"
	itemResource = "resource"
	itemTemplate = "resource template"
)

// policy returns the session's server's policy (nil: everything allowed): the policy of the configuration
// in force (Core.Reconfigure), so that a changed policy applies from the next call of every session of the
// server; the session's own when its server is ad hoc or no longer configured.
func (s *Session) policy() *Policy {
	if !s.adHoc {
		if cfg, ok := s.core.table()[s.server.Name]; ok {
			return cfg.Policy
		}
	}
	return s.server.Policy
}

// sessionAccess applies the session's server's policy (Session.policy) to what a host asks of the session:
// permit and permitRef refuse a denied item, the filters drop denied items from lists. The session holds
// it as Session.access.
type sessionAccess struct {
	s *Session
}

// permit returns ErrPermissionDenied when the server's policy does not allow the item. The decision
// rests on the name alone: it tells the host what the policy is, never whether the server has the item.
func (a *sessionAccess) permit(kind, name string) error {
	s := a.s
	p := s.policy()
	if p == nil {
		return nil
	}
	var f Filter
	switch kind {
	case itemTool:
		f = p.Tools
	case itemPrompt:
		f = p.Prompts
	default:
		f = p.Resources
	}
	if f.Allows(name) {
		return nil
	}
	return fmt.Errorf("%w: %s %s is not allowed on server %s", ErrPermissionDenied, kind, strconv.Quote(name), strconv.Quote(s.server.Name))
}

// filterTools returns r without the tools the policy denies. The SDK may hand out a cached result
// (2026-07-28 ttlMs), so r is never modified: a filtered copy is returned.
// filterTools and filterPrompts also tell the core which names the server listed (listedNames): the names
// the host was shown are the ones metrics and spans may carry.
func (a *sessionAccess) filterTools(r *mcp.ListToolsResult) *mcp.ListToolsResult {
	s := a.s
	if r == nil {
		return nil
	}
	if p := s.policy(); p != nil && !p.Tools.Empty() {
		out := *r
		out.Tools = keep(r.Tools, func(t *mcp.Tool) bool { return t != nil && p.Tools.Allows(t.Name) })
		r = &out
	}
	s.learnListed("tools/call", len(r.Tools), func(i int) string {
		if r.Tools[i] == nil {
			return ""
		}
		return r.Tools[i].Name
	})
	return r
}

func (a *sessionAccess) filterPrompts(r *mcp.ListPromptsResult) *mcp.ListPromptsResult {
	s := a.s
	if r == nil {
		return nil
	}
	if p := s.policy(); p != nil && !p.Prompts.Empty() {
		out := *r
		out.Prompts = keep(r.Prompts, func(x *mcp.Prompt) bool { return x != nil && p.Prompts.Allows(x.Name) })
		r = &out
	}
	s.learnListed("prompts/get", len(r.Prompts), func(i int) string {
		if r.Prompts[i] == nil {
			return ""
		}
		return r.Prompts[i].Name
	})
	return r
}

func (a *sessionAccess) filterResources(r *mcp.ListResourcesResult) *mcp.ListResourcesResult {
	s := a.s
	p := s.policy()
	if r == nil || p == nil || p.Resources.Empty() {
		return r
	}
	out := *r
	out.Resources = keep(r.Resources, func(x *mcp.Resource) bool { return x != nil && p.Resources.Allows(x.URI) })
	return &out
}

func (a *sessionAccess) filterTemplates(r *mcp.ListResourceTemplatesResult) *mcp.ListResourceTemplatesResult {
	s := a.s
	p := s.policy()
	if r == nil || p == nil || p.Resources.Empty() {
		return r
	}
	out := *r
	out.ResourceTemplates = keep(r.ResourceTemplates, func(x *mcp.ResourceTemplate) bool {
		return x != nil && p.Resources.Allows(x.URITemplate)
	})
	return &out
}

// keep returns the items for which ok is true, in a new slice.
func keep[T any](items []T, ok func(T) bool) []T {
	out := make([]T, 0, len(items))
	for _, it := range items {
		if ok(it) {
			out = append(out, it)
		}
	}
	return out
}

// permitRef checks the prompt or resource template a completion/complete request refers to: completing
// the arguments of a denied prompt or template would reveal what the policy hides.
func (a *sessionAccess) permitRef(ref *mcp.CompleteReference) error {
	s := a.s
	switch ref.Type {
	case "ref/prompt":
		return s.access.permit(itemPrompt, ref.Name)
	case "ref/resource":
		return s.access.permit(itemTemplate, ref.URI)
	}
	return nil
}
