// Command oauthpeer runs, for the client libraries' integration tests, an OAuth-protected MCP server on
// loopback: testauth's authorization server and one Go SDK Streamable HTTP server per name, each behind
// testauth's resource guard (tokens must be issued for its URL, scope "mcp"). Each server has a "whoami"
// tool answering "this is <name>".
//
// It prints one JSON line to stdout once everything listens:
//
//	{"issuer":"http://127.0.0.1:…","servers":{"<name>":"http://127.0.0.1:…/mcp",…}}
//
// and runs until stdin is closed or it gets SIGINT/SIGTERM. A bridge configured with
// `url: <the server's URL>, auth: {type: oauth}` raises an authorization request whose URL a test "person"
// fetches without following redirects (the authorization server approves at once): the Location is the
// answer. Usage: oauthpeer [-names one,two]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-bridge/mcp-bridge/internal/testauth"
)

func main() {
	names := flag.String("names", "one", "comma-separated names of the protected MCP servers to run")
	flag.Parse()

	as := testauth.New(testauth.Options{ScopesSupported: []string{"mcp"}})
	defer as.Close()
	out := struct {
		Issuer  string            `json:"issuer"`
		Servers map[string]string `json:"servers"`
	}{Issuer: as.Issuer, Servers: map[string]string{}}
	for _, name := range strings.Split(*names, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		srv := protected(as, name)
		defer srv.Close()
		out.Servers[name] = srv.URL + "/mcp"
	}
	line, err := json.Marshal(out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "oauthpeer:", err)
		os.Exit(1)
	}
	fmt.Println(string(line))

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() { // the test closed our stdin (or died): stop
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop()
	}()
	<-ctx.Done()
}

// protected starts the MCP server name behind a guard of as on a loopback port.
func protected(as *testauth.Server, name string) *httptest.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "whoami", Description: "names the server"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "this is " + name}}}, nil, nil
		})
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	var guard http.Handler
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { guard.ServeHTTP(w, r) }))
	guard = as.NewGuard(mcpHandler, testauth.GuardOptions{Resource: hs.URL + "/mcp", Scopes: []string{"mcp"}})
	return hs
}
