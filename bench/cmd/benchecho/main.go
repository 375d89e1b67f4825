// Command benchecho is the upstream MCP server of the benchmark suite (make bench), built with the
// official MCP Go SDK. Every scenario, direct or through the bridge or a peer, talks to this one
// program, over stdio or over Streamable HTTP:
//
//	benchecho stdio                       serve one session on stdin/stdout
//	benchecho http [-addr 127.0.0.1:0] [-stateless]
//	                                      serve Streamable HTTP; prints "listening http://ADDR/mcp". go-sdk
//	                                      v1.8.0 speaks 2026-07-28 over HTTP only when stateless; stateful
//	                                      serves the handshake era (2025-11-25) with sessions
//	benchecho grpc [-addr 127.0.0.1:0] [-list FILE]
//	                                      a bare grpc-go server, no MCP: BridgeService.CallTool answers with
//	                                      the argument "text" as one text block; prints "listening ADDR". The
//	                                      floor under the bridge's gRPC path (grpc.NewServer() without options
//	                                      or interceptors, the same messages as the echo call). ListTools
//	                                      answers with the ListToolsResponse encoded in FILE, read at its first
//	                                      call (benchrun writes the bridge's own answer there): the same
//	                                      floor for a list-sized response
//
// Tools:
//
//	echo {text}          returns text (the small-payload call)
//	blob {n}             returns a text block of n bytes (payload sweep)
//	sleep {ms}           waits ms milliseconds or until cancelled; records when a cancel arrived
//	last_cancel {}       when (Unix ns, this machine's clock) the last sleep saw its cancellation
//	sample_push {prompt} legacy push: calls sampling/createMessage on the client while serving
//	                     (handshake era only; 2026-07-28 forbids it)
//	sample {prompt}      multi round-trip sampling (SEP-2322): returns InputRequests, answered on
//	                     retry; the SDK pushes it to clients of the handshake era
//	elicit {}            multi round-trip form elicitation, as sample
//	proto {}             the protocol version this request was made under
//
// On 2026-07-28 every list result carries ttlMs 60000 and cacheScope "private".
package main

