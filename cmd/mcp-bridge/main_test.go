package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	mcpbridgev1 "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// mainEnv makes the test binary behave as mcp-bridge itself, so that tests can run its
// subcommands as subprocesses (the demo server over stdio).
const mainEnv = "MCP_BRIDGE_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		main()
		return
	}
	goleak.VerifyTestMain(m)
}

// testTimeout bounds every wait in these tests.
const testTimeout = 20 * time.Second

// lockedBuffer is an io.Writer safe for the bridge's concurrent logging.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testBridge is a bridge running in-process on free ports.
type testBridge struct {
	addrs  listening
	stderr *lockedBuffer
	cancel context.CancelFunc
	done   chan int

	once sync.Once
	code int
}

// startBridge runs the bridge with args after "--grpc-addr 127.0.0.1:0 --http-addr 127.0.0.1:0"
// (later flags win) and waits until it listens. The bridge is stopped at the end of the test.
func startBridge(t *testing.T, o runOptions, args ...string) *testBridge {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	tb := &testBridge{stderr: &lockedBuffer{}, cancel: cancel, done: make(chan int, 1)}
	ready := make(chan listening, 1)
	o.stdout, o.stderr = io.Discard, tb.stderr
	o.ready = func(l listening) { ready <- l }
	all := append([]string{"--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0"}, args...)
	go func() { tb.done <- runWith(ctx, all, o) }()
	select {
	case tb.addrs = <-ready:
	case code := <-tb.done:
		cancel()
		t.Fatalf("bridge exited with %d before listening; stderr:\n%s", code, tb.stderr)
	case <-time.After(testTimeout):
		cancel()
		t.Fatalf("bridge not listening after %s; stderr:\n%s", testTimeout, tb.stderr)
	}
	t.Cleanup(func() { tb.stop(t) })
	return tb
}

// stop cancels the bridge's context and returns its exit status; later calls return the same.
func (tb *testBridge) stop(t *testing.T) int {
	t.Helper()
	tb.once.Do(func() {
		tb.cancel()
		select {
		case tb.code = <-tb.done:
		case <-time.After(testTimeout):
			t.Fatalf("bridge did not stop within %s; stderr:\n%s", testTimeout, tb.stderr)
		}
	})
	return tb.code
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// dial returns a plaintext gRPC connection to target, closed at the end of the test.
func dial(t *testing.T, target string, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	if len(opts) == 0 {
		opts = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	}
	conn, err := grpc.NewClient(target, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func bridgeClient(t *testing.T, target string, opts ...grpc.DialOption) mcpbridgev1.BridgeServiceClient {
	return mcpbridgev1.NewBridgeServiceClient(dial(t, target, opts...))
}

// httpGet fetches url and returns the status and body.
func httpGet(t *testing.T, client *http.Client, url string, header ...string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(testContext(t), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}

func decodeJSON(t *testing.T, data []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, data)
	}
	return m
}

// writeConfig writes a config file into a fresh directory and returns its path.
func writeConfig(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// lines splits output into non-empty lines.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}
