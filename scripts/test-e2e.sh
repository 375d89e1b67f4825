#!/usr/bin/env bash
# End-to-end tests (e2e/): build mcp-bridge with the race detector, start it on ports the kernel picks, and
# talk to it over gRPC and REST in front of real MCP servers — the demo server (both protocol eras) and
# @modelcontextprotocol/server-everything (`make node-tools` installs it).
#
# Environment:
#   MCPBRIDGE_REQUIRE_PEERS  1: a missing peer (node, server-everything) fails instead of skipping
#                            (make test sets it)
#   MCPBRIDGE_BIN            test this binary instead of building one (then without the race detector)
#   GO_TEST_ARGS             extra `go test` arguments, e.g. "-run TestHostOverREST -v"
#   E2E_TIMEOUT              the whole suite's bound (go test -timeout; default 25m: the suite takes 8-12
#                            minutes on 2 cores, and go test's own default, 10m, cut it off on a loaded machine)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck disable=SC2086
exec go test -race -count=1 -timeout "${E2E_TIMEOUT:-25m}" ${GO_TEST_ARGS:-} ./e2e/...
