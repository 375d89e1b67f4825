package e2e

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/internal/state/statetest"
)

// The kill -9 roll (make test-scale; issue 31, docs/adr/0093 and 0099): three replicas of the real binary
// sharing their state in a real redis-server behind a real HAProxy (deploy/haproxy/haproxy-shared.cfg), hosts
// calling a tool continuously on sessions of every replica while each replica in turn is killed with SIGKILL
// and started again at once under its own name, as a StatefulSet does. The hosts do exactly what the Python
// and Java clients do (rollHostCall): a call id of their own on every call, and a failed attempt retried
// with that id and resume while it fails UNAVAILABLE with a reason the clients retry. The upstream counts
// its executions per call id (the probe's block tool reports "started <call id>").
//
// Asserted: every call succeeded, or was resumed to its outcome (ABORTED CALL_OUTCOME_UNKNOWN: it was in
// flight on the killed replica) — 0 failed; no call id ran twice upstream; no call answered WRONG_REPLICA.
// The figures (calls, resumed, unknown, takeover after each kill) go to the summary.

// rollRetryReasons are the ErrorInfo reasons of UNAVAILABLE that the Python and Java clients retry
// (clients/python/src/mcp_bridge/_retry.py RETRY_REASONS, clients/java Retrying.RETRY_REASONS).
var rollRetryReasons = []string{"", "SHUTTING_DOWN", "SESSION_MOVED", "STATE_STORE_UNAVAILABLE", "NO_REPLICA_AVAILABLE"}

// rollOutcome is how one host call ended.
type rollOutcome struct {
	callID   string
	session  string
	replica  string // that answered
	attempts int    // 0: a call of the Python host (its client retries on its own)
	err      error
	end      time.Time
	history  []string // each attempt: resume, the replica that answered, the error
}

// rollHostCall makes one tool call as the clients do (clients/python/src/mcp_bridge/_retry.py Attempts): the
// host's own call id; while an attempt fails UNAVAILABLE with a retried reason, call again with the same id —
// with resume unless the attempt certainly never reached a bridge (the connection was refused) — after an
// exponential backoff (0.1 s doubling to 2 s, ±20 %), for at most 60 s after the first failure.
func rollHostCall(ctx context.Context, client pb.BridgeServiceClient, sid, callID string, arguments map[string]any, t *testing.T) rollOutcome {
	o := rollOutcome{callID: callID, session: sid}
	resume := false
	backoff := 100 * time.Millisecond
	var giveUp time.Time
	for {
		o.attempts++
		var hdr metadata.MD
		cctx, cancel := context.WithTimeout(routed(ctx, sid), 60*time.Second)
		_, err := client.CallTool(cctx, &pb.CallToolRequest{SessionId: sid, Name: "block", CallId: callID, Resume: resume, Arguments: args(t, arguments)}, grpc.Header(&hdr))
		cancel()
		o.err, o.replica, o.end = err, replicaOf(hdr), time.Now()
		o.history = append(o.history, fmt.Sprintf("%s resume=%v by=%q: %v", o.end.Format("15:04:05.000"), resume, o.replica, err))
		if err == nil || status.Code(err) != codes.Unavailable || !slices.Contains(rollRetryReasons, reasonOf(err)) {
			return o
		}
		msg := strings.ToLower(status.Convert(err).Message())
		if reasonOf(err) != "" || (!strings.Contains(msg, "failed to connect") && !strings.Contains(msg, "connection refused")) {
			resume = true // the attempt may have reached a bridge: never run the call anew
		}
		if giveUp.IsZero() {
			giveUp = time.Now().Add(60 * time.Second)
		}
		delay := time.Duration(float64(backoff) * (0.8 + 0.4*rand.Float64()))
		if time.Now().Add(delay).After(giveUp) {
			return o
		}
		backoff = min(2*backoff, 2*time.Second)
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return o
		}
	}
}

