// Package gateway is the bridge's REST API: grpc-gateway's mux for BridgeService, reaching the gRPC service
// through an in-process channel (unary calls run in this process through the server's interceptor chain;
// streams go over an in-memory connection), its header matchers and error handler, and the one rule for
// trusting what a REST call carries: how a call reached the service (CallerInfo) and the client
// certificate the gateway forwards (trust.go). See docs/adr/0003 and 0016.
package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	mcpbridgev1 "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/server"
)

// New returns the REST API: grpc-gateway's mux for BridgeService, reaching svc through an in-process
// channel (inproc.go): unary calls run in this process through interceptors, the unary chain the gRPC
// server runs (so authentication and the rest apply to REST too); streams and any other method go over conn,
// the gateway's connection to the gRPC server (Dial). maxBytes is the server's message size limit.
//
// A streaming call (WatchEvents, StreamCallTool) sends its HTTP status and headers as soon as the gRPC
// server sent its headers, not at the first message: grpc-gateway writes nothing until a message comes, so
// an idle event stream would leave a REST client unable to tell that its watch is live.
func New(conn grpc.ClientConnInterface, svc mcpbridgev1.BridgeServiceServer, interceptors []grpc.UnaryServerInterceptor, maxBytes int) (http.Handler, error) {
	channel := newInprocChannel(conn, &mcpbridgev1.BridgeService_ServiceDesc, svc, interceptors, maxBytes)
	gw := runtime.NewServeMux(
		runtime.WithMarshalerOption(runtime.MIMEWildcard, &runtime.HTTPBodyMarshaler{Marshaler: listMarshaler{&runtime.JSONPb{
			MarshalOptions:   protojson.MarshalOptions{},
			UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: false},
		}}}),
		runtime.WithIncomingHeaderMatcher(incomingHeaderMatcher),
		runtime.WithMetadata(forwardClientCert),
		runtime.WithForwardResponseOption(sendStreamHeaders),
		runtime.WithErrorHandler(errorHandler),
	)
	if err := mcpbridgev1.RegisterBridgeServiceHandlerClient(context.Background(), gw, mcpbridgev1.NewBridgeServiceClient(channel)); err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gw.ServeHTTP(&responseWriter{ResponseWriter: &challengeWriter{ResponseWriter: w, challenge: BearerChallenge(r)}}, r)
	}), nil
}

// listMarshaler is the gateway's JSON marshaler. A ListToolsResponse is held as its encoding, its tools'
// schemas encoded Structs (server.ToolListJSON, docs/adr/0097, 0107), which protojson would leave out: it is
// written from that encoding a tool at a time.
type listMarshaler struct{ *runtime.JSONPb }

func (m listMarshaler) Marshal(v any) ([]byte, error) {
	if r, ok := v.(*mcpbridgev1.ListToolsResponse); ok && (len(r.GetTools()) > 0 || len(r.ProtoReflect().GetUnknown()) > 0) {
		return server.ToolListJSON(r, m.MarshalOptions.Marshal) // JSONPb.Marshal of a message, without its copy
	}
	return m.JSONPb.Marshal(v)
}

// NotFound answers a path outside the API with 404 and a body shaped as the gateway's own errors are.
var NotFound http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"code":    5, // google.rpc.Code NOT_FOUND, as the gateway's own errors have it
		"message": fmt.Sprintf("no such path %s: the API is under /v1/, its description at /openapi.json", r.URL.Path),
	})
})

// sendStreamHeaders is a forward-response option: grpc-gateway calls it with a nil message once a
// streaming call's gRPC headers arrived (and with each message after, which it ignores). When the server
// did send headers (a call that failed at once sends trailers only, so its HTTP status still comes from
// its error), it writes 200 and the stream's content type, and flushes them to the client.
func sendStreamHeaders(ctx context.Context, w http.ResponseWriter, m proto.Message) error {
	if m != nil {
		return nil
	}
	md, ok := runtime.ServerMetadataFromContext(ctx)
	if !ok || md.HeaderMD == nil {
		return nil
	}
	w.Header().Set("Content-Type", "application/json") // the JSON marshaler's, for every message
	w.WriteHeader(http.StatusOK)
	return http.NewResponseController(w).Flush()
}

// responseWriter drops a WriteHeader after the headers went out. grpc-gateway calls WriteHeader when a stream
// fails before its first message, which after sendStreamHeaders would only log "superfluous
// response.WriteHeader call"; the error itself is still written as the stream's last line. A responseWriter
// is used by one request's goroutine only.
type responseWriter struct {
	http.ResponseWriter
	wroteHeader bool
}

func (w *responseWriter) WriteHeader(code int) {
	if w.wroteHeader {
		return
	}
	w.wroteHeader = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *responseWriter) Write(b []byte) (int, error) {
	w.wroteHeader = true
	return w.ResponseWriter.Write(b)
}

// FlushError flushes through to the server's writer (http.ResponseController finds it).
func (w *responseWriter) FlushError() error {
	w.wroteHeader = true
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the server's writer for its other controls.
func (w *responseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Dial returns the gateway's connection to the gRPC server, over ln (which the gRPC server serves).
// maxBytes is the server's message size limit. The caller closes the connection, before the server stops.
func Dial(ln *Listener, maxBytes int) (*grpc.ClientConn, error) {
	conn, err := grpc.NewClient("passthrough:///"+Network, append(dialOptions(),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			return ln.DialContext(ctx)
		}),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxBytes), grpc.MaxCallSendMsgSize(maxBytes)),
	)...)
	if err != nil {
		return nil, fmt.Errorf("gateway connection: %w", err)
	}
	return conn, nil
}

// dialOptions are the gateway connection's interceptors: every request is checked for invalid UTF-8
// (server.CheckUTF8) before it is marshaled, so that a REST path or query like "/v1/sessions/s-%ff" is a 400
// naming the field rather than a 500 from the marshaler.
func dialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			if m, ok := req.(proto.Message); ok {
				if err := server.CheckDepth(m); err != nil {
					return err
				}
				if err := server.CheckUTF8(m); err != nil {
					return err
				}
			}
			return invoker(ctx, method, req, reply, cc, opts...)
		}),
		grpc.WithChainStreamInterceptor(func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			ctx, cancel := context.WithCancel(ctx)
			s, err := streamer(ctx, desc, cc, method, opts...)
			if err != nil {
				cancel()
				return nil, err
			}
			return &utf8CheckedStream{ClientStream: s, cancel: cancel}, nil
		}),
	}
}

// utf8CheckedStream checks each request message it sends; a bad one ends the call (cancel) and is reported
// as CheckUTF8's error. cancel also runs when the call ends by itself, through the context's parent.
type utf8CheckedStream struct {
	grpc.ClientStream
	cancel context.CancelFunc
}

func (s *utf8CheckedStream) SendMsg(m any) error {
	if pm, ok := m.(proto.Message); ok {
		if err := server.CheckDepth(pm); err != nil {
			s.cancel()
			return err
		}
		if err := server.CheckUTF8(pm); err != nil {
			s.cancel()
			return err
		}
	}
	return s.ClientStream.SendMsg(m)
}
