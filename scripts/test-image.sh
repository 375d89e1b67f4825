#!/usr/bin/env bash
# Runs the image `make image` built (IMAGE, default mcp-bridge:dev) with podman and checks it: the configured
# user is non-root and the process runs as uid 65532; /healthz and /readyz answer; a session to the built-in
# demo server opens (the binary re-executes itself as the stdio server inside `scratch`); SIGTERM ends it with
# status 0. Inside a container without cgroup delegation podman's defaults fail (crun cannot set rlimits or
# use hybrid cgroups): the script then retries with runc (Debian package), cgroupfs and no default ulimits,
# and says so.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=scripts/podman.sh
source scripts/podman.sh
IMAGE="${IMAGE:-mcp-bridge:dev}"
name="mcp-bridge-test-image-$$"
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
grpc_port="$(port)"
http_port="$(port)"
conf="$(mktemp)"
trap '$PODMAN rm -f "$name" >/dev/null 2>&1 || true; rm -f "$conf"' EXIT
args=(--grpc-addr "127.0.0.1:$grpc_port" --http-addr "127.0.0.1:$http_port" --log-format json)

how="podman run"
if ! $PODMAN run -d --name "$name" --network host "$IMAGE" "${args[@]}" >/dev/null 2>"$conf.err"; then
	echo "test-image: plain podman run failed here ($(tr '\n' ' ' <"$conf.err")); retrying with runc, cgroupfs, host ulimits" >&2
	$PODMAN rm -f "$name" >/dev/null 2>&1 || true
	command -v runc >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends runc >/dev/null
	printf '[containers]\ndefault_ulimits = []\n' >"$conf"
	export CONTAINERS_CONF="$conf"
	PODMAN="$PODMAN --cgroup-manager cgroupfs"
	$PODMAN run -d --runtime runc --ulimit host --name "$name" --network host "$IMAGE" "${args[@]}" >/dev/null
	how="podman run --runtime runc --ulimit host (cgroupfs)"
fi
rm -f "$conf.err"

fail() { echo "test-image: FAIL: $*" >&2; $PODMAN logs "$name" >&2 || true; exit 1; }
for _ in $(seq 100); do
	curl -fsS -m 2 "http://127.0.0.1:$http_port/healthz" >/dev/null 2>&1 && break
	sleep 0.1
done
health="$(curl -fsS -m 5 "http://127.0.0.1:$http_port/healthz")" || fail "/healthz does not answer"
[[ "$health" == *'"SERVING"'* ]] || fail "/healthz = $health"
ready="$(curl -fsS -m 5 "http://127.0.0.1:$http_port/readyz")" || fail "/readyz does not answer"
user="$($PODMAN inspect -f '{{.Config.User}}' "$IMAGE")"
[[ "$user" == "65532:65532" ]] || fail "image user is '$user', want 65532:65532"
pid="$($PODMAN inspect -f '{{.State.Pid}}' "$name")"
uid="$(awk '/^Uid:/ {print $2}' "/proc/$pid/status")"
[[ "$uid" == "65532" ]] || fail "the bridge runs as uid $uid"
session="$(curl -fsS -m 30 -X POST "http://127.0.0.1:$http_port/v1/sessions" -d '{"server": "demo"}')" || fail "CreateSession failed"
[[ "$session" == *SESSION_STATE_READY* ]] || fail "CreateSession = $session"
$PODMAN stop -t 40 "$name" >/dev/null
status="$($PODMAN inspect -f '{{.State.ExitCode}}' "$name")"
[[ "$status" == "0" ]] || fail "exit status $status after SIGTERM"
echo "test-image: $IMAGE ran with $how as uid $uid: /healthz $health, /readyz $ready, a demo session opened, SIGTERM -> exit 0"
