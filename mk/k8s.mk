# mk/k8s.mk: images, Helm chart checks and the local kind cluster.
# Included by the root Makefile; also usable alone: make -f mk/k8s.mk <target>.
#
# Offline (run by `make test`):  helm, promtool, test-charts
# Need Docker (and kubectl):     images, airgap, kind-up, kind-load, kind-deploy, e2e, kind-down
#
# The kind targets run without any container registry: `airgap` builds the node image, the
# stand-in base images and the dev stores from Debian packages and Go modules
# (k8s/airgap/build.sh), and the service images build on those stand-ins. With a registry,
# `make images` alone builds on the upstream bases, and KIND_CONFIG=k8s/kind-config.yaml uses
# kindest/node.

BIN            := $(CURDIR)/bin
HELM_VERSION   ?= v3.22.0
# Kubernetes minor version Helm assumes when no cluster is reachable (helm template/lint).
# Matches the client-go that HELM_VERSION is built with, as Helm's own release Makefile does.
HELM_K8S_MINOR ?= 37
KIND_VERSION   ?= v0.33.0
# The pinned tools; `make HELM=/path/to/helm test-charts` uses another one.
HELM           := $(BIN)/helm
KIND           := $(BIN)/kind
KUBECTL        ?= kubectl
# promtool, built from the Prometheus module that tools/go.mod pins (make promtool); it checks
# and unit-tests the chart's alert rules. `make PROMTOOL=/path/to/promtool test-charts` uses
# another one.
PROMTOOL       := $(BIN)/promtool

ifeq ($(origin VERSION),undefined)
VERSION        := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
endif
IMAGE_REPO     ?= vros
IMAGE_TAG      ?= $(VERSION)

KIND_CLUSTER   ?= vros
KIND_CONFIG    ?= k8s/kind-config-airgap.yaml
K8S_NAMESPACE  ?= vros
HELM_RELEASE   ?= vros
CHART          := charts/vros
KUBE_CTX       := --context kind-$(KIND_CLUSTER)
E2E_TIMEOUT    ?= 45m

AIRGAP         := k8s/airgap/build.sh
# Image names the air-gapped build gives (build.sh env), read only when a target needs them.
airgap_env      = $(shell $(AIRGAP) env)
airgap_var      = $(patsubst $(1)=%,%,$(filter $(1)=%,$(airgap_env)))
# Base images of our Dockerfiles: empty means the upstream ones the Dockerfiles name.
GO_IMAGE       ?=
RUNTIME_IMAGE  ?=
# A Docker CLI with BuildKit (build.sh picks Debian's client when the first one lacks buildx).
DOCKER         ?= $(shell $(AIRGAP) docker)

SERVICES       := edge property-svc booking-svc catalog-svc integration-svc messaging-svc
# The port each listens on: its image's EXPOSE (the chart sets the ports it runs with).
SERVICE_PORTS  := edge:8080 property-svc:8081 booking-svc:8082 catalog-svc:8083 integration-svc:8084 messaging-svc:8085
# A service is built and deployed once its module exists; the others are switched off in the chart.
BUILT_SERVICES := $(foreach s,$(SERVICES),$(if $(wildcard $(s)/go.mod),$(s)))
ABSENT_SERVICES:= $(filter-out $(BUILT_SERVICES),$(SERVICES))
# property-svc -> propertySvc, the service's key in the chart's values.
chart_key       = $(subst -svc,Svc,$(1))

.PHONY: helm promtool kind test-charts test-charts-pass images docker-up airgap airgap-images kind-up kind-load kind-deploy kind-admin-token e2e kind-down

helm: ## install the pinned Helm into ./bin (skipped when that version is already there)
	@if [ "$$($(HELM) version --template '{{.Version}}' 2>/dev/null)" = "$(HELM_VERSION)" ]; then \
		echo "helm $(HELM_VERSION) already in $(HELM)"; \
	else \
		echo "installing helm $(HELM_VERSION) into $(BIN)"; \
		GOBIN=$(BIN) GOWORK=off CGO_ENABLED=0 nice -n 15 go install \
			-ldflags "-s -w \
				-X helm.sh/helm/v3/internal/version.version=$(HELM_VERSION) \
				-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 \
				-X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=$(HELM_K8S_MINOR) \
				-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 \
				-X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=$(HELM_K8S_MINOR)" \
			helm.sh/helm/v3/cmd/helm@$(HELM_VERSION); \
	fi

