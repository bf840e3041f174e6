# The image of every vros service. Build context: the repository root (a service module
# needs ../libs, and ../testkit's go.mod for its tests' requirement); SERVICE names the module, PORT the port it listens on:
#   docker build --build-arg SERVICE=booking-svc --build-arg PORT=8082 \
#     --build-arg VERSION=$(git describe --always) -t vros/booking-svc:dev .
# or `make images`, which builds them all.

# Base images: the upstream ones by default; `make e2e` passes the stand-ins k8s/airgap/build.sh
# builds without a registry. No "# syntax=" line: BuildKit would fetch that frontend.
ARG GO_IMAGE=golang:1.26
ARG RUNTIME_IMAGE=gcr.io/distroless/static-debian12:nonroot

FROM ${GO_IMAGE} AS build
ARG SERVICE
# Each module builds alone, as in CI: go.work is neither copied nor used.
ENV CGO_ENABLED=0 GOWORK=off GOFLAGS=-mod=readonly
WORKDIR /src/${SERVICE}

# Module download is its own layer: it is rebuilt only when a go.mod or go.sum changes.
COPY libs/go.mod libs/go.sum* /src/libs/
COPY testkit/go.mod testkit/go.sum* /src/testkit/
COPY ${SERVICE}/go.mod ${SERVICE}/go.sum* /src/${SERVICE}/
RUN go mod download

COPY libs/ /src/libs/
COPY ${SERVICE}/ /src/${SERVICE}/
ARG VERSION=dev
RUN --mount=type=cache,target=/root/.cache/go-build \
    go build -trimpath \
      -ldflags "-s -w -X github.com/vros/vros/libs/buildinfo.Version=${VERSION}" \
      -o /out/service ./cmd/${SERVICE}

# Static binary (tzdata embedded, CA certificates from the base), no shell, uid 65532.
FROM ${RUNTIME_IMAGE}
ARG PORT
COPY --from=build /out/service /service
USER 65532:65532
EXPOSE ${PORT}
ENTRYPOINT ["/service"]
