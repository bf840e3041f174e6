#!/usr/bin/env bash
# k8s/airgap/dockerd.sh: makes sure a Docker engine answers; starts Debian's dockerd (package
# docker.io) in the background when none does. Where the capability bounding set lacks
# capabilities Docker grants privileged containers (CAP_SYS_RESOURCE on our build machines),
# the engine runs containers through vros-runc (k8s/cmd/vros-runc), which drops them from the
# spec; kind's node containers are privileged. Logs: .data/docker/dockerd.log.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

if docker info >/dev/null 2>&1; then
	exit 0
fi
command -v dockerd >/dev/null || {
	echo "no Docker engine answers and dockerd is not installed (Debian: apt-get install docker.io)" >&2
	exit 1
}
args=()
# 0x3fffffffff: the 38 capabilities Docker's privileged containers ask for.
bnd=$((16#$(awk '/^CapBnd:/ {print $2}' /proc/self/status)))
if [ $((bnd & 16#3fffffffff)) -ne $((16#3fffffffff)) ]; then
	(cd "$ROOT/k8s" && GOWORK=off CGO_ENABLED=0 go build -o "$ROOT/bin/vros-runc" ./cmd/vros-runc)
	args+=(--add-runtime "vros-runc=$ROOT/bin/vros-runc" --default-runtime vros-runc)
	echo "capability bounding set $(printf '%x' "$bnd"): containers run through bin/vros-runc" >&2
fi
mkdir -p "$ROOT/.data/docker"
echo "starting dockerd (log: .data/docker/dockerd.log)" >&2
nohup dockerd "${args[@]}" >"$ROOT/.data/docker/dockerd.log" 2>&1 &
for _ in $(seq 60); do
	docker info >/dev/null 2>&1 && exit 0
	sleep 1
done
tail -20 "$ROOT/.data/docker/dockerd.log" >&2
echo "dockerd did not answer within 60 s" >&2
exit 1
