# mk/reference.mk: the browser assets edge embeds (the API reference page's renderer, the
# management panel's htmx), the browser their tests run in, and the panel's screenshots.
# Included by the root Makefile; also usable alone: make -f mk/reference.mk <target>.
#
# reference-assets  re-vendors swagger-ui-dist (pinned in edge/openapi/web/package.json and
#                   package-lock.json) into edge/openapi/reference/: run it after changing
#                   the pin, and commit the copies (go build needs no npm; docs/openapi.md).
# chromium          installs Debian's chromium when /usr/bin/chromium is absent: the
#                   browser edge/openapi's TestReferencePageListsEveryOperation opens.
# poppler           installs Debian's poppler-utils when pdftotext is absent: the owner
#                   statement tests (booking-svc/internal/statement, systest) read their
#                   PDFs' text with it.

REFERENCE_WEB    := edge/openapi/web
REFERENCE_DIR    := edge/openapi/reference
REFERENCE_DIST   := $(REFERENCE_WEB)/node_modules/swagger-ui-dist
# The only files of the package the page loads, and their licences (Apache-2.0: LICENSE and
# NOTICE; the bundled libraries' notices in *.LICENSE.txt).
REFERENCE_FILES  := swagger-ui-bundle.js swagger-ui-standalone-preset.js swagger-ui.css \
                    favicon-16x16.png favicon-32x32.png LICENSE NOTICE \
                    swagger-ui-bundle.js.LICENSE.txt swagger-ui-standalone-preset.js.LICENSE.txt
NPM              ?= npm
GO               ?= go
CHROMIUM         ?= /usr/bin/chromium
SUDO             := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: reference-assets chromium poppler

reference-assets: ## re-vendor the reference page's renderer (swagger-ui-dist, pinned in edge/openapi/web) into edge/openapi/reference
	cd $(REFERENCE_WEB) && $(NPM) ci --no-audit --no-fund --ignore-scripts
	@set -e; for f in $(REFERENCE_FILES); do cp $(REFERENCE_DIST)/$$f $(REFERENCE_DIR)/$$f; done
	@v=$$(node -p "require('./$(REFERENCE_DIST)/package.json').version"); echo "$$v" > $(REFERENCE_DIR)/VERSION; \
		echo "vendored swagger-ui-dist $$v into $(REFERENCE_DIR): $(REFERENCE_FILES)"

chromium: ## install Debian's chromium (the reference page's browser check) when /usr/bin/chromium is absent
	@if [ -x $(CHROMIUM) ]; then :; else \
		echo "installing Debian's chromium"; \
		export DEBIAN_FRONTEND=noninteractive; \
		if ! apt-cache show chromium >/dev/null 2>&1; then $(SUDO) apt-get update; fi; \
		$(SUDO) apt-get install -y --no-install-recommends chromium || \
			{ $(SUDO) apt-get update && $(SUDO) apt-get install -y --no-install-recommends chromium; }; \
	fi

poppler: ## install Debian's poppler-utils (pdftotext reads the owner statements' PDFs in the tests) when pdftotext is absent
	@if command -v pdftotext >/dev/null 2>&1; then :; else \
		echo "installing Debian's poppler-utils"; \
		export DEBIAN_FRONTEND=noninteractive; \
		if ! apt-cache show poppler-utils >/dev/null 2>&1; then $(SUDO) apt-get update; fi; \
		$(SUDO) apt-get install -y --no-install-recommends poppler-utils || \
			{ $(SUDO) apt-get update && $(SUDO) apt-get install -y --no-install-recommends poppler-utils; }; \
	fi

# panel-assets  re-vendors htmx (pinned in edge/internal/panel/web/package.json and
#               package-lock.json) into edge/internal/panel/static/, which edge embeds: run
#               it after changing the pin, and commit the copies (docs/panel.md).
PANEL_WEB  := edge/internal/panel/web
PANEL_DIR  := edge/internal/panel/static
PANEL_DIST := $(PANEL_WEB)/node_modules/htmx.org

.PHONY: panel-assets
panel-assets: ## re-vendor the panel's htmx (pinned in edge/internal/panel/web) into edge/internal/panel/static
	cd $(PANEL_WEB) && $(NPM) ci --no-audit --no-fund --ignore-scripts
	cp $(PANEL_DIST)/dist/htmx.min.js $(PANEL_DIR)/htmx.min.js
	cp $(PANEL_DIST)/LICENSE $(PANEL_DIR)/htmx.LICENSE
	@v=$$(node -p "require('./$(PANEL_DIST)/package.json').version"); echo "$$v" > $(PANEL_DIR)/htmx.VERSION; \
		echo "vendored htmx.org $$v into $(PANEL_DIR)"

# panel-screenshots  runs the panel's browser test (systest/paneltest) and keeps a
#                    screenshot of each page in docs/panel/ (linked from the README).
.PHONY: panel-screenshots
panel-screenshots: chromium ## photograph every page of the management panel into docs/panel (the browser test of systest/paneltest)
	cd systest && VROS_REQUIRE_CHROMIUM=1 VROS_PANEL_SCREENSHOTS=$(CURDIR)/docs/panel $(GO) test -count=1 -run TestOwnerWorksInTheBrowser ./paneltest/
