package e2e

// Live secrets, audit, console and limits (docs/adr/0100-live-state-key-audit-console-limits.md) through the
// real binary.

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/mcp-bridge/mcp-bridge/internal/state"
)

// writeFileAtomic replaces path's content through a rename, as an editor or a secret manager does.
func writeFileAtomic(t *testing.T, path, body string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// startLive starts the bridge on a configuration file of head and one probe server "p"; it returns the
// bridge, the file's path and the mcpServers block, for a test to write the file again and reload it.
func startLive(t *testing.T, head string, flags ...string) (b *bridge, conf, servers string) {
	t.Helper()
	conf = filepath.Join(t.TempDir(), "bridge.yaml")
	servers = "mcpServers:\n" + probeYAML(t, "p", "")
	writeFileAtomic(t, conf, head+servers)
	return start(t, bridgeConfig{flags: append([]string{"--config", conf}, flags...)}), conf, servers
}

// hup sends SIGHUP to the bridge and returns the record of the reload it caused.
func (b *bridge) hup(t *testing.T) map[string]any {
	t.Helper()
	mark := b.logMark()
	if err := b.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	return b.waitAfter(t, mark, isReload("SIGHUP"))
}

// TestReloadRotatesStateKey: the state key file rotated under a running bridge (the new key on the first
// line, the old one below it) is taken without a restart: the new key seals what is written from then on,
// the old one still opens what was sealed before, and after a kill -9 a restart with the rotated file
// restores every session and every answer — while the old key alone no longer opens the store.
func TestReloadRotatesStateKey(t *testing.T) {
	dir := t.TempDir()
	stateFile, keyFile := filepath.Join(dir, "state.db"), filepath.Join(dir, "state.key")
	oldKey, newKey := strings.TrimSpace(string(state.NewKey())), strings.TrimSpace(string(state.NewKey()))
	writeFileAtomic(t, keyFile, oldKey+"\n")
	cfg := bridgeConfig{
		extra: fmt.Sprintf("state:\n  file: %q\n  keyFile: %q\n", stateFile, keyFile),
		flags: []string{"--admin-addr", "127.0.0.1:0"},
	}
	b := start(t, cfg)
	ctx := testCtx(t)
	create := func() string {
		t.Helper()
		cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: serverModern, HostCapabilities: allCaps})
		if err != nil {
			t.Fatal(err)
		}
		return cs.GetSession().GetSessionId()
	}
	before := create()
	h := b.connect(ctx)
	h.Attach(before)
	// A round of two questions: the first is answered after the rotation, the second after the restart.
	b.callAsync(ctx, &pb.CallToolRequest{SessionId: before, Name: "elicit_pair", CallId: "call-before"})
	r1, r2 := h.NextRequest(), h.NextRequest()
	if r1.GetInputKey() != "first" {
		r1, r2 = r2, r1
	}

	writeFileAtomic(t, keyFile, newKey+"\n"+oldKey+"\n")
	mark := b.logMark()
	rec := b.hup(t)
	// The watch sees the key file too: the reload it causes may come first, and the signal's finds the
	// file unchanged.
	if rec["msg"] != "configuration reloaded" && rec["msg"] != "configuration unchanged" {
		t.Fatalf("reload after the key rotation = %v", rec)
	}
	b.waitAfter(t, mark, func(rec map[string]any) bool {
		return strings.HasPrefix(fmt.Sprint(rec["msg"]), "state key rotated")
	})
	if rz := readyzConfig(t, b); rz["lastResult"] != "applied" && rz["lastResult"] != "unchanged" || rz["generation"] == float64(1) {
		t.Errorf("/readyz config after the rotation = %v, want a new generation", rz)
	}

	after := create()
	h.Attach(after)
	ack := h.Reply(r1.GetRequestId(), &pb.HostAnswer{Answer: &pb.HostAnswer_Elicitation{Elicitation: &pb.ElicitResult{
		Action: pb.ElicitAction_ELICIT_ACTION_ACCEPT, Content: args(t, map[string]any{"name": "Grace"}),
	}}})
	if !ack.GetAccepted() {
		t.Fatalf("answer after the rotation: %v", ack)
	}
	b.callAsync(ctx, &pb.CallToolRequest{SessionId: after, Name: "elicit", CallId: "call-after"})
	r3 := h.NextRequest()
	b.kill()

	// The old key alone no longer opens the store: what was written after the rotation is sealed under the
	// new one.
	oldOnly := filepath.Join(dir, "old.key")
	writeFileAtomic(t, oldOnly, oldKey+"\n")
	oldConf := filepath.Join(dir, "old.yaml")
	writeFileAtomic(t, oldConf, fmt.Sprintf("state:\n  file: %q\n  keyFile: %q\n", stateFile, oldOnly))
	if code, out := runBridge(t, nil, "--config", oldConf); code != 2 || !strings.Contains(out, "key") {
		t.Errorf("the bridge with the old key alone after the rotation = status %d %q, want 2 naming the key", code, out)
	}

	// The rotated key file opens everything: both sessions, the answer given after the rotation, both
	// questions still pending.
	b2 := start(t, cfg)
	waitReady(t, b2, before)
	waitReady(t, b2, after)
	h2 := b2.connect(ctx)
	h2.Attach(before, after)
	want := map[string]bool{r2.GetRequestId(): true, r3.GetRequestId(): true}
	for len(want) > 0 {
		r := h2.NextRequest()
		if !want[r.GetRequestId()] {
			t.Fatalf("after the restart, request %s was raised, which was not pending", r.GetRequestId())
		}
		delete(want, r.GetRequestId())
	}
	for _, p := range []struct {
		id, session, call, tool, want string
		content                       map[string]any
	}{
		{r2.GetRequestId(), before, "call-before", "elicit_pair", "first=Grace second=Lin", map[string]any{"name": "Lin"}},
		{r3.GetRequestId(), after, "call-after", "elicit", "accepted: name=Lin age=36", map[string]any{"name": "Lin", "age": 36}},
	} {
		ack := h2.Reply(p.id, &pb.HostAnswer{Answer: &pb.HostAnswer_Elicitation{Elicitation: &pb.ElicitResult{
			Action: pb.ElicitAction_ELICIT_ACTION_ACCEPT, Content: args(t, p.content),
		}}})
		if !ack.GetAccepted() {
			t.Fatalf("answer to %s after the restart: %v", p.id, ack)
		}
		res, err := b2.client.CallTool(ctx, &pb.CallToolRequest{SessionId: p.session, Name: p.tool, CallId: p.call, Resume: true})
		if err != nil {
			t.Fatalf("resumed call %s: %v", p.call, err)
		}
		if got := textOf(res.GetResult()); !strings.Contains(got, p.want) {
			t.Errorf("resumed call %s = %q, want %q", p.call, got, p.want)
		}
	}
}

