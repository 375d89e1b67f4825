package server

// Conversions between the MCP SDK's types (as mcpcore hands them over) and the mcpbridge.v1 messages.
// Functions named …ToProto take what a server sent (outside input: they fail with an error wrapping
// mcpcore.ErrBadMessage rather than guess); functions named …FromProto take what a host sent (outside
// input: they fail with an *mcpcore.InvalidError naming the field).

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// badMessage wraps a conversion failure of server data.
func badMessage(what string, err error) error {
	return fmt.Errorf("%w: %s: %v", mcpcore.ErrBadMessage, what, err)
}

// --- enums ---

// enumMap is a two-way table between an MCP or core value and its proto enum. A value not listed converts
// to the zero value: the enum's UNSPECIFIED, or the empty MCP value.
type enumMap[D, P comparable] []struct {
	d D
	p P
}

func (m enumMap[D, P]) toProto(d D) P {
	for _, e := range m {
		if e.d == d {
			return e.p
		}
	}
	var zero P
	return zero
}

// fromProto returns the value of p, and false for a p not listed (UNSPECIFIED, or a number the proto does
// not define).
func (m enumMap[D, P]) fromProto(p P) (D, bool) {
	for _, e := range m {
		if e.p == p {
			return e.d, true
		}
	}
	var zero D
	return zero, false
}

var (
	roles = enumMap[mcp.Role, pb.Role]{
		{"user", pb.Role_ROLE_USER},
		{"assistant", pb.Role_ROLE_ASSISTANT},
	}
	logLevels = enumMap[mcp.LoggingLevel, pb.LoggingLevel]{
		{"debug", pb.LoggingLevel_LOGGING_LEVEL_DEBUG},
		{"info", pb.LoggingLevel_LOGGING_LEVEL_INFO},
		{"notice", pb.LoggingLevel_LOGGING_LEVEL_NOTICE},
		{"warning", pb.LoggingLevel_LOGGING_LEVEL_WARNING},
		{"error", pb.LoggingLevel_LOGGING_LEVEL_ERROR},
		{"critical", pb.LoggingLevel_LOGGING_LEVEL_CRITICAL},
		{"alert", pb.LoggingLevel_LOGGING_LEVEL_ALERT},
		{"emergency", pb.LoggingLevel_LOGGING_LEVEL_EMERGENCY},
	}
	taskStatuses = enumMap[string, pb.TaskStatus]{
		{"working", pb.TaskStatus_TASK_STATUS_WORKING},
		{"input_required", pb.TaskStatus_TASK_STATUS_INPUT_REQUIRED},
		{"completed", pb.TaskStatus_TASK_STATUS_COMPLETED},
		{"failed", pb.TaskStatus_TASK_STATUS_FAILED},
		{"cancelled", pb.TaskStatus_TASK_STATUS_CANCELLED},
	}
	sessionStates = enumMap[mcpcore.SessionState, pb.SessionState]{
		{mcpcore.StateConnecting, pb.SessionState_SESSION_STATE_CONNECTING},
		{mcpcore.StateReady, pb.SessionState_SESSION_STATE_READY},
		{mcpcore.StateReconnecting, pb.SessionState_SESSION_STATE_RECONNECTING},
		{mcpcore.StateClosed, pb.SessionState_SESSION_STATE_CLOSED},
	}
	transports = enumMap[mcpcore.TransportKind, pb.Transport]{
		{mcpcore.TransportStdio, pb.Transport_TRANSPORT_STDIO},
		{mcpcore.TransportStreamableHTTP, pb.Transport_TRANSPORT_STREAMABLE_HTTP},
		{mcpcore.TransportSSE, pb.Transport_TRANSPORT_SSE},
	}
	iconThemes = enumMap[mcp.IconTheme, pb.IconTheme]{
		{mcp.IconThemeLight, pb.IconTheme_ICON_THEME_LIGHT},
		{mcp.IconThemeDark, pb.IconTheme_ICON_THEME_DARK},
	}
	includeContexts = enumMap[string, pb.IncludeContext]{
		{"none", pb.IncludeContext_INCLUDE_CONTEXT_NONE},
		{"thisServer", pb.IncludeContext_INCLUDE_CONTEXT_THIS_SERVER},
		{"allServers", pb.IncludeContext_INCLUDE_CONTEXT_ALL_SERVERS},
	}
	toolChoiceModes = enumMap[string, pb.ToolChoiceMode]{
		{"auto", pb.ToolChoiceMode_TOOL_CHOICE_MODE_AUTO},
		{"required", pb.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED},
		{"none", pb.ToolChoiceMode_TOOL_CHOICE_MODE_NONE},
	}
	elicitationModes = enumMap[string, pb.ElicitationMode]{
		{"form", pb.ElicitationMode_ELICITATION_MODE_FORM},
		{"url", pb.ElicitationMode_ELICITATION_MODE_URL},
	}
	deliveries = enumMap[mcpcore.Delivery, pb.Delivery]{
		{mcpcore.DeliveryPush, pb.Delivery_DELIVERY_LEGACY_PUSH},
		{mcpcore.DeliveryMRTR, pb.Delivery_DELIVERY_MULTI_ROUND_TRIP},
	}
	elicitActions = enumMap[string, pb.ElicitAction]{
		{"accept", pb.ElicitAction_ELICIT_ACTION_ACCEPT},
		{"decline", pb.ElicitAction_ELICIT_ACTION_DECLINE},
		{"cancel", pb.ElicitAction_ELICIT_ACTION_CANCEL},
	}
	outcomes = enumMap[mcpcore.Outcome, pb.RequestOutcome]{
		{mcpcore.OutcomeAnswered, pb.RequestOutcome_REQUEST_OUTCOME_ANSWERED},
		{mcpcore.OutcomeCancelledByServer, pb.RequestOutcome_REQUEST_OUTCOME_CANCELLED_BY_SERVER},
		{mcpcore.OutcomeCancelledByHost, pb.RequestOutcome_REQUEST_OUTCOME_CANCELLED_BY_HOST},
		{mcpcore.OutcomeTimedOut, pb.RequestOutcome_REQUEST_OUTCOME_TIMED_OUT},
		{mcpcore.OutcomeSessionClosed, pb.RequestOutcome_REQUEST_OUTCOME_SESSION_CLOSED},
		{mcpcore.OutcomeCallEnded, pb.RequestOutcome_REQUEST_OUTCOME_CALL_ENDED},
		{mcpcore.OutcomeBridgeRestarted, pb.RequestOutcome_REQUEST_OUTCOME_BRIDGE_RESTARTED},
	}
)

