#!/usr/bin/env bash
# Installs Debian's redis-server when it is missing (apt-get; needs root). The Redis state engine's tests
# (internal/state, mcpcore's takeover tests) and make test-scale start their own redis-server on a free
# loopback port with a temporary directory; the package's own service is not used.
set -euo pipefail
if ! command -v redis-server >/dev/null; then
	echo "installing redis-server (Debian package)" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends redis-server >/dev/null ||
		{ apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends redis-server >/dev/null; }
fi