// watchStream opens a WatchEvents stream of session id and waits for its response headers (the bridge
// sends them first) or its refusal.
func watchStream(ctx context.Context, b *bridge, id string) error {
	st, err := b.client.WatchEvents(ctx, &pb.WatchEventsRequest{SessionId: id})
	if err != nil {
		return err
	}
	md, err := st.Header()
	if err == nil && md == nil { // ended without headers: the status is the refusal
		_, err = st.Recv()
	}
	return err
}

// TestReloadLimitsAndAllowedHosts: the keys added with the walls (listen.allowedHosts and the limits read
// at each use) change on SIGHUP instead of refusing the file: a Host refused before is admitted after, and a
// principal's cap on WatchEvents streams rises from the next stream.
func TestReloadLimitsAndAllowedHosts(t *testing.T) {
	b, conf, servers := startLive(t, "limits:\n  maxEventStreamsPerPrincipal: 1\n", "--admin-addr", "127.0.0.1:0")
	ctx := testCtx(t)
	route := doorRoute{method: "GET", path: "/v1/servers"}
	if code, _, body := rebound(t, b.http, "bridge.example.com", route); code != http.StatusMisdirectedRequest {
		t.Fatalf("Host bridge.example.com before the reload = %d %s, want 421", code, body)
	}
	cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "p"})
	if err != nil {
		t.Fatal(err)
	}
	id := cs.GetSession().GetSessionId()
	if err := watchStream(ctx, b, id); err != nil {
		t.Fatalf("the first stream: %v", err)
	}
	if err := watchStream(ctx, b, id); status.Code(err) != codes.ResourceExhausted || reasonOf(err) != "TOO_MANY_STREAMS" {
		t.Fatalf("a second stream under a cap of 1 = %v, want RESOURCE_EXHAUSTED TOO_MANY_STREAMS", err)
	}

	writeFileAtomic(t, conf, "listen:\n  allowedHosts: [bridge.example.com]\n"+
		"limits:\n  maxEventStreamsPerPrincipal: 2\n  maxHTTPConnections: 500\n  descriptorReserve: 100\n  openTimeout: 20s\n"+
		"  keptResultsBytes: 1048576\n  keptResultsTTL: 1m\n  approvalHistory: 10\n  approvalHistoryAge: 1h\n"+servers)
	rec := b.hup(t)
	if rec["msg"] != "configuration reloaded" && rec["msg"] != "configuration unchanged" {
		t.Fatalf("reload of the limits and allowedHosts = %v, want it applied", rec)
	}
	if rz := readyzConfig(t, b); rz["generation"] != float64(2) {
		t.Errorf("/readyz config after the reload = %v, want generation 2", rz)
	}
	if code, _, body := rebound(t, b.http, "bridge.example.com", route); code != http.StatusOK {
		t.Errorf("Host bridge.example.com after it was added to listen.allowedHosts = %d %s, want 200", code, body)
	}
	if code, _, _ := rebound(t, b.http, "other.example.com", route); code != http.StatusMisdirectedRequest {
		t.Errorf("Host other.example.com after the reload = %d, want 421", code)
	}
	if err := watchStream(ctx, b, id); err != nil {
		t.Errorf("a second stream under the new cap of 2: %v", err)
	}
	if err := watchStream(ctx, b, id); status.Code(err) != codes.ResourceExhausted || reasonOf(err) != "TOO_MANY_STREAMS" {
		t.Errorf("a third stream under a cap of 2 = %v, want RESOURCE_EXHAUSTED TOO_MANY_STREAMS", err)
	}
}

