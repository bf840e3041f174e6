# mk/fuzz.mk: fuzzing. Included by the root Makefile; also usable alone: make -f mk/fuzz.mk <target>.
#
#   test-fuzz  every `go test -fuzz` target of the Go modules, FUZZTIME each (part of make test)
#   fuzz-api   schemathesis against a running vros with the OpenAPI documents (needs make run,
#              or starts bin/vros-dev itself; not part of make test)
#
# The fuzz targets' seed corpora (testdata/fuzz/<target>/) also run as plain tests in every
# `go test ./...`, so make test-go checks them without fuzzing.

GO            ?= go
FUZZ_MODULES  ?= $(or $(MODULES),libs testkit edge property-svc booking-svc catalog-svc integration-svc messaging-svc devstack systest)
# How long each target is fuzzed (a go test -fuzztime value: 5s, 30s, 1000x).
FUZZTIME      ?= 5s
# Fuzzing workers per target (go test -parallel); 2 fits this project's 2-core machines.
FUZZPARALLEL  ?= 2

.PHONY: test-fuzz fuzz-list fuzz-api fuzz-api-venv

# Every `func FuzzX(f *testing.F)` in a *_test.go file of FUZZ_MODULES, as <package dir>:<FuzzX>
# (found, not listed here, so that a new target is fuzzed without touching this file).
fuzz_targets = $(shell for m in $(FUZZ_MODULES); do \
	grep -rlE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' $$m 2>/dev/null | while read -r f; do \
		for n in $$(sed -nE 's/^func (Fuzz[A-Za-z0-9_]*)\(f \*testing\.F\).*/\1/p' $$f); do echo "$$(dirname $$f):$$n"; done; \
	done; done)

fuzz-list: ## list the go test -fuzz targets test-fuzz runs (<package dir>:<target>)
	@for t in $(fuzz_targets); do echo "$$t"; done

# Go fuzzes one target per `go test` call (mk/fuzz-one.sh: a bare deadline stop of Go 1.26's
# coordinator, golang/go#75804, is fuzzed again once). A target that fails leaves its input in
# <package>/testdata/fuzz/<target>/ (go test's own behaviour): look at it, fix the code, and
# keep the input as a regression seed.
test-fuzz: ## fuzz every Go fuzz target for FUZZTIME each (default 5s); fails on the first failure
	@set -e; n=0; start=$$(date +%s); for t in $(fuzz_targets); do \
		dir=$${t%%:*}; name=$${t##*:}; n=$$((n+1)); \
		echo "== fuzz $$name ($$dir) for $(FUZZTIME)"; \
		GO=$(GO) sh mk/fuzz-one.sh "$$dir" "$$name" $(FUZZTIME) $(FUZZPARALLEL); \
	done; echo "test-fuzz: $$n targets fuzzed for $(FUZZTIME) each in $$(( $$(date +%s) - start )) s"

# schemathesis, pinned, in a virtualenv under ./bin (ignored by git), installed by the target.
SCHEMATHESIS_VERSION := 4.32.5
FUZZAPI_VENV         := $(CURDIR)/bin/fuzzapi-venv
PYTHON3              ?= python3

fuzz-api-venv:
	@if $(FUZZAPI_VENV)/bin/schemathesis --version 2>/dev/null | grep -qF '$(SCHEMATHESIS_VERSION)'; then :; else \
		echo "installing schemathesis $(SCHEMATHESIS_VERSION) into $(FUZZAPI_VENV)"; \
		rm -rf $(FUZZAPI_VENV) && $(PYTHON3) -m venv $(FUZZAPI_VENV) && \
		$(FUZZAPI_VENV)/bin/pip install --quiet --disable-pip-version-check 'schemathesis==$(SCHEMATHESIS_VERSION)'; \
	fi

# Settings (environment or make variables): FUZZAPI_URL (http://127.0.0.1:8080), FUZZAPI_DOCS
# (booking-engine interface-a interface-b admin), FUZZAPI_MAX_EXAMPLES (20 per operation),
# FUZZAPI_PHASES, FUZZAPI_WORKERS, FUZZAPI_TIMEOUT (900 s per document), FUZZAPI_SEED,
# FUZZAPI_KEEP=1 (keep the accounts), FUZZAPI_ADMIN_TOKEN, FUZZAPI_ORIGIN (the booking
# engine's Origin, https://fuzz.example): systest/fuzzapi/run.py says what each does.
fuzz-api: fuzz-api-venv ## schemathesis against make run's edge with the four OpenAPI documents: no 5xx, answers as documented (starts bin/vros-dev when nothing answers)
	@GO=$(GO) $(FUZZAPI_VENV)/bin/python systest/fuzzapi/run.py
