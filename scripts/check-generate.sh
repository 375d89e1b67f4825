#!/usr/bin/env bash
# Fails if gen/ is not exactly what scripts/generate.sh makes from proto/, or if gen/ has changes that are not
# committed; then does the same for the Python client's stubs (clients/python/src/mcp_bridge/_gen); then checks proto/ for breaking changes (buf FILE rules) against an earlier commit.
#
# Regeneration happens in a temporary copy, so gen/ in the work tree is never touched.
#
# The breaking-change baseline is, in order: $BUF_BREAKING_AGAINST (any git ref); the tip of `main` when HEAD is
# not it (a branch); HEAD when proto/ has uncommitted changes; otherwise HEAD~1. If that commit has no API
# (or does not exist, e.g. in a shallow clone), the check is skipped with a message.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
export PATH="$root/.tools/bin:$root/.tools/node/node_modules/.bin:$PATH"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# Copy what generation reads, pointing .tools at ours, and generate there.
copy_inputs() { # dest
  mkdir -p "$1/scripts"
  cp -R proto buf.yaml buf.gen.yaml "$1/"
  cp scripts/generate.sh "$1/scripts/"
  ln -s "$root/.tools" "$1/.tools"
}
copy_inputs "$tmp/work"
(cd "$tmp/work" && scripts/generate.sh)

status=0
if ! diff -ruN gen "$tmp/work/gen" >"$tmp/gen.diff"; then
  echo "check-generate: gen/ is out of date with proto/. Run 'make generate' and commit gen/." >&2
  echo "--- difference (work tree gen/ → regenerated):" >&2
  head -n 200 "$tmp/gen.diff" >&2
  lines=$(wc -l <"$tmp/gen.diff")
  if ((lines > 200)); then echo "… ($lines lines in all)" >&2; fi
  status=1
fi

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  uncommitted="$(git status --porcelain --untracked-files=all -- gen/)"
  if [[ -n "$uncommitted" ]]; then
    echo "check-generate: gen/ has changes that are not committed:" >&2
    echo "$uncommitted" >&2
    status=1
  fi
fi
if ((status != 0)); then
  exit "$status"
fi
echo "check-generate: gen/ is up to date"

# The Python client's stubs: generated in a temporary directory and compared (generate_stubs.py --check).
py="$(scripts/pyclient-venv.sh)"
if ! "$py" clients/python/scripts/generate_stubs.py --check; then
  echo "check-generate: the Python client's stubs are out of date with proto/. Run 'make generate' and commit them." >&2
  exit 1
fi
echo "check-generate: the Python client's stubs are up to date"

# Breaking changes.
against="${BUF_BREAKING_AGAINST:-}"
if [[ -z "$against" ]]; then
  head_commit="$(git rev-parse --verify --quiet HEAD || true)"
  main_commit="$(git rev-parse --verify --quiet refs/heads/main || git rev-parse --verify --quiet refs/remotes/origin/main || true)"
  if [[ -z "$head_commit" ]]; then
    echo "check-generate: no commits yet; skipping buf breaking"
    exit 0
  elif [[ -n "$main_commit" && "$main_commit" != "$head_commit" ]]; then
    against="$main_commit"
  elif [[ -n "$(git status --porcelain -- proto/ buf.yaml)" ]]; then
    against="HEAD"
  else
    against="HEAD~1"
  fi
fi
against_commit="$(git rev-parse --verify --quiet "$against^{commit}" || true)"
if [[ -z "$against_commit" ]]; then
  echo "check-generate: $against is not available (first commit or shallow clone); skipping buf breaking"
  exit 0
fi
if ! git cat-file -e "$against_commit:buf.yaml" 2>/dev/null || ! git cat-file -e "$against_commit:proto/mcpbridge" 2>/dev/null; then
  echo "check-generate: no earlier API at $against ($against_commit); skipping buf breaking"
  exit 0
fi
mkdir -p "$tmp/against"
git archive "$against_commit" proto buf.yaml | tar -x -C "$tmp/against"
ln -s "$root/.tools" "$tmp/against/.tools"
if ! buf breaking --against "$tmp/against"; then
  echo "check-generate: proto/ has breaking changes against $against ($against_commit)." >&2
  echo "mcpbridge.v1 is a published API: add new fields, messages and RPCs instead of changing old ones." >&2
  exit 1
fi
echo "check-generate: no breaking changes against $against ($against_commit)"
