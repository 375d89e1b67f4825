// Command bridgeclient drives the official MCP conformance suite through the whole bridge: the real
// mcp-bridge binary, configured with the scenario's mock server as its one upstream, and a host that uses
// only the public host API over gRPC. scripts/conformance.sh runs it next to conformance/client, which
// drives mcpcore directly; both perform the same per-scenario actions and give the same canned answers
// (package conformance/internal/scenario). It is a program of its own rather than a mode of
// conformance/client because it shares nothing with that program's mcpcore wiring — it must not import
// mcpcore at all, so that everything it does goes through the binary — and the suite runs a command line,
// so two binaries keep both invocations plain.
//
// The suite runs it as `bridgeclient -bridge <mcp-bridge binary> <server-url>` with the scenario in the
// environment (see conformance/client). Per scenario it
//
//   - writes a configuration file whose mcpServers block has one Streamable HTTP server, "conformance",
//     at the URL — with an oauth auth block (the suite's client metadata document URL and redirect URL,
//     and what scenario.AuthSetup names: the grant, the client id, its secret passed in the environment,
//     the private key, workload JWT and ID token in files, the IdP by its issuer, dpop) for the
//     authorization scenarios;
//   - starts the binary on loopback ports the kernel picks, reading the gRPC address from its
//     "mcp-bridge serving" log line, with its log lines copied to stderr;
//   - opens a Connect stream (which also receives the authorization request of the session being
//     created), creates the session with every host capability and one root, and attaches the stream to
//     it; the stream's host answers every server request — sampling, elicitation, roots, authorization
//     (fetching the authorization URL without following the redirect) — with a HostReply;
//   - checks that the session landed on the revision the scenario runs at, performs the scenario's actions
//     through ListTools, CallTool, ListResources, ReadResource, ListPrompts and GetPrompt, deletes the
//     session and stops the bridge (SIGTERM, SIGKILL after a bounded wait; on Linux the kernel kills it
//     too if this program dies first).
//
// It exits 0 when the scenario's actions succeeded and the bridge exited cleanly, 1 if not. The suite's
// checks, not the exit status, decide whether a scenario passes.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"go.yaml.in/yaml/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/mcp-bridge/mcp-bridge/conformance/internal/scenario"
	pb "github.com/mcp-bridge/mcp-bridge/gen/go/mcpbridge/v1"
)

// serverName is the configured name of the scenario's mock server.
const serverName = "conformance"

// secretEnv is the environment variable that hands the client secret to the bridge, so it is never
// written to the configuration file.
const secretEnv = "MCP_CONFORMANCE_CLIENT_SECRET"

// The scenario's run is bounded by scenario.RunTimeout; what is left of the suite's 30s after it is for
// deleting the session and stopping the bridge; should that not fit, the kernel kills the bridge with this
// program (dieWithParent).

func main() {
	if err := mainErr(); err != nil {
		fmt.Fprintln(os.Stderr, "conformance bridgeclient:", err)
		os.Exit(1)
	}
}

func mainErr() error {
	flags := flag.NewFlagSet("bridgeclient", flag.ContinueOnError)
	bin := flags.String("bridge", "", "the mcp-bridge binary to run (required)")
	if err := flags.Parse(os.Args[1:]); err != nil {
		return err
	}
	if *bin == "" || flags.NArg() != 1 {
		return errors.New("usage: bridgeclient -bridge <mcp-bridge binary> <server-url> (with MCP_CONFORMANCE_SCENARIO set)")
	}
	env, action, ctx, stop, err := scenario.Start(os.Args)
	if err != nil {
		return err
	}
	defer stop()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))

	dir, err := os.MkdirTemp("", "mcp-bridge-conformance-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg, extraEnv, err := writeConfig(dir, env)
	if err != nil {
		return err
	}
	bridge, err := startBridge(ctx, *bin, cfg, extraEnv, os.Stderr)
	if err != nil {
		return err
	}
	runErr := run(ctx, bridge.grpc, env, action, logger)
	return errors.Join(runErr, bridge.stop())
}

