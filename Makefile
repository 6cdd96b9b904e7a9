# aqmlab — the two commands: `make run` (main job) and `make test` (every test).
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.deps-stamp
# One release build of the extension serves `make run`, `make test` and `make bench`.
RUST_SOURCES := $(shell find crates -name '*.rs' -o -name Cargo.toml) Cargo.toml Cargo.lock

.PHONY: run test lint test-rust test-python bench bench-instr bench-scale bench-pgo build-pgo fuzz install clean

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

# Opt-in profile-guided build of the extension (docs/benchmarks.md): an instrumented build
# runs benches/scenarios/*.toml, then the extension is rebuilt with that profile and
# installed into $(VENV) (`make install` goes back to the plain build after a source change).
# The profile is made fresh each time by this machine's rustc, so it always matches its LLVM;
# it needs rustc's own llvm-profdata (`rustup component add llvm-tools`). Own target dirs:
# the plain build's cache stays warm.
PGO := $(abspath target/pgo)
LLVM_PROFDATA = $(firstword $(wildcard $(shell rustc --print sysroot)/lib/rustlib/*/bin/llvm-profdata))
PGO_DEVELOP = VIRTUAL_ENV=$(abspath $(VENV)) $(VENV)/bin/maturin develop --release -q --features test-hooks

build-pgo: $(STAMP)
	@test -n "$(LLVM_PROFDATA)" || { echo "make build-pgo: no llvm-profdata in $$(rustc --print sysroot); run: rustup component add llvm-tools" >&2; exit 1; }
	rm -rf $(PGO)/raw $(VENV)/.build-stamp
	RUSTFLAGS="-Cprofile-generate=$(PGO)/raw" CARGO_TARGET_DIR=$(PGO)/gen $(PGO_DEVELOP)
	for f in benches/scenarios/*.toml; do $(VENV)/bin/aqmlab run $$f --json > /dev/null || exit 1; done
	$(LLVM_PROFDATA) merge -o $(PGO)/merged.profdata $(PGO)/raw
	RUSTFLAGS="-Cprofile-use=$(PGO)/merged.profdata" CARGO_TARGET_DIR=$(PGO)/use $(PGO_DEVELOP)
	touch $(VENV)/.build-stamp

# bench-instr on the profile-guided build.
bench-pgo: build-pgo
	$(PY) benches/bench_instr.py

clean:
	rm -rf target $(VENV) out