// TestReloadSwitchesAuditLog: audit.output changes on SIGHUP: records before the switch are in the old
// file, records after it in the new one (with payloads once includePayloads is on), none lost or split.
func TestReloadSwitchesAuditLog(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "bridge.yaml")
	oldLog, newLog := filepath.Join(dir, "audit-1.jsonl"), filepath.Join(dir, "audit-2.jsonl")
	servers := "mcpServers:\n" + probeYAML(t, "p", "")
	writeFileAtomic(t, conf, fmt.Sprintf("audit:\n  output: %q\n", oldLog)+servers)
	b := start(t, bridgeConfig{flags: []string{"--config", conf}})
	ctx := testCtx(t)
	cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "p"})
	if err != nil {
		t.Fatal(err)
	}
	id := cs.GetSession().GetSessionId()

	writeFileAtomic(t, conf, fmt.Sprintf("audit:\n  output: %q\n  includePayloads: true\n", newLog)+servers)
	rec := b.hup(t)
	if rec["msg"] != "configuration reloaded" && rec["msg"] != "configuration unchanged" {
		t.Fatalf("reload of audit = %v, want it applied", rec)
	}
	if _, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: id, Name: "echo", Arguments: args(t, map[string]any{"text": "after the switch"})}); err != nil {
		t.Fatal(err)
	}
	read := func(path string) string {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("audit log %s: %v", path, err)
		}
		return string(raw)
	}
	before, after := read(oldLog), read(newLog)
	if !strings.Contains(before, `"event":"session.created"`) || strings.Contains(before, `"event":"tool.called"`) {
		t.Errorf("the audit log before the switch holds:\n%s\nwant the session's creation only", before)
	}
	if !strings.Contains(after, `"event":"tool.called"`) || !strings.Contains(after, "after the switch") || strings.Contains(after, `"event":"session.created"`) {
		t.Errorf("the audit log after the switch holds:\n%s\nwant the call, with its arguments", after)
	}
}

// TestReloadTurnsConsoleOnAndOff: console.enabled changes on SIGHUP: the console is served from the next
// request after it is turned on, and 404 after it is turned off.
func TestReloadTurnsConsoleOnAndOff(t *testing.T) {
	b, conf, servers := startLive(t, "console:\n  enabled: false\n")
	get := func() int {
		t.Helper()
		code, _, _ := rebound(t, b.http, "127.0.0.1", doorRoute{method: "GET", path: "/console/"})
		return code
	}
	if code := get(); code != http.StatusNotFound {
		t.Fatalf("/console/ with the console off = %d, want 404", code)
	}
	for _, c := range []struct {
		yaml string
		want int
	}{{"console:\n  enabled: true\n", http.StatusOK}, {"console:\n  enabled: false\n", http.StatusNotFound}} {
		writeFileAtomic(t, conf, c.yaml+servers)
		if rec := b.hup(t); rec["msg"] != "configuration reloaded" && rec["msg"] != "configuration unchanged" {
			t.Fatalf("reload of %q = %v, want it applied", c.yaml, rec)
		}
		if code := get(); code != c.want {
			t.Errorf("/console/ after reloading %q = %d, want %d", c.yaml, code, c.want)
		}
	}
}

// TestReloadMaxStdioProcesses: limits.maxStdioProcesses changes on SIGHUP. Under a limit of 1 a second stdio
// session is refused RESOURCE_EXHAUSTED naming the key; after a reload to 2 it opens, and the first session
// (its process started under the old limit) serves throughout.
func TestReloadMaxStdioProcesses(t *testing.T) {
	b, conf, servers := startLive(t, "limits:\n  maxStdioProcesses: 1\n")
	ctx := testCtx(t)
	serves := func(when, id string) {
		t.Helper()
		if _, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: id, Name: "pid"}); err != nil {
			t.Fatalf("the first session %s: %v", when, err)
		}
	}
	cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "p"})
	if err != nil {
		t.Fatal(err)
	}
	first := cs.GetSession().GetSessionId()
	serves("under the limit of 1", first)
	_, err = b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "p"})
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(status.Convert(err).Message(), "limits.maxStdioProcesses") {
		t.Fatalf("a second stdio session under a limit of 1 = %v, want RESOURCE_EXHAUSTED naming limits.maxStdioProcesses", err)
	}

	writeFileAtomic(t, conf, "limits:\n  maxStdioProcesses: 2\n"+servers)
	if rec := b.hup(t); rec["msg"] != "configuration reloaded" {
		t.Fatalf("reload of limits.maxStdioProcesses to 2 = %v, want it applied", rec)
	}
	serves("after the reload", first)
	cs2, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: "p"})
	if err != nil {
		t.Fatalf("a second stdio session under the new limit of 2: %v", err)
	}
	if _, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: cs2.GetSession().GetSessionId(), Name: "pid"}); err != nil {
		t.Errorf("the second session: %v", err)
	}
	serves("beside the second", first)
}
