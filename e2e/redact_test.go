package e2e

import (
	"crypto/rand"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/mcp-bridge/mcp-bridge/e2e/probe"
	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Secrets in an HTTP server's configuration (a query value of its URL, the password of its userinfo, a header
// value) never reach a host or the bridge's log, at the most verbose level: not when the server is
// unreachable at CreateSession, not when it dies under an open session (failed calls, reconnection
// failures, the CLOSED reason of the event stream).
func TestSecretsInServerURLAreRedacted(t *testing.T) {
	marker := "mk" + strings.ToLower(rand.Text())       // in the URL's query
	password := "pw" + strings.ToLower(rand.Text())     // in the URL's userinfo
	headerSecret := "hd" + strings.ToLower(rand.Text()) // in a configured header
	secrets := []string{marker, password, headerSecret}

	closedAddr := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		return addr
	}()
	sse := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return probe.New() }, nil))
	t.Cleanup(sse.Close)
	streamable := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return probe.New() }, nil))
	t.Cleanup(streamable.Close)

	server := func(name, transport, base, path string) string {
		host := strings.TrimPrefix(base, "http://")
		return fmt.Sprintf("  %s:\n    transport: %s\n    url: \"http://user:%s@%s%s?mode=x&api_key=%s\"\n"+
			"    headers:\n      X-Api-Key: %q\n    restart:\n      maxRestarts: 1\n      initialBackoff: 10ms\n      maxBackoff: 20ms\n",
			name, transport, password, host, path, marker, headerSecret)
	}
	b := start(t, bridgeConfig{extraServers: server("sse-down", "sse", "http://"+closedAddr, "/sse") +
		server("http-down", "streamable-http", "http://"+closedAddr, "/mcp") +
		server("sse-up", "sse", sse.URL, "/sse") +
		server("http-up", "streamable-http", streamable.URL, "/mcp")})
	r := b.rest("")
	ctx := testCtx(t)
	var outputs []string // everything a host saw
	check := func(where, text string) {
		t.Helper()
		outputs = append(outputs, where+": "+text)
		for _, s := range secrets {
			if strings.Contains(text, s) {
				t.Errorf("%s shows a secret: %s", where, text)
			}
		}
	}

	// Unreachable at CreateSession, over gRPC and REST.
	for _, name := range []string{"sse-down", "http-down"} {
		_, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: name})
		if err == nil {
			t.Fatalf("CreateSession(%s) succeeded against a closed port", name)
		}
		check("gRPC CreateSession("+name+")", err.Error())
		code, body := r.do("POST", "/v1/sessions", `{"server": "`+name+`"}`)
		if code == http.StatusOK {
			t.Fatalf("REST CreateSession(%s) succeeded against a closed port", name)
		}
		check("REST CreateSession("+name+")", compact(body))
	}

	// Reachable, then dying.
	type open struct {
		name, sid string
		rest      *events
		grpc      pb.BridgeService_WatchEventsClient
	}
	var sessions []open
	for _, name := range []string{"sse-up", "http-up"} {
		cs, err := b.client.CreateSession(ctx, &pb.CreateSessionRequest{Server: name})
		if err != nil {
			t.Fatalf("CreateSession(%s): %v", name, err)
		}
		check("CreateSession("+name+")", protojson.Format(cs))
		w, err := b.client.WatchEvents(ctx, &pb.WatchEventsRequest{SessionId: cs.GetSession().GetSessionId()})
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, open{name: name, sid: cs.GetSession().GetSessionId(), rest: r.events(cs.GetSession().GetSessionId()), grpc: w})
		if _, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: cs.GetSession().GetSessionId(), Name: "pid"}); err != nil {
			t.Fatalf("CallTool(%s): %v", name, err)
		}
	}
	sse.CloseClientConnections()
	sse.Close()
	streamable.CloseClientConnections()
	streamable.Close()
	for _, s := range sessions {
		for i := 0; i < 3; i++ { // fails while reconnecting, or once the session gave up
			_, err := b.client.CallTool(ctx, &pb.CallToolRequest{SessionId: s.sid, Name: "pid"})
			if err == nil {
				continue
			}
			check("CallTool("+s.name+")", err.Error())
		}
		closed := s.rest.next(func(ev *pb.Event) bool {
			check("REST event ("+s.name+")", protojson.Format(ev))
			return ev.GetSessionState().GetState() == pb.SessionState_SESSION_STATE_CLOSED
		})
		t.Logf("%s closed: %s", s.name, closed.GetSessionState().GetReason())
		for {
			ev, err := s.grpc.Recv()
			if err != nil {
				check("gRPC WatchEvents end ("+s.name+")", err.Error())
				break
			}
			check("gRPC event ("+s.name+")", protojson.Format(ev))
			if ev.GetEvent().GetSessionState().GetState() == pb.SessionState_SESSION_STATE_CLOSED {
				break
			}
		}
		if _, err := b.client.GetSession(ctx, &pb.GetSessionRequest{SessionId: s.sid}); err != nil {
			check("GetSession("+s.name+")", err.Error())
		}
	}

	b.stop()
	for _, line := range b.logs.all() {
		for _, s := range secrets {
			if strings.Contains(line, s) {
				t.Errorf("the bridge logged a secret: %s", line)
			}
		}
	}
	if t.Failed() {
		t.Logf("outputs:\n%s", strings.Join(outputs, "\n"))
	}
}
