package mcpcore

import (
	"context"
	"sync"
	"testing"
)

// TestRequestEventPublishedOnce: every receiver of a request — the session's subscriber (a host's Connect or
// WatchEvents), a watch of the dispatcher's feed (a streaming call, an approver, the opening feed) — reads
// the one Event the dispatcher published for each of the request's events (issue 34: the request path used
// to publish each event twice, to the session's log and to the feed, and call a third time a call's
// OnRequest). Publishes are counted as the distinct Event values the receivers got: one per event.
func TestRequestEventPublishedOnce(t *testing.T) {
	c := memCore(t, nil, nil)
	s := open(t, c, "mem", "", allCaps)
	feed := c.Dispatcher().Watch(nil, 64)
	defer feed.Close()

	type seen struct {
		receiver string
		ev       *Event
	}
	var (
		mu   sync.Mutex
		got  []seen
		done = make(chan struct{})
	)
	sub := s.Subscribe(64)
	go func() { // the host; ends when sub is closed
		defer close(done)
		for ev := range sub.C() {
			if ev.Kind != EventRequestCreated && ev.Kind != EventRequestEnded {
				continue
			}
			mu.Lock()
			got = append(got, seen{"session", ev})
			mu.Unlock()
			if ev.Kind == EventRequestCreated {
				if err := c.Dispatcher().Respond(context.Background(), s.Owner(), ev.Request.ID, standardAnswer(ev.Request)); err != nil {
					t.Errorf("Respond(%s): %v", ev.Request.Kind, err)
				}
			}
		}
	}()
	kinds := []any{"sampling", "elicitation", "roots"}
	callText(t, s, "ask", map[string]any{"kinds": kinds}, CallOptions{CallID: "call-once"})
	sub.Close()
	<-done
	for drained := false; !drained; {
		select {
		case ev := <-feed.C():
			got = append(got, seen{"feed", ev})
		default:
			drained = true
		}
	}

	type key struct {
		id   string
		kind EventKind
	}
	values := map[key]map[*Event]bool{} // the distinct Event values published for each request event
	receivers := map[key]map[string]int{}
	for _, g := range got {
		id := ""
		if g.ev.Kind == EventRequestCreated {
			id = g.ev.Request.ID
		} else {
			id = g.ev.Ended.RequestID
		}
		k := key{id, g.ev.Kind}
		if values[k] == nil {
			values[k], receivers[k] = map[*Event]bool{}, map[string]int{}
		}
		values[k][g.ev] = true
		receivers[k][g.receiver]++
	}
	if len(values) != 2*len(kinds) {
		t.Fatalf("saw %d request events, want %d (created and ended for each of %d requests)", len(values), 2*len(kinds), len(kinds))
	}
	for k, v := range values {
		if len(v) != 1 {
			t.Errorf("request %s: event %v published %d times, want once", k.id, k.kind, len(v))
		}
		if r := receivers[k]; r["session"] != 1 || r["feed"] != 1 {
			t.Errorf("request %s: event %v received %v, want once by each receiver", k.id, k.kind, r)
		}
	}
}
