#!/usr/bin/env bash
# k8s/airgap/build.sh: everything `make e2e` runs on, built on this machine with Docker and no
# container registry, from Debian's packages and Go modules (docs/kubernetes.md, "Air-gapped").
#
#   k8s/airgap/build.sh bases   stand-ins for the base images of our Dockerfiles
#   k8s/airgap/build.sh node    the kind node image with its Kubernetes component images
#   k8s/airgap/build.sh stores  the dev stores of k8s/dev (Apache Kafka; PostgreSQL + FerretDB)
#   k8s/airgap/build.sh all     the three, in that order
#   k8s/airgap/build.sh env     the image names, as make variables
#   k8s/airgap/build.sh docker  the Docker CLI to build with (one that has BuildKit)
#
# Every image carries the label vros.airgap.key, a hash of its pinned versions and of the files
# it is built from; an image whose key matches is not built again. Binaries built from Go
# modules are cached in $VROS_AIRGAP_CACHE (default ~/.cache/vros/airgap), one folder per
# version. Nothing is pulled: every FROM names scratch or an image built here.
set -euo pipefail
# Command substitutions fail the script too (bash leaves errexit off inside them otherwise).
shopt -s inherit_errexit

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE=$ROOT/k8s/airgap
CACHE=${VROS_AIRGAP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vros/airgap}

# Pinned versions. Kubernetes, etcd, CoreDNS and crictl come from the wrapper modules' go.mod
# files (kube/, etcd/, coredns/, crictl/; go.sum pins what they are built from), Kafka from the
# dev image's pom.xml, FerretDB from its command's go.mod; the others are pinned here.
DEBIAN_SUITE=bookworm
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
GO_VERSION=1.26.8
# modver GOMOD MODULE: the version GOMOD requires of MODULE.
modver() { awk -v m="$2" '$1 == m {print $2; exit} $1 == "require" && $2 == m {print $3; exit}' "$1"; }
KUBE_VERSION=$(modver "$HERE/kube/go.mod" k8s.io/kubernetes)
ETCD_VERSION=$(modver "$HERE/etcd/go.mod" go.etcd.io/etcd/server/v3)
COREDNS_VERSION=$(modver "$HERE/coredns/go.mod" github.com/coredns/coredns)
CRICTL_VERSION=$(modver "$HERE/crictl/go.mod" sigs.k8s.io/cri-tools)
# kubeadm's PauseVersion for KUBE_VERSION; the pause binary is built from the same module.
PAUSE_VERSION=3.10.2
KIND_VERSION=$(modver "$ROOT/k8s/go.mod" sigs.k8s.io/kind)
KAFKA_VERSION=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$ROOT/k8s/dev/images/kafka/pom.xml")
FERRETDB_VERSION=$(modver "$ROOT/k8s/dev/images/ferretdb/go.mod" github.com/FerretDB/FerretDB)

