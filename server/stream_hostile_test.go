package server

import (
	"testing"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// Issue 31, item 5: progress messages a slow StreamCallTool host could not take were dropped with no
// marker (88k of 180k reached the host). Now the host gets a log message of the bridge's own, after the
// messages it did get, saying how many were dropped.
func TestCallQueueTellsDrops(t *testing.T) {
	q := newCallQueue(4, "c1")
	for range 10 {
		q.push(&pb.StreamCallToolResponse{CallId: "c1", Event: &pb.StreamCallToolResponse_Progress{Progress: &pb.ProgressNotification{}}}, true)
	}
	items := q.take()
	if len(items) != 5 {
		t.Fatalf("took %d messages, want the 4 kept and the marker", len(items))
	}
	last := items[4].GetLog()
	if last == nil || last.GetLogger() != droppedLogger || last.GetData().GetStructValue().GetFields()["eventsDropped"].GetNumberValue() != 6 {
		t.Fatalf("last message %v, want the bridge's marker of 6 dropped", items[4])
	}
	if items := q.take(); len(items) != 0 {
		t.Errorf("a second take: %v, want nothing (the drops were told once)", items)
	}
}
