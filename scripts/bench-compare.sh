#!/usr/bin/env bash
# make bench-compare BASE=<git revision>: the tree's bridge against the bridge at BASE, measured in turns in
# one run. A make bench run measures the bridge against a bare gRPC round trip and a direct MCP client on the
# same machine, but the machine's own speed drifts between runs (on the shared 2-core VM, the bare round trip
# was 216 µs in one run and 317 µs in another): the same code then shows other ratios. Two builds measured in
# turns share the drift, so their difference is the code's.
#
#   BASE=<rev>          the revision to compare with (required)
#   ROUNDS=3            how many turns each build gets
#   BENCH_STEPS="S1 "   benchrun's BENCH_ONLY (the prefix "S1 " is S1 alone; "S1 ,S3 " adds throughput)
#
# Each build runs the tree's harness (bench/cmd/benchrun) against the same upstream fixture; the reports go to
# .tools/bench-compare/<build>-<round>.{md,json}; the summary prints each round's ratios and their medians.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
base="${BASE:?set BASE to the git revision to compare with, e.g. make bench-compare BASE=HEAD~10}"
rounds="${ROUNDS:-3}"
steps="${BENCH_STEPS:-S1 }"
out="$root/.tools/bench-compare"
rm -rf "$out" && mkdir -p "$out"
log() { printf 'bench-compare: %s\n' "$*" >&2; }

rev="$(git rev-parse --short "$base")"
(cd bench && go build -o "$out/benchecho" ./cmd/benchecho && go build -o "$out/benchrun" ./cmd/benchrun)
go build -o "$out/bridge-tree" ./cmd/mcp-bridge
go build -tags benchdebug -o "$out/twin" ./cmd/mcp-bridge
wt="$(mktemp -d)"
trap 'git worktree remove --force "$wt/src" >/dev/null 2>&1 || true; rm -rf "$wt"' EXIT
git worktree add --quiet --detach "$wt/src" "$rev"
(cd "$wt/src" && go build -o "$out/bridge-$rev" ./cmd/mcp-bridge)
log "tree ($(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . || echo ', with uncommitted changes')) against $rev, $rounds rounds of BENCH_ONLY=\"$steps\""

for r in $(seq 1 "$rounds"); do
	for b in "$rev" tree; do
		log "round $r: $b"
		BENCH_ONLY="$steps" "$out/benchrun" -bridge "$out/bridge-$b" -twin "$out/twin" -echo "$out/benchecho" \
			-md "$out/$b-$r.md" -json "$out/$b-$r.json" >"$out/$b-$r.log" 2>&1 ||
			{ log "benchrun failed on $b (round $r):"; tail -20 "$out/$b-$r.log" >&2; exit 1; }
	done
done

python3 - "$out" "$rev" "$rounds" <<'PY'
import json, statistics, sys
out, rev, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
keys = ["grpc_added_p50_us", "rest_added_p50_us", "grpc_bare_rtt_p50_us", "grpc_added_over_bare",
        "bridge_floor_over_bare", "list_cache_hit_over_floor", "throughput_ratio_c32",
        "rest_throughput_ratio_c32"]
runs = {b: [json.load(open(f"{out}/{b}-{r}.json")) for r in range(1, rounds + 1)] for b in (rev, "tree")}
keys = [k for k in keys if any(k in x for x in runs[rev] + runs["tree"])]
print(f"| measure | {rev}, each round | tree, each round | {rev}, median | tree, median | tree ÷ {rev} |")
print("|---|---|---|---|---|---|")
for k in keys:
    a = [x[k] for x in runs[rev] if k in x]
    t = [x[k] for x in runs["tree"] if k in x]
    ma, mt = statistics.median(a), statistics.median(t)
    ratio = f"{mt / ma:.2f}" if ma else "—"
    print(f"| {k} | {', '.join(map(str, a))} | {', '.join(map(str, t))} | {ma:.4g} | {mt:.4g} | {ratio} |")
PY