func TestScaleKillRoll(t *testing.T) {
	if os.Getenv("MCPBRIDGE_TEST_SCALE") != "1" {
		// It needs HAProxy and redis-server and three replicas: scripts/test-scale.sh installs them and runs
		// it with MCPBRIDGE_TEST_SCALE=1; the plain e2e run leaves it to that.
		t.Skip("run by make test-scale (MCPBRIDGE_TEST_SCALE=1)")
	}
	redis, env := sharedRedis(t, 11)

	// The upstream's executions per call id, from every replica's probe reports (a killed replica's too: its
	// stdio servers may still report until they see their stdin close).
	var runsMu sync.Mutex
	runs := map[string]int{}
	drainStop := make(chan struct{})
	var drains sync.WaitGroup
	defer drains.Wait()
	defer close(drainStop)
	drain := func(b *bridge) {
		drains.Go(func() { // ends at drainStop
			for {
				select {
				case line := <-b.reports.Lines:
					if tag, ok := strings.CutPrefix(line, "started "); ok {
						runsMu.Lock()
						runs[tag]++
						runsMu.Unlock()
					}
				case <-drainStop:
					return
				}
			}
		})
	}

	var replicas []*sharedReplica
	for i := range scaleReplicas {
		r := &sharedReplica{name: fmt.Sprintf("r%d", i+1), grpc: freeAddr(t), http: freeAddr(t)}
		r.cfg = bridgeConfig{
			extraServers: probeServer("counted", ""),
			extra: fmt.Sprintf("sessions:\n  replica: %s\nstate:\n  keyEnv: MCPB_STATE_KEY\n  redis:\n    address: %q\n    passwordEnv: MCPB_REDIS_PASSWORD\n    keyPrefix: \"kr:\"\n    leaseTTL: %s\n",
				r.name, redis.Addr, takeoverLeaseTTL),
			flags: []string{"--grpc-addr", r.grpc, "--http-addr", r.http, "--log-level", "info"},
			env:   env,
		}
		r.b = start(t, r.cfg)
		drain(r.b)
		replicas = append(replicas, r)
	}
	proxy, client := sharedProxy(t, replicas)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()

	// Sessions on every replica.
	ids, home := spreadSessions(ctx, t, client, replicas, "counted", 9)

	// The load: two hosts per session, each calling block (0.2 s upstream) one call after another.
	const hostsPerSession = 2
	var outMu sync.Mutex
	var outcomes []rollOutcome
	served := map[string]chan string{} // session → the replicas that answered its calls, in order
	for _, id := range ids {
		served[id] = make(chan string, 1024)
	}
	stopLoad := make(chan struct{})
	var load sync.WaitGroup
	for _, id := range ids {
		for h := range hostsPerSession {
			load.Go(func() { // ends at stopLoad
				for n := 0; ; n++ {
					select {
					case <-stopLoad:
						return
					default:
					}
					callID := fmt.Sprintf("kr-%s-%d-%d", id[len(id)-8:], h, n)
					o := rollHostCall(ctx, client, id, callID, map[string]any{"tag": callID, "durationSeconds": 0.2}, t)
					outMu.Lock()
					outcomes = append(outcomes, o)
					outMu.Unlock()
					if o.err == nil {
						select {
						case served[id] <- o.replica:
						default:
						}
					}
				}
			})
		}
	}
	// A host using the Python client (clients/python, its own retries) calls on sessions of its own too.
	var py *pythonHost
	if exe := pythonClient(t); exe != "" {
		py = startPythonHost(t, exe, pythonRollScript, proxy.grpc)
	}
	// servedAgainBy waits until a call on each of sessions completed on replica (after the moment it is
	// called), and returns how long that took from since.
	servedAgainBy := func(sessions []string, replica string, since time.Time) (time.Duration, bool) {
		deadline := time.After(90 * time.Second)
		for _, id := range sessions {
			for ok := false; !ok; {
				select {
				case by := <-served[id]:
					ok = replica == "" || by == replica
				case <-deadline:
					return 0, false
				}
			}
		}
		return time.Since(since), true
	}
	for _, id := range ids { // the load runs
		if _, ok := servedAgainBy([]string{id}, "", time.Now()); !ok {
			t.Fatalf("no call on %s completed", id)
		}
	}

	// The roll: each replica in turn killed -9 and started again at once under its own name.
	var takeovers, backs []time.Duration
	for _, r := range replicas {
		for _, id := range home[r.name] { // what was served before the kill does not count
			for len(served[id]) > 0 {
				<-served[id]
			}
		}
		killedAt := time.Now()
		r.b.kill()
		r.b = start(t, r.cfg)
		drain(r.b)
		restartedIn := time.Since(killedAt)
		took, ok := servedAgainBy(home[r.name], "", killedAt)
		if !ok {
			t.Fatalf("the sessions of %s were not served within 90 s of its kill -9", r.name)
		}
		back, ok := servedAgainBy(home[r.name], r.name, killedAt)
		if !ok {
			t.Fatalf("the sessions of %s were not served by it again within 90 s of its kill -9 and restart", r.name)
		}
		t.Logf("kill -9 of %s: restarted in %v; its %d sessions served again after %v, by %s itself after %v", r.name,
			restartedIn.Round(time.Millisecond), len(home[r.name]), took.Round(time.Millisecond), r.name, back.Round(time.Millisecond))
		takeovers, backs = append(takeovers, took), append(backs, back)
	}
	for _, id := range ids { // the load goes on after the roll
		for len(served[id]) > 0 {
			<-served[id]
		}
		if _, ok := servedAgainBy([]string{id}, "", time.Now()); !ok {
			t.Fatalf("no call on %s completed after the roll", id)
		}
	}
	close(stopLoad)
	load.Wait()
	if py != nil {
		py.in.Close() // the Python host stops calling, and says how each call ended
		rest, _ := io.ReadAll(py.out)
		if err := py.cmd.Wait(); err != nil {
			t.Fatalf("python host: %v\n%s", err, py.log.String())
		}
		pyCalls := 0
		for line := range strings.Lines(string(rest)) {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			pyCalls++
			o := rollOutcome{callID: f[1], session: "python"}
			if f[0] != "ok" {
				o.err = fmt.Errorf("python client: %s", strings.TrimSpace(line))
				if len(f) >= 4 && f[2] == "ABORTED" && f[3] == "CALL_OUTCOME_UNKNOWN" {
					o.err = status.Error(codes.Aborted, "CALL_OUTCOME_UNKNOWN") // the client resumed it: only a resumed call gets it
				}
			}
			outcomes = append(outcomes, o)
		}
		t.Logf("python host: %d calls", pyCalls)
	}

	// Every call that succeeded ran upstream; wait until its report is in (the reports are sent before the
	// tool waits, so all are in flight by now).
	outMu.Lock()
	defer outMu.Unlock()
	reported := func() bool {
		runsMu.Lock()
		defer runsMu.Unlock()
		for _, o := range outcomes {
			if o.err == nil && runs[o.callID] == 0 {
				return false
			}
		}
		return true
	}
	eventually(30*time.Second, reported) // a call that never reports is counted below
	runsMu.Lock()
	defer runsMu.Unlock()
	var ok, resumedOK, unknown, unknownRan, evictedRan, failed, twice, wrong int
	for _, o := range outcomes {
		n := runs[o.callID]
		if n > 1 {
			twice++
			t.Errorf("call %s on %s ran %d times upstream; its attempts:\n%s", o.callID, o.session, n, strings.Join(o.history, "\n"))
		}
		switch {
		case o.err == nil && o.attempts <= 1:
			ok++
		case o.err == nil:
			resumedOK++
		case o.attempts == 0 && status.Code(o.err) == codes.Aborted && status.Convert(o.err).Message() == "CALL_OUTCOME_UNKNOWN",
			o.attempts > 1 && status.Code(o.err) == codes.Aborted && reasonOf(o.err) == "CALL_OUTCOME_UNKNOWN",
			// A first attempt gets it too when gRPC retried it transparently (the proxy refused the stream it
			// had already forwarded to the killed replica) and the heir joined the same call delivered again
			// (docs/adr/0106) — as resumed only if the tool ran at most once.
			o.attempts == 1 && n <= 1 && status.Code(o.err) == codes.Aborted && reasonOf(o.err) == "CALL_OUTCOME_UNKNOWN":
			unknown++ // in flight on the killed replica: the host is told its outcome is unknown
			if n > 0 {
				unknownRan++
			}
		case o.attempts >= 1 && n == 1 && status.Code(o.err) == codes.Aborted && reasonOf(o.err) == "CALL_OUTCOME_EVICTED":
			// It completed on the killed replica, which died before its response left (ADR 0099, "Completed
			// calls"): the tool ran once, its outcome was in that process's memory.
			evictedRan++
		default:
			failed++
			if reasonOf(o.err) == "WRONG_REPLICA" {
				wrong++
			}
			t.Errorf("call %s on %s failed after %d attempts: %v (reason %q)", o.callID, o.session, o.attempts, o.err, reasonOf(o.err))
		}
		if o.attempts > 1 {
			t.Logf("call %s on %s ran %d times upstream; its attempts:\n%s", o.callID, o.session, n, strings.Join(o.history, "\n"))
		}
		if o.err == nil && n == 0 {
			t.Errorf("call %s on %s succeeded but never ran upstream", o.callID, o.session)
		}
	}
	summary := fmt.Sprintf("test-scale kill -9 roll: replicas=%d sessions=%d hosts=%d calls=%d ok=%d resumed_ok=%d resumed_unknown=%d (ran upstream %d) resumed_evicted=%d failed=%d wrong_replica=%d run_twice=%d lease_ttl=%s served_again_after=%v served_by_itself_after=%v",
		scaleReplicas, len(ids), len(ids)*hostsPerSession, len(outcomes), ok, resumedOK, unknown, unknownRan, evictedRan, failed, wrong, twice, takeoverLeaseTTL, roundAll(takeovers), roundAll(backs))
	t.Log(summary)
	writeScaleSummary(summary)
}

