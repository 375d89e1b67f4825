package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// The scale-out test (make test-scale, docs/scaling.md): three replicas of the real binary on loopback behind
// a real HAProxy configured from deploy/haproxy/. It runs only with MCPBRIDGE_TEST_SCALE=1 (scripts/test-scale.sh
// sets it and installs HAProxy when it is missing).

const (
	routingKey    = "mcpbridge-session" // server.SessionRoutingKey
	replicaHeader = "mcpbridge-replica" // server.ReplicaHeader
	scaleReplicas = 3
	scaleSessions = 12
)

// scaleStats counts what the test sent through the proxy and what landed on the wrong replica.
type scaleStats struct {
	calls, misrouted atomic.Int64
	mu               sync.Mutex // guards wrong
	wrong            []string
}

func (s *scaleStats) landed(t *testing.T, what, owner, answeredBy string) {
	t.Helper()
	s.calls.Add(1)
	if answeredBy != owner {
		s.misrouted.Add(1)
		s.mu.Lock()
		s.wrong = append(s.wrong, fmt.Sprintf("%s of a session of %s answered by %q", what, owner, answeredBy))
		s.mu.Unlock()
	}
}

// ownerOf is the replica named in a session id "s-<replica>.<random>".
func ownerOf(t *testing.T, id string) string {
	t.Helper()
	rest, ok := strings.CutPrefix(id, "s-")
	replica, _, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 {
		t.Fatalf("session id %q names no replica", id)
	}
	return replica
}

// routed adds the routing key to ctx, as the clients do for every call that names a session.
func routed(ctx context.Context, sessionID string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, routingKey, sessionID)
}

func replicaOf(md metadata.MD) string {
	if v := md.Get(replicaHeader); len(v) > 0 {
		return v[0]
	}
	return ""
}

// freeAddr returns a loopback address nothing listens on (HAProxy cannot bind port 0 and report it).
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

type haproxy struct {
	grpc, http string
}

// startHAProxy runs haproxy with deploy/haproxy/haproxy.cfg in front of the replicas until the test ends.
func startHAProxy(t *testing.T, replicas []*bridge) *haproxy {
	t.Helper()
	return startHAProxyWith(t, replicas, "haproxy.cfg")
}

// startHAProxyWith runs haproxy with the configuration file cfg of deploy/haproxy.
func startHAProxyWith(t *testing.T, replicas []*bridge, cfg string) *haproxy {
	t.Helper()
	exe, err := exec.LookPath("haproxy")
	if err != nil {
		t.Fatal("haproxy is not installed (make test-scale installs the Debian package)")
	}
	dir, err := filepath.Abs("../deploy/haproxy")
	if err != nil {
		t.Fatal(err)
	}
	h := &haproxy{grpc: freeAddr(t), http: freeAddr(t)}
	env := append(os.Environ(), "MCPB_GRPC_BIND="+h.grpc, "MCPB_HTTP_BIND="+h.http, "MCPB_HAPROXY_DIR="+dir)
	for i, r := range replicas {
		env = append(env, fmt.Sprintf("MCPB_R%d_GRPC=%s", i+1, r.grpc), fmt.Sprintf("MCPB_R%d_HTTP=%s", i+1, r.http))
	}
	cmd := exec.Command(exe, "-db", "-f", filepath.Join(dir, cfg))
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { // ends when haproxy exits and closes stderr
		defer close(done)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			t.Log("haproxy: " + sc.Text())
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
		_ = cmd.Wait()
	})
	// Ready when both frontends accept and the REST frontend routes (a health check answered): a real haproxy
	// process, which signals neither.
	var notReady error
	if !eventually(30*time.Second, func() bool {
		var resp *http.Response
		if resp, notReady = http.Get("http://" + h.http + "/readyz"); notReady != nil {
			return false
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			notReady = fmt.Errorf("/readyz answered %s", resp.Status)
			return false
		}
		return true
	}) {
		t.Fatalf("haproxy did not answer on %s within 30s: %v", h.http, notReady)
	}
	return h
}

