# mk/observe.mk: traces. Included by the root Makefile; also usable alone: make -f mk/observe.mk <target>.
#
#   jaeger   builds bin/jaeger (Jaeger v2 all-in-one) from the module tools/jaeger/go.mod pins
#            (GOWORK=off), skipped when `go version -m` shows that version already there; the
#            trace test (systest/tracetest, in make test-go) runs it as its OTLP receiver
#   observe  make run with Jaeger beside it: every service sends its spans there; prints the
#            Jaeger address (UI and query API); Ctrl-C stops both. Its ports: the variables
#            VROS_DEV_JAEGER_UI_PORT (16686), VROS_DEV_JAEGER_OTLP_PORT (4318) and
#            VROS_DEV_JAEGER_GRPC_PORT (16685). `go run ./devstack/cmd/vros-trace` prints the
#            latest traces as span trees.
#
# Its configuration is tools/jaeger/all-in-one.yaml: in-memory storage, loopback only, ports
# from JAEGER_OTLP_HTTP, JAEGER_QUERY_HTTP and JAEGER_QUERY_GRPC (docs/tracing.md).

GO          ?= go
JAEGER      := $(CURDIR)/bin/jaeger
JAEGER_MOD  := tools/jaeger

.PHONY: jaeger observe

jaeger: ## build Jaeger (v2 all-in-one) from the module tools/jaeger/go.mod pins into ./bin (skipped when that version is already there)
	@want=$$(cd $(JAEGER_MOD) && GOWORK=off $(GO) list -m -f '{{.Version}}' github.com/jaegertracing/jaeger) || exit 1; \
	if $(GO) version -m $(JAEGER) 2>/dev/null | grep -qE "^\s+mod\s+github.com/jaegertracing/jaeger\s+$$want\s"; then \
		echo "jaeger $$want already in $(JAEGER)"; \
	else \
		echo "building jaeger $$want into $(JAEGER) (some minutes)"; \
		cd $(JAEGER_MOD) && GOWORK=off CGO_ENABLED=0 nice -n 15 $(GO) build -trimpath \
			-ldflags "-s -w -X github.com/jaegertracing/jaeger/internal/version.latestVersion=$$want" \
			-o $(JAEGER) github.com/jaegertracing/jaeger/cmd/jaeger; \
	fi

observe: jaeger ## make run with Jaeger beside it (every service's spans; its UI and query API on http://127.0.0.1:16686); Ctrl-C stops both
	cd devstack && $(GO) build -o $(CURDIR)/bin/vros-dev ./cmd/vros-dev
	VROS_DEV_JAEGER=$(JAEGER) VROS_DEV_JAEGER_CONFIG=$(CURDIR)/$(JAEGER_MOD)/all-in-one.yaml $(CURDIR)/bin/vros-dev
