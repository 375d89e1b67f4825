package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/mcpcore"
)

func TestValueFromAny(t *testing.T) {
	tests := []struct {
		name    string
		in      any
		want    string // protojson of the Value
		wantErr bool
	}{
		{"null", nil, `null`, false},
		{"bool", true, `true`, false},
		{"number", 1.5, `1.5`, false},
		{"int", 7, `7`, false},
		{"string", "x", `"x"`, false},
		{"json number", json.Number("12"), `12`, false},
		{"raw", json.RawMessage(`{"a":[1,"b",null]}`), `{"a":[1,"b",null]}`, false},
		{"nested", map[string]any{"a": []any{map[string]any{"b": false}}}, `{"a":[{"b":false}]}`, false},
		{"typed map", map[string]int{"n": 1}, `{"n":1}`, false},
		{"struct", struct {
			A string `json:"a"`
		}{"z"}, `{"a":"z"}`, false},
		{"nil pointer", (*int)(nil), `null`, false},
		{"NaN", math.NaN(), "", true},
		{"inf in list", []any{1.0, math.Inf(-1)}, "", true},
		{"bad raw", json.RawMessage(`{`), "", true},
		{"channel", make(chan int), "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := valueFromAny(tt.in)
			if tt.wantErr {
				if !errors.Is(err, errNotJSON) {
					t.Fatalf("err = %v, want errNotJSON", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := protojson.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(t, string(got), tt.want) {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatalf("%s: %v", a, err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return cmp.Equal(x, y)
}

func TestSchemaFromAny(t *testing.T) {
	tests := []struct {
		name    string
		in      any
		want    string
		wantErr bool
	}{
		{"object", map[string]any{"type": "object"}, `{"type":"object"}`, false},
		{"true", true, `{}`, false},
		{"false", false, `{"not":{}}`, false},
		{"raw true", json.RawMessage(`true`), `{}`, false},
		{"raw object", json.RawMessage(`{"type":"string"}`), `{"type":"string"}`, false},
		{"null", nil, `null`, false},
		{"string", "object", "", true},
		{"array", []any{1}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := schemaFromAny(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("got %v, want an error", s)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := "null"
			if s != nil {
				b, _ := protojson.Marshal(s)
				got = string(b)
			}
			if !jsonEqual(t, got, tt.want) {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestMapFromStruct(t *testing.T) {
	tests := []struct {
		name       string
		in         *structpb.Struct
		want       map[string]any
		violations []string
	}{
		{"nil", nil, nil, nil},
		{"plain", &structpb.Struct{Fields: map[string]*structpb.Value{"a": structpb.NewNumberValue(1), "b": structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{structpb.NewNullValue()}})}},
			map[string]any{"a": 1.0, "b": []any{nil}}, nil},
		{"NaN", &structpb.Struct{Fields: map[string]*structpb.Value{"a": structpb.NewNumberValue(math.NaN())}}, nil, []string{"x.a"}},
		{"no kind deep", &structpb.Struct{Fields: map[string]*structpb.Value{"a": structpb.NewListValue(&structpb.ListValue{Values: []*structpb.Value{{}}})}}, nil, []string{"x.a[0]"}},
		{"nil value", &structpb.Struct{Fields: map[string]*structpb.Value{"a": nil}}, nil, []string{"x.a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mapFromStruct(tt.in, "x")
			var inv *mcpcore.InvalidError
			if tt.violations != nil {
				if !errors.As(err, &inv) {
					t.Fatalf("err = %v, want *InvalidError", err)
				}
				var fields []string
				for _, v := range inv.Violations {
					fields = append(fields, v.Field)
				}
				if diff := cmp.Diff(tt.violations, fields); diff != "" {
					t.Errorf("violations (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestContentRoundTrip(t *testing.T) {
	size := int64(42)
	tests := []struct {
		name string
		in   mcp.Content
	}{
		{"text", &mcp.TextContent{Text: "hi", Meta: mcp.Meta{"k": "v"}, Annotations: &mcp.Annotations{Audience: []mcp.Role{"user"}, Priority: 0.5, LastModified: "2025-01-01T00:00:00Z"}}},
		{"image", &mcp.ImageContent{Data: []byte{1, 2}, MIMEType: "image/png"}},
		{"audio", &mcp.AudioContent{Data: []byte{3}, MIMEType: "audio/wav"}},
		{"resource link", &mcp.ResourceLink{URI: "file:///a", Name: "a", Title: "A", Size: &size, Icons: []mcp.Icon{{Source: "data:x", Theme: mcp.IconThemeDark, Sizes: []string{"any"}}}}},
		{"embedded text", &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "demo://x", MIMEType: "text/plain", Text: "body"}}},
		{"embedded blob", &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "demo://y", Blob: []byte{0, 1}}}},
		{"tool use", &mcp.ToolUseContent{ID: "u1", Name: "echo", Input: map[string]any{"text": "x"}}},
		{"tool result", &mcp.ToolResultContent{ToolUseID: "u1", Content: []mcp.Content{&mcp.TextContent{Text: "r"}}, StructuredContent: []any{1.0}, IsError: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := contentToProto(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			var vs []mcpcore.FieldViolation
			back := contentFromProto(p, "c", &vs)
			if len(vs) > 0 {
				t.Fatalf("violations %v", vs)
			}
			want, _ := json.Marshal(tt.in)
			got, _ := json.Marshal(back)
			if !jsonEqual(t, string(got), string(want)) {
				t.Errorf("round trip:\n got %s\nwant %s", got, want)
			}
		})
	}
	if _, err := contentToProto(nil); !errors.Is(err, mcpcore.ErrBadMessage) {
		t.Errorf("nil content: %v", err)
	}
	var vs []mcpcore.FieldViolation
	contentFromProto(&pb.ContentBlock{}, "c", &vs)
	if len(vs) != 1 || vs[0].Field != "c" {
		t.Errorf("empty block violations %v", vs)
	}
}

func TestToolToProto(t *testing.T) {
	open := false
	tool := &mcp.Tool{Name: "t", Title: "T", Description: "d", InputSchema: map[string]any{"type": "object"}, OutputSchema: false,
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &open}, Meta: mcp.Meta{"m": 1.0}}
	got, err := toolToProto(tool)
	if err != nil {
		t.Fatal(err)
	}
	want := &pb.Tool{Name: "t", Title: "T", Description: "d",
		InputSchema:  &structpb.Struct{Fields: map[string]*structpb.Value{"type": structpb.NewStringValue("object")}},
		OutputSchema: boolSchema(false),
		Annotations:  &pb.ToolAnnotations{ReadOnlyHint: new(true), IdempotentHint: new(false), OpenWorldHint: new(false)},
		Meta:         &structpb.Struct{Fields: map[string]*structpb.Value{"m": structpb.NewNumberValue(1)}},
	}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, err := toolToProto(&mcp.Tool{Name: "bad", InputSchema: "not a schema"}); !errors.Is(err, mcpcore.ErrBadMessage) {
		t.Errorf("bad schema: %v", err)
	}
}

func TestAnswerFromProto(t *testing.T) {
	text := []*pb.ContentBlock{{Content: &pb.ContentBlock_Text{Text: &pb.TextContent{Text: "x"}}}}
	tests := []struct {
		name       string
		in         *pb.HostAnswer
		want       mcpcore.Answer
		violations []string
	}{
		{"sampling defaults role", &pb.HostAnswer{Answer: &pb.HostAnswer_Sampling{Sampling: &pb.CreateMessageResult{Model: "m", Content: text, StopReason: "endTurn"}}},
			mcpcore.Answer{Sampling: &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "m", Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, StopReason: "endTurn"}}, nil},
		{"elicitation", &pb.HostAnswer{Answer: &pb.HostAnswer_Elicitation{Elicitation: &pb.ElicitResult{Action: pb.ElicitAction_ELICIT_ACTION_ACCEPT, Content: &structpb.Struct{Fields: map[string]*structpb.Value{"n": structpb.NewNumberValue(3)}}}}},
			mcpcore.Answer{Elicitation: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"n": 3.0}}}, nil},
		{"roots", &pb.HostAnswer{Answer: &pb.HostAnswer_Roots{Roots: &pb.ListRootsResult{Roots: []*pb.Root{{Uri: "file:///a", Name: "a"}}}}},
			mcpcore.Answer{Roots: &mcp.ListRootsResult{Roots: []*mcp.Root{{URI: "file:///a", Name: "a"}}}}, nil},
		{"error with data", &pb.HostAnswer{Answer: &pb.HostAnswer_Error{Error: &pb.JsonRpcError{Code: -1, Message: "no", Data: structpb.NewStringValue("why")}}},
			mcpcore.Answer{Error: &mcpcore.RPCError{Code: -1, Message: "no", Data: json.RawMessage(`"why"`)}}, nil},
		{"empty", &pb.HostAnswer{}, mcpcore.Answer{}, []string{""}},
		{"nil answer", nil, mcpcore.Answer{}, []string{""}},
		{"unspecified action", &pb.HostAnswer{Answer: &pb.HostAnswer_Elicitation{Elicitation: &pb.ElicitResult{}}}, mcpcore.Answer{}, []string{"elicitation.action"}},
		{"null content block", &pb.HostAnswer{Answer: &pb.HostAnswer_Sampling{Sampling: &pb.CreateMessageResult{Content: []*pb.ContentBlock{nil}}}}, mcpcore.Answer{}, []string{"sampling.content[0]"}},
		{"null root", &pb.HostAnswer{Answer: &pb.HostAnswer_Roots{Roots: &pb.ListRootsResult{Roots: []*pb.Root{nil}}}}, mcpcore.Answer{}, []string{"roots.roots[0]"}},
		{"NaN error data", &pb.HostAnswer{Answer: &pb.HostAnswer_Error{Error: &pb.JsonRpcError{Message: "m", Data: structpb.NewNumberValue(math.NaN())}}}, mcpcore.Answer{}, []string{"error.data"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := answerFromProto(tt.in)
			if tt.violations != nil {
				var inv *mcpcore.InvalidError
				if !errors.As(err, &inv) {
					t.Fatalf("err = %v", err)
				}
				var fields []string
				for _, v := range inv.Violations {
					fields = append(fields, v.Field)
				}
				if diff := cmp.Diff(tt.violations, fields); diff != "" {
					t.Errorf("violations (-want +got):\n%s", diff)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			gj, _ := json.Marshal(got)
			wj, _ := json.Marshal(tt.want)
			if !jsonEqual(t, string(gj), string(wj)) {
				t.Errorf("got %s, want %s", gj, wj)
			}
		})
	}
}

func TestServerRequestToProto(t *testing.T) {
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r := &mcpcore.PendingRequest{ID: "req-1", SessionID: "s-1", OriginCallID: "c", OriginMethod: "tools/call", OriginName: "sample",
		Delivery: mcpcore.DeliveryMRTR, InputKey: "k", Kind: mcpcore.KindSampling, Created: created, Deadline: created.Add(time.Minute),
		Sampling: &mcp.CreateMessageWithToolsParams{MaxTokens: 1 << 40, Messages: []*mcp.SamplingMessageV2{{Role: "user", Content: []mcp.Content{&mcp.TextContent{Text: "q"}}}},
			IncludeContext: "thisServer", Temperature: 0.2, Metadata: map[string]any{"p": "v"}, ToolChoice: &mcp.ToolChoice{Mode: "required"}}}
	got, err := serverRequestToProto(r)
	if err != nil {
		t.Fatal(err)
	}
	s := got.GetSampling()
	if got.GetDelivery() != pb.Delivery_DELIVERY_MULTI_ROUND_TRIP || got.GetInputKey() != "k" || s.GetMaxTokens() != math.MaxInt32 ||
		s.GetIncludeContext() != pb.IncludeContext_INCLUDE_CONTEXT_THIS_SERVER || s.GetTemperature() != 0.2 ||
		s.GetToolChoice().GetMode() != pb.ToolChoiceMode_TOOL_CHOICE_MODE_REQUIRED || !got.GetCreateTime().AsTime().Equal(created) {
		t.Errorf("got %v", got)
	}
	e, err := serverRequestToProto(&mcpcore.PendingRequest{Kind: mcpcore.KindElicitation, Elicitation: &mcp.ElicitParams{URL: "https://x", ElicitationID: "e"}})
	if err != nil || e.GetElicitation().GetMode() != pb.ElicitationMode_ELICITATION_MODE_URL {
		t.Errorf("url elicitation = %v, %v", e, err)
	}
	if _, err := serverRequestToProto(&mcpcore.PendingRequest{Kind: mcpcore.KindSampling}); !errors.Is(err, mcpcore.ErrBadMessage) {
		t.Errorf("sampling without params: %v", err)
	}
}

func TestEventToProto(t *testing.T) {
	tests := []struct {
		name string
		ev   mcpcore.Event
		want *pb.Event
	}{
		{"state", mcpcore.Event{Seq: 3, SessionID: "s", Kind: mcpcore.EventStateChanged, State: mcpcore.StateReconnecting, Reason: "r", Restarts: 2},
			&pb.Event{Sequence: 3, SessionId: "s", Payload: &pb.Event_SessionState{SessionState: &pb.SessionStateChange{State: pb.SessionState_SESSION_STATE_RECONNECTING, Reason: "r", Restarts: 2}}}},
		{"dropped", mcpcore.Event{Kind: mcpcore.EventDropped, Dropped: 5}, &pb.Event{Payload: &pb.Event_EventsDropped{EventsDropped: &pb.EventsDropped{Count: 5}}}},
		{"ended elsewhere", mcpcore.Event{SessionID: "s", Kind: mcpcore.EventRequestEnded, Ended: &mcpcore.RequestEnded{RequestID: "r", Outcome: mcpcore.OutcomeAnswered}},
			&pb.Event{SessionId: "s", Payload: &pb.Event_RequestEnded{RequestEnded: &pb.RequestEnded{RequestId: "r", SessionId: "s", Outcome: pb.RequestOutcome_REQUEST_OUTCOME_ANSWERED_ELSEWHERE}}}},
		{"timed out", mcpcore.Event{Kind: mcpcore.EventRequestEnded, Ended: &mcpcore.RequestEnded{RequestID: "r", Outcome: mcpcore.OutcomeTimedOut, Detail: "d"}},
			&pb.Event{Payload: &pb.Event_RequestEnded{RequestEnded: &pb.RequestEnded{RequestId: "r", Outcome: pb.RequestOutcome_REQUEST_OUTCOME_TIMED_OUT, Detail: "d"}}}},
		{"progress", mcpcore.Event{Kind: mcpcore.EventProgress, Progress: &mcpcore.Progress{CallID: "c", Token: "p-1", Progress: 1, Total: 4, Message: "m"}},
			&pb.Event{Payload: &pb.Event_Progress{Progress: &pb.ProgressNotification{ProgressToken: structpb.NewStringValue("p-1"), Progress: 1, Total: new(4.0), Message: "m", CallId: "c"}}}},
		{"log", mcpcore.Event{Kind: mcpcore.EventLog, Log: &mcp.LoggingMessageParams{Level: "warning", Logger: "l", Data: map[string]any{"a": 1.0}}},
			&pb.Event{Payload: &pb.Event_Log{Log: &pb.LoggingMessage{Level: pb.LoggingLevel_LOGGING_LEVEL_WARNING, Logger: "l", Data: structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{"a": structpb.NewNumberValue(1)}})}}}},
		{"task", mcpcore.Event{Kind: mcpcore.EventTaskStatus, Task: json.RawMessage(`{"taskId":"t","status":"working","ttlMs":1000,"pollInterval":500}`)},
			&pb.Event{Payload: &pb.Event_TaskStatus{TaskStatus: &pb.Task{TaskId: "t", Status: pb.TaskStatus_TASK_STATUS_WORKING, Ttl: durationOf(time.Second), PollInterval: durationOf(500 * time.Millisecond)}}}},
		{"resource updated", mcpcore.Event{Kind: mcpcore.EventResourceUpdated, URI: "demo://counter"}, &pb.Event{Payload: &pb.Event_ResourceUpdated{ResourceUpdated: &pb.ResourceUpdated{Uri: "demo://counter"}}}},
		{"cancelled", mcpcore.Event{Kind: mcpcore.EventCancelled, CancelledRequestID: "7", Reason: "why"}, &pb.Event{Payload: &pb.Event_Cancelled{Cancelled: &pb.Cancelled{RequestId: "7", Reason: "why"}}}},
	}
	elsewhere := func(mcpcore.RequestEnded) pb.RequestOutcome {
		return pb.RequestOutcome_REQUEST_OUTCOME_ANSWERED_ELSEWHERE
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := eventToProto(tt.ev, elsewhere)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, protocmp.Transform()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if _, err := eventToProto(mcpcore.Event{Kind: mcpcore.EventTaskStatus, Task: json.RawMessage(`[`)}, nil); !errors.Is(err, mcpcore.ErrBadMessage) {
		t.Errorf("bad task: %v", err)
	}
}

func durationOf(d time.Duration) *durationpb.Duration { return durationpb.New(d) }

func upstream(e *jsonrpc.Error) error { return &mcpcore.UpstreamError{Method: "tools/call", Err: e} }

func TestToStatus(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		code     codes.Code
		reason   string
		metadata map[string]string
	}{
		{"invalid params", upstream(&jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad"}), codes.InvalidArgument, ReasonUpstreamError, map[string]string{MetaJSONRPCCode: "-32602", MetaJSONRPCMessage: "bad"}},
		{"method not found", upstream(&jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "nope", Data: json.RawMessage(`{"m":1}`)}), codes.Unimplemented, ReasonUpstreamError, map[string]string{MetaJSONRPCCode: "-32601", MetaJSONRPCMessage: "nope", MetaJSONRPCData: `{"m":1}`}},
		{"resource not found", upstream(&jsonrpc.Error{Code: -32002, Message: "gone"}), codes.NotFound, ReasonUpstreamError, map[string]string{MetaJSONRPCCode: "-32002", MetaJSONRPCMessage: "gone"}},
		{"server error", upstream(&jsonrpc.Error{Code: -32050, Message: "x"}), codes.Unknown, ReasonUpstreamError, map[string]string{MetaJSONRPCCode: "-32050", MetaJSONRPCMessage: "x"}},
		// An upstream's -32001 (the TypeScript SDK's "Session not found" as well as its RequestTimeout) is
		// the server's code, not the bridge's own timeout.
		{"upstream -32001", upstream(&jsonrpc.Error{Code: -32001, Message: "Session not found"}), codes.Unknown, ReasonUpstreamError, map[string]string{MetaJSONRPCCode: "-32001", MetaJSONRPCMessage: "Session not found"}},
		{"upstream -32800", upstream(&jsonrpc.Error{Code: -32800, Message: "cancelled"}), codes.Unknown, ReasonUpstreamError, nil},
		// A JSON-RPC error the SDK made up locally is not the server's.
		{"local jsonrpc error", &jsonrpc.Error{Code: -32005, Message: "rejected by transport"}, codes.Internal, ReasonInternal, nil},
		{"request timeout", fmt.Errorf("%w: %w: no response", mcpcore.ErrRequestTimeout, context.DeadlineExceeded), codes.DeadlineExceeded, ReasonRequestTimeout, nil},
		{"server request unanswered", fmt.Errorf("%w: sampling request req-1, and then: %w", mcpcore.ErrServerRequestTimedOut, upstream(&jsonrpc.Error{Code: -1, Message: "sampling request was not answered"})), codes.DeadlineExceeded, ReasonServerRequestTimedOut, nil},
		{"input refused", mcpcore.ErrInputRefused, codes.Aborted, ReasonInputRefused, nil},
		{"shutting down", mcpcore.ErrShuttingDown, codes.Unavailable, ReasonShuttingDown, nil},
		{"session gave up", fmt.Errorf("%w: session closed: gave up", mcpcore.ErrUnavailable), codes.Unavailable, ReasonUnavailable, nil},
		{"unavailable", errors.Join(mcpcore.ErrUnavailable), codes.Unavailable, ReasonUnavailable, nil},
		{"session not found", mcpcore.ErrSessionNotFound, codes.NotFound, ReasonSessionNotFound, nil},
		{"ended", mcpcore.ErrRequestEnded, codes.FailedPrecondition, ReasonRequestEnded, nil},
		{"too many", mcpcore.ErrTooManySessions, codes.ResourceExhausted, ReasonTooManySessions, nil},
		{"deadline", context.DeadlineExceeded, codes.DeadlineExceeded, ReasonDeadlineExceeded, nil},
		{"cancelled", context.Canceled, codes.Canceled, ReasonCancelled, nil},
		{"bad message", mcpcore.ErrBadMessage, codes.Internal, ReasonUpstreamBadMessage, nil},
		{"capability", mcpcore.ErrCapabilityMissing, codes.FailedPrecondition, ReasonCapabilityMissing, nil},
		{"unconfigured", mcpcore.ErrUnconfiguredServer, codes.PermissionDenied, ReasonUnconfiguredServer, nil},
		{"other", errors.New("secret detail"), codes.Internal, ReasonInternal, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := status.Convert(toStatus(tt.err))
			if st.Code() != tt.code {
				t.Errorf("code %v, want %v", st.Code(), tt.code)
			}
			info := errorInfo(st.Details())
			if info.GetReason() != tt.reason || info.GetDomain() != ErrorDomain {
				t.Errorf("ErrorInfo %v", info)
			}
			if tt.metadata != nil {
				if diff := cmp.Diff(tt.metadata, info.GetMetadata()); diff != "" {
					t.Errorf("metadata (-want +got):\n%s", diff)
				}
			}
			if tt.name == "other" && st.Message() != "internal error" {
				t.Errorf("message %q leaks the cause", st.Message())
			}
		})
	}
	if toStatus(nil) != nil {
		t.Error("toStatus(nil) != nil")
	}
	inv := &mcpcore.InvalidError{Err: mcpcore.ErrInvalidAnswer, Violations: []mcpcore.FieldViolation{{Field: "content.age", Description: "must be an integer"}}}
	st := status.Convert(toStatusPrefixed(inv, "answer.elicitation"))
	br := badRequest(st.Details())
	if st.Code() != codes.InvalidArgument || len(br.GetFieldViolations()) != 1 || br.GetFieldViolations()[0].GetField() != "answer.elicitation.content.age" {
		t.Errorf("InvalidError → %v %v", st.Code(), br)
	}
}

// A null content block, or a nil block of any type, is the server's bad message, not a panic.
func TestContentToProtoNullBlocks(t *testing.T) {
	for _, c := range []mcp.Content{nil, (*mcp.TextContent)(nil), (*mcp.ImageContent)(nil), (*mcp.AudioContent)(nil),
		(*mcp.ResourceLink)(nil), (*mcp.EmbeddedResource)(nil), (*mcp.ToolUseContent)(nil), (*mcp.ToolResultContent)(nil)} {
		if _, err := contentToProto(c); !errors.Is(err, mcpcore.ErrBadMessage) || !strings.Contains(err.Error(), "content: null block") {
			t.Errorf("contentToProto(%T) = %v, want a bad message: null block", c, err)
		}
	}
}

// Every enum table converts both ways: no value is listed twice on either side, and UNSPECIFIED is not listed.
func TestEnumTablesAreOneToOne(t *testing.T) {
	check := func(name string, n int, pairs func(i int) (d, p any), zero any) {
		seenD, seenP := map[any]bool{}, map[any]bool{}
		for i := range n {
			d, p := pairs(i)
			if seenD[d] || seenP[p] || p == zero {
				t.Errorf("%s: %v ↔ %v listed twice, or UNSPECIFIED listed", name, d, p)
			}
			seenD[d], seenP[p] = true, true
		}
	}
	check("roles", len(roles), func(i int) (any, any) { return roles[i].d, roles[i].p }, pb.Role(0))
	check("logLevels", len(logLevels), func(i int) (any, any) { return logLevels[i].d, logLevels[i].p }, pb.LoggingLevel(0))
	check("taskStatuses", len(taskStatuses), func(i int) (any, any) { return taskStatuses[i].d, taskStatuses[i].p }, pb.TaskStatus(0))
	check("sessionStates", len(sessionStates), func(i int) (any, any) { return sessionStates[i].d, sessionStates[i].p }, pb.SessionState(0))
	check("transports", len(transports), func(i int) (any, any) { return transports[i].d, transports[i].p }, pb.Transport(0))
	check("iconThemes", len(iconThemes), func(i int) (any, any) { return iconThemes[i].d, iconThemes[i].p }, pb.IconTheme(0))
	check("includeContexts", len(includeContexts), func(i int) (any, any) { return includeContexts[i].d, includeContexts[i].p }, pb.IncludeContext(0))
	check("toolChoiceModes", len(toolChoiceModes), func(i int) (any, any) { return toolChoiceModes[i].d, toolChoiceModes[i].p }, pb.ToolChoiceMode(0))
	check("elicitationModes", len(elicitationModes), func(i int) (any, any) { return elicitationModes[i].d, elicitationModes[i].p }, pb.ElicitationMode(0))
	check("deliveries", len(deliveries), func(i int) (any, any) { return deliveries[i].d, deliveries[i].p }, pb.Delivery(0))
	check("elicitActions", len(elicitActions), func(i int) (any, any) { return elicitActions[i].d, elicitActions[i].p }, pb.ElicitAction(0))
	check("outcomes", len(outcomes), func(i int) (any, any) { return outcomes[i].d, outcomes[i].p }, pb.RequestOutcome(0))
	if got, ok := elicitActions.fromProto(pb.ElicitAction(99)); ok || got != "" {
		t.Errorf("an undefined ElicitAction = %q, %v; want not found", got, ok)
	}
	if got := outcomes.toProto(mcpcore.Outcome(-1)); got != pb.RequestOutcome_REQUEST_OUTCOME_UNSPECIFIED {
		t.Errorf("an unknown outcome = %v, want UNSPECIFIED", got)
	}
}