func roleToProto(r mcp.Role) pb.Role { return roles.toProto(r) }

func roleFromProto(r pb.Role) mcp.Role {
	role, _ := roles.fromProto(r)
	return role
}

func logLevelToProto(l mcp.LoggingLevel) pb.LoggingLevel { return logLevels.toProto(l) }

func logLevelFromProto(l pb.LoggingLevel) (mcp.LoggingLevel, bool) { return logLevels.fromProto(l) }

func taskStatusToProto(s string) pb.TaskStatus { return taskStatuses.toProto(s) }

func stateToProto(s mcpcore.SessionState) pb.SessionState { return sessionStates.toProto(s) }

func transportToProto(t mcpcore.TransportKind) pb.Transport { return transports.toProto(t) }

// --- small shapes ---

func metaToProto(m mcp.Meta) (*structpb.Struct, error) {
	if len(m) == 0 {
		return nil, nil
	}
	s, err := structFromMap(m)
	if err != nil {
		return nil, badMessage("_meta", err)
	}
	return s, nil
}

func iconsToProto(icons []mcp.Icon) []*pb.Icon {
	var out []*pb.Icon
	for _, i := range icons {
		out = append(out, &pb.Icon{Src: i.Source, MimeType: i.MIMEType, Sizes: i.Sizes, Theme: iconThemes.toProto(i.Theme)})
	}
	return out
}

func iconsFromProto(icons []*pb.Icon) []mcp.Icon {
	var out []mcp.Icon
	for _, i := range icons {
		if i == nil {
			continue
		}
		theme, _ := iconThemes.fromProto(i.GetTheme())
		out = append(out, mcp.Icon{Source: i.GetSrc(), MIMEType: i.GetMimeType(), Sizes: i.GetSizes(), Theme: theme})
	}
	return out
}

func annotationsToProto(a *mcp.Annotations) *pb.Annotations {
	if a == nil {
		return nil
	}
	p := &pb.Annotations{LastModified: a.LastModified}
	for _, r := range a.Audience {
		p.Audience = append(p.Audience, roleToProto(r))
	}
	if a.Priority != 0 {
		p.Priority = &a.Priority
	}
	return p
}

func annotationsFromProto(a *pb.Annotations) *mcp.Annotations {
	if a == nil {
		return nil
	}
	m := &mcp.Annotations{LastModified: a.GetLastModified(), Priority: a.GetPriority()}
	for _, r := range a.GetAudience() {
		if role := roleFromProto(r); role != "" {
			m.Audience = append(m.Audience, role)
		}
	}
	return m
}

func implementationToProto(i *mcp.Implementation) *pb.Implementation {
	if i == nil {
		return nil
	}
	return &pb.Implementation{Name: i.Name, Title: i.Title, Version: i.Version, WebsiteUrl: i.WebsiteURL, Description: i.Description, Icons: iconsToProto(i.Icons)}
}

func implementationFromProto(i *pb.Implementation) *mcp.Implementation {
	if i == nil {
		return nil
	}
	return &mcp.Implementation{Name: i.GetName(), Title: i.GetTitle(), Version: i.GetVersion(), WebsiteURL: i.GetWebsiteUrl(), Description: i.GetDescription(), Icons: iconsFromProto(i.GetIcons())}
}

func rootsToProto(roots []*mcp.Root) ([]*pb.Root, error) {
	var out []*pb.Root
	for _, r := range roots {
		if r == nil {
			continue
		}
		meta, err := metaToProto(r.Meta)
		if err != nil {
			return nil, err
		}
		out = append(out, &pb.Root{Uri: r.URI, Name: r.Name, Meta: meta})
	}
	return out, nil
}

// rootsFromProto converts and validates (mcpcore.ValidateRoots) a host's roots; path names the repeated
// field ("roots").
func rootsFromProto(roots []*pb.Root, path string) ([]*mcp.Root, error) {
	out := make([]*mcp.Root, 0, len(roots))
	var vs []mcpcore.FieldViolation
	for i, r := range roots {
		f := path + "[" + strconv.Itoa(i) + "]"
		if r == nil {
			out = append(out, nil) // a violation of ValidateRoots
			continue
		}
		var meta map[string]any
		if r.GetMeta() != nil {
			meta = mapFromStructPath(r.GetMeta(), f+"._meta", &vs)
		}
		out = append(out, &mcp.Root{URI: r.GetUri(), Name: r.GetName(), Meta: meta})
	}
	vs = append(mcpcore.ValidateRoots(path, out), vs...)
	if len(vs) > 0 {
		return nil, &mcpcore.InvalidError{Err: errInvalidInput, Violations: vs}
	}
	return out, nil
}

