#!/usr/bin/env bash
# The kept results budget measured on the bridge's RSS (issue 31, docs/adr/0093): 10 sessions x 300 calls of
# 64 KB with host call ids against a binary built WITHOUT the race detector (whose shadow memory would be
# measured instead), then idle sessions' kept outcomes expiring on the clock. Prints RSS before, peak, after.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
mkdir -p bin
go build -o bin/mcp-bridge ./cmd/mcp-bridge
MCPBRIDGE_BIN="$ROOT/bin/mcp-bridge" exec go test -count=1 -timeout 20m -run 'TestKeptResults' -v ./e2e/
