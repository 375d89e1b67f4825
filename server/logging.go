package server

import (
	"context"
	"log/slog"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// This file holds the one place where a failure a host sees is logged: an interceptor that logs every
// failed RPC (REST too: the gateway calls the gRPC server) with its method, code and message, and the
// session and server the request named. Status messages come from toStatus, which gets its text from the
// core with the servers' secrets already redacted.

// failureRecord is the level and message of a failed RPC's log line. Only faults on the bridge's or the
// upstream server's side (UNKNOWN, INTERNAL, UNAVAILABLE, DATA_LOSS) are "rpc failed", at WARN. What the
// caller did — bad input, an id that is not there, a permission, a limit, a deadline — is "rpc refused" at
// INFO: an expected 404 is not a failure of the bridge. A caller that cancels its own call (every stream a
// client closes ends so) is "rpc cancelled" at DEBUG: it is how calls normally end.
func failureRecord(c codes.Code) (slog.Level, string) {
	switch c {
	case codes.Unknown, codes.Internal, codes.Unavailable, codes.DataLoss:
		return slog.LevelWarn, "rpc failed"
	case codes.Canceled:
		return slog.LevelDebug, "rpc cancelled"
	}
	return slog.LevelInfo, "rpc refused"
}

// logFailure logs a failed RPC; it does nothing for a nil error.
func (ic *interceptors) logFailure(ctx context.Context, method string, req any, err error) {
	s := ic.s
	if err == nil {
		return
	}
	st := status.Convert(err)
	attrs := []slog.Attr{slog.String("method", method), slog.String("code", st.Code().String()), slog.String("error", st.Message())}
	if r, ok := req.(interface{ GetSessionId() string }); ok && r.GetSessionId() != "" {
		attrs = append(attrs, slog.String("session", r.GetSessionId()))
	}
	if r, ok := req.(interface{ GetServer() string }); ok && r.GetServer() != "" {
		attrs = append(attrs, slog.String("server", r.GetServer()))
	}
	level, msg := failureRecord(st.Code())
	s.logger.LogAttrs(ctx, level, msg, attrs...)
}

// loggingUnaryInterceptor logs failed unary RPCs. It is the outermost interceptor, so it sees
// authentication failures and recovered panics too.
func (ic *interceptors) loggingUnaryInterceptor() grpc.UnaryServerInterceptor {
	s := ic.s
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		resp, err := handler(ctx, req)
		s.logFailure(ctx, info.FullMethod, req, err)
		return resp, err
	}
}

// loggingStreamInterceptor logs failed streaming RPCs, naming the last session a received message named.
func (ic *interceptors) loggingStreamInterceptor() grpc.StreamServerInterceptor {
	s := ic.s
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
		rs := &recordingStream{ServerStream: ss}
		err := handler(srv, rs)
		var req any
		if p := rs.last.Load(); p != nil {
			req = *p
		}
		s.logFailure(ss.Context(), info.FullMethod, req, err)
		return err
	}
}

// recordingStream remembers the last received message that named a session.
type recordingStream struct {
	grpc.ServerStream
	last atomic.Pointer[any]
}

func (r *recordingStream) RecvMsg(m any) error {
	err := r.ServerStream.RecvMsg(m)
	if err == nil {
		if _, ok := m.(interface{ GetSessionId() string }); ok {
			r.last.Store(&m)
		}
	}
	return err
}
