# wificc: `make demo` sets everything up and runs the main job; `make test` runs every test.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
STAMP  := $(VENV)/.deps-stamp
OUT    ?= results/demo

.PHONY: all setup build build-plain wheel bpf demo test test-rust test-python fuzz lint bench clean

all: build

$(VENV)/bin/python:
	./scripts/setup-debian.sh
	command -v cargo >/dev/null || { echo "cargo not found: install Rust (rustup) first" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

$(STAMP): $(VENV)/bin/python pyproject.toml
	$(PIP) install -q "maturin>=1.5,<2" numpy "pandas>=2.1" "pyarrow>=14" "scipy>=1.11" "matplotlib>=3.8" \
	    "typer>=0.12" "rich>=13" "dask[distributed]>=2024.1" "tomli-w>=1.0" "pytest>=8" "ruff>=0.5" "hypothesis>=6" "flent>=2.3,<3"
	touch $(STAMP)

setup: $(STAMP)

# Build the Rust extension in release mode and install the package in the venv (editable).
# With PGO=1 (the default for build, demo and bench) the simulator is compiled with a profile of
# its own training run (scripts/pgo.sh; about 15% faster, the same results); `make test` builds
# without it (PGO=0), since tests need the results, not the speed. The profile is remade when
# the simulator's sources change.
PGO ?= 1
PROFILE := target/pgo/wificc.profdata
CORE_SOURCES := $(shell find crates/wificc-core/src -name '*.rs') Cargo.lock \
    crates/wificc-core/examples/pgo_train.rs crates/wificc-core/tests/golden/scenarios.rs
$(PROFILE): $(CORE_SOURCES)
	./scripts/pgo.sh

build: $(STAMP)
ifeq ($(PGO),1)
	@if $(MAKE) -s $(PROFILE); then \
	    echo "build: profile-guided ($(PROFILE))"; \
	    RUSTFLAGS="-Cprofile-use=$(abspath $(PROFILE))" $(MAKE) -s build-plain; \
	else \
	    echo "build: without PGO (scripts/pgo.sh failed)"; $(MAKE) -s build-plain; \
	fi
else
	$(MAKE) -s build-plain
endif

build-plain: $(STAMP)
	$(VENV)/bin/maturin develop --release -q
	cargo build --release -q -p wificc-emu

# The wheel `pip install` would install (dist/), with the BPF sources as package data; the
# package's own test (tests/python/test_package.py) installs it into a fresh environment.
wheel: $(STAMP)
	rm -f dist/wificc-*.whl
	$(VENV)/bin/maturin build --release -q -o dist

# The BBR variants as BPF congestion controls for the running kernel (bpf/README.md).
bpf:
	$(MAKE) -C bpf

# The main job: the BBRp study, quick (a subset of its grids, 2 repetitions), with its report.
demo: build
	$(VENV)/bin/wificc reproduce bbrp --quick --out $(OUT)

test:
	$(MAKE) build PGO=0
	$(MAKE) wheel test-rust test-python

# The scenario fuzzer's seed is fixed here so that every CI run tries the same documents;
# `make fuzz` searches further with fresh seeds.
PROPTEST_RNG_SEED ?= 20261124
test-rust:
	PROPTEST_RNG_SEED=$(PROPTEST_RNG_SEED) cargo test --profile ci -p wificc-core -p wificc-emu

# Then the Python API: mutated documents (a fresh seed each time) in a process with a capped
# address space; any error that is not "field: message" fails (python/wificc/fuzz.py).
FUZZ_CASES ?= 100000
FUZZ_API_CASES ?= 3000
fuzz:
	$(MAKE) build PGO=0
	PROPTEST_CASES=$(FUZZ_CASES) cargo test --profile ci -p wificc-core --test scenario_errors \
		no_document_makes_loading_or_running_panic
	$(PY) -m wificc.fuzz --cases $(FUZZ_API_CASES) --seed $$(date +%s)

# The LTE traces of the BBR-APG study, when the shared data directory beside the checkout has
# them (else the user data directory, ~/.local/share/wificc/traces, or nothing: those tests skip).
TRACES ?= $(wildcard ../shared/traces)
test-python:
	$(if $(TRACES),WIFICC_TRACES=$(TRACES)) $(PY) -m pytest -q

lint: $(STAMP)
	cargo fmt --all -- --check
	cargo clippy --all-targets -- -D warnings
	$(VENV)/bin/ruff check python tests
	$(VENV)/bin/ruff format --check python tests

bench: build
	PGO=$(PGO) ./scripts/bench.sh
	$(VENV)/bin/wificc bench

clean:
	rm -rf $(VENV) target results bpf/build dist
