#!/usr/bin/env bash
# Runs the official MCP conformance suite (npm @modelcontextprotocol/conformance, pinned in
# tools/package.json, installed by `make node-tools`) for both requirement sets the suite freezes,
# 2025-11-25 and 2026-07-28, along two paths:
#   - conformance/client: a small MCP client program driven by mcpcore alone;
#   - conformance/bridgeclient: the whole bridge — the mcp-bridge binary (built here, once), started per
#     scenario with the mock server as its upstream, and a host using only the gRPC host API.
# Both perform the same per-scenario actions and canned answers (conformance/internal/scenario).
#
# conformance/expected-failures.yml (mcpcore) and conformance/expected-failures-bridge.yml (through the
# bridge) list, per requirement set, the required scenarios known to fail on that path and why. The run
# fails on a required scenario that fails without an entry, on an entry whose scenario now passes (so the
# files stay honest), and on an mcp-bridge process left running. The auth extension scenarios (client
# credentials, enterprise-managed authorization, DPoP, workload identity: run by both requirement sets but
# scored by neither) are held to the same rules, from the files' auth-extensions sections. The last line
# of output is always
#   conformance: 2025-11-25 P/T, 2026-07-28 P/T, auth extensions P/T; through the bridge: …(the same)
# (required scenarios passed / required scenarios in the set; extension scenarios passed at every
# revision / extension scenarios).
#
# Loopback only: the suite starts its mock servers on localhost and runs the client against them; the
# bridges listen on loopback ports the kernel picks. Bounded: each scenario is killed after 30s (and its
# bridge with it) and each suite run after 150s.
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
go build -o "$work/bridge-client" ./conformance/bridgeclient
go build -o "$work/mcp-bridge" ./cmd/mcp-bridge
go build -o "$work/tally" ./conformance/tally
echo "conformance: suite $(node -p "require('$suite/package.json').version"), node $(node --version)"

failed=0

# run_path LABEL COMMAND EXPECTED: runs the suite against COMMAND for every requirement set with the
# expected failures of EXPECTED, and sets counts to the sets' "REV P/T" scores. Results go to $work/LABEL-*.
run_path() {
	local label="$1" command="$2" expected="$3" rev status score last
	counts=()
	for rev in "${revisions[@]}"; do
		"$work/tally" baseline -expected "$expected" -revision "$rev" -out "$work/$label-baseline-$rev.yml"
		echo
		echo "=== $label, requirements $rev ==="
		status=0
		timeout --kill-after=10 150 \
			node --import "$root/conformance/node-compat/register.mjs" "$suite/dist/index.js" client \
			--command "$command" \
			--requirements "$rev" \
			--expected-failures "$work/$label-baseline-$rev.yml" \
			--timeout 30000 \
			-o "$work/$label-results-$rev" \
			>"$work/$label-suite-$rev.out" 2>"$work/$label-suite-$rev.err" || status=$?
		if [[ "$status" != 0 ]]; then
			# The suite's own verdict: an unexpected failure, a stale baseline entry, or the run itself broke.
			sed -n '/=== SUITE SUMMARY ===/,$p' "$work/$label-suite-$rev.out"
			echo "conformance: suite exited $status for $label $rev (logs: $work/$label-suite-$rev.out, $work/$label-suite-$rev.err)" >&2
			failed=1
		fi
		if score="$("$work/tally" score -expected "$expected" -revision "$rev" \
			-requirements "$suite/requirements/$rev.yaml" -results "$work/$label-results-$rev")"; then
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
	# The auth extension scenarios ran with both sets; each must pass in both.
	local extargs=()
	for rev in "${revisions[@]}"; do
		extargs+=(-requirements "$suite/requirements/$rev.yaml" -results "$work/$label-results-$rev")
	done
	echo
	echo "=== $label, auth extensions ==="
	if score="$("$work/tally" extensions -expected "$expected" "${extargs[@]}")"; then
		:
	else
		failed=1
	fi
	last="$(echo "$score" | tail -n 1)"
	if [[ "$last" != "auth extensions "*/* ]]; then
		last="auth extensions ?/?"
		failed=1
	else
		echo "$score" | sed '$d'
	fi
	counts+=("$last")
}

run_path core "$work/conformance-client" conformance/expected-failures.yml
core=("${counts[@]}")
run_path bridge "$work/bridge-client -bridge $work/mcp-bridge" conformance/expected-failures-bridge.yml
bridge=("${counts[@]}")

# Every bridge the bridge client started must have exited with its scenario.
if leaked="$(pgrep -f "^$work/mcp-bridge " || true)" && [[ -n "$leaked" ]]; then
	echo "conformance: mcp-bridge processes left running: $leaked" >&2
	kill $leaked 2>/dev/null || true
	failed=1
fi

echo
if [[ "$failed" != 0 ]]; then
	keep=1
	echo "conformance: FAILED; results and logs kept in $work" >&2
fi
echo "conformance: ${core[0]}, ${core[1]}, ${core[2]}; through the bridge: ${bridge[0]}, ${bridge[1]}, ${bridge[2]}"
exit "$failed"