// --- content ---

// contentToProto converts one content block a server sent.
func contentToProto(c mcp.Content) (*pb.ContentBlock, error) {
	if v := reflect.ValueOf(c); !v.IsValid() || v.Kind() == reflect.Pointer && v.IsNil() {
		return nil, badMessage("content", errors.New("null block")) // JSON null, or a nil block of any type
	}
	b := &pb.ContentBlock{}
	var meta mcp.Meta
	switch c := c.(type) {
	case *mcp.TextContent:
		b.Content = &pb.ContentBlock_Text{Text: &pb.TextContent{Text: c.Text}}
		b.Annotations, meta = annotationsToProto(c.Annotations), c.Meta
	case *mcp.ImageContent:
		b.Content = &pb.ContentBlock_Image{Image: &pb.ImageContent{Data: c.Data, MimeType: c.MIMEType}}
		b.Annotations, meta = annotationsToProto(c.Annotations), c.Meta
	case *mcp.AudioContent:
		b.Content = &pb.ContentBlock_Audio{Audio: &pb.AudioContent{Data: c.Data, MimeType: c.MIMEType}}
		b.Annotations, meta = annotationsToProto(c.Annotations), c.Meta
	case *mcp.ResourceLink:
		b.Content = &pb.ContentBlock_ResourceLink{ResourceLink: &pb.ResourceLink{
			Uri: c.URI, Name: c.Name, Title: c.Title, Description: c.Description, MimeType: c.MIMEType, Size: c.Size, Icons: iconsToProto(c.Icons),
		}}
		b.Annotations, meta = annotationsToProto(c.Annotations), c.Meta
	case *mcp.EmbeddedResource:
		rc, err := resourceContentsToProto(c.Resource)
		if err != nil {
			return nil, err
		}
		b.Content = &pb.ContentBlock_Resource{Resource: &pb.EmbeddedResource{Resource: rc}}
		b.Annotations, meta = annotationsToProto(c.Annotations), c.Meta
	case *mcp.ToolUseContent:
		in, err := structFromMap(c.Input)
		if err != nil {
			return nil, badMessage("tool_use input", err)
		}
		b.Content = &pb.ContentBlock_ToolUse{ToolUse: &pb.ToolUseContent{Id: c.ID, Name: c.Name, Input: in}}
		meta = c.Meta
	case *mcp.ToolResultContent:
		tr := &pb.ToolResultContent{ToolUseId: c.ToolUseID, IsError: c.IsError}
		for _, inner := range c.Content {
			ib, err := contentToProto(inner)
			if err != nil {
				return nil, err
			}
			tr.Content = append(tr.Content, ib)
		}
		if c.StructuredContent != nil {
			v, err := valueFromAny(c.StructuredContent)
			if err != nil {
				return nil, badMessage("tool_result structuredContent", err)
			}
			tr.StructuredContent = v
		}
		b.Content = &pb.ContentBlock_ToolResult{ToolResult: tr}
		meta = c.Meta
	default:
		return nil, badMessage("content", fmt.Errorf("unknown content type %T", c))
	}
	m, err := metaToProto(meta)
	if err != nil {
		return nil, err
	}
	b.Meta = m
	return b, nil
}

