# Two commands do everything on a fresh machine: `make demo` and `make test`.
# torch is pinned in the same pip call as everything else: an unpinned torch (asked for by deepspeed,
# peft, accelerate, ...) would pull a multi-GB CUDA build; torch==2.13.0 is a local CPU wheel here.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
TORCH := torch==2.13.0
# The stack `make test` runs against (the tox matrix covers the others).
STACK := trl==1.16.0 transformers==5.24.0 peft==0.21.2 accelerate==1.15.0 datasets==5.2.0 deepspeed==0.19.8
PYTEST_ARGS ?=

.PHONY: install demo test matrix bench clean

$(VENV)/.installed: pyproject.toml Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q "$(TORCH)" $(STACK) -e ".[dev]"
	touch $@

install: $(VENV)/.installed

demo: install
	$(PY) -m compat.demo

test: install
	$(PY) -m pytest -n 2 -q $(PYTEST_ARGS)

matrix: install
	$(VENV)/bin/tox run -m ci ondemand

bench: install
	$(PY) -m reference_impl.bench

clean:
	rm -rf $(VENV) .tox .pytest_cache .hypothesis
