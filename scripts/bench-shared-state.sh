#!/usr/bin/env bash
# Part of make bench (scripts/bench.sh appends its output to the micro-benchmarks): the shared state's costs,
# docs/adr/0070-replicas-share-state.md — one MRTR hop's writes on the embedded file store and on Redis in the
# same run (BenchmarkBenchStoreMRTRHop), and the store's part of a takeover (BenchmarkBenchStoreTakeover:
# release, acquire, read one session's records among 1,000). The whole takeover after a kill -9 (lease expiry,
# adoption, the upstream's reconnection) is measured by make test-scale, whose summary line reports it.
# Starts its own redis-server (installed from Debian when missing).
#
#   BENCH_QUICK=1   one short repetition
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
"$root/scripts/install-redis.sh"
count=5
benchtime=1s
if [[ "${BENCH_QUICK:-}" == 1 ]]; then count=1; benchtime=100ms; fi
go test -run '^$' -bench 'BenchmarkBench' -benchmem -count "$count" -benchtime "$benchtime" ./internal/state/ | grep '^Benchmark'
