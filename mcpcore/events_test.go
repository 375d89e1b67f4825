package mcpcore

import (
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

// etDrain reads everything buffered in s without blocking.
func etDrain(s *Subscription) []Event {
	var out []Event
	for {
		select {
		case ev, ok := <-s.C():
			if !ok {
				return out
			}
			out = append(out, *ev)
		default:
			return out
		}
	}
}

// etSeqs renders events as "seq" or "dropped(n)@seq" for compact comparisons.
func etSeqs(evs []Event) []string {
	var out []string
	for _, ev := range evs {
		if ev.Kind == EventDropped {
			out = append(out, fmt.Sprintf("dropped(%d)@%d", ev.Dropped, ev.Seq))
			continue
		}
		out = append(out, fmt.Sprint(ev.Seq))
	}
	return out
}

func etIsClosed(s *Subscription) bool {
	select {
	case _, ok := <-s.C():
		return !ok
	default:
		return false
	}
}

func TestEventOrderMultipleSubscribers(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l := newEventLog("s1", Limits{})
	subs := []*Subscription{l.subscribe(0), l.subscribe(100), l.subscribe(2000)}
	const n = 50 // fits every buffer, the default too (also once it is 64)
	start := time.Now()
	for i := range n {
		l.publish(Event{Kind: EventLog, Reason: fmt.Sprint(i), Seq: 999, SessionID: "spoofed"})
	}
	for i, s := range subs {
		evs := etDrain(s)
		if len(evs) != n {
			t.Fatalf("subscriber %d got %d events, want %d", i, len(evs), n)
		}
		last := start
		for j, ev := range evs {
			if ev.Seq != uint64(j+1) || ev.SessionID != "s1" || ev.Reason != fmt.Sprint(j) {
				t.Fatalf("subscriber %d event %d = seq %d session %q reason %q", i, j, ev.Seq, ev.SessionID, ev.Reason)
			}
			if ev.Time.Before(last) {
				t.Fatalf("subscriber %d: time went backwards at %d", i, j)
			}
			last = ev.Time
		}
		if s.Dropped() != 0 {
			t.Errorf("subscriber %d dropped %d", i, s.Dropped())
		}
	}
}

func TestEventConcurrentPublishers(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l := newEventLog("s1", Limits{EventBuffer: 10_000})
	a, b := l.subscribe(0), l.subscribe(0)
	const publishers, each = 8, 200
	var wg sync.WaitGroup
	for p := range publishers {
		wg.Go(func() {
			for i := range each {
				l.publish(Event{Kind: EventProgress, Reason: fmt.Sprintf("%d/%d", p, i)})
			}
		})
	}
	wg.Wait()
	ea, eb := etDrain(a), etDrain(b)
	if len(ea) != publishers*each {
		t.Fatalf("got %d events, want %d", len(ea), publishers*each)
	}
	if diff := cmp.Diff(ea, eb); diff != "" {
		t.Fatalf("subscribers saw different streams (-a +b):\n%s", diff)
	}
	next := map[int]int{}
	for i, ev := range ea {
		if ev.Seq != uint64(i+1) {
			t.Fatalf("event %d has seq %d", i, ev.Seq)
		}
		var p, k int
		fmt.Sscanf(ev.Reason, "%d/%d", &p, &k)
		if k != next[p] {
			t.Fatalf("publisher %d: event %d delivered when %d was expected", p, k, next[p])
		}
		next[p]++
	}
}

func TestEventSlowSubscriberDrops(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l := newEventLog("s1", Limits{})
	fast, slow := l.subscribe(100), l.subscribe(4)
	for range 10 {
		l.publish(Event{Kind: EventLog})
	}
	if got := slow.Dropped(); got != 6 {
		t.Fatalf("slow dropped %d, want 6", got)
	}
	if diff := cmp.Diff([]string{"1", "2", "3", "4"}, etSeqs(etDrain(slow))); diff != "" {
		t.Errorf("slow before catching up (-want +got):\n%s", diff)
	}
	// Room again: the notice comes first, with the seq of the newest lost event, then the new event.
	l.publish(Event{Kind: EventLog})
	if diff := cmp.Diff([]string{"dropped(6)@10", "11"}, etSeqs(etDrain(slow))); diff != "" {
		t.Errorf("slow after catching up (-want +got):\n%s", diff)
	}
	if got := slow.Dropped(); got != 6 {
		t.Errorf("slow dropped %d after catching up, want 6", got)
	}
	if got := etSeqs(etDrain(fast)); len(got) != 11 || fast.Dropped() != 0 {
		t.Errorf("fast got %v, dropped %d", got, fast.Dropped())
	}
}

func TestEventDropNoticeWithoutRoom(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	tests := []struct {
		name    string
		buf     int
		publish int // after the first fill
		read    int // events read between fills
		want    []string
		dropped uint64
	}{
		// Full with 2, 3 lost; one read frees one slot: the notice takes it and the next event is lost too.
		{"notice takes the last slot", 2, 1, 1, []string{"2", "dropped(3)@5", "dropped(1)@6"}, 4},
		// Two slots free: notice and event both fit.
		{"notice and event fit", 2, 1, 2, []string{"dropped(3)@5", "6"}, 3},
		// Nothing read: everything is lost and counted, one notice later.
		{"nothing read", 2, 3, 0, []string{"1", "2", "dropped(6)@8"}, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newEventLog("s", Limits{})
			s := l.subscribe(tt.buf)
			for range 5 {
				l.publish(Event{Kind: EventLog})
			}
			var got []Event
			for range tt.read {
				got = append(got, *<-s.C())
			}
			for range tt.publish {
				l.publish(Event{Kind: EventLog})
			}
			got = append(got, etDrain(s)...)
			l.close() // delivers a notice still owed, now that there is room
			got = append(got, etDrain(s)...)
			if diff := cmp.Diff(tt.want, etSeqs(got[tt.read:])); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if s.Dropped() != tt.dropped {
				t.Errorf("dropped %d, want %d", s.Dropped(), tt.dropped)
			}
		})
	}
}

