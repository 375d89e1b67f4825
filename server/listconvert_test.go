package server

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/encoding"
	encproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

type listResult struct{ names []string }

func buildList(calls *int, r *listResult) func() (*pb.ListToolsResponse, error) {
	return func() (*pb.ListToolsResponse, error) {
		*calls++
		if r.names == nil {
			return nil, errors.New("bad")
		}
		out := &pb.ListToolsResponse{NextPageToken: "next"}
		for _, n := range r.names {
			schema, err := structpb.NewStruct(map[string]any{"type": "object", "properties": map[string]any{n: map[string]any{"type": "string"}}})
			if err != nil {
				return nil, err
			}
			out.Tools = append(out.Tools, &pb.Tool{Name: n, InputSchema: schema})
		}
		return out, nil
	}
}

// TestResponseMemo: a response is built once per result object, is an ordinary message, goes on the wire
// through the server's codec as its kept encoding, and a failed build is not remembered.
func TestResponseMemo(t *testing.T) {
	memo := newResponseMemo[listResult, *pb.ListToolsResponse]()
	calls := 0
	a, b := &listResult{[]string{"x", "y"}}, &listResult{[]string{"x", "y"}}
	a1, err := memo.respond(a, buildList(&calls, a))
	if err != nil {
		t.Fatal(err)
	}
	a2, _ := memo.respond(a, buildList(&calls, a))
	b1, _ := memo.respond(b, buildList(&calls, b)) // an equal but different object has its own response
	if a1 != a2 || a1 == b1 || calls != 2 {
		t.Fatalf("a1=%p a2=%p b1=%p builds=%d", a1, a2, b1, calls)
	}

	full, _ := buildList(new(int), a)()
	if d := cmp.Diff(full, a1, protocmp.Transform()); d != "" {
		t.Errorf("response (-want +got):\n%s", d)
	}
	kept, ok := preEncoded.Load(proto.Message(a1))
	if !ok {
		t.Fatal("no encoding kept for the response")
	}
	codec := preEncodedCodec{encoding.GetCodecV2(encproto.Name)}
	for _, m := range []proto.Message{a1, full} { // the kept encoding, and a message marshaled as usual
		data, err := codec.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var decoded pb.ListToolsResponse
		if err := proto.Unmarshal(data.Materialize(), &decoded); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(full, &decoded, protocmp.Transform()); d != "" {
			t.Errorf("decoded response (-want +got):\n%s", d)
		}
		if m == proto.Message(a1) && !cmp.Equal(data.Materialize(), kept.([]byte)) {
			t.Error("the codec did not send the kept encoding")
		}
	}

	bad := &listResult{}
	for range 2 {
		if _, err := memo.respond(bad, buildList(&calls, bad)); err == nil {
			t.Fatal("no error")
		}
	}
	if calls != 4 {
		t.Errorf("a failed build was remembered: %d builds", calls)
	}
	keep := make([]*listResult, 0, maxEncodedResponses+5) // reachable, so no cleanup shrinks the memo
	for range maxEncodedResponses + 5 {
		r := &listResult{[]string{"z"}}
		keep = append(keep, r)
		if _, err := memo.respond(r, buildList(&calls, r)); err != nil {
			t.Fatal(err)
		}
	}
	memo.mu.Lock()
	n := len(memo.m)
	memo.mu.Unlock()
	if n > maxEncodedResponses {
		t.Errorf("%d kept, want at most %d", n, maxEncodedResponses)
	}
	_ = keep
}

// TestResponseMemoInvalidUTF8: a result whose response cannot be encoded is the server's bad result.
func TestResponseMemoInvalidUTF8(t *testing.T) {
	memo := newResponseMemo[listResult, *pb.ListToolsResponse]()
	_, err := memo.respond(&listResult{}, func() (*pb.ListToolsResponse, error) {
		return &pb.ListToolsResponse{Tools: []*pb.Tool{{Name: "\xff"}}}, nil
	})
	if !errors.Is(err, mcpcore.ErrBadMessage) {
		t.Fatalf("err = %v, want ErrBadMessage", err)
	}
}
