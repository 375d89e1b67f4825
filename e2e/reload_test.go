package e2e

// Live configuration (docs/adr/0095-live-configuration.md) through the real binary: SIGHUP, and a change of
// the file seen by the watch — written in place, or swapped through a symlink as Kubernetes updates a
// mounted ConfigMap — add and remove servers, change a live session's policy, rotate bearer tokens, refuse
// a broken file and a change that needs a restart; TLS certificates rotate under a held gRPC stream.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/status"

	"github.com/mcp-bridge/mcp-bridge/e2e/probe"
	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// liveFiles is the directory of a bridge's configuration, laid out as written in place or as a ConfigMap
// volume (every file a symlink through ..data to a directory that an update replaces as a whole).
type liveFiles struct {
	t         *testing.T
	dir       string
	configMap bool
	version   int
	files     map[string]string // every file of the volume, as last written
}

// write replaces the files: in place through a rename (as editors do), or by a ConfigMap's ..data swap.
func (f *liveFiles) write(files map[string]string) {
	t := f.t
	t.Helper()
	if !f.configMap {
		for name, body := range files {
			tmp := filepath.Join(f.dir, "."+name+".tmp")
			if err := os.WriteFile(tmp, []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, filepath.Join(f.dir, name)); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	// A ConfigMap's update holds every file of the volume: the ones not written keep their content.
	if f.files == nil {
		f.files = map[string]string{}
	}
	maps.Copy(f.files, files)
	files = f.files
	f.version++
	ver := fmt.Sprintf("..2026_11_28_%02d", f.version)
	if err := os.Mkdir(filepath.Join(f.dir, ver), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(f.dir, ver, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(f.dir, name)
		if _, err := os.Lstat(link); os.IsNotExist(err) {
			if err := os.Symlink(filepath.Join("..data", name), link); err != nil {
				t.Fatal(err)
			}
		}
	}
	tmp := filepath.Join(f.dir, "..data_tmp")
	if err := os.Symlink(ver, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(f.dir, "..data")); err != nil {
		t.Fatal(err)
	}
}

// probeYAML is a probe server's entry under mcpServers, with more keys (indented by four spaces).
func probeYAML(t *testing.T, name, more string) string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("  %s:\n    command: %q\n    env:\n      %s: \"1\"\n%s", name, exe, probe.EnvRun, more)
}

// logMark is how many lines the bridge had logged: waitAfter looks at the lines after it.
func (b *bridge) logMark() int { return len(b.logs.all()) }

// waitAfter returns the first log record after mark for which match is true, waiting for it.
func (b *bridge) waitAfter(t *testing.T, mark int, match func(rec map[string]any) bool) map[string]any {
	t.Helper()
	n := 0
	return b.logs.waitFor(t, func(rec map[string]any) bool {
		n++
		return n > mark && match(rec)
	})
}

func isReload(trigger string) func(map[string]any) bool {
	return func(rec map[string]any) bool {
		msg, _ := rec["msg"].(string)
		return rec["trigger"] == trigger && (strings.HasPrefix(msg, "configuration ") || strings.HasPrefix(msg, "configuration not reloaded"))
	}
}

// readyzConfig is the configuration part of the admin listener's /readyz.
func readyzConfig(t *testing.T, b *bridge) map[string]any {
	t.Helper()
	resp, err := http.Get("http://" + b.admin + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var body struct {
		Status string         `json:"status"`
		Config map[string]any `json:"config"`
	}
	if err := json.Unmarshal(raw, &body); err != nil || body.Status != "READY" {
		t.Fatalf("/readyz = %d %s (%v), want READY", resp.StatusCode, raw, err)
	}
	return body.Config
}

func TestReloadConfiguration(t *testing.T) {
	for _, via := range []string{"SIGHUP", "configmap-swap"} {
		t.Run(via, func(t *testing.T) { testReload(t, via == "configmap-swap") })
	}
}

func testReload(t *testing.T, configMap bool) {
	dir := t.TempDir()
	f := &liveFiles{t: t, dir: dir, configMap: configMap}
	head := "auth:\n  tokensFile: tokens.txt\nmcpServers:\n"
	f.write(map[string]string{
		"bridge.yaml": head + probeYAML(t, "keep", "") + probeYAML(t, "gone", ""),
		"tokens.txt":  "tok-old alice\n",
	})
	b := start(t, bridgeConfig{flags: []string{"--config", filepath.Join(dir, "bridge.yaml"), "--admin-addr", "127.0.0.1:0"}})
	trigger := "file changed"
	// apply writes the files and, for SIGHUP, signals; it returns the record of the reload that read them.
	apply := func(files map[string]string) map[string]any {
		t.Helper()
		mark := b.logMark()
		f.write(files)
		if !configMap {
			// The watch sees a file written in place too; the reload the signal causes is the one waited for.
			trigger = "SIGHUP"
			if err := b.cmd.Process.Signal(syscall.SIGHUP); err != nil {
				t.Fatal(err)
			}
		}
		return b.waitAfter(t, mark, isReload(trigger))
	}
	ctx := testCtx(t)
	oldTok, newTok := withToken(ctx, "tok-old"), withToken(ctx, "tok-new")

	keep, err := b.client.CreateSession(oldTok, &pb.CreateSessionRequest{Server: "keep", HostCapabilities: allCaps})
	if err != nil {
		t.Fatal(err)
	}
	keepID := keep.GetSession().GetSessionId()
	gone, err := b.client.CreateSession(oldTok, &pb.CreateSessionRequest{Server: "gone", HostCapabilities: allCaps})
	if err != nil {
		t.Fatal(err)
	}
	goneID := gone.GetSession().GetSessionId()
	watch, err := b.client.WatchEvents(oldTok, &pb.WatchEventsRequest{SessionId: goneID})
	if err != nil {
		t.Fatal(err)
	}
	echo := func(c context.Context, sid string) error {
		_, err := b.client.CallTool(c, &pb.CallToolRequest{SessionId: sid, Name: "echo", Arguments: args(t, map[string]any{"text": "hi"})})
		return err
	}
	if err := echo(oldTok, keepID); err != nil {
		t.Fatalf("echo before the reload: %v", err)
	}

	// One file: a server added, one removed, a policy on the kept one, a rotated token.
	good := head + probeYAML(t, "keep", "    tools: {deny: [echo]}\n") + probeYAML(t, "added", "")
	rec := apply(map[string]string{"bridge.yaml": good, "tokens.txt": "tok-new alice\n"})
	if rec["msg"] != "configuration reloaded" && rec["msg"] != "configuration unchanged" {
		t.Fatalf("reload = %v", rec)
	}
	if _, err := b.client.ListSessions(oldTok, &pb.ListSessionsRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Errorf("the old token after the rotation = %v, want UNAUTHENTICATED", err)
	}
	// The live session of the kept server: same id, still serving, obeying the new policy from its next call.
	if err := echo(newTok, keepID); status.Code(err) != codes.PermissionDenied {
		t.Errorf("echo on the live session after the policy change = %v, want PERMISSION_DENIED", err)
	}
	if _, err := b.client.CallTool(newTok, &pb.CallToolRequest{SessionId: keepID, Name: "pid"}); err != nil {
		t.Errorf("another tool on the live session after the reload: %v", err)
	}
	if gs, err := b.client.GetSession(newTok, &pb.GetSessionRequest{SessionId: keepID}); err != nil || gs.GetSession().GetState() != pb.SessionState_SESSION_STATE_READY {
		t.Errorf("the live session after the reload = %v, %v; want READY", gs, err)
	}
	// The added server serves new sessions; the removed one is gone, and its session ended with its own status.
	added, err := b.client.CreateSession(newTok, &pb.CreateSessionRequest{Server: "added", HostCapabilities: allCaps})
	if err != nil {
		t.Fatalf("CreateSession(added): %v", err)
	}
	if err := echo(newTok, added.GetSession().GetSessionId()); err != nil {
		t.Errorf("echo on the added server: %v", err)
	}
	if _, err := b.client.CreateSession(newTok, &pb.CreateSessionRequest{Server: "gone"}); status.Code(err) != codes.NotFound {
		t.Errorf("CreateSession(gone) after its removal = %v, want NOT_FOUND", err)
	}
	for {
		ev, err := watch.Recv()
		if err != nil {
			t.Fatalf("watching the removed server's session: %v", err)
		}
		if st := ev.GetEvent().GetSessionState(); st != nil && st.GetState() == pb.SessionState_SESSION_STATE_CLOSED {
			if !strings.Contains(st.GetReason(), "removed") {
				t.Errorf("the removed server's session closed with reason %q", st.GetReason())
			}
			break
		}
	}
	if err := echo(newTok, goneID); status.Code(err) != codes.FailedPrecondition || reasonOf(err) != "SERVER_REMOVED" {
		t.Errorf("a call on the removed server's session = %v, want FAILED_PRECONDITION SERVER_REMOVED", err)
	}
	gen := readyzConfig(t, b)["generation"]

	// A broken file changes nothing; the error names the file and the line.
	rec = apply(map[string]string{"bridge.yaml": "mcpServers: [\n"})
	if rec["msg"] != "configuration not reloaded: the file is invalid; the configuration in force is kept" ||
		!strings.Contains(fmt.Sprint(rec["error"]), "bridge.yaml:1") {
		t.Errorf("broken file: %v", rec)
	}
	if _, err := b.client.CallTool(newTok, &pb.CallToolRequest{SessionId: keepID, Name: "pid"}); err != nil {
		t.Errorf("serving after a broken file: %v", err)
	}
	rz := readyzConfig(t, b)
	if rz["generation"] != gen || rz["lastResult"] != "invalid" || !strings.Contains(fmt.Sprint(rz["lastError"]), "bridge.yaml:1") {
		t.Errorf("/readyz config after a broken file = %v, want generation %v and the error", rz, gen)
	}
	fams := scrape(t, b.admin)
	if v, _ := metric(fams, "mcpbridge_config_reloads_total", map[string]string{"result": "invalid"}); v < 1 {
		t.Errorf("mcpbridge_config_reloads_total{result=invalid} = %v", v)
	}
	if v, _ := metric(fams, "mcpbridge_config_generation", nil); strconv.FormatFloat(v, 'f', -1, 64) != fmt.Sprint(gen) {
		t.Errorf("mcpbridge_config_generation = %v, want %v", v, gen)
	}

	// A listener change needs a restart: refused naming the key, and nothing else of the file applied.
	rec = apply(map[string]string{"bridge.yaml": good + probeYAML(t, "late", "") + "listen:\n  grpcSocket: " + filepath.Join(dir, "s.sock") + "\n"})
	if !strings.Contains(fmt.Sprint(rec["error"]), "listen.grpcSocket") || !strings.Contains(fmt.Sprint(rec["error"]), "needs a restart") {
		t.Errorf("listener change: %v, want listen.grpcSocket named and \"needs a restart\"", rec)
	}
	if _, err := b.client.CreateSession(newTok, &pb.CreateSessionRequest{Server: "late"}); status.Code(err) != codes.NotFound {
		t.Errorf("CreateSession(late) from a refused file = %v, want NOT_FOUND", err)
	}
	if rz := readyzConfig(t, b); rz["generation"] != gen || rz["lastResult"] != "refused" {
		t.Errorf("/readyz config after a refused file = %v", rz)
	}
}

// TestReloadRotatesTLSCertificate: new handshakes present the new certificate once its files change, and a
// gRPC stream held across the rotation stays up.
func TestReloadRotatesTLSCertificate(t *testing.T) {
	c := newCerts(t)
	cert1, key1, _ := c.issue(t, "mcp-bridge", true)
	dir := t.TempDir()
	f := &liveFiles{t: t, dir: dir}
	f.write(map[string]string{
		"bridge.yaml": "tls:\n  certFile: server.pem\n  keyFile: server.key\nmcpServers:\n" + probeYAML(t, "p", ""),
		"server.pem":  cert1, "server.key": key1,
	})
	b := start(t, bridgeConfig{flags: []string{"--config", filepath.Join(dir, "bridge.yaml")}})
	pool := x509.NewCertPool()
	pool.AddCert(c.ca)
	// dial connects anew and reports the serial of the certificate the bridge presented.
	dial := func() (pb.BridgeServiceClient, *grpc.ClientConn, func() string) {
		var serial string
		tc := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12, VerifyConnection: func(cs tls.ConnectionState) error {
			serial = cs.PeerCertificates[0].SerialNumber.String()
			return nil
		}}
		conn, err := grpc.NewClient(b.grpc, grpc.WithTransportCredentials(credentials.NewTLS(tc)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = conn.Close() })
		return pb.NewBridgeServiceClient(conn), conn, func() string { return serial }
	}
	ctx := testCtx(t)
	held, _, heldSerial := dial()
	cs, err := held.CreateSession(ctx, &pb.CreateSessionRequest{Server: "p", HostCapabilities: allCaps})
	if err != nil {
		t.Fatal(err)
	}
	sid := cs.GetSession().GetSessionId()
	stream, err := held.WatchEvents(ctx, &pb.WatchEventsRequest{SessionId: sid})
	if err != nil {
		t.Fatal(err)
	}
	first := heldSerial()

	cert2, key2, _ := c.issue(t, "mcp-bridge", true)
	mark := b.logMark()
	f.write(map[string]string{"server.pem": cert2, "server.key": key2})
	if err := b.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	b.waitAfter(t, mark, func(rec map[string]any) bool {
		return rec["msg"] == "TLS certificate reloaded: new connections present it"
	})
	// Both files may be seen one at a time by the watch: wait for the reload that read the pair.
	b.waitAfter(t, mark, isReload("SIGHUP"))

	fresh, _, freshSerial := dial()
	if _, err := fresh.ListServers(ctx, &pb.ListServersRequest{}); err != nil {
		t.Fatalf("a new connection after the rotation: %v", err)
	}
	if freshSerial() == first || freshSerial() == "" {
		t.Errorf("a new handshake presented serial %s, the old certificate's is %s", freshSerial(), first)
	}
	// The held stream is the same stream: the session's close reaches it.
	if _, err := fresh.DeleteSession(ctx, &pb.DeleteSessionRequest{SessionId: sid}); err != nil {
		t.Fatal(err)
	}
	for {
		ev, err := stream.Recv()
		if err != nil {
			t.Fatalf("the stream held across the rotation ended: %v", err)
		}
		if st := ev.GetEvent().GetSessionState(); st != nil && st.GetState() == pb.SessionState_SESSION_STATE_CLOSED {
			break
		}
	}
	if heldSerial() != first {
		t.Errorf("the held connection handshook again (serial %s, was %s)", heldSerial(), first)
	}
}

// TestCheckCommand: `mcp-bridge check` validates a file without starting anything.
func TestCheckCommand(t *testing.T) {
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.yaml"), filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(good, []byte("mcpServers:\n"+probeYAML(t, "p", "")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("mcpServers:\n  p:\n    comand: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := execOut(binary, "check", "--config", good); err != nil || !strings.Contains(out, "ok") {
		t.Errorf("check good.yaml = %v %q", err, out)
	}
	out, err := execOut(binary, "check", "--config", bad)
	if code := exitCode(err); code != 2 || !strings.Contains(out, "bad.yaml:3") {
		t.Errorf("check bad.yaml = status %d %q, want 2 and bad.yaml:3", code, out)
	}
}

// execOut runs a command and returns its output (stdout and stderr).
func execOut(name string, arg ...string) (string, error) {
	out, err := exec.Command(name, arg...).CombinedOutput()
	return string(out), err
}

// exitCode is the exit status of a command's error (0 for nil, -1 for an error that is no exit).
func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	return -1
}
