#!/usr/bin/env bash
# make bench: the benchmark suite (issue 6). Builds the harness and the upstream fixture, installs the two peers
# (supergateway from npm, mcpo from PyPI, both pinned in bench/) into .tools/bench-*, runs the Go
# micro-benchmarks, then bench/cmd/benchrun, which rewrites BENCHMARKS.md and bench/results.json.
#
#   BENCH_QUICK=1   shrink every scenario to a smoke run (figures meaningless)
#   BENCH_SOAK=10m  soak duration (default 60 s; the target's soak is 10 minutes)
#
# A peer that cannot be installed (no registry access) is left out and BENCHMARKS.md says so.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
tools="$root/.tools"
bin="$tools/bench-bin"
mkdir -p "$bin"
log() { printf 'bench: %s\n' "$*" >&2; }

[[ -x bin/mcp-bridge ]] || { log "bin/mcp-bridge missing: run make build (make bench does)"; exit 1; }
# bench/ is its own module: its direct client (the baseline) is the stock go-sdk release, not the bridge's patched
# copy in third_party/. The twin is the bridge's own main package plus a pprof listener (-tags benchdebug).
(cd bench && go build -o "$bin/benchecho" ./cmd/benchecho && go build -o "$bin/benchrun" ./cmd/benchrun)
go build -tags benchdebug -o "$bin/mcp-bridge-benchdebug" ./cmd/mcp-bridge

# supergateway (npm), pinned by bench/package-lock.json.
sg_dir="$tools/bench-node"
sg_sum="$(cat bench/package.json bench/package-lock.json | sha256sum | cut -d' ' -f1)"
sg_arg=()
if [[ -f "$sg_dir/.installed-$sg_sum" ]]; then
	sg_arg=(-supergateway "$sg_dir")
elif command -v npm >/dev/null && command -v node >/dev/null; then
	rm -rf "$sg_dir" && mkdir -p "$sg_dir"
	cp bench/package.json bench/package-lock.json "$sg_dir/"
	if (cd "$sg_dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null 2>&1); then
		touch "$sg_dir/.installed-$sg_sum"
		sg_arg=(-supergateway "$sg_dir")
	else
		log "supergateway: npm ci failed (offline?); its rows are left out"
	fi
else
	log "supergateway: node/npm not found; its rows are left out"
fi

# mcpo (PyPI), pinned by bench/requirements.txt, in a venv.
py_dir="$tools/bench-py"
py_sum="$(sha256sum bench/requirements.txt | cut -d' ' -f1)"
mcpo_arg=()
if [[ -f "$py_dir/.installed-$py_sum" ]]; then
	mcpo_arg=(-mcpo "$py_dir/bin/mcpo")
elif command -v python3 >/dev/null; then
	rm -rf "$py_dir"
	if python3 -m venv "$py_dir" >/dev/null 2>&1 &&
		"$py_dir/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r bench/requirements.txt >/dev/null 2>&1; then
		touch "$py_dir/.installed-$py_sum"
		mcpo_arg=(-mcpo "$py_dir/bin/mcpo")
	else
		log "mcpo: pip install failed (offline?); its rows are left out"
	fi
else
	log "mcpo: python3 not found; its rows are left out"
fi

# Go micro-benchmarks (only the *_bench_test.go benchmarks, named Bench…).
micro="$(mktemp)"
trap 'rm -f "$micro"' EXIT
count=5
benchtime=1s
if [[ "${BENCH_QUICK:-}" == 1 ]]; then count=1; benchtime=100ms; fi
log "micro-benchmarks (count=$count)"
if ! go test -run '^$' -bench 'BenchmarkBench' -benchmem -count "$count" -benchtime "$benchtime" ./server/ ./mcpcore/ >"$micro" 2>&1; then
	log "micro-benchmarks failed:"; tail -20 "$micro" >&2
fi
scripts/bench-shared-state.sh >>"$micro" || log "shared-state benchmarks failed (redis-server?)"

"$bin/benchrun" -bridge bin/mcp-bridge -twin "$bin/mcp-bridge-benchdebug" -echo "$bin/benchecho" "${sg_arg[@]}" "${mcpo_arg[@]}" -micro "$micro" \
	-md BENCHMARKS.md -json bench/results.json