func TestScaleOut(t *testing.T) {
	// It needs HAProxy, which `make test-scale` installs (apt) when missing, and runs three replicas; so it runs
	// only under that target (part of `make test`), not in every `go test ./e2e/...`.
	if os.Getenv("MCPBRIDGE_TEST_SCALE") != "1" {
		t.Skip("run by make test-scale (MCPBRIDGE_TEST_SCALE=1)")
	}
	// Every replica knows the others' gRPC addresses (sessions.peers) for ListSessions, so they are fixed
	// before they start.
	var grpcAddrs []string
	for range scaleReplicas {
		grpcAddrs = append(grpcAddrs, freeAddr(t))
	}
	peers := "    peers: [" + strings.Join(grpcAddrs, ", ") + "]\n"
	var replicas []*bridge
	byName := map[string]*bridge{}
	for i := range scaleReplicas {
		name := fmt.Sprintf("r%d", i+1)
		b := start(t, bridgeConfig{extra: "sessions:\n  replica: " + name + "\n" + strings.ReplaceAll(peers, "    ", "  "), flags: []string{"--grpc-addr", grpcAddrs[i]}})
		replicas = append(replicas, b)
		byName[name] = b
	}
	proxy := startHAProxy(t, replicas)
	ctx := testCtx(t)
	conn, err := grpc.NewClient(proxy.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := pb.NewBridgeServiceClient(conn)
	var stats scaleStats

	// Sessions spread: CreateSession goes to any replica (round robin).
	var ids []string
	perReplica := map[string][]string{}
	for range scaleSessions {
		var hdr metadata.MD
		cs, err := client.CreateSession(ctx, &pb.CreateSessionRequest{Server: serverModern, HostCapabilities: allCaps}, grpc.Header(&hdr))
		if err != nil {
			t.Fatal(err)
		}
		id := cs.GetSession().GetSessionId()
		owner := ownerOf(t, id)
		stats.landed(t, "CreateSession", owner, replicaOf(hdr))
		ids = append(ids, id)
		perReplica[owner] = append(perReplica[owner], id)
	}
	for name := range byName {
		if len(perReplica[name]) == 0 {
			t.Fatalf("no session on replica %s: %v", name, perReplica)
		}
	}

	// ListSessions, on whichever replica it lands, lists the caller's sessions on every replica (fan-out to
	// the peers), page by page.
	listAll := func(pageSize int32) []string {
		var got []string
		token := ""
		for {
			resp, err := client.ListSessions(ctx, &pb.ListSessionsRequest{PageSize: pageSize, PageToken: token})
			if err != nil {
				t.Fatal(err)
			}
			stats.calls.Add(1)
			for _, s := range resp.GetSessions() {
				if slices.Contains(ids, s.GetSessionId()) { // not the Python hosts' (the same principal)
					got = append(got, s.GetSessionId())
				}
			}
			if token = resp.GetNextPageToken(); token == "" {
				return got
			}
		}
	}
	for range scaleReplicas {
		for _, size := range []int32{0, 5} {
			got := listAll(size)
			slices.Sort(got)
			want := slices.Sorted(slices.Values(ids))
			if !slices.Equal(got, want) {
				t.Fatalf("ListSessions (page size %d) = %v, want every session: %v", size, got, want)
			}
		}
	}

	// Unary calls, a streaming call, and REST calls routed by the path.
	for _, id := range ids {
		owner := ownerOf(t, id)
		var hdr metadata.MD
		res, err := client.CallTool(routed(ctx, id), &pb.CallToolRequest{SessionId: id, Name: "echo", Arguments: args(t, map[string]any{"text": id})}, grpc.Header(&hdr))
		if err != nil || !strings.Contains(textOf(res.GetResult()), id) {
			t.Fatalf("CallTool on %s = %v, %v", id, res, err)
		}
		stats.landed(t, "CallTool", owner, replicaOf(hdr))
		if _, err := client.ListTools(routed(ctx, id), &pb.ListToolsRequest{SessionId: id}, grpc.Header(&hdr)); err != nil {
			t.Fatal(err)
		}
		stats.landed(t, "ListTools", owner, replicaOf(hdr))
		st, err := client.StreamCallTool(routed(ctx, id), &pb.StreamCallToolRequest{SessionId: id, Name: "echo", Arguments: args(t, map[string]any{"text": "x"})})
		if err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := st.Recv(); err != nil {
				if status.Code(err) != codes.OK && err.Error() != "EOF" {
					t.Fatalf("StreamCallTool: %v", err)
				}
				break
			}
		}
		if hdr, err = st.Header(); err != nil {
			t.Fatal(err)
		}
		stats.landed(t, "StreamCallTool", owner, replicaOf(hdr))
		resp, err := http.Post("http://"+proxy.http+"/v1/sessions/"+id+"/tools/echo:call", "application/json", strings.NewReader(`{"arguments": {"text": "rest"}}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("REST CallTool on %s = %d", id, resp.StatusCode)
		}
		stats.landed(t, "REST CallTool", owner, resp.Header.Get("Grpc-Metadata-"+replicaHeader))
	}

	// One Connect stream per replica, routed by one of its sessions' ids, attaches all of that replica's
	// sessions and answers a sampling request of each; a REST watcher (routed by the path) sees the request
	// and RespondToRequest answers another.
	sampling := &pb.HostAnswer{Answer: &pb.HostAnswer_Sampling{Sampling: &pb.CreateMessageResult{
		Role: pb.Role_ROLE_ASSISTANT, Model: "m", Content: []*pb.ContentBlock{{Content: &pb.ContentBlock_Text{Text: &pb.TextContent{Text: "Paris"}}}}}}}
	hosts := map[string]*hostConn{}
	for owner, sids := range perReplica {
		b := &bridge{t: t, client: client}
		h := b.connect(routed(ctx, sids[0]))
		hosts[owner] = h
		att := h.Attach(sids...)
		if len(att.GetSessionIds()) != len(sids) {
			t.Fatalf("Connect to %s attached %v, want %v (%v)", owner, att.GetSessionIds(), sids, att)
		}
		hdr, err := h.Header()
		if err != nil {
			t.Fatal(err)
		}
		stats.landed(t, "Connect", owner, replicaOf(hdr))
		for _, id := range sids {
			var hdr metadata.MD
			done := make(chan error, 1)
			go func() {
				res, err := client.CallTool(routed(ctx, id), &pb.CallToolRequest{SessionId: id, Name: "sample", Arguments: args(t, map[string]any{"prompt": "Capital of France?"})}, grpc.Header(&hdr))
				if err == nil && !strings.Contains(textOf(res.GetResult()), "Paris") {
					err = fmt.Errorf("result %v", res)
				}
				done <- err
			}()
			req := h.NextRequest()
			if req.GetSessionId() != id {
				t.Fatalf("request of session %s on the stream of %s", req.GetSessionId(), id)
			}
			if ack := h.Reply(req.GetRequestId(), sampling); !ack.GetAccepted() {
				t.Fatalf("ack = %v", ack)
			}
			if err := await(t, done); err != nil {
				t.Fatalf("sample on %s: %v", id, err)
			}
			stats.landed(t, "CallTool sample", owner, replicaOf(hdr))
		}
	}
	for owner, sids := range perReplica {
		id := sids[len(sids)-1]
		// Detach from Connect so that the request waits for RespondToRequest.
		hosts[owner].Send(&pb.ConnectRequest{Action: &pb.ConnectRequest_Detach{Detach: &pb.DetachSessions{SessionIds: []string{id}}}})
		hosts[owner].Next(func(m *pb.ConnectResponse) bool { return m.GetAttached() != nil })
		// gRPC WatchEvents, routed by the key: its headers name the owner.
		wctx, wcancel := context.WithCancel(routed(ctx, id))
		watch, err := client.WatchEvents(wctx, &pb.WatchEventsRequest{SessionId: id})
		if err != nil {
			t.Fatal(err)
		}
		whdr, err := watch.Header()
		if err != nil {
			t.Fatal(err)
		}
		wcancel()
		stats.landed(t, "WatchEvents (gRPC)", owner, replicaOf(whdr))
		// REST WatchEvents, routed by the path: the request reaches the host through it.
		ev := (&bridge{t: t, http: proxy.http}).rest("").events(id)
		done := make(chan error, 1)
		go func() {
			_, err := client.CallTool(routed(ctx, id), &pb.CallToolRequest{SessionId: id, Name: "sample", Arguments: args(t, map[string]any{"prompt": "Capital of France?"})})
			done <- err
		}()
		req := ev.next(func(e *pb.Event) bool { return e.GetServerRequest() != nil }).GetServerRequest()
		ev.close()
		stats.landed(t, "WatchEvents (REST)", owner, ev.header.Get("Grpc-Metadata-"+replicaHeader))
		var hdr metadata.MD
		if _, err := client.RespondToRequest(routed(ctx, id), &pb.RespondToRequestRequest{SessionId: id, RequestId: req.GetRequestId(), Answer: sampling}, grpc.Header(&hdr)); err != nil {
			t.Fatal(err)
		}
		stats.landed(t, "RespondToRequest", owner, replicaOf(hdr))
		if err := await(t, done); err != nil {
			t.Fatal(err)
		}
	}

	// The Python client works through the proxy unchanged.
	if py := pythonClient(t); py != "" {
		out, err := exec.Command(py, "-c", pythonScaleScript, proxy.grpc).CombinedOutput()
		if err != nil {
			t.Fatalf("python client through the proxy: %v\n%s", err, out)
		}
		t.Logf("python client: %s", strings.TrimSpace(string(out)))
		stats.calls.Add(int64(strings.Count(string(out), "call ")))
	}

	// A Python host with sessions on every replica sees the killed replica's sessions as lost, and only them.
	victim := "r2"
	var py *pythonHost
	if exe := pythonClient(t); exe != "" {
		py = startPythonHost(t, exe, pythonKillScript, proxy.grpc, victim)
	}

	// Killing a replica fails only its own sessions: promptly, UNAVAILABLE REPLICA_UNAVAILABLE.
	byName[victim].kill()
	for _, id := range ids {
		owner := ownerOf(t, id)
		cctx, cancel := context.WithTimeout(routed(ctx, id), 10*time.Second)
		var hdr metadata.MD
		_, err := client.CallTool(cctx, &pb.CallToolRequest{SessionId: id, Name: "echo", Arguments: args(t, map[string]any{"text": "after"})}, grpc.Header(&hdr))
		cancel()
		if owner == victim {
			if status.Code(err) != codes.Unavailable || reasonOf(err) != "REPLICA_UNAVAILABLE" {
				t.Fatalf("call on %s after its replica died = %v (%s), want UNAVAILABLE REPLICA_UNAVAILABLE", id, err, reasonOf(err))
			}
			stats.calls.Add(1)
			continue
		}
		if err != nil {
			t.Fatalf("call on %s (replica %s) after %s died: %v", id, owner, victim, err)
		}
		stats.landed(t, "CallTool after kill", owner, replicaOf(hdr))
	}
	// The victim's Connect stream ended; the others go on.
	select {
	case <-hosts[victim].Ended():
	case <-time.After(10 * time.Second):
		t.Fatalf("the Connect stream of %s did not end when it died", victim)
	}
	// ListSessions leaves the dead replica's sessions out, and answers at once.
	var alive []string
	for _, id := range ids {
		if ownerOf(t, id) != victim {
			alive = append(alive, id)
		}
	}
	for range scaleReplicas - 1 {
		got := listAll(0)
		slices.Sort(got)
		if want := slices.Sorted(slices.Values(alive)); !slices.Equal(got, want) {
			t.Fatalf("ListSessions after %s died = %v, want %v", victim, got, want)
		}
	}
	resp, err := http.Get("http://" + proxy.http + "/v1/sessions/" + perReplica[victim][0])
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("REST GET of a session of the dead replica = %d, want 503", resp.StatusCode)
	}

	if py != nil {
		if _, err := io.WriteString(py.in, "go\n"); err != nil {
			t.Fatal(err)
		}
		py.in.Close()
		rest, _ := io.ReadAll(py.out)
		if err := py.cmd.Wait(); err != nil {
			t.Fatalf("python host after %s died: %v\n%s\n%s", victim, err, rest, py.log.String())
		}
		t.Logf("python host: %s", strings.TrimSpace(string(rest)))
		stats.calls.Add(int64(strings.Count(string(rest), "call ")))
	}

	if stats.misrouted.Load() != 0 {
		t.Errorf("misrouted: %v", stats.wrong)
	}
	summary := fmt.Sprintf("test-scale: replicas=%d sessions=%d calls=%d misrouted=%d", scaleReplicas, len(ids), stats.calls.Load(), stats.misrouted.Load())
	t.Log(summary)
	writeScaleSummary(summary) // appended: the tests run in file order, and TestScaleKillRoll comes first
}

// pythonKillScript holds sessions on every replica with a handler attached (one host stream per replica), says
// "ready", and after "go" on stdin (the replica argv[2] was killed meanwhile) checks that the dead replica's
// sessions are lost (UNAVAILABLE, REPLICA_UNAVAILABLE, session_lost) and its host stream ended, that the other
// sessions still work, sampling included, and that a new session works.
const pythonKillScript = `
import sys, time
sys.path.insert(0, "../clients/python/src")
from mcp_bridge import Client, Handler, SamplingResult, TextContent
from mcp_bridge.errors import BridgeError
import grpc

class H(Handler):
    def handle_sampling(self, request):
        return SamplingResult(content=TextContent("Paris"), model="m")

victim = sys.argv[2]
with Client(sys.argv[1], timeout=30) as c:
    sessions = []
    while len({s.id.split(".")[0] for s in sessions}) < 3 and len(sessions) < 30:
        sessions.append(c.create_session("demo", H()))
    assert any(s.id.startswith("s-" + victim + ".") for s in sessions), [s.id for s in sessions]
    print("ready", " ".join(s.id for s in sessions), flush=True)
    sys.stdin.readline()
    for s in sessions:
        if s.id.startswith("s-" + victim + "."):
            try:
                s.call_tool("echo", {"text": "x"}, timeout=10)
                raise SystemExit("a call on " + s.id + " worked after its replica died")
            except BridgeError as e:
                assert e.code == grpc.StatusCode.UNAVAILABLE and e.reason == "REPLICA_UNAVAILABLE" and e.session_lost, e
                print("call lost", s.id, e.reason)
        else:
            r = s.call_tool("sample", {"prompt": "?"})
            assert "Paris" in r.text, r
            print("call sample", s.id)
    deadline = time.monotonic() + 20
    while not c._replica_hosts[victim].ended:
        assert time.monotonic() < deadline, "the host stream to the dead replica did not end"
        time.sleep(0.05)
    print("host stream to", victim, "ended")
    fresh = c.create_session("demo", H())
    assert not fresh.id.startswith("s-" + victim + "."), fresh.id
    assert "Paris" in fresh.call_tool("sample", {"prompt": "?"}).text
    print("call new session", fresh.id)
`

// pythonClient is the interpreter of the Python client's venv (.tools/pyclient-venv, scripts/test-python.sh
// makes it), or "" when it is missing and MCPBRIDGE_REQUIRE_PEERS is not set.
func pythonClient(t *testing.T) string {
	py, err := filepath.Abs("../.tools/pyclient-venv/bin/python")
	if err == nil {
		if _, err = os.Stat(py); err == nil {
			return py
		}
	}
	if os.Getenv("MCPBRIDGE_REQUIRE_PEERS") == "1" {
		t.Fatalf("the Python client's venv is missing (%v): run scripts/test-python.sh once", err)
	}
	t.Log("skipping the Python client through the proxy: .tools/pyclient-venv is missing")
	return ""
}

// pythonScaleScript uses the Python client as a host would, through the proxy: sessions on several replicas,
// calls, a sampling request answered by a handler (the Connect stream of the session's replica).
const pythonScaleScript = `
import sys
sys.path.insert(0, "../clients/python/src")
from mcp_bridge import Client, Handler, SamplingResult, TextContent

class H(Handler):
    def handle_sampling(self, request):
        return SamplingResult(content=TextContent("Paris"), model="m")

with Client(sys.argv[1], timeout=30) as c:
    sessions = [c.create_session("demo", H()) for _ in range(6)]
    owners = set()
    for s in sessions:
        owners.add(s.id.split(".")[0])
        r = s.call_tool("echo", {"text": s.id})
        assert s.id in r.text, r
        print("call echo", s.id)
        r = s.call_tool("sample", {"prompt": "Capital of France?"})
        assert "Paris" in r.text, r
        print("call sample", s.id)
        s.close()
    assert len(owners) > 1, owners
`