// pythonRollScript calls block through the proxy with the Python client, one thread per session on three
// sessions, each call with its own call id as the tool's tag, until its stdin closes; then it prints one line
// per call: "ok <call id>" or "err <call id> <code> <reason>".
const pythonRollScript = `
import sys, threading
sys.path.insert(0, "../clients/python/src")
from mcp_bridge import Client
from mcp_bridge.errors import BridgeError

stop = threading.Event()
lines, mu = [], threading.Lock()

def host(s, k):
    n = 0
    while not stop.is_set():
        cid = "krpy-%d-%d" % (k, n)
        n += 1
        try:
            s.call_tool("block", {"tag": cid, "durationSeconds": 0.2}, call_id=cid, timeout=90)
            line = "ok " + cid
        except BridgeError as e:
            line = "err %s %s %s %s" % (cid, e.code.name, e.reason or "-", str(e).replace("\n", " "))
        with mu:
            lines.append(line)

with Client(sys.argv[1]) as c:
    sessions = [c.create_session("counted") for _ in range(3)]
    threads = [threading.Thread(target=host, args=(s, k)) for k, s in enumerate(sessions)]
    for t in threads:
        t.start()
    print("ready", flush=True)
    sys.stdin.read()
    stop.set()
    for t in threads:
        t.join()
    print("\n".join(lines), flush=True)
`

