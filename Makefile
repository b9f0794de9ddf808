# The two set-up commands: `make run` and `make test`. Both create .venv/ and install
# what is missing first, so they work from a fresh clone.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint install clean bench

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $(STAMP)

# Compiles the simulation's kernels once (numba, cached beside the sources), with progress.
install: $(STAMP)
	OPENBLAS_NUM_THREADS=1 $(BIN)/roadsim warmup

run: install
	OPENBLAS_NUM_THREADS=1 $(BIN)/roadsim run

test: $(STAMP)
	$(BIN)/ruff check src tests benchmarks examples
	$(BIN)/mypy
	OPENBLAS_NUM_THREADS=1 $(BIN)/pytest -q

bench: $(STAMP)
	$(BIN)/pip install --quiet -e ".[dev,bench]"
	OPENBLAS_NUM_THREADS=1 $(BIN)/python benchmarks/bench_map.py
	OPENBLAS_NUM_THREADS=1 $(BIN)/python benchmarks/bench_sim.py

clean:
	rm -rf $(VENV) build src/*.egg-info .pytest_cache .mypy_cache .ruff_cache
