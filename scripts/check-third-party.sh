#!/usr/bin/env bash
# Checks that third_party/go-sdk is upstream go-sdk $VERSION plus the patches in third_party/patches/go-sdk,
# and nothing else, then runs the patched package's tests. With --refresh it rewrites third_party/go-sdk
# from upstream plus the patches instead. See third_party/README.md.
set -euo pipefail

MODULE=github.com/modelcontextprotocol/go-sdk
VERSION=v1.8.0
SUM=h1:KIvahhYqwtbeniWVPs3TcXEA7b8jEtwfBpOTAI+Urx4= # the zip's hash (go.sum's line for $MODULE $VERSION)

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tree="$root/third_party/go-sdk"
patches="$root/third_party/patches/go-sdk"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# go mod download verifies the zip against the checksum database (or GONOSUMDB's rules) and reports its hash.
info="$(cd "$work" && GOFLAGS=-mod=mod go mod download -json "$MODULE@$VERSION")"
zip="$(sed -n 's/^[[:space:]]*"Zip": "\(.*\)",$/\1/p' <<<"$info")"
sum="$(sed -n 's/^[[:space:]]*"Sum": "\(.*\)",$/\1/p' <<<"$info")"
if [[ "$sum" != "$SUM" ]]; then
	echo "check-third-party: $MODULE@$VERSION has hash $sum, want $SUM" >&2
	exit 1
fi
mkdir "$work/x"
(cd "$work/x" && unzip -q "$zip")
up="$work/x/$MODULE@$VERSION"
chmod -R u+w "$up"
for p in "$patches"/*.patch; do
	if ! (cd "$up" && patch -s -p1 --no-backup-if-mismatch <"$p"); then
		echo "check-third-party: $(basename "$p") does not apply to $MODULE@$VERSION" >&2
		exit 1
	fi
done

if [[ "${1:-}" == --refresh ]]; then
	rm -rf "$tree"
	cp -r "$up" "$tree"
	echo "check-third-party: rewrote third_party/go-sdk from $MODULE@$VERSION plus $(ls "$patches" | wc -l) patch(es)"
	exit 0
fi

if ! diff -r "$up" "$tree" >"$work/diff"; then
	echo "check-third-party: third_party/go-sdk is not $MODULE@$VERSION plus third_party/patches/go-sdk:" >&2
	head -40 "$work/diff" >&2
	exit 1
fi
# The patched packages' own tests: upstream's case-sensitivity and smuggling tests (0001), and every elicitation
# test of the mcp package (0002), its list-cache tests (0003) and the raw tool schemas' test (0004).
(cd "$tree" && go test -count=1 ./internal/json/ ./internal/jsonrpc2/ >/dev/null &&
	go test -count=1 -run 'Elicit|ListCache|LookupTool|SetCacheable|RawToolSchemas' ./mcp/ >/dev/null) || {
	echo "check-third-party: the patched SDK's tests fail" >&2
	exit 1
}
echo "check-third-party: third_party/go-sdk = $MODULE@$VERSION + $(ls "$patches" | wc -l) patch(es)"
