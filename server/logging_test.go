package server

import (
	"log/slog"
	"testing"

	"google.golang.org/grpc/codes"
)

func TestFailureRecord(t *testing.T) {
	for _, tc := range []struct {
		code  codes.Code
		level slog.Level
		msg   string
	}{
		{codes.Internal, slog.LevelWarn, "rpc failed"},
		{codes.Unavailable, slog.LevelWarn, "rpc failed"},
		{codes.Unknown, slog.LevelWarn, "rpc failed"},
		{codes.DataLoss, slog.LevelWarn, "rpc failed"},
		{codes.NotFound, slog.LevelInfo, "rpc refused"},
		{codes.InvalidArgument, slog.LevelInfo, "rpc refused"},
		{codes.PermissionDenied, slog.LevelInfo, "rpc refused"},
		{codes.DeadlineExceeded, slog.LevelInfo, "rpc refused"},
		{codes.Canceled, slog.LevelDebug, "rpc cancelled"},
	} {
		t.Run(tc.code.String(), func(t *testing.T) {
			level, msg := failureRecord(tc.code)
			if level != tc.level || msg != tc.msg {
				t.Errorf("failureRecord(%v) = %v %q, want %v %q", tc.code, level, msg, tc.level, tc.msg)
			}
		})
	}
}