promtool: ## build promtool from the Prometheus module pinned in tools/go.mod into ./bin (skipped when that version is already there)
	@want=$$(cd tools && GOWORK=off go list -m -f '{{.Version}}' github.com/prometheus/prometheus) || exit 1; \
	if go version -m $(BIN)/promtool 2>/dev/null | grep -qE "^\s+(mod|dep)\s+github.com/prometheus/prometheus\s+$$want\s"; then \
		echo "promtool of prometheus $$want already in $(BIN)/promtool"; \
	else \
		echo "building promtool of prometheus $$want into $(BIN)"; \
		cd tools && GOWORK=off CGO_ENABLED=0 nice -n 15 go build -trimpath -ldflags "-s -w" \
			-o $(BIN)/promtool github.com/prometheus/prometheus/cmd/promtool; \
	fi

kind: ## install the pinned kind CLI into ./bin (the e2e suite uses the same version as a library)
	@if [ "$$($(KIND) version 2>/dev/null | cut -d' ' -f2)" = "$(KIND_VERSION)" ]; then \
		echo "kind $(KIND_VERSION) already in $(KIND)"; \
	else \
		GOBIN=$(BIN) GOWORK=off CGO_ENABLED=0 nice -n 15 go install sigs.k8s.io/kind@$(KIND_VERSION); \
	fi

test-charts: helm promtool ## offline chart checks (promtool check/test of the alert rules, helm lint/template, strict decoding, policy assertions), k8s/cmd tests, vet of the e2e suite
	@$(MAKE) --no-print-directory -f $(firstword $(MAKEFILE_LIST)) test-charts-pass

# test-charts without installing the tools (make test installs them before its lanes start).
test-charts-pass:
	$(PROMTOOL) check rules $(CHART)/rules/vros-rules.yaml
	$(PROMTOOL) test rules $(CHART)/rules/vros-rules.test.yaml
	cd k8s && HELM=$(HELM) go test -count=1 ./chartcheck/... ./cmd/...
	cd k8s && go vet -tags e2e ./e2e/...

images: ## docker build every service that has a module (one Dockerfile), and the helm test image (context = repo root)
	@test -n "$(BUILT_SERVICES)" || { echo "no service module found"; exit 1; }
	@for s in $(BUILT_SERVICES) chart-test; do \
		df=Dockerfile; [ $$s = chart-test ] && df=k8s/cmd/vros-chart-test/Dockerfile; \
		port=$$(echo "$(SERVICE_PORTS)" | tr ' ' '\n' | sed -n "s/^$$s://p"); \
		echo "== $(IMAGE_REPO)/$$s:$(IMAGE_TAG)"; \
		DOCKER_BUILDKIT=1 $(DOCKER) build -f $$df --build-arg VERSION=$(VERSION) \
			--build-arg SERVICE=$$s --build-arg PORT=$$port \
			$(if $(GO_IMAGE),--build-arg GO_IMAGE=$(GO_IMAGE)) \
			$(if $(RUNTIME_IMAGE),--build-arg RUNTIME_IMAGE=$(RUNTIME_IMAGE)) \
			-t $(IMAGE_REPO)/$$s:$(IMAGE_TAG) . || exit 1; \
	done

docker-up: ## make sure a Docker engine answers (starts Debian's dockerd when none does)
	@k8s/airgap/dockerd.sh

airgap: docker-up ## build, with no registry, the kind node image, the base stand-ins and the dev stores (cached)
	$(AIRGAP) all

airgap-images: airgap ## the service and helm test images on the stand-in bases
	$(MAKE) --no-print-directory images GO_IMAGE=$(call airgap_var,AIRGAP_GO_IMAGE) \
		RUNTIME_IMAGE=$(call airgap_var,AIRGAP_RUNTIME_IMAGE) VERSION=$(VERSION) IMAGE_TAG=$(IMAGE_TAG)

kind-up: kind $(if $(findstring airgap,$(KIND_CONFIG)),airgap) ## create the local kind cluster (edge on http://127.0.0.1:30080 after kind-deploy)
	@if $(KIND) get clusters 2>/dev/null | grep -qx '$(KIND_CLUSTER)'; then \
		echo "kind cluster $(KIND_CLUSTER) already exists"; \
	else \
		$(KIND) create cluster --name $(KIND_CLUSTER) --config $(KIND_CONFIG) --wait 120s; \
	fi

kind-load: kind ## load the service, helm test and dev store images into the kind cluster
	$(KIND) load docker-image --name $(KIND_CLUSTER) $(foreach s,$(BUILT_SERVICES) chart-test,$(IMAGE_REPO)/$(s):$(IMAGE_TAG)) \
		$(call airgap_var,AIRGAP_KAFKA_IMAGE) $(call airgap_var,AIRGAP_FERRETDB_IMAGE)

