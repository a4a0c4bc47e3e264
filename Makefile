# Two commands do everything on a fresh machine: `make demo` and `make test`.
# torch is pinned in the same pip call as everything else: an unpinned torch (asked for by deepspeed,
# peft, accelerate, ...) would pull a multi-GB CUDA build; torch==2.13.0 is a local CPU wheel here.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
TORCH := torch==2.13.0
# Triton for the fused fold (reference_impl/kernels); its tests run in Triton's interpreter on CPU (also in .[test])
TRITON := triton==3.9.0
# The stack `make test` runs against (the tox matrix covers the others).
# diffusers: reference_impl.diffusion's tests (no torch dependency of its own)
STACK := trl==1.16.0 transformers==5.24.0 peft==0.21.2 accelerate==1.15.0 datasets==5.2.0 deepspeed==0.19.8 \
	diffusers==0.42.1
PYTEST_ARGS ?=
# Old TRL / peft wheels the differential tests read (tests/wheels.txt): downloaded, never installed
WHEELS ?= .cache/wheels

.PHONY: install demo test doctor matrix ci bench import-cost clean

$(VENV)/.installed: pyproject.toml Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "$(TORCH)" "$(TRITON)" $(STACK) -e ".[dev]"
	touch $@

install: $(VENV)/.installed

demo: install
	$(PY) -m compat.demo

$(WHEELS)/.downloaded: tests/wheels.txt
	mkdir -p $(WHEELS)
	grep -v '^#' tests/wheels.txt | xargs -n 1 $(PY) -m pip download -q --no-deps --only-binary=:all: -d $(WHEELS)
	touch $@

test: install $(WHEELS)/.downloaded
	TRL_COMPAT_WHEELS=$(abspath $(WHEELS)) $(PY) -m pytest -n 2 -q $(PYTEST_ARGS)

# The doctor: the installed stack against the floors of its TRL line (exit 1 on violations).
doctor: install
	$(PY) -m compat

# Every tox env: the CI set (bare, floor, latest, mixed) and the on-demand set (py-trl113..116, ppo).
matrix: install
	$(VENV)/bin/tox run -m ci ondemand

# Exactly what CI runs.
ci:
	.ci/run

bench: install
	$(PY) -m reference_impl.bench

# What `import compat` adds to interpreter start-up (median of fresh processes, side by side).
import-cost: install
	$(PY) benchmarks/import_cost.py -n 30

clean:
	rm -rf $(VENV) .tox .pytest_cache .hypothesis .cache
