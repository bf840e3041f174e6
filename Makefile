# vros runbook. `make help` lists the targets.
GO       ?= go
# In the order the tests start (go test runs the packages of the earlier patterns first): the
# longest suites first, so that no long package starts last and runs alone.
MODULES  := systest booking-svc property-svc edge libs integration-svc catalog-svc messaging-svc devstack testkit
TIMEOUT  ?= 10m

# Real servers (devstack/realinfra, run by bin/vros-infra): PostgreSQL + FerretDB and Apache Kafka.
# The same binary runs the embedded servers a package's tests start in a child process
# (testkit/testinfra: `vros-infra embedded`, found through VROS_INFRA_BIN).
INFRA       := $(CURDIR)/bin/vros-infra
INFRA_STATE ?= .data/infra
# The packages test-real runs again: those whose tests take their servers from
# VROS_MONGO_URI / VROS_KAFKA_BROKERS (directly, through testinfra.TestDatabase, or through
# servers.FromEnv, both of testkit): the end-to-end suites, the stores, the outbox and the consumer.
REAL_MARKER := testinfra\.TestDatabase|testinfra\.RunWithDatabase|FromEnv\(\)|VROS_MONGO_URI|VROS_KAFKA_BROKERS
# The embedded run ignores servers a shell exported (make infra-up).
EMBEDDED_ENV := env -u VROS_MONGO_URI -u VROS_KAFKA_BROKERS -u VROS_INFRA_CONTROL

.DEFAULT_GOAL := help
.PHONY: help run test test-unit test-embedded-lane test-real-lane test-go test-go-pass test-real test-real-run test-real-pass vros-infra infra-up infra-down bench bench-scale lint staticcheck archcheck

help: ## list the targets
	@grep -hE '^[a-zA-Z0-9_-]+:.*?## ' $(MAKEFILE_LIST) | awk -F':.*?## ' '{printf "  %-14s %s\n", $$1, $$2}'

run: ## run all of vros on this machine (embedded MongoDB and Kafka, data in .data/) with a demo account
	cd devstack && $(GO) build -o $(CURDIR)/bin/vros-dev ./cmd/vros-dev
	$(CURDIR)/bin/vros-dev

# Every module's packages, for one `go test` over the workspace (go.work): the packages of all
# modules share the cores (-p) instead of waiting module by module.
PKGS      := $(MODULES:%=./%/...)
# The fast loop: every module but the system tests, and k8s's tools but not its chart checks.
UNIT_PKGS := $(filter-out ./systest/...,$(PKGS)) ./k8s/cmd/...

# Packages at once in test-unit: twice the cores, since its packages wait on their databases
# about as much as they compute (measured: 1.65 of 2 cores busy at -p 2).
UNIT_P    ?= $(shell echo $$(( $$(nproc) * 2 )))

test-unit: export VROS_INFRA_BIN := $(INFRA)
test-unit: vros-infra ## the fast loop (about 2 min warm): every module's tests but the system tests, short, on embedded servers; no browser, real server or built tool
	@$(EMBEDDED_ENV) $(GO) test -short -count=1 -p $(UNIT_P) -timeout $(TIMEOUT) $(UNIT_PKGS)

# make test runs two lanes at once, each line marked with its lane: the embedded lane (every
# Go test on embedded servers, then the fuzz targets and the chart checks) and the real lane
# (the real servers start, then the packages that use them run again). Both share the two
# cores; alone, the real lane would wait most of its time on one package at a time.
test: chromium poppler jaeger vros-infra helm promtool ## run every test: the embedded lane (Go tests, fuzz targets, Helm chart checks) and, at the same time, the real lane (PostgreSQL + FerretDB, Apache Kafka)
	@MAKE="$(MAKE)" bash mk/lanes.sh test-embedded-lane test-real-lane

test-embedded-lane: test-go-pass test-fuzz test-charts-pass
test-real-lane: test-real-run

# The reference page's browser check (edge/openapi) runs in Debian's chromium, installed here;
# the owner statements' PDFs are read with Debian's pdftotext (poppler), installed here; the
# trace test (systest/tracetest) in bin/jaeger, built here.
test-go: chromium poppler jaeger vros-infra ## run the Go tests of every module (embedded servers), packages of all modules in parallel
	@$(MAKE) --no-print-directory test-go-pass

test-go-pass: export VROS_REQUIRE_CHROMIUM := 1
test-go-pass: export VROS_REQUIRE_PDFTOTEXT := 1
test-go-pass: export VROS_REQUIRE_JAEGER := 1
test-go-pass: export VROS_INFRA_BIN := $(INFRA)
test-go-pass:
	@echo "== every module (embedded servers: FerretDB on SQLite, kfake)"
	@$(EMBEDDED_ENV) $(GO) test -count=1 -timeout $(TIMEOUT) $(PKGS)

test-real: vros-infra ## run the end-to-end, store, outbox and consumer tests again on real servers (PostgreSQL + FerretDB, Apache Kafka)
	@$(MAKE) --no-print-directory test-real-run

test-real-run: export VROS_INFRA_BIN := $(INFRA)
test-real-run:
	@$(INFRA) run -- $(MAKE) --no-print-directory test-real-pass