kind-deploy: helm ## dev MongoDB + Kafka, a generated Secret, then the chart with values-kind.yaml
	$(KUBECTL) $(KUBE_CTX) create namespace $(K8S_NAMESPACE) --dry-run=client -o yaml | $(KUBECTL) $(KUBE_CTX) apply -f -
	$(KUBECTL) $(KUBE_CTX) -n $(K8S_NAMESPACE) apply -f k8s/dev/
	$(KUBECTL) $(KUBE_CTX) -n $(K8S_NAMESPACE) rollout status statefulset/mongodb --timeout=5m
	$(KUBECTL) $(KUBE_CTX) -n $(K8S_NAMESPACE) rollout status statefulset/kafka --timeout=5m
	@# One internal key per calling process (docs/internal-auth.md); a Secret made before the
	@# keys were split gets them added, keeping its admin token and encryption key, and one
	@# made before messaging-svc gets its key added.
	@if ! $(KUBECTL) $(KUBE_CTX) -n $(K8S_NAMESPACE) get secret vros-secrets >/dev/null 2>&1; then \
		$(KUBECTL) $(KUBE_CTX) -n $(K8S_NAMESPACE) create secret generic vros-secrets \
			--from-literal=admin-token="$$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')" \
			--from-literal=internal-key-edge="$$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')" \
			--from-literal=internal-key-booking="$$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')" \
			--from-literal=internal-key-integration="$$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')" \
			--from-literal=internal-key-messaging="$$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')" \
			--from-literal=encryption-key="$$(head -c 32 /dev/urandom | base64 | tr -d '\n')"; \
	elif [ -z "$$($(KUBECTL) $(KUBE_CTX) -n $(K8S_NAMESPACE) get secret vros-secrets -o jsonpath='{.data.internal-key-edge}')" ]; then \
		$(KUBECTL) $(KUBE_CTX) -n $(K8S_NAMESPACE) patch secret vros-secrets --type merge -p \
			"{\"stringData\":{\"internal-key-edge\":\"$$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')\",\"internal-key-booking\":\"$$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')\",\"internal-key-integration\":\"$$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')\"}}"; \
	fi
	@if [ -z "$$($(KUBECTL) $(KUBE_CTX) -n $(K8S_NAMESPACE) get secret vros-secrets -o jsonpath='{.data.internal-key-messaging}')" ]; then \
		$(KUBECTL) $(KUBE_CTX) -n $(K8S_NAMESPACE) patch secret vros-secrets --type merge -p \
			"{\"stringData\":{\"internal-key-messaging\":\"$$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')\"}}"; \
	fi
	$(HELM) upgrade --install $(HELM_RELEASE) $(CHART) --kube-context kind-$(KIND_CLUSTER) \
		--namespace $(K8S_NAMESPACE) -f $(CHART)/values-kind.yaml \
		--set image.registry= --set image.tag=$(IMAGE_TAG) \
		$(foreach s,$(BUILT_SERVICES),--set $(call chart_key,$(s)).image.repository=$(IMAGE_REPO)/$(s)) \
		--set tests.image.repository=$(IMAGE_REPO)/chart-test \
		$(foreach s,$(ABSENT_SERVICES),--set $(call chart_key,$(s)).enabled=false) \
		--wait --timeout 10m
	$(HELM) test $(HELM_RELEASE) --kube-context kind-$(KIND_CLUSTER) --namespace $(K8S_NAMESPACE) --logs
	@echo "edge: http://127.0.0.1:30080   admin token: make kind-admin-token"

kind-admin-token: ## print the admin token of the kind deployment
	@$(KUBECTL) $(KUBE_CTX) -n $(K8S_NAMESPACE) get secret vros-secrets -o jsonpath='{.data.admin-token}' | base64 -d; echo

e2e: airgap-images helm ## air-gapped: build everything, a throw-away kind cluster: deploy, test through edge, delete
	cd k8s && VROS_E2E_HELM=$(HELM) VROS_E2E_IMAGE_REPO=$(IMAGE_REPO) VROS_E2E_IMAGE_TAG=$(IMAGE_TAG) \
		VROS_E2E_KIND_CONFIG=$(CURDIR)/$(KIND_CONFIG) \
		VROS_E2E_STORE_IMAGES="$(call airgap_var,AIRGAP_KAFKA_IMAGE) $(call airgap_var,AIRGAP_FERRETDB_IMAGE)" \
		go test -tags e2e -count=1 -timeout $(E2E_TIMEOUT) -v ./e2e/...

kind-down: kind ## delete the local cluster
	$(KIND) delete cluster --name $(KIND_CLUSTER)
