package mcpcore

import (
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file validates a host's answer against the server request it answers (Dispatcher.Respond).

// validateAnswer checks a against e's request; see Respond.
func (d *Dispatcher) validateAnswer(e *pendingEntry, a Answer) error {
	n := 0
	for _, set := range [...]bool{a.Sampling != nil, a.Elicitation != nil, a.Roots != nil, a.Authorization != nil, a.Approval != nil, a.Error != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return invalid(FieldViolation{Field: "answer", Description: "exactly one of sampling, elicitation, roots, authorization, approval or error must be set"})
	}
	req := e.req
	if a.Error != nil {
		if strings.TrimSpace(a.Error.Message) == "" {
			return invalid(FieldViolation{Field: "message", Description: "an error answer needs a message"})
		}
		return nil
	}
	got := answerKind(a)
	if got != req.Kind {
		return fmt.Errorf("%w: request is %s, answer is %s", ErrWrongAnswerKind, req.Kind, got)
	}
	var vs []FieldViolation
	switch req.Kind {
	case KindSampling:
		vs = validateSamplingResult(req.Sampling, a.Sampling)
	case KindElicitation:
		vs = validateElicitResult(req.Elicitation, e.compiledSchema(d.logger), a.Elicitation)
	case KindRoots:
		vs = validateRootsResult(a.Roots)
	case KindAuthorization:
		vs = validateAuthorizationAnswer(req.Authorization, a.Authorization) // authorization.go
	case KindApproval:
		vs = validateApprovalAnswer(req.Approval, a.Approval) // approval.go
	}
	if len(vs) > 0 {
		return &InvalidError{Err: ErrInvalidAnswer, Violations: vs}
	}
	return nil
}

func invalid(vs ...FieldViolation) error { return &InvalidError{Err: ErrInvalidAnswer, Violations: vs} }

func answerKind(a Answer) RequestKind {
	switch {
	case a.Sampling != nil:
		return KindSampling
	case a.Elicitation != nil:
		return KindElicitation
	case a.Roots != nil:
		return KindRoots
	case a.Authorization != nil:
		return KindAuthorization
	case a.Approval != nil:
		return KindApproval
	}
	return 0
}

// compiledSchema compiles the request's requestedSchema once. A schema that does not compile is logged
// and not enforced (see elicitschema.go).
func (e *pendingEntry) compiledSchema(logger *slog.Logger) *elicitSchema {
	e.schemaOnce.Do(func() {
		if e.req.Elicitation == nil {
			return
		}
		s, err := compileElicitSchema(e.req.Elicitation.RequestedSchema)
		if err != nil {
			logger.Debug("elicitation requestedSchema not enforced", "request_id", e.req.ID, "err", err)
			return
		}
		e.schema = s
	})
	return e.schema
}

// elicitMode is the request's mode; empty means form, as the SDK's client and the session handlers treat
// it (spec 2025-11-25: "mode" defaults to form).
func elicitMode(p *mcp.ElicitParams) string {
	if p == nil || p.Mode == "" {
		return "form"
	}
	return p.Mode
}

// validateElicitResult checks an elicitation answer; schema may be nil (nothing to enforce).
func validateElicitResult(req *mcp.ElicitParams, schema *elicitSchema, r *mcp.ElicitResult) []FieldViolation {
	switch r.Action {
	case "accept":
	case "decline", "cancel":
		if len(r.Content) > 0 {
			return []FieldViolation{{Field: "content", Description: "must be empty unless action is accept"}}
		}
		return nil
	case "":
		return []FieldViolation{{Field: "action", Description: "required: accept, decline or cancel"}}
	default:
		return []FieldViolation{{Field: "action", Description: "must be accept, decline or cancel, got " + strconv.Quote(r.Action)}}
	}
	if elicitMode(req) == "url" {
		if len(r.Content) > 0 {
			return []FieldViolation{{Field: "content", Description: "must be empty for a URL-mode elicitation"}}
		}
		return nil
	}
	if r.Content == nil && schema != nil && schema.properties > 0 {
		return []FieldViolation{{Field: "content", Description: "required when action is accept"}}
	}
	return schema.validate(r.Content)
}

// validateSamplingResult checks a sampling answer against its request (spec 2025-11-25,
// client/sampling: CreateMessageResult; tool use only when the request offered tools).
func validateSamplingResult(req *mcp.CreateMessageWithToolsParams, r *mcp.CreateMessageWithToolsResult) []FieldViolation {
	var vs []FieldViolation
	switch r.Role {
	case "assistant", "user":
	case "":
		vs = append(vs, FieldViolation{Field: "role", Description: "required"})
	default:
		vs = append(vs, FieldViolation{Field: "role", Description: "must be assistant or user"})
	}
	if strings.TrimSpace(r.Model) == "" {
		vs = append(vs, FieldViolation{Field: "model", Description: "required: the name of the model that produced the message"})
	}
	var tools []*mcp.Tool
	toolsAllowed := false
	if req != nil {
		tools = req.Tools
		toolsAllowed = len(tools) > 0 && (req.ToolChoice == nil || req.ToolChoice.Mode != "none")
	}
	switch {
	case len(r.Content) == 0:
		vs = append(vs, FieldViolation{Field: "content", Description: "required"})
	case len(r.Content) > 1 && len(tools) == 0:
		vs = append(vs, FieldViolation{Field: "content", Description: "must be a single block: the request offered no tools"})
	}
	for i, c := range r.Content {
		f := indexedField("content", i) // only formatted on a violation
		switch c := c.(type) {
		case *mcp.TextContent:
			if c == nil {
				vs = append(vs, FieldViolation{Field: f.String(), Description: "must not be null"})
			}
		case *mcp.ImageContent:
			if c == nil {
				vs = append(vs, FieldViolation{Field: f.String(), Description: "must not be null"})
				continue
			}
			vs = checkMedia(vs, f, c.Data, c.MIMEType)
		case *mcp.AudioContent:
			if c == nil {
				vs = append(vs, FieldViolation{Field: f.String(), Description: "must not be null"})
				continue
			}
			vs = checkMedia(vs, f, c.Data, c.MIMEType)
		case *mcp.ToolUseContent:
			switch {
			case c == nil:
				vs = append(vs, FieldViolation{Field: f.String(), Description: "must not be null"})
				continue
			case len(tools) == 0:
				vs = append(vs, FieldViolation{Field: f.String(), Description: "tool_use is allowed only when the request offered tools"})
				continue
			case !toolsAllowed:
				vs = append(vs, FieldViolation{Field: f.String(), Description: `tool_use is not allowed: the request's toolChoice is "none"`})
				continue
			}
			if c.ID == "" {
				vs = append(vs, FieldViolation{Field: f.sub(".id"), Description: "required"})
			}
			if !slices.ContainsFunc(tools, func(t *mcp.Tool) bool { return t != nil && t.Name == c.Name }) {
				vs = append(vs, FieldViolation{Field: f.sub(".name"), Description: "must name a tool the request offered, got " + strconv.Quote(c.Name)})
			}
		case nil:
			vs = append(vs, FieldViolation{Field: f.String(), Description: "must not be null"})
		default:
			vs = append(vs, FieldViolation{Field: f.String(), Description: fmt.Sprintf("content type %s is not allowed in a sampling result (text, image, audio, tool_use)", contentTypeName(c))})
		}
	}
	return vs
}

func checkMedia(vs []FieldViolation, f fieldIndex, data []byte, mime string) []FieldViolation {
	if len(data) == 0 {
		vs = append(vs, FieldViolation{Field: f.sub(".data"), Description: "required"})
	}
	if mime == "" {
		vs = append(vs, FieldViolation{Field: f.sub(".mimeType"), Description: "required"})
	}
	return vs
}

func contentTypeName(c mcp.Content) string {
	switch c.(type) {
	case *mcp.ToolResultContent:
		return "tool_result"
	case *mcp.ResourceLink:
		return "resource_link"
	case *mcp.EmbeddedResource:
		return "resource"
	}
	return fmt.Sprintf("%T", c)
}

// validateRootsResult checks a roots answer (ValidateRoots).
func validateRootsResult(r *mcp.ListRootsResult) []FieldViolation {
	return ValidateRoots("roots", r.Roots)
}

// ValidateRoots is the one rule for roots from a host, wherever they come from (a session's configured roots,
// SetRoots, an answer to roots/list): every root is a file:// URI (MCP spec, client/roots: "This *must*
// start with file:// for now"). Violations name list[i].uri (list is the repeated field's name).
func ValidateRoots(list string, roots []*mcp.Root) []FieldViolation {
	var vs []FieldViolation
	for i, root := range roots {
		f := indexedField(list, i)
		if root == nil {
			vs = append(vs, FieldViolation{Field: f.String(), Description: "must not be null"})
			continue
		}
		u, err := url.Parse(root.URI)
		switch {
		case root.URI == "":
			vs = append(vs, FieldViolation{Field: f.sub(".uri"), Description: "required"})
		case err != nil:
			vs = append(vs, FieldViolation{Field: f.sub(".uri"), Description: "must be a valid URI"})
		case !strings.HasPrefix(root.URI, "file://") || u.Scheme != "file":
			vs = append(vs, FieldViolation{Field: f.sub(".uri"), Description: "must be a file:// URI"})
		}
	}
	return vs
}

// fieldIndex names an element of a list in a violation, formatted only when a violation needs it.
type fieldIndex struct {
	list string
	i    int
}

func indexedField(list string, i int) fieldIndex { return fieldIndex{list, i} }

func (f fieldIndex) String() string { return f.list + "[" + strconv.Itoa(f.i) + "]" }

// sub names a member of the element, e.g. sub(".uri").
func (f fieldIndex) sub(member string) string { return f.String() + member }
