#!/usr/bin/env bash
# Scale-out tests (docs/scaling.md): three replicas of mcp-bridge on loopback behind a real HAProxy.
# TestScaleOut (deploy/haproxy/haproxy.cfg, no shared state): sessions spread over the replicas, every call,
# event stream, Connect attach and answer lands on the session's owner, the Python client works through the
# proxy, and killing a replica fails only its sessions, at once, with UNAVAILABLE REPLICA_UNAVAILABLE.
# TestScaleTakeover (deploy/haproxy/haproxy-shared.cfg, a real redis-server): replicas cover for each other —
# kill -9, SIGSTOP past the lease, Redis stopped 10 s, a rolling restart of all three: no session or accepted
# answer lost, none misrouted, none served by two (docs/adr/0070-replicas-share-state.md).
# TestScaleKillRoll (haproxy-shared.cfg, redis-server): hosts calling continuously, as the clients do (their own
# call ids; UNAVAILABLE retried with resume), while each replica in turn is killed -9 and started again at once
# under its own name: 0 failed calls, 0 run twice upstream (docs/adr/0099-call-ids-outlive-a-crash.md).
# Its last lines report replicas, sessions, calls and misrouted, and the takeover figures.
#
# Installs the Debian packages haproxy and redis-server when they are missing (apt-get; needs root). The Python client's venv
# (.tools/pyclient-venv) comes from scripts/test-python.sh.
#
# Environment:
#   MCPBRIDGE_BIN   test this binary instead of building one
#   GO_TEST_ARGS    extra `go test` arguments, e.g. -v
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

if ! command -v haproxy >/dev/null; then
	echo "test-scale: installing haproxy (Debian package)" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends haproxy >/dev/null ||
		{ apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends haproxy >/dev/null; }
fi

"$ROOT/scripts/install-redis.sh"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
bin="${MCPBRIDGE_BIN:-}"
if [[ -z "$bin" ]]; then
	bin="$tmp/mcp-bridge"
	go build -o "$bin" ./cmd/mcp-bridge
fi
summary="$tmp/summary"
# shellcheck disable=SC2086
MCPBRIDGE_TEST_SCALE=1 MCPBRIDGE_BIN="$bin" MCPBRIDGE_SCALE_SUMMARY="$summary" \
	go test -count=1 -run '^TestScale(Out|Takeover|KillRoll)$' ${GO_TEST_ARGS:-} ./e2e/
cat "$summary"
