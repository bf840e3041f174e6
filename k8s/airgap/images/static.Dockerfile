# Stand-in for gcr.io/distroless/static-debian12:nonroot (the runtime stage of our
# Dockerfiles), built without a registry by k8s/airgap/build.sh: the same few files taken from
# Debian (CA certificates, time zones, passwd/group with nonroot 65532, /tmp), no shell.
ARG DEBIAN_IMAGE=debian:bookworm
FROM ${DEBIAN_IMAGE} AS files
RUN set -eu; \
    mkdir -p /out/etc/ssl/certs /out/usr/share /out/tmp /out/home/nonroot /out/root; \
    cp /etc/ssl/certs/ca-certificates.crt /out/etc/ssl/certs/; \
    cp -a /usr/share/zoneinfo /out/usr/share/; \
    cp /etc/nsswitch.conf /out/etc/; \
    printf '%s\n' 'root:x:0:0:root:/root:/sbin/nologin' \
        'nobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin' \
        'nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin' > /out/etc/passwd; \
    printf '%s\n' 'root:x:0:' 'nobody:x:65534:' 'nonroot:x:65532:' > /out/etc/group; \
    chmod 1777 /out/tmp; chmod 700 /out/root; chown 65532:65532 /out/home/nonroot

FROM scratch
COPY --from=files /out/ /
ENV SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
USER 65532:65532
WORKDIR /home/nonroot