import (
	"context"
	"flag"
	"fmt"
	"github.com/mcp-bridge/mcp-bridge/internal/stdiotransport"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

var lastCancel atomic.Int64

type echoIn struct {
	Text string `json:"text"`
}
type blobIn struct {
	N int `json:"n"`
}
type sleepIn struct {
	Ms int `json:"ms"`
}
type promptIn struct {
	Prompt string `json:"prompt,omitempty"`
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "benchecho", Version: "1"}, &mcp.ServerOptions{
		Logger: slog.New(slog.DiscardHandler),
		// 2026-07-28 list results may be cached by the client for a minute, by the requesting user only
		// (the bridge's list cache, issue 25; the handshake era has no ttl).
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
			c.TTLMs, c.CacheScope = 60_000, "private"
		},
	})
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echo text"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return text(in.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "blob", Description: "n bytes of text"},
		func(_ context.Context, _ *mcp.CallToolRequest, in blobIn) (*mcp.CallToolResult, any, error) {
			return text(strings.Repeat("x", max(in.N, 0))), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "sleep", Description: "wait ms milliseconds or until cancelled"},
		func(ctx context.Context, _ *mcp.CallToolRequest, in sleepIn) (*mcp.CallToolResult, any, error) {
			t := time.NewTimer(time.Duration(in.Ms) * time.Millisecond)
			defer t.Stop()
			select {
			case <-t.C:
				return text("slept"), nil, nil
			case <-ctx.Done():
				lastCancel.Store(time.Now().UnixNano())
				return nil, nil, ctx.Err()
			}
		})
	mcp.AddTool(s, &mcp.Tool{Name: "last_cancel", Description: "Unix ns of the last cancellation a sleep saw"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return text(fmt.Sprint(lastCancel.Load())), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "sample_push", Description: "legacy sampling push"},
		func(ctx context.Context, req *mcp.CallToolRequest, in promptIn) (*mcp.CallToolResult, any, error) {
			res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{
				Messages:  []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: in.Prompt}}},
				MaxTokens: 16,
			})
			if err != nil {
				return nil, nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{res.Content}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "sample", Description: "multi round-trip sampling"},
		func(_ context.Context, req *mcp.CallToolRequest, in promptIn) (*mcp.CallToolResult, any, error) {
			if resp, ok := req.Params.InputResponses["s"]; ok {
				switch r := resp.(type) {
				case *mcp.CreateMessageResult:
					return &mcp.CallToolResult{Content: []mcp.Content{r.Content}}, nil, nil
				case *mcp.CreateMessageWithToolsResult:
					return &mcp.CallToolResult{Content: r.Content}, nil, nil
				}
				return text(fmt.Sprintf("unexpected %T", resp)), nil, nil
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"s": &mcp.CreateMessageParams{
				Messages:  []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: in.Prompt}}},
				MaxTokens: 16,
			}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "elicit", Description: "multi round-trip form elicitation"},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			if resp, ok := req.Params.InputResponses["e"]; ok {
				r, _ := resp.(*mcp.ElicitResult)
				if r == nil {
					return text("no answer"), nil, nil
				}
				return text(fmt.Sprintf("%s %v", r.Action, r.Content["name"])), nil, nil
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"e": &mcp.ElicitParams{
				Mode: "form", Message: "name?",
				RequestedSchema: map[string]any{
					"type":       "object",
					"properties": map[string]any{"name": map[string]any{"type": "string"}},
					"required":   []any{"name"},
				},
			}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "proto", Description: "the protocol version of this request"},
		func(_ context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
			return text(req.ProtocolVersion()), nil, nil
		})
	return s
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: benchecho stdio | benchecho http [-addr ADDR]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch os.Args[1] {
	case "stdio":
		if err := newServer().Run(ctx, stdiotransport.New()); err != nil && ctx.Err() == nil {
			fmt.Fprintln(os.Stderr, "benchecho:", err)
			os.Exit(1)
		}
	case "http":
		fs := flag.NewFlagSet("http", flag.ExitOnError)
		addr := fs.String("addr", "127.0.0.1:0", "listen address")
		stateless := fs.Bool("stateless", false, "stateless Streamable HTTP (needed for 2026-07-28)")
		_ = fs.Parse(os.Args[2:])
		ln, err := net.Listen("tcp", *addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchecho:", err)
			os.Exit(1)
		}
		srv := newServer()
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
			Logger:    slog.New(slog.DiscardHandler),
			Stateless: *stateless,
		})
		hs := &http.Server{Handler: h}
		// HTTP/1.1 and HTTP/2 with prior knowledge (h2c), so the bench can measure sessions both ways.
		hs.Protocols = new(http.Protocols)
		hs.Protocols.SetHTTP1(true)
		hs.Protocols.SetUnencryptedHTTP2(true)
		go func() { <-ctx.Done(); _ = hs.Close() }()
		fmt.Printf("listening http://%s/mcp\n", ln.Addr())
		if err := hs.Serve(ln); err != nil && err != http.ErrServerClosed {
			fmt.Fprintln(os.Stderr, "benchecho:", err)
			os.Exit(1)
		}
	case "grpc":
		fs := flag.NewFlagSet("grpc", flag.ExitOnError)
		addr := fs.String("addr", "127.0.0.1:0", "listen address")
		list := fs.String("list", "", "file holding the encoded ListToolsResponse ListTools answers with")
		_ = fs.Parse(os.Args[2:])
		ln, err := net.Listen("tcp", *addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchecho:", err)
			os.Exit(1)
		}
		gs := grpc.NewServer()
		pb.RegisterBridgeServiceServer(gs, newBareEcho(*list))
		go func() { <-ctx.Done(); gs.Stop() }()
		fmt.Printf("listening %s\n", ln.Addr())
		if err := gs.Serve(ln); err != nil {
			fmt.Fprintln(os.Stderr, "benchecho:", err)
			os.Exit(1)
		}
	default:
		fmt.Fprintln(os.Stderr, "benchecho: unknown mode", os.Args[1])
		os.Exit(2)
	}
}

// bareEcho is the bare gRPC floor: CallTool returns the argument "text" as one text block, the same response
// message the bridge returns for the echo tool, with no MCP, no session and no interceptors behind it.
type bareEcho struct {
	pb.UnimplementedBridgeServiceServer
	list func() (*pb.ListToolsResponse, error) // the -list file's response, read at the first call
}

func newBareEcho(listFile string) *bareEcho {
	return &bareEcho{list: sync.OnceValues(func() (*pb.ListToolsResponse, error) {
		raw, err := os.ReadFile(listFile)
		if err != nil {
			return nil, err
		}
		var r pb.ListToolsResponse
		return &r, proto.Unmarshal(raw, &r)
	})}
}

func (*bareEcho) CallTool(_ context.Context, req *pb.CallToolRequest) (*pb.CallToolResponse, error) {
	t := req.GetArguments().GetFields()["text"].GetStringValue()
	return &pb.CallToolResponse{CallId: bareCallID, Result: &pb.CallToolResult{Content: []*pb.ContentBlock{
		{Content: &pb.ContentBlock_Text{Text: &pb.TextContent{Text: t}}},
	}}}, nil
}

// ListTools answers with the -list file's response: a plain message, marshaled by grpc-go on every call as
// any server's response is.
func (b *bareEcho) ListTools(context.Context, *pb.ListToolsRequest) (*pb.ListToolsResponse, error) {
	return b.list()
}

// bareCallID has the length of the call ids the bridge returns ("call-" and 26 characters of rand.Text).
var bareCallID = "call-" + strings.Repeat("B", 26)
