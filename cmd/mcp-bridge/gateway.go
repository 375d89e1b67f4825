package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	mcpbridgev1 "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// newGateway returns the REST API: grpc-gateway's mux for BridgeService over conn, the gateway's
// connection to the gRPC server (docs/adr/0003).
//
// A streaming call (WatchEvents, StreamCallTool) sends its HTTP status and headers as soon as the gRPC
// server sent its headers, not at the first message: grpc-gateway writes nothing until a message comes, so
// an idle event stream would leave a REST client unable to tell that its watch is live.
func newGateway(conn *grpc.ClientConn) (http.Handler, error) {
	gw := runtime.NewServeMux(
		runtime.WithMarshalerOption(runtime.MIMEWildcard, &runtime.HTTPBodyMarshaler{Marshaler: &runtime.JSONPb{
			MarshalOptions:   protojson.MarshalOptions{},
			UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: false},
		}}),
		runtime.WithIncomingHeaderMatcher(incomingHeaderMatcher),
		runtime.WithMetadata(forwardClientCert),
		runtime.WithForwardResponseOption(sendStreamHeaders),
	)
	if err := mcpbridgev1.RegisterBridgeServiceHandler(context.Background(), gw, conn); err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gw.ServeHTTP(&gatewayWriter{ResponseWriter: w}, r)
	}), nil
}

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

// gatewayWriter drops a WriteHeader after the headers went out. grpc-gateway calls WriteHeader when a stream
// fails before its first message, which after sendStreamHeaders would only log "superfluous
// response.WriteHeader call"; the error itself is still written as the stream's last line. A gatewayWriter
// is used by one request's goroutine only.
type gatewayWriter struct {
	http.ResponseWriter
	wroteHeader bool
}

func (w *gatewayWriter) WriteHeader(code int) {
	if w.wroteHeader {
		return
	}
	w.wroteHeader = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *gatewayWriter) Write(b []byte) (int, error) {
	w.wroteHeader = true
	return w.ResponseWriter.Write(b)
}

// FlushError flushes through to the server's writer (http.ResponseController finds it).
func (w *gatewayWriter) FlushError() error {
	w.wroteHeader = true
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the server's writer for its other controls.
func (w *gatewayWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
