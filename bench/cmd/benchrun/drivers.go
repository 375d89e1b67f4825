package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// callFn makes one call; it is safe for concurrent use.
type callFn func(ctx context.Context) error

// path is one way of reaching the upstream: the direct client, the bridge over gRPC or REST, a peer.
type path struct {
	name  string
	proto string // negotiated protocol version, as the upstream saw it
	fn    callFn
}

var sharedHTTP = &http.Client{Transport: &http.Transport{
	MaxIdleConns:        1024,
	MaxIdleConnsPerHost: 1024,
	IdleConnTimeout:     time.Minute,
}}

// --- direct go-sdk client (the baseline) ---

var directHandlers = &mcp.ClientOptions{
	CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		return &mcp.CreateMessageResult{Role: "assistant", Model: "bench", Content: &mcp.TextContent{Text: "ok"}}, nil
	},
	ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "bench"}}, nil
	},
}

// dialDirect opens a go-sdk client session: over stdio (spawning echoBin) when url is empty, else
// Streamable HTTP to url. era empty negotiates.
// The pid is the spawned server's (0 over HTTP).
func dialDirect(ctx context.Context, echoBin, url, era string) (*mcp.ClientSession, int, error) {
	cl := mcp.NewClient(&mcp.Implementation{Name: "benchrun", Version: "1"}, directHandlers)
	var t mcp.Transport
	var cmd *exec.Cmd
	if url == "" {
		cmd = exec.Command(echoBin, "stdio")
		t = &mcp.CommandTransport{Command: cmd}
	} else {
		t = &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: sharedHTTP}
	}
	cs, err := cl.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: era})
	if err != nil {
		return nil, 0, err
	}
	pid := 0
	if cmd != nil && cmd.Process != nil {
		pid = cmd.Process.Pid
	}
	return cs, pid, nil
}

func directCall(cs *mcp.ClientSession, tool string, args map[string]any) callFn {
	return func(ctx context.Context) error {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil {
			return err
		}
		if res.IsError {
			return fmt.Errorf("%s: tool error %v", tool, textOf(res))
		}
		return nil
	}
}

func textOf(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// directProto asks the upstream which protocol version the session's requests carry.
func directProto(ctx context.Context, cs *mcp.ClientSession) string {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "proto", Arguments: map[string]any{}})
	if err != nil {
		return "?"
	}
	return textOf(res)
}

// --- the bridge over gRPC ---

type bridgeClient struct {
	conn *grpc.ClientConn
	cli  pb.BridgeServiceClient
	rest string // http://ADDR
}

func newBridgeClient(grpcAddr, httpAddr string) (*bridgeClient, error) {
	conn, err := grpc.NewClient("passthrough:///"+grpcAddr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20), grpc.MaxCallSendMsgSize(64<<20)))
	if err != nil {
		return nil, err
	}
	return &bridgeClient{conn: conn, cli: pb.NewBridgeServiceClient(conn), rest: "http://" + httpAddr}, nil
}

func (b *bridgeClient) close() { _ = b.conn.Close() }

var hostCaps = &pb.HostCapabilities{Sampling: &pb.SamplingCapability{}, Elicitation: &pb.ElicitationCapability{Form: true}}

func (b *bridgeClient) open(ctx context.Context, server, era string, caps *pb.HostCapabilities) (*pb.Session, error) {
	r, err := b.cli.CreateSession(ctx, &pb.CreateSessionRequest{Server: server, ProtocolVersion: era, HostCapabilities: caps})
	if err != nil {
		return nil, err
	}
	return r.GetSession(), nil
}

func (b *bridgeClient) closeSession(ctx context.Context, id string) error {
	_, err := b.cli.DeleteSession(ctx, &pb.DeleteSessionRequest{SessionId: id})
	return err
}

func (b *bridgeClient) grpcCall(sid, tool string, args map[string]any) callFn {
	st, err := structpb.NewStruct(args)
	if err != nil {
		panic(err)
	}
	return func(ctx context.Context) error {
		r, err := b.cli.CallTool(ctx, &pb.CallToolRequest{SessionId: sid, Name: tool, Arguments: st})
		if err != nil {
			return err
		}
		if r.GetResult().GetIsError() {
			return fmt.Errorf("%s: tool error", tool)
		}
		return nil
	}
}

// grpcFloor is GetSession over gRPC: a round trip through the bridge's gRPC server, interceptors and session
// lookup that never reaches the upstream — the floor under the bridge's added latency.
func (b *bridgeClient) grpcFloor(sid string) callFn {
	return func(ctx context.Context) error {
		_, err := b.cli.GetSession(ctx, &pb.GetSessionRequest{SessionId: sid})
		return err
	}
}

