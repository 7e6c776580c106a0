# Every target works on a fresh machine with only Python >= 3.11 and pip: the first run
# creates .venv and installs the package with what the target needs.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test test-compat bench bench-cache bench-security soak mutation lint format typecheck check clean docs

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# The demo needs only the package, the OpenTelemetry SDK (its span tree) and phonenumbers
# (RedactPII's phone reader), not the dev extras (torch, litellm...).
$(VENV)/.demo: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[tracing,pii]'
	touch $(VENV)/.demo

demo: $(VENV)/.demo
	$(BIN)/python examples/billing/main.py

test: $(STAMP)
	$(BIN)/python -m pytest

# The ADK contract and integration tests against the oldest google-adk release the package
# supports and the newest it allows, each in its own virtualenv with the redis extra (the
# integration tests close a real Redis store) (made once, remade when
# pyproject.toml or this file changes; `rm -rf .venv-compat-*` picks up a newer release).
# Older releases pin an older OpenTelemetry whose entry-point lookup warns on Python 3.11:
# third-party deprecations are not what this run checks.
COMPAT_OLDEST ?= 2.10.0
COMPAT_SPEC_oldest := google-adk==$(COMPAT_OLDEST)
COMPAT_SPEC_newest := google-adk>=$(COMPAT_OLDEST),<3
COMPAT_TESTS := tests/adk_contract tests/integration

.venv-compat-%/.installed: pyproject.toml Makefile
	rm -rf .venv-compat-$*
	$(PYTHON) -m venv .venv-compat-$*
	.venv-compat-$*/bin/python -m pip install --quiet --upgrade pip
	.venv-compat-$*/bin/python -m pip install --quiet -e '.[redis]' '$(COMPAT_SPEC_$*)' \
		'pytest>=8.0' 'pytest-asyncio>=0.24'
	touch $@

test-compat: .venv-compat-oldest/.installed .venv-compat-newest/.installed
	@for v in oldest newest; do \
		echo "== google-adk $$(.venv-compat-$$v/bin/python -c 'from google.adk import version; print(version.__version__)') ($$v)"; \
		.venv-compat-$$v/bin/python -m pytest $(COMPAT_TESTS) -q -p no:cacheprovider \
			-W ignore::DeprecationWarning || exit 1; \
	done

$(VENV)/.bench: $(STAMP) benchmarks/constraints.txt
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]' -c benchmarks/constraints.txt
	touch $(VENV)/.bench

# One process per scenario, warm-up first, configurations interleaved; prints the table
# and writes bench-results.json. redis-server on PATH adds the Redis hit latency.
bench: $(VENV)/.bench
	$(BIN)/python benchmarks/run.py bench-results.json

$(VENV)/.bench-cache: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,semantic,semantic-bench]'
	touch $(VENV)/.bench-cache

# The semantic cache's false hits on near misses and hits on paraphrases, tuned on one half
# of the question families and reported on the other, then the attack pairs; prints the
# tables and writes semantic-results.json (docs/cache.md). Its lookup cost at 10,000 entries
# is the semantic_cache scenario of `make bench`.
bench-cache: $(VENV)/.bench-cache
	$(BIN)/python benchmarks/semantic_eval.py semantic-results.json

$(VENV)/.bench-security: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,security-bench]'
	touch $(VENV)/.bench-security

# Attack success and benign utility with a worst-case obedient model, per injection style, field
# class of attack and policy configuration; prints the tables and writes security-results.json
# (docs/policy.md).
bench-security: $(VENV)/.bench-security
	$(BIN)/python -m benchmarks.security security-results.json

# The long concurrency soak (500 sessions over 50 users, twice); a 40-session version runs in
# `make test`. Pass options through SOAK_ARGS, e.g. `make soak SOAK_ARGS=--redis`.
SOAK_ARGS ?=
soak: $(STAMP)
	$(BIN)/python benchmarks/soak.py $(SOAK_ARGS)

$(VENV)/.mutation: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,mutation]'
	touch $(VENV)/.mutation

# Mutation testing of the core, policies, caches and stores, one module at a time at the
# lowest CPU priority; resumable (results kept under mutants/), report in
# mutation-report.md. Pick modules with MUTATE, e.g. `make mutation MUTATE="_records cache._keys"`.
MUTATE ?=
mutation: $(VENV)/.mutation
	nice -n 19 $(BIN)/python scripts/mutation.py $(MUTATE)

$(VENV)/.docs: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,docs]'
	touch $(VENV)/.docs

# The documentation site (guides from docs/, API reference from the docstrings) into site/,
# offline; --strict fails on any broken link or docstring the reference cannot read.
docs: $(VENV)/.docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

lint: $(STAMP)
	$(BIN)/ruff check src tests examples benchmarks scripts
	$(BIN)/ruff format --check src tests examples benchmarks scripts

format: $(STAMP)
	$(BIN)/ruff format src tests examples benchmarks scripts
	$(BIN)/ruff check --fix src tests examples benchmarks scripts

typecheck: $(STAMP)
	$(BIN)/mypy

check: lint typecheck test

clean:
	rm -rf $(VENV) .venv-compat-* .pytest_cache .mypy_cache .ruff_cache build dist site mutants