# Image names. The stand-ins are passed to our Dockerfiles as build arguments; the component
# images carry the names kubeadm and containerd ask for, so nothing inside the node pulls.
DEBIAN_IMAGE=vros-local/debian:$DEBIAN_SUITE
GO_IMAGE=vros-local/golang:$GO_VERSION
RUNTIME_IMAGE=vros-local/static:nonroot
NODE_IMAGE=vros-local/kind-node:$KUBE_VERSION
KAFKA_IMAGE=vros-dev/kafka:$KAFKA_VERSION
FERRETDB_IMAGE=vros-dev/ferretdb:${FERRETDB_VERSION#v}-pg15
K8S_REGISTRY=registry.k8s.io

log() { printf '== %s\n' "$*" >&2; }

# moddir GOMODDIR MODULE: the folder of MODULE at the version GOMODDIR's go.mod requires,
# downloaded first when this machine has no copy yet.
moddir() {
	local dir
	dir=$(cd "$1" && GOWORK=off GOFLAGS=-mod=mod go mod download -json "$2" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
	[ -d "$dir" ] || die "go mod download $2 (in $1) gave no folder"
	echo "$dir"
}
die() { printf 'k8s/airgap/build.sh: %s\n' "$*" >&2; exit 1; }

# docker_build: BuildKit is needed (cache mounts). A Docker CLI without the buildx plugin
# cannot use it; Debian's docker.io ships a client that has BuildKit built in, so prefer that
# one when the first docker on PATH lacks buildx.
pick_docker() {
	if [ -n "${DOCKER:-}" ]; then return; fi
	DOCKER=docker
	if ! docker buildx version >/dev/null 2>&1 && [ -x /usr/bin/docker ] &&
		[ "$(/usr/bin/docker version --format '{{.Client.Version}}' 2>/dev/null | cut -d. -f1)" -lt 23 ] 2>/dev/null; then
		DOCKER=/usr/bin/docker
	fi
}
need_docker() {
	pick_docker
	"$DOCKER" info >/dev/null 2>&1 || die "no Docker engine answers (make docker-up starts one)"
}
docker_build() { DOCKER_BUILDKIT=1 "$DOCKER" build --progress=plain "$@"; }

# key INPUT... prints a short hash of the pinned versions and the inputs: files, folders, and
# image:NAME for the id of an image built before (a rebuilt base rebuilds what is on it).
key() {
	{
		echo "$DEBIAN_SUITE $GO_VERSION $KUBE_VERSION $ETCD_VERSION $COREDNS_VERSION $PAUSE_VERSION"
		echo "$CRICTL_VERSION $KIND_VERSION $KAFKA_VERSION $FERRETDB_VERSION"
		for f in "$@"; do
			if [ "${f#image:}" != "$f" ]; then
				"$DOCKER" image inspect --format '{{.Id}}' "${f#image:}" 2>/dev/null || echo "${f#image:}"
			elif [ -d "$f" ]; then (cd "$f" && find . -type f | LC_ALL=C sort | xargs sha256sum); else sha256sum "$f"; fi
		done
	} | sha256sum | cut -c1-16
}

# fresh IMAGE KEY: true when IMAGE exists with that key.
fresh() {
	[ "$("$DOCKER" image inspect --format '{{index .Config.Labels "vros.airgap.key"}}' "$1" 2>/dev/null)" = "$2" ]
}

# gobuild DIR OUT PKG...: builds packages of the wrapper module DIR into OUT, once per version.
gobuild() {
	local dir=$1 out=$2 ldflags=$3
	shift 3
	if [ -f "$out/.done" ]; then return; fi
	log "go build $* ($(basename "$out"), cached afterwards)"
	rm -rf "$out" && mkdir -p "$out"
	(cd "$dir" && GOWORK=off GOFLAGS=-mod=readonly CGO_ENABLED=0 GOTOOLCHAIN=go$GO_VERSION \
		nice -n 10 go build -trimpath -ldflags "$ldflags" -o "$out/" "$@")
	touch "$out/.done"
}

# ---- bases: stand-ins for debian, golang and distroless/static -----------------------------

build_debian() {
	local k
	# The images trust what this machine trusts: its local CAs (a TLS-inspecting proxy's, say)
	# are added as update-ca-certificates adds them here.
	k=$(key /usr/local/share/ca-certificates)
	fresh "$DEBIAN_IMAGE" "$k" && return
	local rootfs=$CACHE/rootfs-$DEBIAN_SUITE
	if [ ! -f "$rootfs/.done" ]; then
		command -v debootstrap >/dev/null || die "debootstrap is needed (apt-get install debootstrap)"
		log "debootstrap $DEBIAN_SUITE (minbase) from $DEBIAN_MIRROR"
		rm -rf "$rootfs"
		debootstrap --variant=minbase --include=ca-certificates,tzdata "$DEBIAN_SUITE" "$rootfs" "$DEBIAN_MIRROR" >&2
		rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
		touch "$rootfs/.done"
	fi
	rm -rf "$rootfs/usr/local/share/ca-certificates" && mkdir -p "$rootfs/usr/local/share/ca-certificates"
	if [ -d /usr/local/share/ca-certificates ]; then
		cp -r /usr/local/share/ca-certificates/. "$rootfs/usr/local/share/ca-certificates/"
	fi
	chroot "$rootfs" update-ca-certificates --fresh >/dev/null
	log "$DEBIAN_IMAGE"
	tar -C "$rootfs" --exclude=./.done -c . |
		"$DOCKER" import -c 'CMD ["/bin/bash"]' -c "LABEL vros.airgap.key=$k" - "$DEBIAN_IMAGE" >/dev/null
}

build_golang() {
	local k
	k=$(key "image:$DEBIAN_IMAGE" "$HERE/images/golang.Dockerfile")
	fresh "$GO_IMAGE" "$k" && return
	# The Go toolchain is a module on the Go proxy (what GOTOOLCHAIN downloads).
	local mod=golang.org/toolchain@v0.0.1-go$GO_VERSION.linux-amd64 dir ctx=$CACHE/ctx-golang
	dir=$(GOFLAGS=-modcacherw go mod download -json "$mod" | sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
	[ -d "$dir" ] || die "go mod download $mod failed"
	rm -rf "$ctx" && mkdir -p "$ctx" && cp -a "$dir" "$ctx/go"
	# Module zips keep no file modes: make the toolchain's programs executable again.
	chmod -R u+w "$ctx/go" && chmod +x "$ctx/go/bin/"* "$ctx/go/pkg/tool/"*/*
	log "$GO_IMAGE"
	docker_build -t "$GO_IMAGE" --label "vros.airgap.key=$k" --build-arg "DEBIAN_IMAGE=$DEBIAN_IMAGE" \
		--build-arg "GO_VERSION=$GO_VERSION" -f "$HERE/images/golang.Dockerfile" "$ctx"
}

build_runtime() {
	local k
	k=$(key "image:$DEBIAN_IMAGE" "$HERE/images/static.Dockerfile")
	fresh "$RUNTIME_IMAGE" "$k" && return
	log "$RUNTIME_IMAGE"
	docker_build -t "$RUNTIME_IMAGE" --label "vros.airgap.key=$k" --build-arg "DEBIAN_IMAGE=$DEBIAN_IMAGE" \
		-f "$HERE/images/static.Dockerfile" "$HERE/images"
}

bases() {
	build_debian
	build_golang
	build_runtime
}

# ---- node: Kubernetes binaries and component images, then the kind node image ------------

kube_ldflags() {
	local minor=${KUBE_VERSION#v1.}
	minor=${minor%%.*}
	local f="-s -w" p
	for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		f="$f -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
		f="$f -X $p.buildDate=1970-01-01T00:00:00Z"
	done
	echo "$f"
}

build_binaries() {
	local kube=$CACHE/kube-$KUBE_VERSION
	# kube-apiserver is most of the cold build (about 20 min on 2 cores).
	gobuild "$HERE/kube" "$kube" "$(kube_ldflags)" \
		k8s.io/kubernetes/cmd/kubeadm k8s.io/kubernetes/cmd/kubelet k8s.io/kubernetes/cmd/kubectl \
		k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
		k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kube-proxy
	gobuild "$HERE/etcd" "$CACHE/etcd-$ETCD_VERSION" "-s -w" .
	gobuild "$HERE/coredns" "$CACHE/coredns-$COREDNS_VERSION" "-s -w" github.com/coredns/coredns
	# kind load docker-image asks the node's CRI for image ids with crictl.
	gobuild "$HERE/crictl" "$CACHE/crictl-$CRICTL_VERSION" "-s -w" sigs.k8s.io/cri-tools/cmd/crictl
	# The pause container is a small C program in the Kubernetes tree.
	local pause=$CACHE/pause-$PAUSE_VERSION src
	if [ ! -f "$pause/.done" ]; then
		src=$(moddir "$HERE/kube" k8s.io/kubernetes)
		mkdir -p "$pause"
		gcc -Os -Wall -Werror -static -DVERSION="v$PAUSE_VERSION-vros" -o "$pause/pause" "$src/build/pause/linux/pause.c"
		strip "$pause/pause"
		touch "$pause/.done"
	fi
}

# component NAME TAG BIN [BASE]: one binary per image, as registry.k8s.io publishes them;
# appends the image to the array images.
component() {
	local name=$1 tag=$2 bin=$3 base=${4:-$RUNTIME_IMAGE} image ctx k
	image=$K8S_REGISTRY/$name:$tag
	ctx=$CACHE/ctx-$(basename "$name")
	k=$(key "image:$base" "$HERE/images/component.Dockerfile" "$bin")
	images+=("$image")
	fresh "$image" "$k" && return
	rm -rf "$ctx" && mkdir -p "$ctx" && cp "$bin" "$ctx/"
	sed "s/@BIN@/$(basename "$bin")/g" "$HERE/images/component.Dockerfile" >"$ctx/Dockerfile"
	log "$image"
	docker_build -t "$image" --label "vros.airgap.key=$k" --build-arg "BASE=$base" "$ctx" >&2
}

build_node() {
	bases
	build_binaries
	local kube=$CACHE/kube-$KUBE_VERSION kproxy_base=vros-local/kube-proxy-base:$DEBIAN_SUITE k
	# kube-proxy programs iptables: its base has Debian's iptables and conntrack.
	k=$(key "image:$DEBIAN_IMAGE" "$HERE/images/kube-proxy-base.Dockerfile")
	if ! fresh "$kproxy_base" "$k"; then
		docker_build -t "$kproxy_base" --label "vros.airgap.key=$k" --build-arg "DEBIAN_IMAGE=$DEBIAN_IMAGE" \
			-f "$HERE/images/kube-proxy-base.Dockerfile" "$HERE/images"
	fi
	images=()
	component kube-apiserver "$KUBE_VERSION" "$kube/kube-apiserver"
	component kube-controller-manager "$KUBE_VERSION" "$kube/kube-controller-manager"
	component kube-scheduler "$KUBE_VERSION" "$kube/kube-scheduler"
	component kube-proxy "$KUBE_VERSION" "$kube/kube-proxy" "$kproxy_base"
	component etcd "${ETCD_VERSION#v}-0" "$CACHE/etcd-$ETCD_VERSION/etcd"
	component coredns/coredns "$COREDNS_VERSION" "$CACHE/coredns-$COREDNS_VERSION/coredns"
	component pause "$PAUSE_VERSION" "$CACHE/pause-$PAUSE_VERSION/pause" scratch

	# The node: kind's base files (they ship in the sigs.k8s.io/kind module) on Debian's
	# systemd, containerd, runc and CNI plugins, plus the Kubernetes binaries.
	local kindsrc ctx=$CACHE/ctx-node
	kindsrc=$(moddir "$ROOT/k8s" sigs.k8s.io/kind)/images/base/files
	k=$(key "image:$DEBIAN_IMAGE" "$HERE/images/node.Dockerfile" "$HERE/images/10-bridge.conflist" "$kindsrc" \
		"$kube/kubeadm" "$kube/kubelet" "$kube/kubectl" "$CACHE/crictl-$CRICTL_VERSION/crictl")
	k=$(printf '%s %s' "$k" "$(for i in "${images[@]}"; do "$DOCKER" image inspect --format '{{.Id}}' "$i"; done)" | sha256sum | cut -c1-16)
	fresh "$NODE_IMAGE" "$k" && return
	rm -rf "$ctx" && mkdir -p "$ctx/bin"
	cp -r "$kindsrc" "$ctx/files" && chmod -R u+w,go-w "$ctx/files"
	find "$ctx/files" -type d -exec chmod 755 {} + && find "$ctx/files" -type f -exec chmod 644 {} +
	chmod 755 "$ctx/files/usr/local/bin/"* "$ctx/files/kind/bin/"*
	cp "$kube/kubeadm" "$kube/kubelet" "$kube/kubectl" "$CACHE/crictl-$CRICTL_VERSION/crictl" "$ctx/bin/"
	cp "$HERE/images/10-bridge.conflist" "$ctx/"
	log "$NODE_IMAGE (base)"
	docker_build -t "$NODE_IMAGE-base" --build-arg "DEBIAN_IMAGE=$DEBIAN_IMAGE" \
		--build-arg "KUBE_VERSION=$KUBE_VERSION" --build-arg "PAUSE_IMAGE=$K8S_REGISTRY/pause:$PAUSE_VERSION" \
		-f "$HERE/images/node.Dockerfile" "$ctx"

	# As `kind build node-image` does: import the component images into the node's containerd
	# (pinned, so the kubelet never collects them), then commit the container.
	log "$NODE_IMAGE (importing ${images[*]})"
	local id
	id=$("$DOCKER" run -d --privileged --entrypoint /bin/sleep "$NODE_IMAGE-base" infinity)
	trap '"$DOCKER" rm -f "$id" >/dev/null 2>&1 || true' EXIT
	"$DOCKER" exec "$id" sh -c 'nohup containerd >/tmp/containerd.log 2>&1 &'
	"$DOCKER" exec "$id" sh -c 'for i in $(seq 100); do ctr version >/dev/null 2>&1 && exit 0; sleep 0.2; done; cat /tmp/containerd.log; exit 1'
	"$DOCKER" save "${images[@]}" | "$DOCKER" exec -i "$id" ctr --namespace=k8s.io images import \
		--label=io.cri-containerd.pinned=pinned --all-platforms --no-unpack --digests -
	# sleep, the container's init, reaps nobody: containerd stays a zombie once it has exited.
	"$DOCKER" exec "$id" sh -c 'ctr --namespace=k8s.io images list -q; pkill containerd
		while ps -C containerd -o stat= | grep -qv Z; do sleep 0.2; done; rm -f /tmp/containerd.log'
	"$DOCKER" commit --change 'ENTRYPOINT [ "/usr/local/bin/entrypoint", "/sbin/init" ]' \
		--change "LABEL vros.airgap.key=$k" "$id" "$NODE_IMAGE" >/dev/null
	"$DOCKER" rm -f "$id" >/dev/null
	trap - EXIT
	"$DOCKER" rmi "$NODE_IMAGE-base" >/dev/null
	log "$NODE_IMAGE built"
}

# ---- stores: the dev stores of k8s/dev -------------------------------------------------------

build_stores() {
	bases
	local dir=$ROOT/k8s/dev/images k ctx
	k=$(key "image:$DEBIAN_IMAGE" "$dir/kafka")
	if ! fresh "$KAFKA_IMAGE" "$k"; then
		# The broker's jars come from Maven Central, as in make test (devstack/realinfra).
		ctx=$CACHE/ctx-kafka
		rm -rf "$ctx" && mkdir -p "$ctx" && cp -r "$dir/kafka/." "$ctx/"
		log "maven: Apache Kafka $KAFKA_VERSION jars"
		mvn -B -q -f "$dir/kafka/pom.xml" dependency:copy-dependencies \
			-DincludeScope=runtime -DoutputDirectory="$ctx/libs" >&2
		log "$KAFKA_IMAGE"
		docker_build -t "$KAFKA_IMAGE" --label "vros.airgap.key=$k" --build-arg "DEBIAN_IMAGE=$DEBIAN_IMAGE" "$ctx"
	fi
	k=$(key "image:$DEBIAN_IMAGE" "image:$GO_IMAGE" "$dir/ferretdb")
	if ! fresh "$FERRETDB_IMAGE" "$k"; then
		log "$FERRETDB_IMAGE"
		docker_build -t "$FERRETDB_IMAGE" --label "vros.airgap.key=$k" --build-arg "DEBIAN_IMAGE=$DEBIAN_IMAGE" \
			--build-arg "GO_IMAGE=$GO_IMAGE" "$dir/ferretdb"
	fi
}

case "${1:-}" in
env)
	cat <<EOF
AIRGAP_GO_IMAGE=$GO_IMAGE
AIRGAP_RUNTIME_IMAGE=$RUNTIME_IMAGE
AIRGAP_NODE_IMAGE=$NODE_IMAGE
AIRGAP_KAFKA_IMAGE=$KAFKA_IMAGE
AIRGAP_FERRETDB_IMAGE=$FERRETDB_IMAGE
EOF
	;;
# One command per line: bash ignores errexit inside functions called from an && list.
docker)
	pick_docker
	echo "$DOCKER"
	;;
bases)
	need_docker
	bases
	;;
node)
	need_docker
	build_node
	;;
stores)
	need_docker
	build_stores
	;;
all)
	need_docker
	build_node
	build_stores
	;;
*) die "usage: build.sh bases|node|stores|all|env|docker" ;;
esac
