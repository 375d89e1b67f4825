#!/usr/bin/env bash
# Prepares .tools/pyclient-venv — the Python client's development venv: the pinned tools of
# clients/python/requirements-dev.txt (grpcio-tools, mypy, ruff, pytest, …) and the package installed
# editable — and prints its python. scripts/test-python.sh, generate.sh, check-generate.sh and `make lint`
# use it. The venv is (re)made when the pins or the package metadata change.
#
# Environment:
#   PYTHON  interpreter for the venv (default: python3.11, else python3; must be >= 3.11)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PKG="$ROOT/clients/python"
VENV="$ROOT/.tools/pyclient-venv"

if [[ -z "${PYTHON:-}" ]]; then
  if command -v python3.11 >/dev/null 2>&1; then PYTHON=python3.11; else PYTHON=python3; fi
fi
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
  { echo "pyclient-venv: $PYTHON is older than 3.11; set PYTHON" >&2; exit 1; }

stamp="$VENV/.mcp-bridge-client-$(cat "$PKG/requirements-dev.txt" "$PKG/pyproject.toml" | sha256sum | cut -c1-16)"
if [[ ! -f "$stamp" ]]; then
  echo "pyclient-venv: preparing $VENV" >&2
  [[ -x "$VENV/bin/python" ]] || "$PYTHON" -m venv "$VENV" >&2
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$PKG/requirements-dev.txt" >&2
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e "$PKG" >&2
  rm -f "$VENV"/.mcp-bridge-client-*
  touch "$stamp"
fi
echo "$VENV/bin/python"