// writeConfig writes the bridge's configuration for the scenario into dir and returns its path and the
// environment the bridge needs for it.
func writeConfig(dir string, env scenario.Env) (path string, extraEnv []string, err error) {
	server := map[string]any{"url": env.URL}
	if a, ok := env.AuthSetup(); ok {
		auth := map[string]any{
			"type":              "oauth",
			"clientMetadataUrl": scenario.ClientMetadataURL,
			"redirectUrl":       scenario.RedirectURL,
		}
		if a.Grant != scenario.GrantAuthorizationCode {
			auth["grant"] = a.Grant
		}
		if a.ClientID != "" {
			auth["clientId"] = a.ClientID
		}
		if a.ClientSecret != "" {
			auth["clientSecretEnv"] = secretEnv
			extraEnv = append(extraEnv, secretEnv+"="+a.ClientSecret)
		}
		// Key material and assertions go into files, as a deployment keeps them (a mounted secret, a
		// projected service account token), which the bridge reads at every use.
		file := func(name, content string) (string, error) {
			p := filepath.Join(dir, name)
			return p, os.WriteFile(p, []byte(content), 0o600)
		}
		if a.ClientKeyPEM != "" {
			if auth["clientKeyFile"], err = file("client-key.pem", a.ClientKeyPEM); err != nil {
				return "", nil, err
			}
			if a.ClientKeyAlg != "" {
				auth["clientKeyAlg"] = a.ClientKeyAlg
			}
		}
		if a.Assertion != "" {
			if auth["assertionFile"], err = file("workload.jwt", a.Assertion); err != nil {
				return "", nil, err
			}
		}
		if a.Grant == scenario.GrantEnterpriseManaged {
			idToken, err := file("id-token.jwt", a.IdPIDToken)
			if err != nil {
				return "", nil, err
			}
			// The issuer, so that the path through the bridge also discovers the IdP's token endpoint.
			auth["idp"] = map[string]any{"issuer": a.IdPIssuer, "clientId": a.IdPClientID, "subjectTokenFile": idToken}
		}
		if a.DPoP {
			auth["dpop"] = true
		}
		server["auth"] = auth
	}
	doc := map[string]any{
		"mcpServers": map[string]any{serverName: server},
		// A scenario's authorization is answered in milliseconds; fail well within the suite's timeout if not.
		"oauth": map[string]any{"authorizationTimeout": "15s"},
	}
	b, err := yaml.Marshal(doc)
	if err != nil {
		return "", nil, err
	}
	path = filepath.Join(dir, "bridge.yaml")
	return path, extraEnv, os.WriteFile(path, b, 0o600)
}

// run opens the session through the bridge at addr, with a host on a Connect stream answering for it,
// and performs the scenario's actions.
func run(ctx context.Context, addr string, env scenario.Env, action scenario.Action, logger *slog.Logger) error {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	client := pb.NewBridgeServiceClient(conn)

	// The stream opens before CreateSession so that the authorization request of the session being created
	// reaches it (the bridge replays such requests to a stream that opens later, too).
	streamCtx, endStream := context.WithCancel(ctx)
	stream, err := client.Connect(streamCtx)
	if err != nil {
		endStream()
		return fmt.Errorf("connect: %w", err)
	}
	h := &host{stream: stream, logger: logger}
	hostDone := make(chan struct{})
	go func() { // the host: ends when the stream ends, at the latest when endStream cancels it
		defer close(hostDone)
		h.serve(streamCtx)
	}()
	defer func() {
		endStream()
		<-hostDone
	}()

	created, err := client.CreateSession(ctx, &pb.CreateSessionRequest{
		Server:           serverName,
		HostCapabilities: hostCapabilities,
		Roots:            roots(),
		ClientInfo:       &pb.Implementation{Name: scenario.ClientName, Version: scenario.ClientVersion},
	})
	if err != nil {
		return fmt.Errorf("create session: %w", err)
	}
	sess := created.GetSession()
	id := sess.GetSessionId()
	defer func() {
		// Closes the upstream session (DELETE on Streamable HTTP) before the bridge is stopped.
		dctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if _, err := client.DeleteSession(dctx, &pb.DeleteSessionRequest{SessionId: id}); err != nil {
			logger.Warn("delete session", "err", err)
		}
	}()
	if err := h.attach(id); err != nil {
		return fmt.Errorf("attach: %w", err)
	}
	logger.Info("session open", "scenario", env.Name, "session", id, "protocolVersion", sess.GetProtocolVersion(), "requested", env.Version)
	if env.Version != "" && sess.GetProtocolVersion() != env.Version {
		return fmt.Errorf("negotiated protocol version %s, the scenario runs at %s", sess.GetProtocolVersion(), env.Version)
	}
	if err := action(ctx, &scenario.Run{Session: &bridgeSession{client: client, id: id}, Env: env, Logger: logger}); err != nil {
		return fmt.Errorf("scenario %s: %w", env.Name, err)
	}
	return nil
}
