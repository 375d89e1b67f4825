package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

// TestServerRequestWarnings: sampling and elicitation requests carry the untrusted-text warnings of what they
// show a person, with paths into their JSON form; a URL elicitation carries its destination.
func TestServerRequestWarnings(t *testing.T) {
	tests := []struct {
		name string
		req  *mcpcore.PendingRequest
		want []string // path kind
		dest *pb.UrlDestination
	}{
		{"sampling", &mcpcore.PendingRequest{Kind: mcpcore.KindSampling, OriginName: "rtl\u202eexe.txt", Sampling: &mcp.CreateMessageWithToolsParams{
			SystemPrompt: "be\u200b nice", Messages: []*mcp.SamplingMessageV2{{Role: "user", Content: []mcp.Content{&mcp.TextContent{Text: "p\u0430ypal"}}}}}},
			[]string{"originName BIDI_CONTROL", "sampling.messages[0].content[0].text.text MIXED_SCRIPT", "sampling.systemPrompt INVISIBLE"}, nil},
		{"form elicitation", &mcpcore.PendingRequest{Kind: mcpcore.KindElicitation, Elicitation: &mcp.ElicitParams{Message: "ok\u0007",
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"to": map[string]any{"type": "string"}, "to\u200d": map[string]any{"type": "string"}}}}},
			[]string{"elicitation.message CONTROL", `elicitation.requestedSchema.properties["to\u200d"] INVISIBLE`, `elicitation.requestedSchema.properties["to\u200d"] KEY_COLLISION`}, nil},
		{"url elicitation", &mcpcore.PendingRequest{Kind: mcpcore.KindElicitation, Elicitation: &mcp.ElicitParams{Mode: "url", Message: "go", URL: "https://login.example.co.uk/x", ElicitationID: "e"}},
			nil, &pb.UrlDestination{Scheme: "https", Host: "login.example.co.uk", RegistrableDomain: "example.co.uk"}},
		{"plain", &mcpcore.PendingRequest{Kind: mcpcore.KindSampling, Sampling: &mcp.CreateMessageWithToolsParams{Messages: []*mcp.SamplingMessageV2{{Role: "user", Content: []mcp.Content{&mcp.TextContent{Text: "Grüße, Москва"}}}}}}, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := serverRequestToProto(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			var ws []string
			for _, w := range got.GetWarnings() {
				ws = append(ws, w.GetPath()+" "+strings.TrimPrefix(w.GetKind().String(), "TEXT_WARNING_KIND_"))
			}
			if strings.Join(ws, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(ws, "\n"), strings.Join(tt.want, "\n"))
			}
			d := got.GetUrlDestination()
			if (d == nil) != (tt.dest == nil) || d.GetHost() != tt.dest.GetHost() || d.GetRegistrableDomain() != tt.dest.GetRegistrableDomain() || d.GetScheme() != tt.dest.GetScheme() {
				t.Errorf("url_destination = %v, want %v", d, tt.dest)
			}
		})
	}
}

// TestApprovalDataIsTheBridgesOwn: an approval request's arguments are the bridge's own canonical JSON, so
// a failure to convert them is the bridge's INTERNAL error, not the server's bad message (a 502 over REST).
func TestApprovalDataIsTheBridgesOwn(t *testing.T) {
	_, err := approvalToProto(&mcpcore.ApprovalRequest{Server: "s", Tool: "t", Arguments: json.RawMessage(`{"a":`)})
	if err == nil {
		t.Fatal("approvalToProto accepted arguments that are not JSON")
	}
	st := status.Convert(toStatus(err))
	if info := errorInfo(st.Details()); st.Code() != codes.Internal || info.GetReason() != ReasonInternal {
		t.Errorf("status %v %v, want INTERNAL %s", st.Code(), info.GetReason(), ReasonInternal)
	}
	if code, ok := HTTPStatus(toStatus(err)); ok {
		t.Errorf("HTTP status %d, want INTERNAL's own (500)", code)
	}
}
