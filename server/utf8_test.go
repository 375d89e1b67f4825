package server

import (
	"runtime"
	"strings"
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
		{"in a nested struct", &pb.CallToolRequest{SessionId: "s", Name: "echo", Arguments: &structpb.Struct{Fields: map[string]*structpb.Value{
			"k": structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{"ok": structpb.NewNumberValue(1), "j": structpb.NewStringValue(bad)}}),
		}}}, `arguments.fields["k"].struct_value.fields["j"].string_value`},
		{"in a list", &pb.CallToolRequest{SessionId: "s", Name: "echo", Arguments: &structpb.Struct{Fields: map[string]*structpb.Value{
			"k": structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{structpb.NewStringValue("fine"), structpb.NewStringValue(bad), structpb.NewNullValue()}}),
		}}}, `arguments.fields["k"].list_value.values[1].string_value`},
		{"a key", &pb.CallToolRequest{SessionId: "s", Name: "echo", Arguments: &structpb.Struct{Fields: map[string]*structpb.Value{"k" + bad: structpb.NewStringValue("v")}}}, `arguments.fields`},
		{"in meta", &pb.CallToolRequest{SessionId: "s", Name: "echo", Meta: &structpb.Struct{Fields: map[string]*structpb.Value{"m": structpb.NewStringValue(bad)}}}, `meta.fields["m"].string_value`},
		{"valid nesting", &pb.CallToolRequest{SessionId: "s", Name: "echo", Arguments: &structpb.Struct{Fields: map[string]*structpb.Value{
			"k": structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{structpb.NewStructValue(&structpb.Struct{}), structpb.NewBoolValue(true)}}),
		}}}, ""},
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

// nestedArgs is a CallToolRequest whose arguments nest depth lists deep, with an invalid string at the bottom
// when bad.
func nestedArgs(depth int, bad bool) *pb.CallToolRequest {
	v := structpb.NewStringValue("ok")
	if bad {
		v = structpb.NewStringValue("\xff")
	}
	for range depth {
		v = structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{v}})
	}
	return &pb.CallToolRequest{SessionId: "s", Name: "t", Arguments: &structpb.Struct{Fields: map[string]*structpb.Value{"a": v}}}
}

func TestCheckDepth(t *testing.T) {
	// The request is level 1, its arguments Struct level 2: MaxNestingDepth-2 lists fit, one more does not.
	if err := CheckDepth(nestedArgs(MaxNestingDepth-2, false)); err != nil {
		t.Errorf("at the limit: %v", err)
	}
	err := CheckDepth(nestedArgs(MaxNestingDepth-1, false))
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(status.Convert(err).Message(), "deeper than 128 levels") {
		t.Errorf("over the limit: %v, want INVALID_ARGUMENT naming the limit", err)
	}
}

// TestCheckDepthMixed: Structs and ListValues nested in turn, under meta as under arguments, count a level
// each; a type that cannot hold them is not walked (staticDepth) and one that can is.
func TestCheckDepthMixed(t *testing.T) {
	mixed := func(levels int) *structpb.Struct { // levels Structs and ListValues in turn, outermost a Struct
		v := structpb.NewStringValue("x")
		for i := levels - 1; i >= 1; i-- {
			if i%2 == 1 {
				v = structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{v}})
			} else {
				v = structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{"k": v}})
			}
		}
		return &structpb.Struct{Fields: map[string]*structpb.Value{"k": v}}
	}
	// The request is level 1: its meta may span MaxNestingDepth-1 levels.
	if err := CheckDepth(&pb.CallToolRequest{SessionId: "s", Name: "t", Meta: mixed(MaxNestingDepth - 1)}); err != nil {
		t.Errorf("meta at the limit: %v", err)
	}
	if err := CheckDepth(&pb.CallToolRequest{SessionId: "s", Name: "t", Meta: mixed(MaxNestingDepth)}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("meta one level over the limit = %v, want INVALID_ARGUMENT", err)
	}
	if d := staticDepth((&pb.GetSessionRequest{}).ProtoReflect().Descriptor()); d != 1 {
		t.Errorf("staticDepth(GetSessionRequest) = %d, want 1", d)
	}
	if d := staticDepth((&pb.CallToolRequest{}).ProtoReflect().Descriptor()); d != unboundedDepth {
		t.Errorf("staticDepth(CallToolRequest) = %d, want unbounded (it holds Structs)", d)
	}
}

// TestCheckUTF8Linear: checking a 5,000-deep request allocates a small multiple of its size (it allocated
// hundreds of megabytes, building every field's path as a string), and still names the bad field.
func TestCheckUTF8Linear(t *testing.T) {
	m := nestedArgs(5000, true)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := CheckUTF8(m)
	runtime.ReadMemStats(&after)
	if grown := after.TotalAlloc - before.TotalAlloc; grown > 16<<20 {
		t.Errorf("CheckUTF8 of a 5,000-deep request allocated %d MB, want < 16 MB", grown>>20)
	}
	if msg := status.Convert(err).Message(); !strings.HasPrefix(msg, `invalid request: arguments.fields["a"].list_value.values[0]`) || !strings.HasSuffix(msg, "string_value: not valid UTF-8") {
		t.Errorf("CheckUTF8 = %.200v…, want the bad field named", err)
	}
}

// BenchmarkCheckUTF8 is the check every REST request gets, on a small CallToolRequest.
func BenchmarkCheckUTF8(b *testing.B) {
	args, _ := structpb.NewStruct(map[string]any{"text": strings.Repeat("a", 100), "n": 3, "list": []any{"x", "y"}})
	m := &pb.CallToolRequest{SessionId: "s-1", Name: "echo", Arguments: args}
	b.ReportAllocs()
	for b.Loop() {
		if err := CheckUTF8(m); err != nil {
			b.Fatal(err)
		}
	}
}
