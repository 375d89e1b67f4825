#!/usr/bin/env bash
# Runs every Go fuzz target of the main module for FUZZTIME each (default 10s), one after another.
# A failure leaves its input under the package's testdata/fuzz/ (commit it as a regression case).
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-10s}
found=0
for pkg in $(go list ./... | grep -v /e2e); do
	for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
		found=$((found + 1))
		echo "== $pkg $target ($fuzztime)"
		go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$pkg"
	done
done
if [ "$found" -eq 0 ]; then
	echo "no fuzz targets found" >&2
	exit 1
fi
echo "$found fuzz targets ran for $fuzztime each"