// restFloor is GetSession over REST: grpcFloor through the HTTP listener and the gateway.
func (b *bridgeClient) restFloor(sid string) callFn {
	url := fmt.Sprintf("%s/v1/sessions/%s", b.rest, sid)
	return func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := sharedHTTP.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		return nil
	}
}

func (b *bridgeClient) proto(ctx context.Context, sid string) string {
	r, err := b.cli.CallTool(ctx, &pb.CallToolRequest{SessionId: sid, Name: "proto"})
	if err != nil || len(r.GetResult().GetContent()) == 0 {
		return "?"
	}
	return r.GetResult().GetContent()[0].GetText().GetText()
}

// --- REST (the bridge's gateway, or mcpo) ---

// restCall posts body to url and expects 200 without "isError":true.
func restCall(url string, body []byte) callFn {
	return func(ctx context.Context) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := sharedHTTP.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("POST %s: %s: %.200s", url, resp.Status, b)
		}
		if bytes.Contains(b, []byte(`"isError":true`)) {
			return fmt.Errorf("POST %s: tool error: %.200s", url, b)
		}
		return nil
	}
}

func (b *bridgeClient) restToolCall(sid, tool string, args map[string]any) callFn {
	body, _ := json.Marshal(map[string]any{"arguments": args})
	return restCall(fmt.Sprintf("%s/v1/sessions/%s/tools/%s:call", b.rest, sid, tool), body)
}

// --- the host side of the bridge: a Connect stream answering every server request ---

type host struct {
	stream grpc.BidiStreamingClient[pb.ConnectRequest, pb.ConnectResponse]
	cancel context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	served int
}

var samplingAnswer = &pb.HostAnswer{Answer: &pb.HostAnswer_Sampling{Sampling: &pb.CreateMessageResult{
	Role: pb.Role_ROLE_ASSISTANT, Model: "bench",
	Content: []*pb.ContentBlock{{Content: &pb.ContentBlock_Text{Text: &pb.TextContent{Text: "ok"}}}},
}}}

var elicitAnswer = func() *pb.HostAnswer {
	st, _ := structpb.NewStruct(map[string]any{"name": "bench"})
	return &pb.HostAnswer{Answer: &pb.HostAnswer_Elicitation{Elicitation: &pb.ElicitResult{
		Action: pb.ElicitAction_ELICIT_ACTION_ACCEPT, Content: st,
	}}}
}()

// startHost opens Connect, attaches sids and answers sampling and elicitation requests until stop.
func (b *bridgeClient) startHost(ctx context.Context, sids ...string) (*host, error) {
	ctx, cancel := context.WithCancel(ctx)
	st, err := b.cli.Connect(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	if err := st.Send(&pb.ConnectRequest{Action: &pb.ConnectRequest_Attach{Attach: &pb.AttachSessions{SessionIds: sids}}}); err != nil {
		cancel()
		return nil, err
	}
	for {
		m, err := st.Recv()
		if err != nil {
			cancel()
			return nil, err
		}
		if a := m.GetAttached(); a != nil {
			if len(a.GetFailures()) > 0 {
				cancel()
				return nil, fmt.Errorf("attach: %v", a.GetFailures()[0].GetStatus())
			}
			break
		}
	}
	h := &host{stream: st, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(h.done)
		for {
			m, err := st.Recv()
			if err != nil {
				return
			}
			sr := m.GetEvent().GetServerRequest()
			if sr == nil {
				continue
			}
			ans := samplingAnswer
			if sr.GetElicitation() != nil {
				ans = elicitAnswer
			}
			if err := st.Send(&pb.ConnectRequest{Action: &pb.ConnectRequest_Reply{Reply: &pb.HostReply{
				RequestId: sr.GetRequestId(), Answer: ans,
			}}}); err != nil {
				return
			}
			h.mu.Lock()
			h.served++
			h.mu.Unlock()
		}
	}()
	return h, nil
}

func (h *host) stop() {
	_ = h.stream.CloseSend()
	h.cancel()
	<-h.done
}

// attachIdle opens a Connect stream attached to sid and waits for the acknowledgement; the stream then
// stays idle until ctx ends.
func (b *bridgeClient) attachIdle(ctx context.Context, sid string) error {
	st, err := b.cli.Connect(ctx)
	if err != nil {
		return err
	}
	if sid == "" {
		return nil // an unattached stream: nothing to acknowledge
	}
	if err := st.Send(&pb.ConnectRequest{Action: &pb.ConnectRequest_Attach{Attach: &pb.AttachSessions{SessionIds: []string{sid}}}}); err != nil {
		return err
	}
	for {
		m, err := st.Recv()
		if err != nil {
			return err
		}
		if a := m.GetAttached(); a != nil {
			if len(a.GetFailures()) > 0 {
				return errors.New(a.GetFailures()[0].GetStatus().GetMessage())
			}
			go func() { // drain until the stream ends
				for {
					if _, err := st.Recv(); err != nil {
						return
					}
				}
			}()
			return nil
		}
	}
}

// --- the bare gRPC floor: benchecho grpc, a grpc-go server with no interceptors and no MCP behind it ---

// bareClient calls benchecho's bare BridgeService.CallTool with the messages of the echo call through the
// bridge: the cost of one cross-process grpc-go unary round trip on this machine, and nothing else.
type bareClient struct {
	conn *grpc.ClientConn
	cli  pb.BridgeServiceClient
}

func (b *bench) startBareGRPC() (*proc, *bareClient, error) {
	addrc := make(chan string, 1)
	b.bareListFile = filepath.Join(b.tmp, "list-tools.pb")
	p, err := startProc("benchecho-grpc", []string{b.echoBin, "grpc", "-list", b.bareListFile}, nil, func(line string) {
		if a, ok := strings.CutPrefix(line, "listening "); ok {
			addrc <- a
		}
	})
	if err != nil {
		return nil, nil, err
	}
	var addr string
	select {
	case addr = <-addrc:
	case <-time.After(10 * time.Second):
		p.stop()
		return nil, nil, fmt.Errorf("benchecho grpc did not start: %s", p.stderr)
	}
	// The same dial options as the bridge's client (newBridgeClient).
	conn, err := grpc.NewClient("passthrough:///"+addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(64<<20), grpc.MaxCallSendMsgSize(64<<20)))
	if err != nil {
		p.stop()
		return nil, nil, err
	}
	return p, &bareClient{conn: conn, cli: pb.NewBridgeServiceClient(conn)}, nil
}

