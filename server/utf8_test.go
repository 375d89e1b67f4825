package server

import (
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

func TestCheckUTF8(t *testing.T) {
	bad := string([]byte{0xff})
	tests := []struct {
		name  string
		msg   *pb.CallToolRequest
		field string // "" when valid
	}{
		{"valid", &pb.CallToolRequest{SessionId: "s-1", Name: "echo"}, ""},
		{"top-level field", &pb.CallToolRequest{SessionId: "s-" + bad, Name: "echo"}, "session_id"},
		{"nested value", &pb.CallToolRequest{SessionId: "s", Name: "echo", Arguments: &structpb.Struct{Fields: map[string]*structpb.Value{"k": structpb.NewStringValue(bad)}}}, `arguments.fields["k"].string_value`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckUTF8(tc.msg)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("CheckUTF8 = %v, want nil", err)
				}
				return
			}
			st := status.Convert(err)
			if st.Code() != codes.InvalidArgument {
				t.Fatalf("CheckUTF8 = %v, want INVALID_ARGUMENT", err)
			}
			for _, d := range st.Details() {
				if br, ok := d.(*errdetails.BadRequest); ok && len(br.GetFieldViolations()) == 1 && br.GetFieldViolations()[0].GetField() == tc.field {
					return
				}
			}
			t.Errorf("CheckUTF8 details = %v, want one violation of %s", st.Details(), tc.field)
		})
	}
}
