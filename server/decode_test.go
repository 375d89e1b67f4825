package server

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	encproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// The codec tells a message nested deeper than protobuf decodes from one that is not a message at all, by the
// message's bytes and type, and decodes the rest as grpc-go's codec does.
func TestDecodeCodecClassifies(t *testing.T) {
	c := decodeCodec{encoding.GetCodecV2(encproto.Name)}
	deep := func(depth int) []byte {
		v := &structpb.Value{}
		for range depth {
			v = structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{v}})
		}
		b, err := proto.Marshal(&pb.CallToolRequest{Name: "x", Arguments: &structpb.Struct{Fields: map[string]*structpb.Value{"a": v}}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string // "" decodes
	}{
		{"shallow", deep(10), ""},
		{"deep-but-decodable", deep(200), ""}, // decodes: the interceptors' CheckDepth refuses it
		{"5000", deep(5000), "deeper than 128 levels"},
		{"10000", deep(10000), "deeper than 128 levels"},
		{"garbage", []byte{0x0a, 0xff, 0xff, 0xff}, "not a valid protobuf message"},
	} {
		tgt := &decodeTarget{msg: &pb.CallToolRequest{}}
		if err := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(tc.data)}, tgt); err != nil {
			t.Fatalf("%s: Unmarshal = %v, want nil (the failure goes in the target)", tc.name, err)
		}
		switch {
		case tc.want == "" && tgt.err != nil:
			t.Errorf("%s: %v, want decoded", tc.name, tgt.err)
		case tc.want != "" && (status.Code(tgt.err) != codes.InvalidArgument || !strings.Contains(status.Convert(tgt.err).Message(), tc.want)):
			t.Errorf("%s: %v, want INVALID_ARGUMENT with %q", tc.name, tgt.err, tc.want)
		}
	}
	// A plain message (health, reflection, the gateway) decodes as before.
	var m pb.CallToolRequest
	if err := c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(deep(3))}, &m); err != nil || m.GetName() != "x" {
		t.Errorf("plain Unmarshal = %v, %v", &m, err)
	}
}
