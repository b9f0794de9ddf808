# The two set-up commands: `make run` and `make test`. Both create .venv/ and install
# what is missing first, so they work from a fresh clone.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev

.PHONY: run test lint pylint weblint webtest install warmup clean bench web

# The web viewer's bundle, built from web/ with the versions web/package-lock.json pins
# (npm ci), into the folder roadsim.viewer serves (gitignored).
WEB := web
BUNDLE := src/roadsim/viewer/static/index.html
NODE_MODULES := $(WEB)/node_modules/.package-lock.json
WEB_SOURCES := $(shell find $(WEB)/src -type f 2>/dev/null) $(WEB)/index.html \
	$(WEB)/vite.config.ts $(WEB)/tsconfig.json

$(NODE_MODULES): $(WEB)/package.json $(WEB)/package-lock.json
	@node -e 'const [a,b]=process.versions.node.split(".").map(Number); if (a<18||(a===18&&b<18)) { console.error("roadsim: the web viewer needs Node.js 18.18 or newer, found " + process.version); process.exit(1) }'
	cd $(WEB) && npm ci --no-audit --no-fund
	touch $@

$(BUNDLE): $(NODE_MODULES) $(WEB_SOURCES)
	cd $(WEB) && npm run build

web: $(BUNDLE)

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# What roadsim needs to run; the tests' tools (the dev extra) only for `make test`.
# --no-compile: Python compiles a module's bytecode when it is first imported, so only what
# roadsim uses is compiled, not every module of every dependency (10 to 20 s saved here).
$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet --no-compile -e .
	touch $(STAMP)

# (one pip run installs both)
$(DEV_STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet --no-compile -e ".[dev]"
	touch $(STAMP) $(DEV_STAMP)

# Compiles the simulation's kernels once (numba, cached beside the sources), with progress.
warmup: $(STAMP)
	OPENBLAS_NUM_THREADS=1 $(BIN)/roadsim warmup

# pip and npm install side by side; then the kernels compile (in two processes where
# there are two cores) while Vite builds the viewer.
install:
	$(MAKE) --no-print-directory -j2 $(STAMP) $(NODE_MODULES)
	$(MAKE) --no-print-directory -j2 warmup web

run: install
	OPENBLAS_NUM_THREADS=1 $(BIN)/roadsim run

lint: pylint weblint

# Ruff and mypy, which need the dev extra.
pylint: $(DEV_STAMP)
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/mypy

# The viewer's TypeScript, type-checked.
weblint: $(NODE_MODULES)
	cd $(WEB) && npx tsc --noEmit

# The viewer's unit tests (Vitest, on a three.js scene without WebGL).
webtest: $(NODE_MODULES)
	cd $(WEB) && npx vitest run

# What needs Node.js only (the bundle, tsc, Vitest) runs beside pip's install, which waits
# on package indexes more than it computes; the kernels then compile (two processes)
# beside ruff and mypy; then the Python tests run on every core (pytest-xdist). The
# browser tests (tests/viewer) drive Debian's Chromium; ROADSIM_REQUIRE_BROWSER makes a
# missing browser a failure here instead of a skip.
test:
	$(MAKE) --no-print-directory -j2 $(DEV_STAMP) web weblint webtest
	$(MAKE) --no-print-directory -j2 warmup pylint
	OPENBLAS_NUM_THREADS=1 ROADSIM_REQUIRE_BROWSER=1 $(BIN)/pytest -q -n auto

bench: $(DEV_STAMP)
	$(BIN)/pip install --quiet -e ".[dev,bench]"
	OPENBLAS_NUM_THREADS=1 $(BIN)/python benchmarks/bench_map.py
	OPENBLAS_NUM_THREADS=1 $(BIN)/python benchmarks/bench_sim.py

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache .mypy_cache .ruff_cache \
		$(WEB)/node_modules src/roadsim/viewer/static
