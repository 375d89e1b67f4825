#!/usr/bin/env bash
# Builds the mcp-bridge container image without a Docker engine and without pulling anything: a static binary,
# the CA certificates of this machine's ca-certificates package and a non-root user (65532) on `scratch`
# (deploy/image/Containerfile), with podman (Debian package, installed when missing; buildah's `bud` works the
# same). Writes bin/mcp-bridge-image.tar (OCI archive) for `podman load` / `skopeo copy` to a registry.
#
# Environment:
#   IMAGE   the image name (default mcp-bridge:dev)
#   PODMAN  podman command with global options (default: podman, with the vfs storage driver when overlay
#           is not available, as inside a container)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=scripts/podman.sh
source scripts/podman.sh
IMAGE="${IMAGE:-mcp-bridge:dev}"

ctx="$(mktemp -d)"
trap 'rm -rf "$ctx"' EXIT
rootfs="$ctx/rootfs"
mkdir -p "$rootfs/usr/local/bin" "$rootfs/etc/ssl/certs" "$rootfs/tmp"
chmod 1777 "$rootfs/tmp"
CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$rootfs/usr/local/bin/mcp-bridge" ./cmd/mcp-bridge
cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$rootfs/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$rootfs/etc/group"
cp deploy/image/Containerfile "$ctx/"

$PODMAN build --quiet --no-cache --pull=never --tag "$IMAGE" --file "$ctx/Containerfile" "$ctx" >/dev/null
mkdir -p bin
rm -f bin/mcp-bridge-image.tar
$PODMAN save --quiet --format oci-archive --output bin/mcp-bridge-image.tar "$IMAGE"
echo "build-image: $IMAGE ($(du -h bin/mcp-bridge-image.tar | cut -f1) in bin/mcp-bridge-image.tar)"