func TestEventSubscriptionClose(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l := newEventLog("s1", Limits{})
	s, other := l.subscribe(8), l.subscribe(8)
	l.publish(Event{Kind: EventLog})
	s.Close()
	s.Close() // idempotent
	l.publish(Event{Kind: EventLog})
	if diff := cmp.Diff([]string{"1"}, etSeqs(etDrain(s))); diff != "" {
		t.Errorf("closed subscription (-want +got):\n%s", diff)
	}
	if !etIsClosed(s) {
		t.Error("C not closed after Close")
	}
	if got := etSeqs(etDrain(other)); len(got) != 2 {
		t.Errorf("other subscription got %v", got)
	}
	l.close()
	s.Close() // after the log closed
	other.Close()
	if !etIsClosed(other) {
		t.Error("other not closed after the log closed")
	}
	var zero *Subscription
	zero.Close() // a nil subscription is harmless
}

func TestEventCloseRacesPublish(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l := newEventLog("s1", Limits{EventBuffer: 4})
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				l.publish(Event{Kind: EventProgress})
			}
		}
	})
	var subs []*Subscription
	for range 50 {
		s := l.subscribe(0)
		subs = append(subs, s)
		wg.Go(func() {
			for range s.C() { // exits when C closes
			}
		})
		wg.Go(s.Close)
		wg.Go(s.Close)
	}
	close(stop)
	l.close()
	l.close()
	wg.Wait()
	for i, s := range subs {
		if !etIsClosed(s) {
			t.Errorf("subscription %d not closed", i)
		}
	}
}

func TestEventLogClose(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l := newEventLog("s1", Limits{})
	s := l.subscribe(4)
	l.publish(Event{Kind: EventStateChanged, State: StateClosed, Reason: "bye"})
	l.close()
	l.publish(Event{Kind: EventLog}) // nothing after close
	evs := etDrain(s)
	if len(evs) != 1 || evs[0].State != StateClosed || !etIsClosed(s) {
		t.Errorf("after close got %+v (closed %v)", evs, etIsClosed(s))
	}
	late := l.subscribe(4)
	if !etIsClosed(late) {
		t.Error("subscription to a closed log is open")
	}
	late.Close()
}

func TestEventBufferSizes(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	tests := []struct {
		name   string
		limits Limits
		buf    int
		want   int
	}{
		{"default", Limits{}, 0, DefaultEventBuffer},
		{"limit", Limits{EventBuffer: 16}, 0, 16},
		{"negative means default", Limits{EventBuffer: 16}, -1, 16},
		{"explicit", Limits{EventBuffer: 16}, 3, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newEventLog("s", tt.limits).subscribe(tt.buf)
			if got := cap(s.C()); got != tt.want {
				t.Errorf("cap = %d, want %d", got, tt.want)
			}
			s.Close()
		})
	}
}

