# aqmlab — the two commands: `make run` (main job) and `make test` (every test).
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.deps-stamp
# One release build of the extension serves `make run`, `make test` and `make bench`.
RUST_SOURCES := $(shell find crates -name '*.rs' -o -name Cargo.toml) Cargo.toml Cargo.lock

.PHONY: run test lint test-rust test-python bench bench-instr bench-scale fuzz install clean

$(PY):
	python3 -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q "maturin>=1.16,<2"
	$(PIP) install -q $$($(PY) -c 'import tomllib;d=tomllib.load(open("pyproject.toml","rb"))["project"];print(" ".join(repr(x) for x in d["dependencies"]+d["optional-dependencies"]["dev"]))' | tr -d "'")
	touch $(STAMP)

$(VENV)/.build-stamp: $(STAMP) $(RUST_SOURCES)
	VIRTUAL_ENV=$(abspath $(VENV)) $(VENV)/bin/maturin develop --release -q --features test-hooks
	touch $@

install: $(VENV)/.build-stamp

# The main job: every built-in study in quick mode (fewer seeds; finished runs are
# reused) → out/index.html linking out/STUDY/report.html, out/STUDY/figures/*.png|svg|pdf.
run: install
	$(VENV)/bin/aqmlab study run-all --quick --out out

test: lint test-rust test-python

# The habits gates, fast and first: rustfmt and clippy on both crates (every target, warnings
# are errors; clippy only checks, so it is quick), ruff on the Python package and tests,
# mypy --strict on the package (configured in pyproject.toml). tests/install-rust-tools.sh
# adds rustfmt/clippy with rustup when missing; one that still is missing is skipped loudly.
lint: $(STAMP)
	@set -e; missing="$$(bash tests/install-rust-tools.sh)"; \
	if [[ " $$missing " == *" rustfmt "* ]]; then echo "make lint: SKIPPED cargo fmt --check (no rustfmt)" >&2; \
	else cargo fmt --all --check; fi; \
	if [[ " $$missing " == *" clippy "* ]]; then echo "make lint: SKIPPED cargo clippy (no clippy)" >&2; \
	else cargo clippy --workspace --all-targets -q -- -D warnings; fi
	$(VENV)/bin/ruff check python tests
	$(VENV)/bin/mypy

test-rust:
	cargo test -p aqmlab-core -q

# tests/install-tools.sh installs tshark, chromium and ns2 (ns-2.35) when missing (apt-get, as root);
# only tools it could not install are skipped by the tests that need them, loudly.
test-python: install
	AQMLAB_UNINSTALLABLE="$$(bash tests/install-tools.sh)" $(PY) -m pytest tests

# A longer fuzz run than the short set `make test` runs (tests/fuzz/fuzz.py --help).
fuzz: install
	$(PY) tests/fuzz/fuzz.py --cases 1500 --jobs 2 --json out/fuzz.json

bench: install
	cargo bench -p aqmlab-core
	$(VENV)/bin/aqmlab bench
	$(PY) benches/bench_scale.py

# CPU time and peak memory of the scale scenarios (benches/scenarios/scale/): an hour of
# 1 Gbit/s with 1000 CUBIC flows, 10 Gbit/s with 10,000 flows (minutes of CPU).
bench-scale: install
	$(PY) benches/bench_scale.py

# Instructions per event and per packet of each bench scenario (cachegrind; needs valgrind).
bench-instr: install
	$(PY) benches/bench_instr.py

clean:
	rm -rf target $(VENV) out
