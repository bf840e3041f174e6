# Stand-in for the golang image (the build stage of our Dockerfiles), built without a
# registry by k8s/airgap/build.sh: Debian plus the Go toolchain module from the Go proxy.
# Build context: a folder holding the toolchain as go/.
ARG DEBIAN_IMAGE=debian:bookworm
FROM ${DEBIAN_IMAGE}
ARG GO_VERSION
ENV GOLANG_VERSION=${GO_VERSION} GOPATH=/go GOTOOLCHAIN=local \
    PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
COPY go/ /usr/local/go/
RUN mkdir -p /go/bin /go/src && go version
WORKDIR /go