// TestEventDefaultBufferSmall pins what an idle Subscribe(0) costs: its channel is allocated at its full
// buffer, so the default stays small (at most 16 KiB of Events) yet holds a burst of request-created events
// for every pending request a session may have.
func TestEventDefaultBufferSmall(t *testing.T) {
	s := newEventLog("s", Limits{}.withDefaults()).subscribe(0)
	defer s.Close()
	if bytes := uintptr(cap(s.C())) * unsafe.Sizeof(&Event{}); bytes > 16<<10 {
		t.Errorf("an idle default subscription buffers %d event pointers = %d bytes, want at most 16 KiB", cap(s.C()), bytes)
	}
	if cap(s.C()) < DefaultMaxPendingPerSession {
		t.Errorf("default buffer %d < the default pending requests per session %d", cap(s.C()), DefaultMaxPendingPerSession)
	}
}

// TestEventDispatcherIntegration routes the dispatcher's events through an event log, as the core does.
func TestEventDispatcherIntegration(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l := newEventLog("s", Limits{})
	sub := l.subscribe(16)
	d := newDispatcher(slog.New(slog.DiscardHandler), PendingPolicy{RootsTimeout: time.Millisecond}, Limits{}, oneLog{l})
	_, o, err := d.submit(t.Context(), dtRootsReq("o", "s"), nil)
	if err != nil || o != OutcomeTimedOut {
		t.Fatal(o, err)
	}
	evs := etDrain(sub)
	if len(evs) != 2 || evs[0].Kind != EventRequestCreated || evs[1].Kind != EventRequestEnded ||
		evs[1].Ended.RequestID != evs[0].Request.ID || evs[1].Seq != 2 {
		t.Errorf("events = %+v", evs)
	}
	l.close()
}

// oneLog is the sessionLookup of a dispatcher whose requests all belong to one session (not counted).
type oneLog struct{ l *eventLog }

func (o oneLog) sessionLog(string) *eventLog         { return o.l }
func (o oneLog) sessionPending(string) *pendingCount { return nil }

func BenchmarkPublish(b *testing.B) {
	for _, n := range []int{1, 8} {
		b.Run(fmt.Sprintf("subscribers=%d", n), func(b *testing.B) {
			l := newEventLog("s", Limits{})
			var wg sync.WaitGroup
			for range n {
				s := l.subscribe(0)
				wg.Go(func() {
					for range s.C() { // drains until the log closes
					}
				})
			}
			p := &Progress{CallID: "c", Progress: 1}
			b.ReportAllocs()
			for b.Loop() {
				l.publish(Event{Kind: EventProgress, Progress: p})
			}
			b.StopTimer()
			l.close()
			wg.Wait()
		})
	}
}

