#!/usr/bin/env bash
# The Python client's framework adapters (mcp_bridge.langchain, .openai, .pydantic_ai, and the Toolbox through
# the real bridge): a venv of their own, .tools/pyframeworks-venv, with the pinned framework packages of
# clients/python/requirements-frameworks.txt (never installed into the core venv: tests/test_packaging.py checks
# the core package stays free of them; built on top of the client venv, .tools/pyclient-venv, so the dev tools are
# not installed twice), mypy --strict of the adapters against the real packages, and pytest
# of clients/python/tests_frameworks: a scripted OpenAI-compatible model server on loopback drives a LangGraph
# ReAct agent, an OpenAI Agents SDK agent and a PydanticAI agent through bin/mcp-bridge and the demo server,
# and each docs/frameworks/python-*.md page runs as copied. No network beyond the package index.
#
# Environment:
#   PYTHON          interpreter for the venv (default: python3.11, else python3; must be >= 3.11)
#   MCPBRIDGE_BIN   the bridge binary (default: bin/mcp-bridge)
#   PYTEST_ARGS     extra pytest arguments, e.g. "-k toolbox -x"
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PKG="$ROOT/clients/python"
VENV="$ROOT/.tools/pyframeworks-venv"

if [[ -z "${PYTHON:-}" ]]; then
  if command -v python3.11 >/dev/null 2>&1; then PYTHON=python3.11; else PYTHON=python3; fi
fi
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
  { echo "test-python-frameworks: $PYTHON is older than 3.11; set PYTHON" >&2; exit 1; }

# The venv is built on top of the client's (scripts/pyclient-venv.sh, which make test-python has prepared): a .pth
# file adds the client venv's site-packages after its own, so pip finds the dev tools of requirements-dev.txt
# installed and adds only the frameworks, into this venv alone (the client venv stays free of them).
client_py="$("$ROOT/scripts/pyclient-venv.sh")"
stamp="$VENV/.stamp-$(cat "$PKG/requirements-dev.txt" "$PKG/requirements-frameworks.txt" "$PKG/pyproject.toml" | sha256sum | cut -c1-16)"
if [[ ! -f "$stamp" ]]; then
  echo "test-python-frameworks: preparing $VENV on top of $(dirname "$(dirname "$client_py")")" >&2
  [[ -x "$VENV/bin/python" ]] || "$PYTHON" -m venv "$VENV" >&2
  purelib() { "$1" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'; }
  printf 'import site; site.addsitedir(%s)\n' "$("$client_py" -c 'import sysconfig; print(repr(sysconfig.get_paths()["purelib"]))')" \
    >"$(purelib "$VENV/bin/python")/mcp-bridge-client-venv.pth"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$PKG/requirements-frameworks.txt" >&2
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e "$PKG" >&2
  rm -f "$VENV"/.stamp-*
  touch "$stamp"
fi
py="$VENV/bin/python"

echo "test-python-frameworks: mypy --strict (adapters against the real framework packages)"
(cd "$PKG" && "$py" -m mypy --cache-dir "$VENV/mypy-cache" --no-error-summary) || {
  echo "test-python-frameworks: mypy failed" >&2; exit 1; }

export MCPBRIDGE_BIN="${MCPBRIDGE_BIN:-$ROOT/bin/mcp-bridge}"
[[ -x "$MCPBRIDGE_BIN" ]] || { echo "test-python-frameworks: $MCPBRIDGE_BIN is missing; run make build" >&2; exit 1; }

echo "test-python-frameworks: pytest"
cd "$PKG"
# shellcheck disable=SC2086 # PYTEST_ARGS is a list of words on purpose
exec "$py" -m pytest -p no:cacheprovider -q -o log_level=INFO --timeout 120 ${PYTEST_ARGS:-} tests_frameworks tests/test_toolbox.py
