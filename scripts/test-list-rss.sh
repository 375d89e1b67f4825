#!/usr/bin/env bash
# A list response's memory measured on the bridge's RSS (issue 31, docs/adr/0097 and 0107): four concurrent
# ListTools of a 100,000-tool list (16 MB of JSON), two over gRPC and two over REST, against a binary built
# WITHOUT the race detector (whose shadow memory would be measured instead); the bridge's peak RSS grows by
# less than 4x the list's size per list. Prints RSS before, peak, now.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
mkdir -p bin
go build -o bin/mcp-bridge ./cmd/mcp-bridge
MCPBRIDGE_BIN="$ROOT/bin/mcp-bridge" exec go test -count=1 -timeout 20m -run 'TestHostileHugeToolList' -v ./e2e/