func (c *bareClient) close() { _ = c.conn.Close() }

// call is the echo call's request (the same session id length, tool name and arguments) to the bare server.
func (c *bareClient) call(sid string, args map[string]any) callFn {
	st, err := structpb.NewStruct(args)
	if err != nil {
		panic(err)
	}
	req := &pb.CallToolRequest{SessionId: strings.Repeat("s", len(sid)), Name: "echo", Arguments: st}
	return func(ctx context.Context) error {
		r, err := c.cli.CallTool(ctx, req)
		if err != nil {
			return err
		}
		if len(r.GetResult().GetContent()) != 1 {
			return errors.New("bare echo: no content")
		}
		return nil
	}
}

// listTools is ListTools to the bare server, which answers with the bridge's own ListTools response
// (written to its -list file by writeBareList): the bare floor for a list-sized response.
func (c *bareClient) listTools(sid string) callFn {
	req := &pb.ListToolsRequest{SessionId: strings.Repeat("s", len(sid))}
	return func(ctx context.Context) error {
		r, err := c.cli.ListTools(ctx, req)
		if err != nil {
			return err
		}
		if len(r.GetTools()) == 0 {
			return errors.New("bare ListTools: no tools")
		}
		return nil
	}
}

// writeBareList writes the bridge's ListTools response for session sid to the bare server's -list file and
// returns its encoded size and that of the GetSession response, the floor's.
func (b *bench) writeBareList(ctx context.Context, br *bridge, sid string) (listBytes, floorBytes int, err error) {
	lt, err := br.c.cli.ListTools(ctx, &pb.ListToolsRequest{SessionId: sid})
	if err != nil {
		return 0, 0, err
	}
	gs, err := br.c.cli.GetSession(ctx, &pb.GetSessionRequest{SessionId: sid})
	if err != nil {
		return 0, 0, err
	}
	raw, err := proto.Marshal(lt)
	if err != nil {
		return 0, 0, err
	}
	return len(raw), proto.Size(gs), os.WriteFile(b.bareListFile, raw, 0o644)
}

// grpcListTools is ListTools over gRPC. benchecho's tools/list result carries a ttlMs on 2026-07-28, so after the
// first call the bridge answers it from its list cache: a round trip through the bridge that does not reach the
// upstream, like grpcFloor, plus the cache lookup, the policy filter and the conversion of the tools.
func (b *bridgeClient) grpcListTools(sid string) callFn {
	return func(ctx context.Context) error {
		r, err := b.cli.ListTools(ctx, &pb.ListToolsRequest{SessionId: sid})
		if err != nil {
			return err
		}
		if len(r.GetTools()) == 0 {
			return errors.New("ListTools: no tools")
		}
		return nil
	}
}
