#!/usr/bin/env bash
# Installs Debian's chromium when no Chromium is on PATH (apt-get; needs root), for the operator console's
# browser tests (e2e/console_test.go drive it headless through the DevTools protocol). Nothing is downloaded
# from a browser vendor: the package comes from the distribution, like HAProxy for `make test-scale`.
# Prints the browser's path.
set -euo pipefail

for name in chromium chromium-browser; do
	if command -v "$name" >/dev/null; then
		command -v "$name"
		exit 0
	fi
done
echo "install-chromium: installing chromium (Debian package)" >&2
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >/dev/null ||
	{ apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium >/dev/null; }
command -v chromium
