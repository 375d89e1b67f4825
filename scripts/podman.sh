# Sourced by the image scripts: installs podman (Debian package) when missing and sets PODMAN to the command
# to run, with the vfs storage driver and cgroupfs when the machine (a container itself) has no overlay mounts.
if ! command -v podman >/dev/null; then
	echo "image: installing podman (Debian package)" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends podman >/dev/null ||
		{ apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends podman >/dev/null; }
fi
if [[ -z "${PODMAN:-}" ]]; then
	PODMAN="podman"
	if ! podman info >/dev/null 2>&1; then
		PODMAN="podman --storage-driver vfs --cgroup-manager cgroupfs"
	fi
fi
