#!/usr/bin/env bash
# Runs the official MCP conformance suite (npm @modelcontextprotocol/conformance, pinned in
# tools/package.json, installed by `make node-tools`) against conformance/client, a small MCP client
# program driven by mcpcore, for both requirement sets the suite freezes: 2025-11-25 and 2026-07-28.
#
# conformance/expected-failures.yml lists, per requirement set, the required scenarios known to fail and
# why. The run fails on a required scenario that fails without an entry, and on an entry whose scenario
# now passes, so the file stays honest. The last line of output is always
#   conformance: 2025-11-25 P/T, 2026-07-28 P/T
# (required scenarios passed / required scenarios in the set).
#
# Loopback only: the suite starts its mock servers on localhost and runs the client against them.
# Bounded: each scenario is killed after 30s and each requirement set after 150s.
#
# Environment:
#   MCPBRIDGE_NODE_MODULES    node_modules holding the suite (default .tools/node/node_modules)
#   MCPBRIDGE_CONFORMANCE_OUT keep the suite's logs and per-scenario results here (default: a temporary
#                             directory, kept only when the run fails)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
node_modules="${MCPBRIDGE_NODE_MODULES:-$root/.tools/node/node_modules}"
suite="$node_modules/@modelcontextprotocol/conformance"
revisions=(2025-11-25 2026-07-28)

if [[ ! -f "$suite/dist/index.js" ]]; then
	echo "conformance: the suite is not installed at $suite (run \`make node-tools\`)" >&2
	exit 1
fi

if [[ -n "${MCPBRIDGE_CONFORMANCE_OUT:-}" ]]; then
	work="$MCPBRIDGE_CONFORMANCE_OUT"
	rm -rf "$work"
	mkdir -p "$work"
	keep=1
else
	work="$(mktemp -d "${TMPDIR:-/tmp}/mcp-bridge-conformance.XXXXXX")"
	keep=0
fi
cleanup() { if [[ "$keep" == 0 ]]; then rm -rf "$work"; fi; }
trap cleanup EXIT
if [[ "$work" == *" "* ]]; then
	echo "conformance: the work directory must not contain spaces (the suite splits --command on them): $work" >&2
	exit 1
fi

go build -o "$work/conformance-client" ./conformance/client
go build -o "$work/tally" ./conformance/tally
echo "conformance: suite $(node -p "require('$suite/package.json').version"), node $(node --version)"

failed=0
counts=()
for rev in "${revisions[@]}"; do
	"$work/tally" baseline -expected conformance/expected-failures.yml -revision "$rev" -out "$work/baseline-$rev.yml"
	echo
	echo "=== requirements $rev ==="
	status=0
	timeout --kill-after=10 150 \
		node --import "$root/conformance/node-compat/register.mjs" "$suite/dist/index.js" client \
		--command "$work/conformance-client" \
		--requirements "$rev" \
		--expected-failures "$work/baseline-$rev.yml" \
		--timeout 30000 \
		-o "$work/results-$rev" \
		>"$work/suite-$rev.out" 2>"$work/suite-$rev.err" || status=$?
	if [[ "$status" != 0 ]]; then
		# The suite's own verdict: an unexpected failure, a stale baseline entry, or the run itself broke.
		sed -n '/=== SUITE SUMMARY ===/,$p' "$work/suite-$rev.out"
		echo "conformance: suite exited $status for $rev (logs: $work/suite-$rev.out, $work/suite-$rev.err)" >&2
		failed=1
	fi
	if score="$("$work/tally" score -expected conformance/expected-failures.yml -revision "$rev" \
		-requirements "$suite/requirements/$rev.yaml" -results "$work/results-$rev")"; then
		:
	else
		failed=1
	fi
	last="$(echo "$score" | tail -n 1)"
	if [[ "$last" != "$rev "*/* ]]; then
		last="$rev ?/?" # tally could not read the results; it said why on stderr
		failed=1
	else
		echo "$score" | sed '$d'
	fi
	counts+=("$last")
done

echo
if [[ "$failed" != 0 ]]; then
	keep=1
	echo "conformance: FAILED; results and logs kept in $work" >&2
fi
echo "conformance: ${counts[0]}, ${counts[1]}"
exit "$failed"
