# vros runbook. `make help` lists the targets.
GO       ?= go
MODULES  := libs edge property-svc booking-svc catalog-svc devstack
TIMEOUT  ?= 10m

.DEFAULT_GOAL := help
.PHONY: help run test test-go bench lint

help: ## list the targets
	@grep -hE '^[a-zA-Z0-9_-]+:.*?## ' $(MAKEFILE_LIST) | awk -F':.*?## ' '{printf "  %-14s %s\n", $$1, $$2}'

run: ## run all of vros on this machine (embedded MongoDB and Kafka, data in .data/) with a demo account
	cd devstack && $(GO) build -o $(CURDIR)/bin/vros-dev ./cmd/vros-dev
	$(CURDIR)/bin/vros-dev

test: test-go test-charts ## run every test (Go modules, then the Helm chart checks)

test-go: ## run the Go tests of every module
	@set -e; for m in $(MODULES); do echo "== $$m"; (cd $$m && $(GO) test -count=1 -timeout $(TIMEOUT) ./...); done

bench: ## benchmarks: edge vs service vs bare Fiber (docs/benchmarks.md)
	cd devstack && $(GO) test -run '^$$' -bench . -benchtime 3s -timeout 20m ./bench/

lint: ## gofmt and go vet
	@out=$$(gofmt -l $(MODULES) k8s); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	@set -e; for m in $(MODULES) k8s; do (cd $$m && $(GO) vet ./...); done

include mk/k8s.mk
