package mcpcore

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// This file holds the core's tracing (docs/adr/0014): a client span per MCP request sent upstream and a
// span per server-initiated request, named and attributed as the OpenTelemetry semantic conventions for
// MCP say, and W3C trace context carried to the server in params._meta (the keys SEP-414 reserves) and
// to the host on every pending request. It also times each upstream request for Observer.OperationDone.
//
// Without Options.TracerProvider the core makes no spans, but still passes on the trace context it is
// given: a host's traceparent reaches the server and comes back on the server's requests.

// instrumentationName names the core's tracer.
const instrumentationName = "github.com/mcp-bridge/mcp-bridge/mcpcore"

// w3c is the propagation the MCP convention uses: W3C Trace Context and Baggage.
var w3c = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// metaCarrier puts trace context into a request's _meta.
type metaCarrier mcp.Meta

func (m metaCarrier) Get(key string) string {
	v, _ := m[key].(string)
	return v
}
func (m metaCarrier) Set(key, value string) { m[key] = value }
func (m metaCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// hasTraceContext reports whether ctx carries anything to propagate: a span context or baggage.
func hasTraceContext(ctx context.Context) bool {
	return trace.SpanContextFromContext(ctx).IsValid() || baggage.FromContext(ctx).Len() > 0
}

// injectMeta adds ctx's trace context (traceparent, tracestate, baggage) to m, allocating m if it is nil
// and there is something to add. It returns m.
func injectMeta(ctx context.Context, m mcp.Meta) mcp.Meta {
	if !hasTraceContext(ctx) {
		return m
	}
	if m == nil {
		m = mcp.Meta{}
	}
	w3c.Inject(ctx, metaCarrier(m))
	return m
}

// extractMeta returns ctx with the trace context of a server request's _meta, when the server sent one
// (SEP-414): a server that traces makes the bridge's span of its request a child of its own.
func extractMeta(ctx context.Context, m map[string]any) context.Context {
	if _, ok := m["traceparent"]; !ok {
		return ctx
	}
	return w3c.Extract(ctx, metaCarrier(m))
}

// InjectTraceHeaders sets ctx's W3C trace context (traceparent, tracestate, baggage) on an HTTP request's
// headers: the Streamable HTTP transport calls it for every request it sends, so that HTTP proxies and
// servers that trace HTTP see the same trace as the request's _meta carries.
func InjectTraceHeaders(ctx context.Context, h http.Header) {
	if hasTraceContext(ctx) {
		w3c.Inject(ctx, propagation.HeaderCarrier(h))
	}
}

// TraceContextOf returns ctx's W3C trace context as a carrier map (keys traceparent, tracestate, baggage),
// or nil when ctx carries none.
func TraceContextOf(ctx context.Context) map[string]string {
	if !hasTraceContext(ctx) {
		return nil
	}
	m := propagation.MapCarrier{}
	w3c.Inject(ctx, m)
	return m
}

// tracer returns the core's tracer, or nil when tracing is off.
func (c *Core) tracer() trace.Tracer { return c.trc }

// upstreamOp is one MCP request sent upstream for a host call, being timed (and traced).
type upstreamOp struct {
	start     time.Time
	target    string     // opTarget of the call: bounded, as metrics and spans carry it
	version   string     // versionLabel of the connection's protocol version
	span      trace.Span // nil when tracing is off
	toolError bool       // the tools/call result had isError (set by the op, on run's goroutine)
}

type upstreamOpKey struct{}

// sessionOps times and traces a session's upstream requests (beginOp, endOp) and the server requests its
// calls raise (traceServerRequest). The session holds it as Session.ops.
type sessionOps struct {
	s *Session
	// spans holds, when tracing, the span context of each call's current upstream request
	// (*activeCall → trace.SpanContext): the parent of the server requests the call raises.
	spans sync.Map
}

// beginOp starts one upstream request of call: a client span "{method} {target}" when tracing is on,
// child of the span in ctx (the host's RPC), remembered as the call's current request so that server
// requests raised by the call become its children.
func (o *sessionOps) beginOp(ctx context.Context, call *activeCall, g *generation) (context.Context, *upstreamOp) {
	s := o.s
	op := &upstreamOp{start: time.Now(), target: s.ops.opTarget(call), version: versionLabel(g.protocolVersion())}
	if t := s.core.tracer(); t != nil {
		// The span name is "{mcp.method.name} {target}" only for a target the server listed: span names
		// are aggregated by tracing backends (docs/adr/0030).
		name := call.method
		if op.target != "" && op.target != OtherValue {
			name += " " + op.target
		}
		attrs := []attribute.KeyValue{
			attribute.String("mcp.method.name", call.method),
			attribute.String("mcp.protocol.version", op.version),
			attribute.String("mcpbridge.server.name", s.server.Name),
			attribute.String("mcpbridge.session.id", s.id),
			attribute.String("network.transport", networkTransport(s.server.Transport)),
		}
		switch call.method {
		case "tools/call":
			attrs = append(attrs, attribute.String("gen_ai.tool.name", op.target), attribute.String("gen_ai.operation.name", "execute_tool"))
		case "prompts/get":
			attrs = append(attrs, attribute.String("gen_ai.prompt.name", op.target))
		case "resources/read", "resources/subscribe", "resources/unsubscribe":
			attrs = append(attrs, attribute.String("mcp.resource.uri", call.name))
		}
		ctx, op.span = t.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
		o.spans.Store(call, op.span.SpanContext())
	}
	return context.WithValue(ctx, upstreamOpKey{}, op), op
}

// endOp ends op with err (the classified error of the request, nil on success) and tells the Observer.
func (o *sessionOps) endOp(op *upstreamOp, call *activeCall, g *generation, err error) {
	s := o.s
	d := time.Since(op.start)
	et := ErrorType(err)
	if et == "" && op.toolError {
		et = "tool_error"
	}
	s.core.obs.OperationDone(Operation{
		Server: s.server.Name, Transport: s.server.Transport, Method: call.method, Target: op.target,
		ProtocolVersion: op.version, ErrorType: et, Duration: d,
	})
	if op.span == nil {
		return
	}
	if et != "" {
		op.span.SetAttributes(attribute.String("error.type", et))
		if code, ok := UpstreamCode(err); ok {
			op.span.SetAttributes(attribute.String("rpc.response.status_code", codeType(code)))
		}
		msg := "tool_error"
		if err != nil {
			msg = err.Error() // redacted by classify
		}
		op.span.SetStatus(codes.Error, msg)
	}
	op.span.End()
}

// markToolError records, on the upstream request running in ctx, that the tools/call result had isError.
func markToolError(ctx context.Context) {
	if op, ok := ctx.Value(upstreamOpKey{}).(*upstreamOp); ok {
		op.toolError = true
	}
}

// forgetOps drops call's current upstream request (the call ended).
func (o *sessionOps) forgetOps(call *activeCall) {
	s := o.s
	if s.core.trc != nil {
		o.spans.Delete(call)
	}
}

// opTarget is the low-cardinality target of a call's requests: the tool or prompt name when the server
// listed it, else OtherValue; "" for other methods.
func (o *sessionOps) opTarget(call *activeCall) string {
	s := o.s
	switch call.method {
	case "tools/call", "prompts/get":
		return s.core.listed.target(s.server.Name, call.method, call.name)
	}
	return ""
}

// protocolVersion is the version negotiated on the connection ("" before the handshake ended).
func (g *generation) protocolVersion() string {
	if r := g.cs.InitializeResult(); r != nil {
		return r.ProtocolVersion
	}
	return ""
}

func networkTransport(t TransportKind) string {
	if t == TransportStdio {
		return "pipe"
	}
	return "tcp"
}

// serverRequestMethods are the MCP methods of the kinds of server requests.
var serverRequestMethods = map[RequestKind]string{
	KindSampling:      "sampling/createMessage",
	KindElicitation:   "elicitation/create",
	KindRoots:         "roots/list",
	KindAuthorization: "authorization",
	KindApproval:      "approval",
}

// traceServerRequest starts the span of a server-initiated request raised by call (nil when none is
// known), child of the call's current upstream request and linked to the host's call, and sets
// req.TraceContext to what the host should continue. It returns the function that ends the span with the
// request's outcome. Without tracing the request carries the call's own trace context.
func (o *sessionOps) traceServerRequest(ctx context.Context, req *PendingRequest, call *activeCall) func(Outcome) {
	s := o.s
	parent := ctx
	if call != nil {
		parent = call.ctx
	}
	t := s.core.tracer()
	if t == nil {
		req.TraceContext = TraceContextOf(parent)
		return func(Outcome) {}
	}
	var opts []trace.SpanStartOption
	if call != nil {
		if sc, ok := o.spans.Load(call); ok {
			if link := trace.SpanContextFromContext(call.ctx); link.IsValid() {
				opts = append(opts, trace.WithLinks(trace.Link{SpanContext: link}))
			}
			parent = trace.ContextWithSpanContext(call.ctx, sc.(trace.SpanContext))
		}
	}
	method := serverRequestMethods[req.Kind]
	opts = append(opts, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(
		attribute.String("mcp.method.name", method),
		attribute.String("mcpbridge.server.name", s.server.Name),
		attribute.String("mcpbridge.session.id", s.id),
		attribute.String("mcpbridge.request.id", req.ID),
		attribute.String("mcpbridge.delivery", req.Delivery.String()),
	))
	sctx, span := t.Start(parent, method, opts...)
	req.TraceContext = TraceContextOf(sctx)
	return func(o Outcome) {
		what := o.String()
		if o == 0 {
			what = "refused" // ErrTooManyPending: never registered
		}
		span.SetAttributes(attribute.String("mcpbridge.outcome", what))
		if o != OutcomeAnswered {
			span.SetAttributes(attribute.String("error.type", what))
			span.SetStatus(codes.Error, what)
		}
		span.End()
	}
}
