# One Kubernetes component (kube-apiserver, etcd, coredns, pause, ...) for the air-gapped kind
# node image. k8s/airgap/build.sh writes @BIN@, the binary's name: it sits on PATH at
# /usr/local/bin, where kubeadm's manifests call it, and is the entrypoint (CoreDNS, pause).
ARG BASE=scratch
FROM ${BASE}
COPY @BIN@ /usr/local/bin/@BIN@
# kubeadm runs the control plane and CoreDNS as root with only the capabilities it names
# (CoreDNS: NET_BIND_SERVICE, for port 53).
USER 0:0
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
ENTRYPOINT ["/usr/local/bin/@BIN@"]
