package server

import (
	"context"
	"errors"
	"log/slog"
	"slices"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// A host's request message that does not decode is the host's error, refused as REST refuses the same body:
// INVALID_ARGUMENT, INVALID_INPUT, and, when it nests deeper than protobuf's decoder goes (its recursion limit,
// near 5,000 levels of Struct values), TooDeep naming MaxNestingDepth. grpc-go decodes a request inside the
// generated handler, before any interceptor runs, and turns every codec error into INTERNAL with the codec's
// text; so the bridge's handlers are registered through decodingDesc, which hands grpc-go a decodeTarget
// instead of the message, and the server's codec (decodeCodec) records in it why the message did not decode.
// Nothing matches on an error's text.

// decodeTarget is what a registered handler asks grpc-go to decode into: msg, the request message, and err,
// set by decodeCodec when msg's bytes did not decode.
type decodeTarget struct {
	msg proto.Message
	err error
}

// errUndecodable: the bytes are not a message of the type the method takes.
var errUndecodable = errors.New("the request is not a valid protobuf message of the method's type")

// decodeCodec is the decoding half of the gRPC server's codec (EncodingOptions): grpc-go's proto codec, which also decodes into a decodeTarget and
// records there a failure (TooDeep, or errUndecodable) for the handler to answer.
type decodeCodec struct{ encoding.CodecV2 }

func (c decodeCodec) Unmarshal(data mem.BufferSlice, v any) error {
	t, ok := v.(*decodeTarget)
	if !ok {
		return c.CodecV2.Unmarshal(data, v)
	}
	if err := c.CodecV2.Unmarshal(data, t.msg); err != nil {
		// Only a failure pays for the scan: was it the depth? (bounded: it stops past MaxNestingDepth)
		b := data.Materialize()
		if wireTooDeep(b, t.msg.ProtoReflect().Descriptor(), 0) {
			t.err = TooDeep()
		} else {
			t.err = undecodableRequest(errUndecodable)
		}
	}
	return nil
}

// wireTooDeep reports whether the encoded message b of type md nests deeper than MaxNestingDepth, counted as
// withinDepth counts on a decoded message (a google.protobuf.Value, and a map's entry, are no level). It reads
// tags and lengths only, descending into message fields, and stops past the limit: its work is bounded by
// len(b) and its recursion by the limit.
func wireTooDeep(b []byte, md protoreflect.MessageDescriptor, depth int) bool {
	if md.FullName() != "google.protobuf.Value" && !md.IsMapEntry() {
		depth++
	}
	if depth > MaxNestingDepth {
		return true
	}
	fields := md.Fields()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		b = b[n:]
		if fd := fields.ByNumber(num); typ == protowire.BytesType && fd != nil && fd.Kind() == protoreflect.MessageKind {
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return false
			}
			if wireTooDeep(v, fd.Message(), depth) {
				return true
			}
			b = b[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return false
		}
		b = b[m:]
	}
	return false
}

// decodingDesc is desc with every handler decoding its request through a decodeTarget: a unary handler's dec,
// and a stream's RecvMsg, answer a message that does not decode with the bridge's status (decodeCodec), and a
// stream's message nested deeper than MaxNestingDepth with TooDeep. A unary refusal is logged here: grpc-go
// decodes before the interceptors that log the rest.
func decodingDesc(desc *grpc.ServiceDesc, logger *slog.Logger) *grpc.ServiceDesc {
	d := *desc
	d.Methods = slices.Clone(desc.Methods)
	for i, md := range d.Methods {
		method := "/" + desc.ServiceName + "/" + md.MethodName
		h := md.Handler
		d.Methods[i].Handler = func(srv any, ctx context.Context, dec func(any) error, in grpc.UnaryServerInterceptor) (any, error) {
			return h(srv, ctx, func(m any) error {
				err := recvDecoded(dec, m)
				if err != nil && logger != nil {
					logger.Warn("gRPC message refused", "method", method, "code", status.Code(err).String(), "error", status.Convert(err).Message())
				}
				return err
			}, in)
		}
	}
	d.Streams = slices.Clone(desc.Streams)
	for i, sd := range d.Streams {
		h := sd.Handler
		d.Streams[i].Handler = func(srv any, ss grpc.ServerStream) error { return h(srv, decodingStream{ss}) }
	}
	return &d
}

// recvDecoded decodes into m with recv (grpc-go's dec, or a stream's RecvMsg) through a decodeTarget.
func recvDecoded(recv func(any) error, m any) error {
	pm, ok := m.(proto.Message)
	if !ok {
		return recv(m)
	}
	t := &decodeTarget{msg: pm}
	if err := recv(t); err != nil {
		return err
	}
	return t.err
}

// decodingStream is a server stream whose RecvMsg decodes through a decodeTarget (decodingDesc).
type decodingStream struct{ grpc.ServerStream }

// RecvMsg receives the next message and refuses one that does not decode, or nests deeper than
// MaxNestingDepth (CheckDepth: the interceptors' stream wrappers see the decodeTarget, not the message).
func (s decodingStream) RecvMsg(m any) error {
	if err := recvDecoded(s.ServerStream.RecvMsg, m); err != nil {
		return err
	}
	if pm, ok := m.(proto.Message); ok {
		return CheckDepth(pm)
	}
	return nil
}

// Register registers the bridge's service on r, its handlers decoding through decodingDesc. The server must
// run EncodingOptions (its codec decodes with decodeCodec, which decodingDesc needs).
func (s *Service) Register(r grpc.ServiceRegistrar) {
	r.RegisterService(decodingDesc(&pb.BridgeService_ServiceDesc, s.logger), s)
}