// sharedRedis starts a redis-server with a password for replicas sharing their state, and returns it with the
// replicas' environment: the password and a state key made of seed.
func sharedRedis(t *testing.T, seed byte) (*statetest.Redis, []string) {
	t.Helper()
	redis := statetest.StartRedis(t, statetest.RedisConfig{Password: "redis-secret-for-the-test"})
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(i) * seed
	}
	return redis, []string{"MCPB_STATE_KEY=" + hex.EncodeToString(key), "MCPB_REDIS_PASSWORD=" + redis.Password}
}

// spreadSessions opens n sessions to server through the proxy and checks that every replica has some; home
// lists them by owner.
func spreadSessions(ctx context.Context, t *testing.T, client pb.BridgeServiceClient, replicas []*sharedReplica, server string, n int) (ids []string, home map[string][]string) {
	t.Helper()
	home = map[string][]string{}
	for range n {
		cs, err := client.CreateSession(ctx, &pb.CreateSessionRequest{Server: server, HostCapabilities: allCaps})
		if err != nil {
			t.Fatal(err)
		}
		id := cs.GetSession().GetSessionId()
		ids = append(ids, id)
		home[ownerOf(t, id)] = append(home[ownerOf(t, id)], id)
	}
	for _, r := range replicas {
		if len(home[r.name]) == 0 {
			t.Fatalf("no session on %s: %v", r.name, home)
		}
	}
	return ids, home
}

// sharedProxy starts HAProxy with deploy/haproxy/haproxy-shared.cfg in front of the replicas, and a gRPC
// client through it (closed when the test ends).
func sharedProxy(t *testing.T, replicas []*sharedReplica) (*haproxy, pb.BridgeServiceClient) {
	t.Helper()
	var bs []*bridge
	for _, r := range replicas {
		bs = append(bs, &bridge{grpc: r.grpc, http: r.http})
	}
	proxy := startHAProxyWith(t, bs, "haproxy-shared.cfg")
	conn, err := grpc.NewClient(proxy.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return proxy, pb.NewBridgeServiceClient(conn)
}

// pythonHost is a host process using the Python client through the proxy: a script whose first line says
// "ready".
type pythonHost struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	log strings.Builder // its stderr
}

// startPythonHost runs script with the Python client's venv (py) and args, and waits for its "ready" line.
func startPythonHost(t *testing.T, py, script string, args ...string) *pythonHost {
	t.Helper()
	h := &pythonHost{cmd: exec.Command(py, append([]string{"-c", script}, args...)...)}
	h.cmd.Stderr = &h.log
	var err error
	if h.in, err = h.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := h.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	h.out = bufio.NewReader(out)
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := h.out.ReadString('\n'); err != nil || !strings.HasPrefix(line, "ready") {
		_ = h.cmd.Process.Kill()
		_ = h.cmd.Wait()
		t.Fatalf("python host: %q %v\n%s", line, err, h.log.String())
	}
	return h
}

// writeScaleSummary appends a summary line to $MCPBRIDGE_SCALE_SUMMARY (scripts/test-scale.sh prints it).
func writeScaleSummary(summary string) {
	if f := os.Getenv("MCPBRIDGE_SCALE_SUMMARY"); f != "" {
		fh, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err == nil {
			_, _ = fh.WriteString(summary + "\n")
			fh.Close()
		}
	}
}

func roundAll(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(10 * time.Millisecond)
	}
	return out
}
