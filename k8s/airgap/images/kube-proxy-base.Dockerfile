# Base of the kube-proxy image of the air-gapped kind node (k8s/airgap/build.sh): kube-proxy
# programs the node's packet filter with iptables-restore and clears conntrack entries.
ARG DEBIAN_IMAGE=debian:bookworm
FROM ${DEBIAN_IMAGE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends iptables conntrack nftables kmod \
 && rm -rf /var/lib/apt/lists/*
