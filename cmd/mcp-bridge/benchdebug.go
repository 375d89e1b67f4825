//go:build benchdebug

package main

// Built only with -tags benchdebug (make bench builds such a binary next to the real one): a loopback debug
// listener with net/http/pprof (CPU profiles and execution traces) and /debug/stats (goroutines, the runtime's
// cumulative allocation counters, garbage collections), at the address in MCPBRIDGE_BENCH_DEBUG_ADDR. The
// benchmark harness profiles the bridge through it; the binary users run has no debug endpoint.

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"runtime"
	"runtime/metrics"
	"time"
)

func init() {
	startBenchDebug = func() (stop func(), err error) {
		addr := os.Getenv("MCPBRIDGE_BENCH_DEBUG_ADDR")
		if addr == "" {
			return func() {}, nil
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, err
		}
		mux := http.NewServeMux()
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		mux.HandleFunc("/debug/stats", benchStats)
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = srv.Serve(ln)
		}()
		return func() { _ = srv.Close(); <-done }, nil
	}
}

// benchStats reports the runtime's counters: goroutines, cumulative heap allocation (bytes, objects), live
// heap, garbage collections so far. ?gc=1 collects garbage first (for live-heap figures).
func benchStats(w http.ResponseWriter, r *http.Request) {
	if r.URL.Query().Get("gc") == "1" {
		runtime.GC()
		runtime.GC()
	}
	s := []metrics.Sample{
		{Name: "/gc/heap/allocs:bytes"}, {Name: "/gc/heap/allocs:objects"},
		{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/sched/goroutines:goroutines"},
		{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/stacks:bytes"},
		{Name: "/gc/stack/starting-size:bytes"}, {Name: "/gc/cycles/total:gc-cycles"},
	}
	metrics.Read(s)
	out := map[string]uint64{}
	for _, m := range s {
		if m.Value.Kind() == metrics.KindUint64 {
			out[m.Name] = m.Value.Uint64()
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}