# The real lane runs the system tests last, so that its e2e suite does not meet the embedded
# lane's, which runs first: both suites' loads at once made the webhooks of one of them late.
REAL_ORDER := $(filter-out systest,$(MODULES)) systest

# Runs under `vros-infra run` (make test-real), which sets VROS_MONGO_URI, VROS_KAFKA_BROKERS
# and VROS_INFRA_CONTROL; one go test over every module's packages that use them, one package
# at a time, since their stacks share the servers' topics.
test-real-pass:
	@test -n "$$VROS_INFRA_CONTROL" || { echo "test-real-pass runs under make test-real"; exit 2; }
	@set -e; pkgs=; for m in $(REAL_ORDER); do \
		pkgs="$$pkgs $$(cd $$m && grep -rlE --include='*_test.go' '$(REAL_MARKER)' . | xargs -r -n1 dirname | sort -u | sed "s|^\.|./$$m|; s|$$|/|")"; done; \
		echo "== real servers: FerretDB on PostgreSQL at $$VROS_MONGO_URI, Apache Kafka at $$VROS_KAFKA_BROKERS:" $$pkgs; \
		$(GO) test -count=1 -p 1 -timeout $(TIMEOUT) $$pkgs

vros-infra:
	@cd devstack && $(GO) build -o $(INFRA) ./cmd/vros-infra

infra-up: vros-infra ## start PostgreSQL + FerretDB and Apache Kafka on loopback ports; prints the VROS_* variables to export
	@$(INFRA) up -state $(INFRA_STATE)

infra-down: vros-infra ## stop the servers of infra-up
	@$(INFRA) down -state $(INFRA_STATE)

# Both stacks in one run: on embedded servers, and on real ones that the benchmark's TestMain
# starts with devstack/realinfra (PostgreSQL, Java and Maven needed, as for test-real).
# The output is kept in bin/bench.txt and drawn as PNG charts in docs/bench/ (cmd/benchplot).
bench: ## benchmarks on embedded and real servers: reads and writes beside bare Fiber and the same bytes, open loop, freshness; charts in docs/bench (docs/benchmarks.md)
	@mkdir -p bin
	bash -o pipefail -c "cd systest && $(GO) test -run '^\$$' -bench . -benchtime 3s -timeout 50m ./bench/ | tee ../bin/bench.txt"
	cd systest && $(GO) run ./cmd/benchplot -o ../docs/bench < ../bin/bench.txt

# The scale run (BenchmarkScale): 100 accounts whose properties grow through SCALE (in all),
# ten bookings each over two years, every service its own process on the embedded servers.
# The output is kept in bin/bench-scale.txt and drawn in docs/bench/scale-*.png.
SCALE ?= 100,1000,10000
bench-scale: ## the scale run: 100 accounts, 100 → 10 000 properties, 100 000 bookings; memory per service, view rebuilds, p99 per path (docs/benchmarks.md "At scale")
	@mkdir -p bin
	bash -o pipefail -c "cd systest && VROS_BENCH_STORES=none VROS_BENCH_SCALE=$(SCALE) $(GO) test -run '^\$$' -bench BenchmarkScale -benchtime 1x -timeout 90m ./bench/ | tee ../bin/bench-scale.txt"
	cd systest && $(GO) run ./cmd/benchplot -o ../docs/bench < ../bin/bench-scale.txt

# staticcheck, pinned, with its default checks; `make lint` installs it into ./bin.
STATICCHECK_VERSION := v0.8.2
STATICCHECK         := $(CURDIR)/bin/staticcheck

lint: staticcheck archcheck ## gofmt, go vet and staticcheck over every module, and the architecture check
	@out=$$(gofmt -l $(MODULES) k8s tools/archcheck); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	@set -e; for m in $(MODULES) k8s; do (cd $$m && $(GO) vet ./... && $(STATICCHECK) ./...); done
	@cd k8s && $(STATICCHECK) -tags e2e ./e2e/...
	@cd tools && GOWORK=off $(STATICCHECK) ./archcheck

# The layering rule of every service, one check for all (tools/archcheck; the domains and the
# rule are in tools/archcheck/domains.txt). Its tests plant a banned import in a domain of
# each service, through a go list overlay, and expect the check to fail.
archcheck: ## check that no domain package imports Fiber, the MongoDB driver, kafka-go or a store (tools/archcheck/domains.txt)
	@cd tools && GOWORK=off $(GO) run ./archcheck -root ..
	@cd tools && GOWORK=off $(GO) test -count=1 ./archcheck

staticcheck: ## install the pinned staticcheck into ./bin (skipped when that version is already there)
	@if $(STATICCHECK) -version 2>/dev/null | grep -q '$(STATICCHECK_VERSION:v%=%)'; then :; else \
		echo "installing staticcheck $(STATICCHECK_VERSION) into $(CURDIR)/bin"; \
		GOBIN=$(CURDIR)/bin GOWORK=off nice -n 15 $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION); \
	fi

include mk/k8s.mk
include mk/reference.mk
include mk/fuzz.mk
include mk/observe.mk
