package mcpcore

import (
	"encoding/json"
	"testing"
)

// A ttl or pollInterval a Duration cannot hold counts as not said; it never wraps into a nonsense value.
func TestParseTaskDurationsOutOfRange(t *testing.T) {
	for _, raw := range []string{
		`{"taskId":"t","ttlMs":1e300,"pollIntervalMs":1e300}`,
		`{"taskId":"t","ttl":-1,"pollInterval":-5}`,
		`{"taskId":"t","ttlMs":-0.5,"pollInterval":1e19}`,
	} {
		got, err := ParseTask(json.RawMessage(raw))
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if got.TTL != nil || got.PollInterval != 0 {
			t.Errorf("%s: ttl %v, pollInterval %v; want neither said", raw, got.TTL, got.PollInterval)
		}
	}
	if _, err := ParseTask(json.RawMessage(`{"status":"working"}`)); err == nil {
		t.Error("a task without taskId parsed")
	}
}

// TasksCapability reads the 2025-11-25 capability; a null member is not a declaration.
func TestParseTasksCapability(t *testing.T) {
	tests := []struct {
		raw  string
		want *TasksCapability
	}{
		{``, nil},
		{`{"tools":{}}`, nil},
		{`{"tasks":{"list":{},"requests":{"tools":{"call":{}}}}}`, &TasksCapability{List: true, ToolCall: true}},
		{`{"tasks":{"cancel":{},"requests":{"tools":{"call":null}}}}`, &TasksCapability{Cancel: true}},
	}
	for _, tc := range tests {
		got := ParseTasksCapability(json.RawMessage(tc.raw))
		if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
			t.Errorf("ParseTasksCapability(%s) = %+v, want %+v", tc.raw, got, tc.want)
		}
	}
}
