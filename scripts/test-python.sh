#!/usr/bin/env bash
# Python client (clients/python): a venv with the pinned dev tools, the package installed editable, the
# committed stubs checked against proto/, mypy --strict, and pytest -- unit tests plus integration tests
# against the real bin/mcp-bridge (which `make test-python` builds first) and real MCP servers.
#
# Environment:
#   PYTHON                   interpreter for the venv (default: python3.11, else python3; must be >= 3.11)
#   MCPBRIDGE_BIN            the bridge binary (default: bin/mcp-bridge)
#   MCPBRIDGE_REQUIRE_PEERS  1: a missing peer (server-everything) fails instead of skipping (make test sets it)
#   PYTEST_ARGS              extra pytest arguments, e.g. "-k sampling -x"
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PKG="$ROOT/clients/python"
VENV="$ROOT/.tools/pyclient-venv" # made by scripts/pyclient-venv.sh

py="$("$ROOT/scripts/pyclient-venv.sh")"

echo "test-python: stubs are fresh?"
"$py" "$PKG/scripts/generate_stubs.py" --check

echo "test-python: ruff"
(cd "$PKG" && "$py" -m ruff check --no-cache .) || {
  echo "test-python: ruff failed (fix it, or run: cd clients/python && ruff check --fix .)" >&2; exit 1; }

echo "test-python: mypy --strict"
(cd "$PKG" && "$py" -m mypy --cache-dir "$VENV/mypy-cache" --no-error-summary) || {
  echo "test-python: mypy failed" >&2; exit 1; }

export MCPBRIDGE_BIN="${MCPBRIDGE_BIN:-$ROOT/bin/mcp-bridge}"
[[ -x "$MCPBRIDGE_BIN" ]] || { echo "test-python: $MCPBRIDGE_BIN is missing; run make build" >&2; exit 1; }

echo "test-python: pytest"
cd "$PKG"
# shellcheck disable=SC2086 # PYTEST_ARGS is a list of words on purpose
exec "$py" -m pytest -p no:cacheprovider -q -o log_level=INFO --timeout 120 ${PYTEST_ARGS:-} tests
