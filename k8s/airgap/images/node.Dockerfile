# The kind node image, built without a registry by k8s/airgap/build.sh (`kind build
# node-image` cannot be used: it pulls). kind's own base image is Debian with containerd, runc
# and CNI plugins built from source; here they are Debian's packages. Build context:
#   files/    kind's base files (images/base/files of the sigs.k8s.io/kind module)
#   bin/      kubeadm, kubelet, kubectl, crictl built from their Go modules
#   10-bridge.conflist
ARG DEBIAN_IMAGE=debian:bookworm
FROM ${DEBIAN_IMAGE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      systemd containerd runc containernetworking-plugins \
      conntrack iptables nftables iproute2 ethtool util-linux mount kmod \
      libseccomp2 pigz bash ca-certificates procps jq socat \
 && rm -rf /var/lib/apt/lists/*
COPY files/ /
COPY bin/ /usr/bin/
# kindnetd is not obtainable without a registry: one node gets the bridge plugin (which does
# not enforce NetworkPolicy; docs/kubernetes.md).
COPY 10-bridge.conflist /etc/cni/net.d/10-bridge.conflist
ARG KUBE_VERSION
ARG PAUSE_IMAGE
RUN set -eux; \
    # kind's unit files expect containerd in /usr/local/bin and the CNI plugins in /opt/cni/bin.
    ln -s /usr/bin/containerd /usr/local/bin/containerd; \
    mkdir -p /opt/cni; ln -s /usr/lib/cni /opt/cni/bin; \
    ctr oci spec \
      | jq '.hooks.createContainer[.hooks.createContainer| length] |= . + {"path": "/kind/bin/mount-product-files.sh"}' \
      | jq 'del(.process.rlimits)' > /etc/containerd/cri-base.json; \
    # Our machines' sandbox cannot raise oom_score_adj below its own: let containerd clamp it.
    sed -i -e 's/restrict_oom_score_adj = false/restrict_oom_score_adj = true/' \
           -e "s#sandbox_image = .*#sandbox_image = \"${PAUSE_IMAGE}\"#" /etc/containerd/config.toml; \
    find /lib/systemd/system/sysinit.target.wants/ -name systemd-tmpfiles-setup.service -delete; \
    rm -f /lib/systemd/system/multi-user.target.wants/* /etc/systemd/system/*.wants/* \
          /lib/systemd/system/local-fs.target.wants/* /lib/systemd/system/sockets.target.wants/*udev* \
          /lib/systemd/system/sockets.target.wants/*initctl* /lib/systemd/system/basic.target.wants/*; \
    echo "ReadKMsg=no" >> /etc/systemd/journald.conf; \
    ln -sf /usr/lib/systemd/systemd /sbin/init; \
    systemctl enable kubelet.service containerd.service undo-mount-hacks.service; \
    systemctl mask systemd-binfmt.service; \
    mkdir -p /etc/kubernetes/manifests /kind; \
    printf '%s' "${KUBE_VERSION}" > /kind/version; \
    kubelet --version; kubeadm version -o short; containerd --version; runc --version
ENV container=docker
STOPSIGNAL SIGRTMIN+3
ENTRYPOINT ["/usr/local/bin/entrypoint", "/sbin/init"]
