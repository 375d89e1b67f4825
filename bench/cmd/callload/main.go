// Command callload drives echo calls through a running bridge, for counting system calls and wake-ups per
// call with strace or perf attached to the bridge (issue 25):
//
//	callload -grpc 127.0.0.1:PORT -server echo -c 32 -n 20000 [-wait-file F]
//
// It opens one session, warms it up, then (once F exists, if given, so a tracer can attach first) makes n
// gRPC CallTool echo calls with c callers on one connection and prints the calls per second.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/structpb"

	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

func main() {
	addr := flag.String("grpc", "", "the bridge's gRPC address")
	server := flag.String("server", "echo", "configured server")
	c := flag.Int("c", 1, "callers")
	n := flag.Int("n", 10000, "calls")
	waitFile := flag.String("wait-file", "", "start the measured calls once this file exists")
	ready := flag.String("ready-file", "", "create this file once warmed up")
	linger := flag.Duration("linger", time.Second, "keep the session open this long after the calls")
	flag.Parse()
	ctx := context.Background()
	conn, err := grpc.NewClient("passthrough:///"+*addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fail(err)
	}
	cli := pb.NewBridgeServiceClient(conn)
	s, err := cli.CreateSession(ctx, &pb.CreateSessionRequest{Server: *server})
	if err != nil {
		fail(err)
	}
	sid := s.GetSession().GetSessionId()
	args, _ := structpb.NewStruct(map[string]any{"text": strings.Repeat("a", 100)})
	call := func() error {
		_, err := cli.CallTool(ctx, &pb.CallToolRequest{SessionId: sid, Name: "echo", Arguments: args})
		return err
	}
	for range 500 {
		if err := call(); err != nil {
			fail(err)
		}
	}
	if *ready != "" {
		_ = os.WriteFile(*ready, nil, 0o644)
	}
	if *waitFile != "" {
		for {
			if _, err := os.Stat(*waitFile); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	var left atomic.Int64
	left.Store(int64(*n))
	start := time.Now()
	var wg sync.WaitGroup
	for range *c {
		wg.Go(func() {
			for left.Add(-1) >= 0 {
				if err := call(); err != nil {
					fail(err)
				}
			}
		})
	}
	wg.Wait()
	d := time.Since(start)
	fmt.Printf("%d calls, c=%d, %.0f calls/s\n", *n, *c, float64(*n)/d.Seconds())
	time.Sleep(*linger) // the session and its upstream stay while a tracer reads their counters
	_, _ = cli.DeleteSession(ctx, &pb.DeleteSessionRequest{SessionId: sid})
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "callload:", err)
	os.Exit(1)
}
