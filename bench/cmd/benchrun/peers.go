package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// peers are other gateways in front of the same stdio upstream, for context only (never gates).
type peers struct {
	sg      *proc // supergateway, stdio → Streamable HTTP (stateful), driven by the go-sdk client
	sgURL   string
	sgVer   string
	mcpo    *proc // mcpo, stdio → REST/OpenAPI
	mcpoURL string
	mcpoVer string
}

func (p *peers) stop() {
	if p.sg != nil {
		p.sg.stop()
	}
	if p.mcpo != nil {
		p.mcpo.stop()
	}
}

func (b *bench) startPeers(ctx context.Context) *peers {
	ps := &peers{}
	if b.sgDir == "" {
		b.note("supergateway: not installed (scripts/bench.sh could not npm ci bench/package.json); its rows are missing")
	} else {
		main := filepath.Join(b.sgDir, "node_modules", "supergateway", "dist", "index.js")
		var pkg struct{ Version string }
		if raw, err := os.ReadFile(filepath.Join(b.sgDir, "node_modules", "supergateway", "package.json")); err == nil {
			_ = json.Unmarshal(raw, &pkg)
		}
		ps.sgVer = pkg.Version
		addr := freePort()
		_, port, _ := splitHostPort(addr)
		p, err := startProc("supergateway", []string{"node", main, "--stdio", b.echoBin + " stdio",
			"--outputTransport", "streamableHttp", "--stateful", "--port", port, "--logLevel", "none",
			"--healthEndpoint", "/healthz"}, nil, func(string) {})
		if err == nil {
			if _, err = waitHTTP(ctx, "http://"+addr+"/healthz", 30*time.Second, 20*time.Millisecond); err == nil {
				ps.sg, ps.sgURL = p, "http://"+addr+"/mcp"
			} else {
				p.stop()
			}
		}
		if err != nil {
			b.note("supergateway %s did not start: %v", ps.sgVer, err)
		}
	}
	if b.mcpoBin == "" {
		b.note("mcpo: not installed (scripts/bench.sh could not pip install bench/requirements.txt); its rows are missing")
	} else {
		ps.mcpoVer = "0.0.20"
		addr := freePort()
		host, port, _ := splitHostPort(addr)
		p, err := startProc("mcpo", []string{b.mcpoBin, "--host", host, "--port", port, "--log-level", "WARNING", "--", b.echoBin, "stdio"}, nil, func(string) {})
		if err == nil {
			if _, err = waitHTTP(ctx, "http://"+addr+"/openapi.json", 60*time.Second, 20*time.Millisecond); err == nil {
				ps.mcpo, ps.mcpoURL = p, "http://"+addr
			} else {
				err = fmt.Errorf("%w; stderr: %.500s", err, p.stderr)
				p.stop()
			}
		}
		if err != nil {
			b.note("mcpo did not start: %v", err)
		}
	}
	return ps
}

// sgPath connects a direct go-sdk client through supergateway.
func (b *bench) sgPath(ctx context.Context, ps *peers, tool string, args map[string]any) (*path, func(), error) {
	if ps.sg == nil {
		return nil, func() {}, nil
	}
	cl := mcp.NewClient(&mcp.Implementation{Name: "benchrun", Version: "1"}, directHandlers)
	// Pinned to the handshake era: supergateway forwards initialize and keeps a session; a sessionless
	// 2026-07-28 request makes it auto-initialize a new session (and child) per call.
	cs, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: ps.sgURL, HTTPClient: sharedHTTP},
		&mcp.ClientSessionOptions{ProtocolVersion: era2025})
	if err != nil {
		return nil, func() {}, fmt.Errorf("supergateway: %w", err)
	}
	return &path{name: "supergateway " + ps.sgVer, proto: directProto(ctx, cs), fn: directCall(cs, tool, args)}, func() { cs.Close() }, nil
}

// mcpoPath calls a tool through mcpo's REST endpoint.
func mcpoPath(ctx context.Context, ps *peers, tool string, args map[string]any) *path {
	if ps.mcpo == nil {
		return nil
	}
	body, _ := json.Marshal(args)
	proto := "?"
	if resp, err := sharedHTTP.Post(ps.mcpoURL+"/proto", "application/json", jsonReader("{}")); err == nil {
		var v any
		_ = json.NewDecoder(resp.Body).Decode(&v)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			proto = fmt.Sprint(v)
		}
	}
	return &path{name: "mcpo " + ps.mcpoVer, proto: proto, fn: restCall(ps.mcpoURL+"/"+tool, body)}
}