func contentsToProto(cs []mcp.Content) ([]*pb.ContentBlock, error) {
	out := make([]*pb.ContentBlock, 0, len(cs))
	for _, c := range cs {
		b, err := contentToProto(c)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// contentFromProto converts a content block a host sent (in a sampling answer); path names it.
func contentFromProto(b *pb.ContentBlock, path string, vs *[]mcpcore.FieldViolation) mcp.Content {
	if b == nil {
		*vs = append(*vs, mcpcore.FieldViolation{Field: path, Description: "must not be null"})
		return nil
	}
	var meta mcp.Meta
	if b.GetMeta() != nil {
		meta = mapFromStructPath(b.GetMeta(), path+"._meta", vs)
	}
	ann := annotationsFromProto(b.GetAnnotations())
	switch c := b.GetContent().(type) {
	case *pb.ContentBlock_Text:
		return &mcp.TextContent{Text: c.Text.GetText(), Meta: meta, Annotations: ann}
	case *pb.ContentBlock_Image:
		return &mcp.ImageContent{Data: c.Image.GetData(), MIMEType: c.Image.GetMimeType(), Meta: meta, Annotations: ann}
	case *pb.ContentBlock_Audio:
		return &mcp.AudioContent{Data: c.Audio.GetData(), MIMEType: c.Audio.GetMimeType(), Meta: meta, Annotations: ann}
	case *pb.ContentBlock_ResourceLink:
		l := c.ResourceLink
		return &mcp.ResourceLink{URI: l.GetUri(), Name: l.GetName(), Title: l.GetTitle(), Description: l.GetDescription(), MIMEType: l.GetMimeType(), Size: l.Size, Icons: iconsFromProto(l.GetIcons()), Meta: meta, Annotations: ann}
	case *pb.ContentBlock_Resource:
		rc := c.Resource.GetResource()
		if rc == nil {
			*vs = append(*vs, required(path+".resource.resource"))
			return nil
		}
		return &mcp.EmbeddedResource{Resource: resourceContentsFromProto(rc, path+".resource.resource", vs), Meta: meta, Annotations: ann}
	case *pb.ContentBlock_ToolUse:
		var in map[string]any
		if c.ToolUse.GetInput() != nil {
			in = mapFromStructPath(c.ToolUse.GetInput(), path+".toolUse.input", vs)
		}
		return &mcp.ToolUseContent{ID: c.ToolUse.GetId(), Name: c.ToolUse.GetName(), Input: in, Meta: meta}
	case *pb.ContentBlock_ToolResult:
		tr := c.ToolResult
		out := &mcp.ToolResultContent{ToolUseID: tr.GetToolUseId(), IsError: tr.GetIsError(), Meta: meta}
		for i, inner := range tr.GetContent() {
			out.Content = append(out.Content, contentFromProto(inner, path+".toolResult.content["+strconv.Itoa(i)+"]", vs))
		}
		if tr.GetStructuredContent() != nil {
			out.StructuredContent = anyFromValue(tr.GetStructuredContent(), path+".toolResult.structuredContent", vs)
		}
		return out
	}
	*vs = append(*vs, mcpcore.FieldViolation{Field: path, Description: "exactly one of text, image, audio, resourceLink, resource, toolUse, toolResult must be set"})
	return nil
}

func resourceContentsToProto(r *mcp.ResourceContents) (*pb.ResourceContents, error) {
	if r == nil {
		return nil, badMessage("resource contents", fmt.Errorf("null"))
	}
	p := &pb.ResourceContents{Uri: r.URI, MimeType: r.MIMEType}
	if r.Blob != nil {
		p.Contents = &pb.ResourceContents_Blob{Blob: r.Blob}
	} else {
		p.Contents = &pb.ResourceContents_Text{Text: r.Text}
	}
	m, err := metaToProto(r.Meta)
	if err != nil {
		return nil, err
	}
	p.Meta = m
	return p, nil
}

func resourceContentsFromProto(r *pb.ResourceContents, path string, vs *[]mcpcore.FieldViolation) *mcp.ResourceContents {
	out := &mcp.ResourceContents{URI: r.GetUri(), MIMEType: r.GetMimeType()}
	switch c := r.GetContents().(type) {
	case *pb.ResourceContents_Text:
		out.Text = c.Text
	case *pb.ResourceContents_Blob:
		out.Blob = c.Blob
		if out.Blob == nil {
			out.Blob = []byte{}
		}
	}
	if r.GetMeta() != nil {
		out.Meta = mapFromStructPath(r.GetMeta(), path+"._meta", vs)
	}
	return out
}

// --- tools, resources, prompts ---

func toolToProto(t *mcp.Tool) (*pb.Tool, error) {
	if t == nil {
		return nil, badMessage("tool", fmt.Errorf("null"))
	}
	p := &pb.Tool{Name: t.Name, Title: t.Title, Description: t.Description, Icons: iconsToProto(t.Icons)}
	var err error
	if t.InputSchema != nil {
		if p.InputSchema, err = schemaFromAny(t.InputSchema); err != nil {
			return nil, badMessage("tool "+strconv.Quote(t.Name)+" inputSchema", err)
		}
	}
	if t.OutputSchema != nil {
		if p.OutputSchema, err = schemaFromAny(t.OutputSchema); err != nil {
			return nil, badMessage("tool "+strconv.Quote(t.Name)+" outputSchema", err)
		}
	}
	if a := t.Annotations; a != nil {
		p.Annotations = &pb.ToolAnnotations{
			Title:           a.Title,
			ReadOnlyHint:    &a.ReadOnlyHint,
			DestructiveHint: a.DestructiveHint,
			IdempotentHint:  &a.IdempotentHint,
			OpenWorldHint:   a.OpenWorldHint,
		}
	}
	support, meta := mcpcore.ToolTaskSupport(t)
	if ts := taskSupportToProto(support); ts != pb.TaskSupport_TASK_SUPPORT_UNSPECIFIED {
		p.Execution = &pb.ToolExecution{TaskSupport: ts}
	}
	if p.Meta, err = metaToProto(meta); err != nil {
		return nil, err
	}
	return p, nil
}

// taskSupportToProto maps MCP's execution.taskSupport; "" or an unknown value is UNSPECIFIED.
func taskSupportToProto(s string) pb.TaskSupport {
	switch s {
	case "forbidden":
		return pb.TaskSupport_TASK_SUPPORT_FORBIDDEN
	case "optional":
		return pb.TaskSupport_TASK_SUPPORT_OPTIONAL
	case "required":
		return pb.TaskSupport_TASK_SUPPORT_REQUIRED
	}
	return pb.TaskSupport_TASK_SUPPORT_UNSPECIFIED
}

func callToolResultToProto(r *mcp.CallToolResult) (*pb.CallToolResult, error) {
	if r == nil {
		return nil, badMessage("tool result", fmt.Errorf("null"))
	}
	content, err := contentsToProto(r.Content)
	if err != nil {
		return nil, err
	}
	p := &pb.CallToolResult{Content: content, IsError: r.IsError}
	if r.StructuredContent != nil {
		if p.StructuredContent, err = valueFromAny(r.StructuredContent); err != nil {
			return nil, badMessage("structuredContent", err)
		}
	}
	if p.Meta, err = metaToProto(r.Meta); err != nil {
		return nil, err
	}
	return p, nil
}

func resourceToProto(r *mcp.Resource) (*pb.Resource, error) {
	if r == nil {
		return nil, badMessage("resource", fmt.Errorf("null"))
	}
	p := &pb.Resource{Uri: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MimeType: r.MIMEType, Annotations: annotationsToProto(r.Annotations), Icons: iconsToProto(r.Icons)}
	if r.Size != 0 {
		p.Size = &r.Size
	}
	var err error
	p.Meta, err = metaToProto(r.Meta)
	return p, err
}

func resourceTemplateToProto(r *mcp.ResourceTemplate) (*pb.ResourceTemplate, error) {
	if r == nil {
		return nil, badMessage("resource template", fmt.Errorf("null"))
	}
	p := &pb.ResourceTemplate{UriTemplate: r.URITemplate, Name: r.Name, Title: r.Title, Description: r.Description, MimeType: r.MIMEType, Annotations: annotationsToProto(r.Annotations), Icons: iconsToProto(r.Icons)}
	var err error
	p.Meta, err = metaToProto(r.Meta)
	return p, err
}

func promptToProto(r *mcp.Prompt) (*pb.Prompt, error) {
	if r == nil {
		return nil, badMessage("prompt", fmt.Errorf("null"))
	}
	p := &pb.Prompt{Name: r.Name, Title: r.Title, Description: r.Description, Icons: iconsToProto(r.Icons)}
	for _, a := range r.Arguments {
		if a == nil {
			continue
		}
		p.Arguments = append(p.Arguments, &pb.PromptArgument{Name: a.Name, Title: a.Title, Description: a.Description, Required: a.Required})
	}
	var err error
	p.Meta, err = metaToProto(r.Meta)
	return p, err
}

func getPromptResultToProto(r *mcp.GetPromptResult) (*pb.GetPromptResponse, error) {
	if r == nil {
		return nil, badMessage("prompt result", fmt.Errorf("null"))
	}
	p := &pb.GetPromptResponse{Description: r.Description}
	for _, m := range r.Messages {
		if m == nil {
			return nil, badMessage("prompt message", fmt.Errorf("null"))
		}
		c, err := contentToProto(m.Content)
		if err != nil {
			return nil, err
		}
		p.Messages = append(p.Messages, &pb.PromptMessage{Role: roleToProto(m.Role), Content: c})
	}
	var err error
	p.Meta, err = metaToProto(r.Meta)
	return p, err
}

// --- capabilities ---

// serverCapsToProto converts the server's capabilities. tasks is the 2025-11-25 tasks capability the SDK's
// type drops (mcpcore.Session.TasksCapability); it may be nil.
func serverCapsToProto(c *mcp.ServerCapabilities, tasks *mcpcore.TasksCapability) (*pb.ServerCapabilities, error) {
	if c == nil {
		return nil, nil
	}
	p := &pb.ServerCapabilities{}
	if c.Tools != nil {
		p.Tools = &pb.ToolsCapability{ListChanged: c.Tools.ListChanged}
	}
	if c.Prompts != nil {
		p.Prompts = &pb.PromptsCapability{ListChanged: c.Prompts.ListChanged}
	}
	if c.Resources != nil {
		p.Resources = &pb.ResourcesCapability{ListChanged: c.Resources.ListChanged, Subscribe: c.Resources.Subscribe}
	}
	if c.Logging != nil {
		p.Logging = &pb.LoggingCapability{}
	}
	if c.Completions != nil {
		p.Completions = &pb.CompletionsCapability{}
	}
	if _, ok := c.Extensions[mcpcore.TasksExtension]; ok {
		p.Tasks = &pb.TasksCapability{Cancel: true, ToolCall: true}
	} else if t := tasks; t != nil {
		p.Tasks = &pb.TasksCapability{List: t.List, Cancel: t.Cancel, ToolCall: t.ToolCall}
	}
	var err error
	if p.Experimental, err = structFromMap(c.Experimental); err != nil {
		return nil, badMessage("capabilities.experimental", err)
	}
	if p.Extensions, err = structFromMap(c.Extensions); err != nil {
		return nil, badMessage("capabilities.extensions", err)
	}
	return p, nil
}

// hostCapsFromProto turns the host's declaration into mcpcore's. An elicitation capability with neither
// mode set means form only, as in MCP.
func hostCapsFromProto(h *pb.HostCapabilities) mcpcore.HostCapabilities {
	var c mcpcore.HostCapabilities
	if s := h.GetSampling(); s != nil {
		c.Sampling, c.SamplingTools, c.SamplingContext = true, s.GetTools(), s.GetContext()
	}
	if e := h.GetElicitation(); e != nil {
		c.ElicitationForm, c.ElicitationURL = e.GetForm(), e.GetUrl()
		if !c.ElicitationForm && !c.ElicitationURL {
			c.ElicitationForm = true
		}
	}
	if r := h.GetRoots(); r != nil {
		c.Roots, c.RootsListChanged = true, r.GetListChanged()
	}
	return c
}

func hostCapsToProto(c mcpcore.HostCapabilities) *pb.HostCapabilities {
	p := &pb.HostCapabilities{}
	if c.Sampling {
		p.Sampling = &pb.SamplingCapability{Tools: c.SamplingTools, Context: c.SamplingContext}
	}
	if c.ElicitationForm || c.ElicitationURL {
		p.Elicitation = &pb.ElicitationCapability{Form: c.ElicitationForm, Url: c.ElicitationURL}
	}
	if c.Roots {
		p.Roots = &pb.RootsCapability{ListChanged: c.RootsListChanged}
	}
	return p
}

// --- server requests and host answers ---

func samplingToProto(p *mcp.CreateMessageWithToolsParams) (*pb.CreateMessageRequest, error) {
	if p == nil {
		return nil, badMessage("sampling request", fmt.Errorf("null"))
	}
	out := &pb.CreateMessageRequest{SystemPrompt: p.SystemPrompt, StopSequences: p.StopSequences}
	out.MaxTokens = int32(min(max(p.MaxTokens, 0), math.MaxInt32))
	for _, m := range p.Messages {
		if m == nil {
			return nil, badMessage("sampling message", fmt.Errorf("null"))
		}
		content, err := contentsToProto(m.Content)
		if err != nil {
			return nil, err
		}
		out.Messages = append(out.Messages, &pb.SamplingMessage{Role: roleToProto(m.Role), Content: content})
	}
	if mp := p.ModelPreferences; mp != nil {
		pp := &pb.ModelPreferences{}
		for _, h := range mp.Hints {
			if h != nil {
				pp.Hints = append(pp.Hints, &pb.ModelHint{Name: h.Name})
			}
		}
		if mp.CostPriority != 0 {
			pp.CostPriority = &mp.CostPriority
		}
		if mp.SpeedPriority != 0 {
			pp.SpeedPriority = &mp.SpeedPriority
		}
		if mp.IntelligencePriority != 0 {
			pp.IntelligencePriority = &mp.IntelligencePriority
		}
		out.ModelPreferences = pp
	}
	out.IncludeContext = includeContexts.toProto(p.IncludeContext)
	if p.Temperature != 0 {
		t := p.Temperature
		out.Temperature = &t
	}
	if p.Metadata != nil {
		md, err := structFromAny(p.Metadata)
		if err != nil {
			return nil, badMessage("sampling metadata", err)
		}
		out.Metadata = md
	}
	for _, t := range p.Tools {
		pt, err := toolToProto(t)
		if err != nil {
			return nil, err
		}
		out.Tools = append(out.Tools, pt)
	}
	if tc := p.ToolChoice; tc != nil {
		out.ToolChoice = &pb.ToolChoice{Mode: toolChoiceModes.toProto(tc.Mode)}
	}
	var err error
	out.Meta, err = metaToProto(p.Meta)
	return out, err
}

func elicitationToProto(p *mcp.ElicitParams) (*pb.ElicitRequest, error) {
	if p == nil {
		return nil, badMessage("elicitation request", fmt.Errorf("null"))
	}
	out := &pb.ElicitRequest{Message: p.Message, Url: p.URL, ElicitationId: p.ElicitationID}
	mode := p.Mode
	if mode == "" {
		mode = "form"
		if p.URL != "" || p.ElicitationID != "" {
			mode = "url"
		}
	}
	out.Mode = elicitationModes.toProto(mode)
	if p.RequestedSchema != nil {
		s, err := schemaFromAny(p.RequestedSchema)
		if err != nil {
			return nil, badMessage("requestedSchema", err)
		}
		out.RequestedSchema = s
	}
	var err error
	out.Meta, err = metaToProto(p.Meta)
	return out, err
}

// serverRequestToProto converts a pending request for delivery to a host.
func serverRequestToProto(r *mcpcore.PendingRequest) (*pb.ServerRequest, error) {
	out := &pb.ServerRequest{
		RequestId:    r.ID,
		SessionId:    r.SessionID,
		OriginCallId: r.OriginCallID,
		OriginMethod: r.OriginMethod,
		OriginName:   r.OriginName,
		InputKey:     r.InputKey,
		TaskId:       r.TaskID,
		TraceContext: r.TraceContext,
	}
	out.Delivery = deliveries.toProto(r.Delivery)
	out.Deadline = timestamp(r.Deadline)
	out.CreateTime = timestamp(r.Created)
	switch r.Kind {
	case mcpcore.KindSampling:
		s, err := samplingToProto(r.Sampling)
		if err != nil {
			return nil, err
		}
		out.Payload = &pb.ServerRequest_Sampling{Sampling: s}
	case mcpcore.KindElicitation:
		e, err := elicitationToProto(r.Elicitation)
		if err != nil {
			return nil, err
		}
		out.Payload = &pb.ServerRequest_Elicitation{Elicitation: e}
	case mcpcore.KindAuthorization:
		a := r.Authorization
		if a == nil {
			return nil, badMessage("server request", fmt.Errorf("authorization request without payload"))
		}
		out.Payload = &pb.ServerRequest_Authorization{Authorization: &pb.AuthorizationRequest{
			AuthorizationUrl: a.AuthorizationURL,
			RedirectUrl:      a.RedirectURL,
			ServerName:       a.ServerName,
			Scopes:           a.Scopes,
		}}
	case mcpcore.KindApproval:
		if r.Approval == nil {
			return nil, badMessage("server request", fmt.Errorf("approval request without payload"))
		}
		a, err := approvalToProto(r.Approval) // approval.go
		if err != nil {
			return nil, err
		}
		out.Payload = &pb.ServerRequest_Approval{Approval: a}
	case mcpcore.KindRoots:
		rr := &pb.ListRootsRequest{}
		if r.Roots != nil {
			m, err := metaToProto(r.Roots.Meta)
			if err != nil {
				return nil, err
			}
			rr.Meta = m
		}
		out.Payload = &pb.ServerRequest_Roots{Roots: rr}
	default:
		return nil, badMessage("server request", fmt.Errorf("unknown kind %v", r.Kind))
	}
	inspectServerRequest(r, out) // approval.go
	return out, nil
}

// answerFromProto converts a host's answer. Field violations are relative to the HostAnswer
// ("sampling.content[0]"); the caller prefixes the path of the answer in its request.
func answerFromProto(a *pb.HostAnswer) (mcpcore.Answer, error) {
	var vs []mcpcore.FieldViolation
	var out mcpcore.Answer
	switch x := a.GetAnswer().(type) {
	case *pb.HostAnswer_Sampling:
		r := x.Sampling
		res := &mcp.CreateMessageWithToolsResult{Model: r.GetModel(), StopReason: r.GetStopReason(), Role: roleFromProto(r.GetRole())}
		if r.GetRole() == pb.Role_ROLE_UNSPECIFIED {
			res.Role = "assistant" // the usual speaker of a sampled message; saves curl users a field
		}
		for i, c := range r.GetContent() {
			res.Content = append(res.Content, contentFromProto(c, "sampling.content["+strconv.Itoa(i)+"]", &vs))
		}
		if r.GetMeta() != nil {
			res.Meta = mapFromStructPath(r.GetMeta(), "sampling._meta", &vs)
		}
		out.Sampling = res
	case *pb.HostAnswer_Elicitation:
		r := x.Elicitation
		res := &mcp.ElicitResult{}
		action, ok := elicitActions.fromProto(r.GetAction())
		res.Action = action
		if !ok {
			vs = append(vs, mcpcore.FieldViolation{Field: "elicitation.action", Description: "required: ELICIT_ACTION_ACCEPT, ELICIT_ACTION_DECLINE or ELICIT_ACTION_CANCEL"})
		}
		if r.GetContent() != nil {
			res.Content = mapFromStructPath(r.GetContent(), "elicitation.content", &vs)
		}
		if r.GetMeta() != nil {
			res.Meta = mapFromStructPath(r.GetMeta(), "elicitation._meta", &vs)
		}
		out.Elicitation = res
	case *pb.HostAnswer_Roots:
		r := x.Roots
		res := &mcp.ListRootsResult{Roots: []*mcp.Root{}}
		for i, root := range r.GetRoots() {
			f := "roots.roots[" + strconv.Itoa(i) + "]"
			if root == nil {
				vs = append(vs, mcpcore.FieldViolation{Field: f, Description: "must not be null"})
				continue
			}
			mr := &mcp.Root{URI: root.GetUri(), Name: root.GetName()}
			if root.GetMeta() != nil {
				mr.Meta = mapFromStructPath(root.GetMeta(), f+"._meta", &vs)
			}
			res.Roots = append(res.Roots, mr)
		}
		if r.GetMeta() != nil {
			res.Meta = mapFromStructPath(r.GetMeta(), "roots._meta", &vs)
		}
		out.Roots = res
	case *pb.HostAnswer_Authorization:
		a := x.Authorization
		out.Authorization = &mcpcore.AuthorizationAnswer{
			RedirectURL: a.GetRedirectUrl(),
			Code:        a.GetCode(),
			State:       a.GetState(),
			Iss:         a.GetIss(),
		}
	case *pb.HostAnswer_Approval:
		a := x.Approval
		out.Approval = &mcpcore.ApprovalAnswer{Approve: a.GetApprove(), Reason: a.GetReason(), Digest: a.GetArgumentsSha256()}
	case *pb.HostAnswer_Error:
		e := x.Error
		re := &mcpcore.RPCError{Code: int64(e.GetCode()), Message: e.GetMessage()}
		if e.GetData() != nil {
			var dvs []mcpcore.FieldViolation
			d := anyFromValue(e.GetData(), "error.data", &dvs)
			vs = append(vs, dvs...)
			if len(dvs) == 0 {
				raw, _ := json.Marshal(d)
				re.Data = raw
			}
		}
		out.Error = re
	default:
		vs = append(vs, mcpcore.FieldViolation{Field: "", Description: "exactly one of sampling, elicitation, roots, authorization or error must be set"})
	}
	if len(vs) > 0 {
		return mcpcore.Answer{}, &mcpcore.InvalidError{Err: errInvalidInput, Violations: vs}
	}
	return out, nil
}

// answerViolationPrefix is the path, inside a HostAnswer, of the result mcpcore validated: its violations
// are relative to the result ("content.age"), ours to the HostAnswer.
func answerViolationPrefix(a mcpcore.Answer) string {
	switch {
	case a.Sampling != nil:
		return "sampling"
	case a.Elicitation != nil:
		return "elicitation"
	case a.Roots != nil:
		return "roots"
	case a.Authorization != nil:
		return "authorization"
	case a.Approval != nil:
		return "approval"
	case a.Error != nil:
		return "error"
	}
	return ""
}

// --- events ---

func outcomeToProto(o mcpcore.Outcome) pb.RequestOutcome { return outcomes.toProto(o) }

func progressToProto(p *mcpcore.Progress) (*pb.ProgressNotification, error) {
	tok, err := valueFromAny(p.Token)
	if err != nil {
		return nil, badMessage("progress token", err)
	}
	out := &pb.ProgressNotification{ProgressToken: tok, Progress: p.Progress, Message: p.Message, CallId: p.CallID}
	if p.Total != 0 {
		t := p.Total
		out.Total = &t
	}
	return out, nil
}

func logToProto(l *mcp.LoggingMessageParams, callID string) (*pb.LoggingMessage, error) {
	data, err := valueFromAny(l.Data)
	if err != nil {
		return nil, badMessage("log data", err)
	}
	return &pb.LoggingMessage{Level: logLevelToProto(l.Level), Logger: l.Logger, Data: data, CallId: callID}, nil
}

// taskToProto converts a task the core parsed.
func taskToProto(t *mcpcore.Task) *pb.Task {
	if t == nil {
		return nil
	}
	out := &pb.Task{TaskId: t.ID, Status: taskStatusToProto(t.Status), StatusMessage: t.StatusMessage,
		CreateTime: parseTime(t.CreatedAt), LastUpdateTime: parseTime(t.LastUpdatedAt)}
	if t.TTL != nil {
		out.Ttl = durationpb.New(*t.TTL)
	}
	if t.PollInterval > 0 {
		out.PollInterval = durationpb.New(t.PollInterval)
	}
	out.Meta = rawMeta(t.Raw)
	return out
}

// taskFromRaw converts a task object as a server sent it (notifications/tasks/status); mcpcore reads it.
func taskFromRaw(raw json.RawMessage) (*pb.Task, error) {
	t, err := mcpcore.ParseTask(raw)
	if err != nil {
		return nil, badMessage("task", err)
	}
	return taskToProto(t), nil
}

func parseTime(s string) *timestamppb.Timestamp {
	if s == "" {
		return nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return nil
	}
	return timestamp(t)
}

// rawMeta returns the _meta of a JSON object, or nil.
func rawMeta(raw json.RawMessage) *structpb.Struct {
	var w struct {
		Meta map[string]any `json:"_meta"`
	}
	if json.Unmarshal(raw, &w) != nil || len(w.Meta) == 0 {
		return nil
	}
	s, err := structFromMap(w.Meta)
	if err != nil {
		return nil
	}
	return s
}

// eventToProto converts a session event. answered decides the outcome of an answered request for this
// receiver (ANSWERED or ANSWERED_ELSEWHERE); nil means ANSWERED.
func eventToProto(ev mcpcore.Event, answered func(mcpcore.RequestEnded) pb.RequestOutcome) (*pb.Event, error) {
	out := &pb.Event{Sequence: ev.Seq, SessionId: ev.SessionID}
	out.Time = timestamp(ev.Time)
	switch ev.Kind {
	case mcpcore.EventRequestCreated:
		if ev.Request == nil {
			return nil, badMessage("event", fmt.Errorf("request event without a request"))
		}
		r, err := serverRequestToProto(ev.Request)
		if err != nil {
			return nil, err
		}
		out.Payload = &pb.Event_ServerRequest{ServerRequest: r}
	case mcpcore.EventRequestEnded:
		if ev.Ended == nil {
			return nil, badMessage("event", fmt.Errorf("ended event without an outcome"))
		}
		o := outcomeToProto(ev.Ended.Outcome)
		if o == pb.RequestOutcome_REQUEST_OUTCOME_ANSWERED && answered != nil {
			o = answered(*ev.Ended)
		}
		out.Payload = &pb.Event_RequestEnded{RequestEnded: &pb.RequestEnded{RequestId: ev.Ended.RequestID, SessionId: ev.SessionID, Outcome: o, Detail: ev.Ended.Detail}}
	case mcpcore.EventProgress:
		if ev.Progress == nil {
			return nil, badMessage("event", fmt.Errorf("progress event without progress"))
		}
		p, err := progressToProto(ev.Progress)
		if err != nil {
			return nil, err
		}
		out.Payload = &pb.Event_Progress{Progress: p}
	case mcpcore.EventLog:
		if ev.Log == nil {
			return nil, badMessage("event", fmt.Errorf("log event without a message"))
		}
		l, err := logToProto(ev.Log, "")
		if err != nil {
			return nil, err
		}
		out.Payload = &pb.Event_Log{Log: l}
	case mcpcore.EventToolsListChanged:
		out.Payload = &pb.Event_ToolsListChanged{ToolsListChanged: &pb.ListChanged{}}
	case mcpcore.EventPromptsListChanged:
		out.Payload = &pb.Event_PromptsListChanged{PromptsListChanged: &pb.ListChanged{}}
	case mcpcore.EventResourcesListChanged:
		out.Payload = &pb.Event_ResourcesListChanged{ResourcesListChanged: &pb.ListChanged{}}
	case mcpcore.EventResourceUpdated:
		out.Payload = &pb.Event_ResourceUpdated{ResourceUpdated: &pb.ResourceUpdated{Uri: ev.URI}}
	case mcpcore.EventElicitationComplete:
		out.Payload = &pb.Event_ElicitationComplete{ElicitationComplete: &pb.ElicitationComplete{ElicitationId: ev.ElicitationID}}
	case mcpcore.EventTaskStatus:
		t, err := taskFromRaw(ev.Task)
		if err != nil {
			return nil, err
		}
		out.Payload = &pb.Event_TaskStatus{TaskStatus: t}
	case mcpcore.EventCancelled:
		out.Payload = &pb.Event_Cancelled{Cancelled: &pb.Cancelled{RequestId: ev.CancelledRequestID, Reason: ev.Reason}}
	case mcpcore.EventStateChanged:
		out.Payload = &pb.Event_SessionState{SessionState: &pb.SessionStateChange{State: stateToProto(ev.State), Reason: ev.Reason, Restarts: uint32(max(ev.Restarts, 0))}}
	case mcpcore.EventDropped:
		out.Payload = &pb.Event_EventsDropped{EventsDropped: &pb.EventsDropped{Count: ev.Dropped}}
	default:
		return nil, badMessage("event", fmt.Errorf("unknown kind %d", ev.Kind))
	}
	return out, nil
}

// timestamp converts t; the zero time and times outside the range of Timestamp (years 1 to 9999) are nil.
func timestamp(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	ts := timestamppb.New(t)
	if ts.CheckValid() != nil {
		return nil
	}
	return ts
}
