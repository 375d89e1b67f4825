#!/usr/bin/env bash
# A list response's memory measured on the bridge's RSS (issue 31, docs/adr/0097): four concurrent ListTools
# (two gRPC, two REST) of a server's 100,000-tool list against a binary built WITHOUT the race detector (whose
# shadow memory would be measured instead). Prints the list's size and the peak RSS before and after.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
mkdir -p bin
go build -o bin/mcp-bridge ./cmd/mcp-bridge
MCPBRIDGE_BIN="$ROOT/bin/mcp-bridge" exec go test -count=1 -timeout 20m -run 'TestHostileHugeToolList' -v ./e2e/