// BenchmarkIdleSubscription measures the memory an idle subscription holds — its channel is allocated at
// its full buffer up front — over 10,000 subscriptions of one log, as bytes/sub (b.N is not used for the
// figure; -benchtime=1x is enough). event-bytes is unsafe.Sizeof(Event{}), the size of one buffer slot.
func BenchmarkIdleSubscription(b *testing.B) {
	const subs = 10_000
	for _, buf := range []int{0, 64, 32} {
		name := fmt.Sprintf("buf=%d", buf)
		if buf == 0 {
			name = fmt.Sprintf("buf=default(%d)", DefaultEventBuffer)
		}
		b.Run(name, func(b *testing.B) {
			var perSub float64
			for b.Loop() {
				l := newEventLog("s", Limits{})
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				for range subs {
					l.subscribe(buf)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				perSub = float64(after.HeapAlloc-before.HeapAlloc) / subs
				runtime.KeepAlive(l)
				l.close()
			}
			b.ReportMetric(perSub, "bytes/sub")
			b.ReportMetric(float64(unsafe.Sizeof(Event{})), "event-bytes")
		})
	}
}

func TestEventGapSignalled(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l := newEventLog("s1", Limits{})
	roomy, tight := l.subscribe(10), l.subscribe(2)
	for range 2 {
		l.publish(Event{Kind: EventLog})
	}
	select {
	case <-tight.Gap():
		t.Fatal("gap signalled before any drop")
	default:
	}
	l.publish(Event{Kind: EventLog}) // the third does not fit the tight subscription
	l.publish(Event{Kind: EventLog}) // nor the fourth: one signal for both
	select {
	case <-tight.Gap():
	default:
		t.Fatal("no gap signal after drops: a subscriber waiting on a lost request would never learn of it")
	}
	select {
	case <-tight.Gap():
		t.Fatal("two drops gave two signals; they coalesce")
	default:
	}
	select {
	case <-roomy.Gap():
		t.Fatal("gap signalled to a subscription that lost nothing")
	default:
	}
	l.close()
}

// Start is the position a subscription begins at: its first event follows it by one.
func TestEventSubscriptionStart(t *testing.T) {
	l := newEventLog("s1", Limits{})
	first := l.subscribe(4)
	defer first.Close()
	l.publish(Event{Kind: EventDropped})
	l.publish(Event{Kind: EventDropped})
	later := l.subscribe(4)
	defer later.Close()
	l.publish(Event{Kind: EventDropped})
	if first.Start() != 0 || later.Start() != 2 {
		t.Fatalf("Start = %d, %d; want 0, 2", first.Start(), later.Start())
	}
	if ev := <-later.C(); ev.Seq != later.Start()+1 {
		t.Errorf("first event of the later subscription has Seq %d, want %d", ev.Seq, later.Start()+1)
	}
}

// etTake takes everything a pull subscription has, as values.
func etTake(s *Subscription) (evs []Event, gap, ended bool) {
	got, gap, ended := s.Take(nil)
	for _, ev := range got {
		evs = append(evs, *ev)
	}
	return evs, gap, ended
}

// A pull subscription keeps the channel subscription's rules — publish order, drops counted and announced
// once there is room, the log's close ending it after what it holds — and says each time that there is
// something to take.
func TestEventPullSubscription(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l := newEventLog("s", Limits{})
	var notified int
	s := l.subscribeNotify(3, func() { notified++ })
	if evs, gap, ended := etTake(s); len(evs) != 0 || gap || ended {
		t.Fatalf("fresh subscription: %v gap=%v ended=%v, want nothing", etSeqs(evs), gap, ended)
	}
	for range 5 {
		l.publish(Event{Kind: EventLog})
	}
	if notified != 5 {
		t.Errorf("notified %d times for 5 publishes (3 kept, 2 dropped), want 5", notified)
	}
	evs, gap, ended := etTake(s)
	if diff := cmp.Diff([]string{"1", "2", "3"}, etSeqs(evs)); diff != "" || !gap || ended {
		t.Errorf("first take (-want +got):\n%s gap=%v (want true) ended=%v", diff, gap, ended)
	}
	if s.Dropped() != 2 {
		t.Errorf("dropped %d, want 2", s.Dropped())
	}
	l.publish(Event{Kind: EventLog})
	evs, gap, _ = etTake(s)
	if diff := cmp.Diff([]string{"dropped(2)@5", "6"}, etSeqs(evs)); diff != "" || gap {
		t.Errorf("after catching up (-want +got):\n%s gap=%v (want false: reported once)", diff, gap)
	}
	// Full again, then the log closes: the owed notice goes in if there is room (there is not), and the
	// subscription ends after what it holds.
	for range 4 {
		l.publish(Event{Kind: EventLog})
	}
	before := notified
	l.close()
	if notified != before+1 {
		t.Errorf("the log's close notified %d times, want once", notified-before)
	}
	evs, _, ended = etTake(s)
	if diff := cmp.Diff([]string{"7", "8", "9"}, etSeqs(evs)); diff != "" || !ended {
		t.Errorf("at close (-want +got):\n%s ended=%v (want true)", diff, ended)
	}
	l.publish(Event{Kind: EventLog}) // after close: nothing, and no notify
	if evs, _, ended := etTake(s); len(evs) != 0 || !ended {
		t.Errorf("after close: %v ended=%v", etSeqs(evs), ended)
	}
}

// Close ends a pull subscription at once: it receives nothing more and says it ended.
func TestEventPullSubscriptionClose(t *testing.T) {
	l := newEventLog("s", Limits{})
	s := l.subscribeNotify(0, func() {})
	l.publish(Event{Kind: EventLog})
	s.Close()
	s.Close() // idempotent
	l.publish(Event{Kind: EventLog})
	if evs, _, ended := etTake(s); len(evs) != 0 || !ended {
		t.Errorf("after Close: %v ended=%v, want nothing and ended", etSeqs(evs), ended)
	}
	if len(l.subs) != 0 {
		t.Errorf("the log still holds %d subscriptions", len(l.subs))
	}
	l.close()
	if c := l.subscribeNotify(0, func() {}); func() bool { _, _, e := c.Take(nil); return !e }() {
		t.Errorf("a pull subscription to a closed log should have ended")
	}
}

// An idle pull subscription allocates no buffer: that is what lets one goroutine serve many of them.
func TestEventPullSubscriptionIdleCost(t *testing.T) {
	l := newEventLog("s", Limits{EventBuffer: 4096})
	allocs := testing.AllocsPerRun(100, func() {
		s := l.subscribeNotify(0, func() {})
		s.Close()
	})
	if allocs > 2 { // the Subscription and (at most) the log's slice growing
		t.Errorf("a pull subscription with a 4096-event bound allocates %v times idle, want ≤ 2", allocs)
	}
}
