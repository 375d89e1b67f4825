#!/usr/bin/env bash
# Creates .tools/pyvenv (a Python virtual environment) with the official MCP Python SDK pinned in
# tools/python-peer/requirements.txt, for the Python peer server that mcpcore's tests run over stdio.
#
# Idempotent: a stamp file keyed on the requirements' checksum makes a second run a no-op.
# Needs python3 >= 3.10 with the venv module, and access to a PyPI index (pip's own configuration).
# Prints, as its last line, the interpreter the tests should use (MCPBRIDGE_PYTHON).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
req="$root/tools/python-peer/requirements.txt"
venv="${MCPBRIDGE_PYVENV:-$root/.tools/pyvenv}"
python="${PYTHON:-python3}"

if ! "$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' 2>/dev/null; then
	echo "python-peer: need $python >= 3.10 (set PYTHON to another interpreter)" >&2
	exit 1
fi

sum="$(sha256sum "$req" | cut -d' ' -f1)"
stamp="$venv/.installed-$sum"
if [[ ! -f "$stamp" ]]; then
	rm -rf "$venv"
	"$python" -m venv "$venv"
	"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input -r "$req"
	"$venv/bin/python" -c 'import mcp.server.mcpserver' # fail here, not in the tests, if the SDK is broken
	touch "$stamp"
fi
echo "$venv/bin/python"
